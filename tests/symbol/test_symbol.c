/*
 * Symbols: composition with MXNet's names (MXNet.jl and MXNet examples),
 * automatic names, argument / output / aux-state lists (nnvm's
 * Symbol::ListInputs), groups, internals, outputs of multi-output operators,
 * attributes with hidden keys, deep copy, errors, and graphs deep enough to need
 * iterative traversal and release.
 */
#include <pthread.h>

#include "symbol_test_util.h"

/* MXNet.jl overview: the MNIST MLP lists its arguments and outputs. */
static void test_mlp_lists(void) {
    mxk_symbol *mlp = st_mlp("128", "64");
    CHECK(mlp != NULL);
    if (mlp == NULL)
        return;
    CHECK_NAMES(mlp, MXK_SYMBOL_ARGUMENTS, "data", "fc1_weight", "fc1_bias", "fc2_weight",
                "fc2_bias", "fc3_weight", "fc3_bias", "softmax_label");
    CHECK_NAMES(mlp, MXK_SYMBOL_OUTPUTS, "softmax_output");
    uint32_t n = 7;
    char **aux = NULL;
    CHECK_EQ_INT(mxk_symbol_list_names(mlp, MXK_SYMBOL_AUX_STATES, &n, &aux), MXK_OK);
    CHECK_EQ_INT(n, 0);
    CHECK(aux != NULL && aux[0] == NULL);
    mxk_string_list_free(aux);
    CHECK_EQ_INT(mxk_symbol_num_outputs(mlp), 1);
    CHECK(mxk_symbol_name(mlp) != NULL && strcmp(mxk_symbol_name(mlp), "softmax") == 0);
    mxk_symbol_free(mlp);
}

/* MXNet.jl: a user variable replaces the default one (data, myweight, fc1_bias),
 * by name or by position; a softmax named "out" creates out_label. */
static void test_user_variables_replace_defaults(void) {
    mxk_symbol *data = NULL, *w = NULL, *fc = NULL, *fc2 = NULL, *out = NULL;
    mxk_symbol_variable("data", &data);
    mxk_symbol_variable("myweight", &w);
    const char *k[] = {"num_hidden"}, *v[] = {"10"};
    const char *names[] = {"data", "weight"};
    mxk_symbol *in[] = {data, w};
    CHECK_EQ_INT(mxk_symbol_create("FullyConnected", "fc1", 1, k, v, 2, names, in, &fc), MXK_OK);
    CHECK_NAMES(fc, MXK_SYMBOL_ARGUMENTS, "data", "myweight", "fc1_bias");
    /* keyword order does not matter; positional works the same */
    const char *rev[] = {"weight", "data"};
    mxk_symbol *in_rev[] = {w, data};
    CHECK_EQ_INT(mxk_symbol_create("FullyConnected", "fc2", 1, k, v, 2, rev, in_rev, &fc2), MXK_OK);
    CHECK_NAMES(fc2, MXK_SYMBOL_ARGUMENTS, "data", "myweight", "fc2_bias");
    mxk_symbol_free(fc2);
    CHECK_EQ_INT(mxk_symbol_create("FullyConnected", "fc2", 1, k, v, 2, NULL, in, &fc2), MXK_OK);
    CHECK_NAMES(fc2, MXK_SYMBOL_ARGUMENTS, "data", "myweight", "fc2_bias");
    CHECK_EQ_INT(mxk_symbol_create("SoftmaxOutput", "out", 0, NULL, NULL, 1, NULL, &fc, &out),
                 MXK_OK);
    CHECK_NAMES(out, MXK_SYMBOL_ARGUMENTS, "data", "myweight", "fc1_bias", "out_label");
    CHECK_NAMES(out, MXK_SYMBOL_OUTPUTS, "out_output");
    /* no_bias changes the argument list */
    mxk_symbol *nb = NULL;
    const char *k2[] = {"num_hidden", "no_bias"}, *v2[] = {"4", "True"};
    CHECK_EQ_INT(mxk_symbol_create("FullyConnected", "nb", 2, k2, v2, 1, NULL, &data, &nb), MXK_OK);
    CHECK_NAMES(nb, MXK_SYMBOL_ARGUMENTS, "data", "nb_weight");
    mxk_symbol *all[] = {data, w, fc, fc2, out, nb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mxk_symbol_free(all[i]);
}

/* Unnamed operators: lower-cased operator name + per-operator counter (NameManager). */
static void test_automatic_names(void) {
    mxk_symbol *x = NULL;
    mxk_symbol_variable("x", &x);
    mxk_symbol *a = st_op("FullyConnected", NULL, x, "num_hidden", "3", NULL, NULL);
    mxk_symbol *b = st_op("FullyConnected", "", a, "num_hidden", "3", NULL, NULL);
    mxk_symbol *c = st_op("Activation", NULL, b, "act_type", "tanh", NULL, NULL);
    CHECK(a && b && c);
    if (a && b && c) {
        CHECK(strcmp(mxk_symbol_name(a), "fullyconnected0") == 0);
        CHECK(strcmp(mxk_symbol_name(b), "fullyconnected1") == 0);
        CHECK(strcmp(mxk_symbol_name(c), "activation0") == 0);
        CHECK_NAMES(c, MXK_SYMBOL_ARGUMENTS, "x", "fullyconnected0_weight", "fullyconnected0_bias",
                    "fullyconnected1_weight", "fullyconnected1_bias");
        CHECK_NAMES(c, MXK_SYMBOL_OUTPUTS, "activation0_output");
    }
    mxk_symbol_free(x);
    mxk_symbol_free(a);
    mxk_symbol_free(b);
    mxk_symbol_free(c);
}

/** Argument of the name-thread test. */
typedef struct name_job {
    mxk_symbol *x;
    char names[100][32];
    int failures;
} name_job;

/** Creates 100 unnamed Flatten nodes and records their names. */
static void *name_thread(void *arg) {
    name_job *job = arg;
    for (int i = 0; i < 100; i++) {
        mxk_symbol *s = st_op("Flatten", NULL, job->x, NULL, NULL, NULL, NULL);
        if (s == NULL) {
            job->failures++;
            continue;
        }
        snprintf(job->names[i], sizeof job->names[i], "%s", mxk_symbol_name(s));
        mxk_symbol_free(s);
    }
    return NULL;
}

/* The automatic-name counter is shared and thread-safe: 4 x 100 distinct names. */
static void test_automatic_names_threads(void) {
    mxk_symbol *x = NULL;
    mxk_symbol_variable("x", &x);
    static name_job jobs[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        memset(&jobs[t], 0, sizeof jobs[t]);
        jobs[t].x = x;
        pthread_create(&th[t], NULL, name_thread, &jobs[t]);
    }
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    static uint8_t seen[400];
    memset(seen, 0, sizeof seen);
    for (int t = 0; t < 4; t++) {
        CHECK_EQ_INT(jobs[t].failures, 0);
        for (int i = 0; i < 100; i++) {
            int k = -1;
            CHECK(sscanf(jobs[t].names[i], "flatten%d", &k) == 1 && k >= 0 && k < 400);
            if (k >= 0 && k < 400) {
                CHECK(!seen[k]);
                seen[k] = 1;
            }
        }
    }
    mxk_symbol_free(x);
}

/* Auto-created variables carry a copy of the node's attributes (as MXNet's Symbol.__call__), hidden
 * keys given at creation are stored as __key__. */
static void test_auto_variables_carry_attributes(void) {
    mxk_symbol *data = NULL, *fc = NULL;
    mxk_symbol_variable("data", &data);
    const char *k[] = {"num_hidden", "lr_mult", "__mood__"}, *v[] = {"128", "0.5", "calm"};
    CHECK_EQ_INT(mxk_symbol_create("FullyConnected", "fc1", 3, k, v, 1, NULL, &data, &fc), MXK_OK);
    char buf[64];
    CHECK(strcmp(st_internal_attr(fc, "fc1_weight", "num_hidden", buf, sizeof buf), "128") == 0);
    CHECK(strcmp(st_internal_attr(fc, "fc1_weight", "__lr_mult__", buf, sizeof buf), "0.5") == 0);
    CHECK(strcmp(st_internal_attr(fc, "fc1_bias", "__mood__", buf, sizeof buf), "calm") == 0);
    CHECK(strcmp(mxk_symbol_get_attr(fc, "lr_mult"), "0.5") == 0);
    CHECK(strcmp(mxk_symbol_get_attr(fc, "num_hidden"), "128") == 0);
    CHECK(mxk_symbol_get_attr(fc, "no_bias") == NULL); /* defaults are not attributes */
    CHECK(strcmp(mxk_symbol_get_attr(fc, "op_name"), "FullyConnected") == 0);
    CHECK(strcmp(mxk_symbol_get_attr(data, "op_name"), "null") == 0);
    CHECK(strcmp(st_internal_attr(fc, "data", "num_hidden", buf, sizeof buf), "") == 0);
    mxk_symbol_free(fc);
    mxk_status st = mxk_symbol_create("FullyConnected", "fc2", 2,
                                      (const char *[]){"num_hidden", "weight_lr_mult"},
                                      (const char *[]){"4", "2"}, 1, NULL, &data, &fc);
    CHECK_ERROR(st, MXK_ERR_INVALID_ARGUMENT,
                "FullyConnected: setting variable attributes with 'weight_lr_mult' is not "
                "supported (deprecated in MXNet); create the variable with attribute 'lr_mult' "
                "and pass it as the input instead");
    CHECK(fc == NULL);
    mxk_symbol_free(data);
}

/* Groups, get_output, get_internals (names as nnvm ListOutputNames). */
static void test_group_internals_outputs(void) {
    mxk_symbol *mlp = st_mlp("128", "64");
    mxk_symbol *internals = NULL;
    CHECK_EQ_INT(mxk_symbol_get_internals(mlp, &internals), MXK_OK);
    CHECK_NAMES(internals, MXK_SYMBOL_OUTPUTS, "data", "fc1_weight", "fc1_bias", "fc1_output",
                "relu1_output", "fc2_weight", "fc2_bias", "fc2_output", "relu2_output",
                "fc3_weight", "fc3_bias", "fc3_output", "softmax_label", "softmax_output");
    CHECK(mxk_symbol_name(internals) == NULL); /* a group has no name */
    mxk_symbol *fc1 = st_internal(mlp, "fc1_output"), *relu2 = st_internal(mlp, "relu2_output");
    CHECK(fc1 != NULL && relu2 != NULL);
    if (fc1 && relu2) {
        CHECK_NAMES(fc1, MXK_SYMBOL_ARGUMENTS, "data", "fc1_weight", "fc1_bias");
        CHECK(strcmp(mxk_symbol_name(fc1), "fc1") == 0);
        mxk_symbol *g = NULL, *parts[] = {relu2, fc1};
        CHECK_EQ_INT(mxk_symbol_group(2, parts, &g), MXK_OK);
        CHECK_NAMES(g, MXK_SYMBOL_OUTPUTS, "relu2_output", "fc1_output");
        CHECK_NAMES(g, MXK_SYMBOL_ARGUMENTS, "data", "fc1_weight", "fc1_bias", "fc2_weight",
                    "fc2_bias");
        CHECK_EQ_INT(mxk_symbol_num_outputs(g), 2);
        mxk_symbol *second = NULL;
        CHECK_EQ_INT(mxk_symbol_get_output(g, 1, &second), MXK_OK);
        CHECK_NAMES(second, MXK_SYMBOL_OUTPUTS, "fc1_output");
        mxk_symbol_free(second);
        second = (mxk_symbol *)1;
        CHECK_ERROR(mxk_symbol_get_output(g, 2, &second), MXK_ERR_NOT_FOUND,
                    "mxk_symbol_get_output: index 2 out of range (the symbol has 2 outputs)");
        CHECK(second == NULL);
        CHECK_ERROR(mxk_symbol_set_attr(g, "lr_mult", "1"), MXK_ERR_INVALID_ARGUMENT,
                    "set_attr works only on a symbol of one node, not on a group (key 'lr_mult')");
        CHECK(mxk_symbol_get_attr(g, "name") == NULL);
        mxk_symbol_free(g);
    }
    mxk_symbol *none = NULL;
    CHECK_ERROR(mxk_symbol_group(0, NULL, &none), MXK_ERR_INVALID_ARGUMENT,
                "mxk_symbol_group: at least one symbol is required");
    mxk_symbol_free(fc1);
    mxk_symbol_free(relu2);
    mxk_symbol_free(internals);
    mxk_symbol_free(mlp);
}

/* A multi-output operator with aux states (graph-test BatchNorm): aux states are
 * listed apart, hidden outputs are not exposed, output_mean_var shows them. */
static void test_multi_output_and_aux_states(void) {
    mxk_symbol *data = NULL, *bn = NULL, *bn3 = NULL;
    mxk_symbol_variable("data", &data);
    bn = st_op("BatchNorm", "bn", data, NULL, NULL, NULL, NULL);
    CHECK(bn != NULL);
    if (bn == NULL)
        return;
    CHECK_NAMES(bn, MXK_SYMBOL_ARGUMENTS, "data", "bn_gamma", "bn_beta");
    CHECK_NAMES(bn, MXK_SYMBOL_AUX_STATES, "bn_moving_mean", "bn_moving_var");
    CHECK_NAMES(bn, MXK_SYMBOL_OUTPUTS, "bn_output");
    /* get_internals() outputs the aux variables too; they stay aux states (MXNet's
     * list_auxiliary_states), and the graph infers, binds and runs. */
    mxk_symbol *internals = NULL;
    CHECK_EQ_INT(mxk_symbol_get_internals(bn, &internals), MXK_OK);
    CHECK_NAMES(internals, MXK_SYMBOL_OUTPUTS, "data", "bn_gamma", "bn_beta", "bn_moving_mean",
                "bn_moving_var", "bn_output");
    CHECK_NAMES(internals, MXK_SYMBOL_ARGUMENTS, "data", "bn_gamma", "bn_beta");
    CHECK_NAMES(internals, MXK_SYMBOL_AUX_STATES, "bn_moving_mean", "bn_moving_var");
    const char *dname[] = {"data"};
    mxk_shape dshape = {.ndim = 4, .dims = {2, 3, 4, 4}}, args[3], outs[6], aux[2];
    int32_t complete = 0;
    CHECK_EQ_INT(mxk_symbol_infer_shape(internals, 1, dname, &dshape, args, outs, aux, &complete),
                 MXK_OK);
    CHECK(complete == 1 && outs[3].ndim == 1 && outs[3].dims[0] == 3 && outs[5].ndim == 4);
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(mxk_executor_simple_bind(internals, (mxk_context){MXK_DEV_CPU, 0}, 1, dname,
                                          &dshape, "null", 0, NULL, NULL, NULL, &ex),
                 MXK_OK);
    CHECK_EQ_INT(mxk_executor_forward(ex, 0), MXK_OK);
    float mean[3];
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(mxk_executor_output(ex, 3), mean, sizeof mean), MXK_OK);
    CHECK(mean[0] == 0.0f && mean[2] == 0.0f); /* moving_mean starts at zero */
    mxk_executor_free(ex);
    mxk_symbol_free(internals);
    char buf[64];
    CHECK(strcmp(st_internal_attr(bn, "bn_moving_mean", "__init__", buf, sizeof buf),
                 "[\"zero\", {}]") == 0);
    CHECK(strcmp(st_internal_attr(bn, "bn_moving_var", "init", buf, sizeof buf), "[\"one\", {}]") ==
          0);
    CHECK(strcmp(st_internal_attr(bn, "bn_gamma", "__init__", buf, sizeof buf), "") == 0);
    bn3 = st_op("BatchNorm", "bn3", data, "output_mean_var", "True", NULL, NULL);
    CHECK_NAMES(bn3, MXK_SYMBOL_OUTPUTS, "bn3_output", "bn3_mean", "bn3_var");
    CHECK(strcmp(mxk_symbol_name(bn3), "bn3") == 0); /* all outputs of one node */
    CHECK_EQ_INT(mxk_symbol_set_attr(bn3, "ctx_group", "dev1"), MXK_OK);
    CHECK(strcmp(mxk_symbol_get_attr(bn3, "__ctx_group__"), "dev1") == 0);
    /* composing needs a single output */
    mxk_symbol *bad = NULL;
    CHECK_ERROR(mxk_symbol_create("Activation", "act", 1, (const char *[]){"act_type"},
                                  (const char *[]){"relu"}, 1, NULL, &bn3, &bad),
                MXK_ERR_INVALID_ARGUMENT,
                "Activation: input 0 ('data') has several outputs; a single output is required");
    /* aux states may be given by name */
    mxk_symbol *mm = NULL, *bn4 = NULL;
    mxk_symbol_variable("my_mean", &mm);
    const char *in_names[] = {"data", "moving_mean"};
    mxk_symbol *in[] = {data, mm};
    CHECK_EQ_INT(mxk_symbol_create("BatchNorm", "bn4", 0, NULL, NULL, 2, in_names, in, &bn4),
                 MXK_OK);
    CHECK_NAMES(bn4, MXK_SYMBOL_AUX_STATES, "my_mean", "bn4_moving_var");
    CHECK(strcmp(mxk_symbol_get_attr(mm, "__init__"), "[\"zero\", {}]") == 0);
    mxk_symbol_free(bn4);
    mxk_symbol_free(mm);
    mxk_symbol_free(bn3);
    mxk_symbol_free(bn);
    mxk_symbol_free(data);
}

/* Attributes: hidden keys, renaming, recursive listing, what op nodes refuse. */
static void test_attributes(void) {
    mxk_symbol *w = NULL;
    mxk_symbol_variable("w", &w);
    CHECK_EQ_INT(mxk_symbol_set_attr(w, "lr_mult", "0.1"), MXK_OK);
    CHECK_EQ_INT(mxk_symbol_set_attr(w, "shape", "(3,4)"), MXK_OK);
    CHECK_EQ_INT(mxk_symbol_set_attr(w, "mood", "angry"), MXK_OK);
    CHECK(strcmp(mxk_symbol_get_attr(w, "lr_mult"), "0.1") == 0);
    CHECK(strcmp(mxk_symbol_get_attr(w, "__lr_mult__"), "0.1") == 0);
    CHECK(strcmp(mxk_symbol_get_attr(w, "__shape__"), "(3,4)") == 0);
    CHECK(strcmp(mxk_symbol_get_attr(w, "mood"), "angry") == 0);
    CHECK(mxk_symbol_get_attr(w, "wd_mult") == NULL);
    CHECK_EQ_INT(mxk_symbol_set_attr(w, "lr_mult", "0.2"), MXK_OK); /* replaces */
    CHECK(strcmp(mxk_symbol_get_attr(w, "lr_mult"), "0.2") == 0);

    mxk_symbol *fc = st_op("FullyConnected", "fc", w, "num_hidden", "2", NULL, NULL);
    CHECK_ERROR(mxk_symbol_set_attr(fc, "num_hidden", "3"), MXK_ERR_INVALID_ARGUMENT,
                "set_attr: node 'fc' (FullyConnected): 'num_hidden' would change the operator's "
                "parameters, which are fixed when the node is composed; user attributes of "
                "operator nodes take the hidden form \"__num_hidden__\"");
    CHECK_EQ_INT(mxk_symbol_set_attr(fc, "wd_mult", "0"), MXK_OK);
    CHECK_EQ_INT(mxk_symbol_set_attr(fc, "__mood__", "happy"), MXK_OK);
    uint32_t n = 0;
    char **kv = NULL;
    CHECK_EQ_INT(mxk_symbol_list_attrs(fc, &n, &kv), MXK_OK);
    /* Replaced hidden keys are followed by their plain alias (MXSymbolListAttr). */
    const char *want[] = {"w$__lr_mult__",
                          "0.2",
                          "w$lr_mult",
                          "0.2",
                          "w$__shape__",
                          "(3,4)",
                          "w$mood",
                          "angry",
                          "fc_weight$num_hidden",
                          "2",
                          "fc_bias$num_hidden",
                          "2",
                          "fc$num_hidden",
                          "2",
                          "fc$__wd_mult__",
                          "0",
                          "fc$wd_mult",
                          "0",
                          "fc$__mood__",
                          "happy"};
    CHECK_EQ_INT(n, 10);
    for (uint32_t i = 0; kv != NULL && i < 2 * n && i < 20; i++)
        CHECK(strcmp(kv[i], want[i]) == 0);
    CHECK(kv != NULL && kv[2 * n] == NULL);
    mxk_string_list_free(kv);

    CHECK_EQ_INT(mxk_symbol_set_attr(fc, "name", "dense"), MXK_OK);
    CHECK(strcmp(mxk_symbol_name(fc), "dense") == 0);
    CHECK(strcmp(mxk_symbol_get_attr(fc, "name"), "dense") == 0);
    CHECK_NAMES(fc, MXK_SYMBOL_OUTPUTS, "dense_output");
    CHECK_ERROR(mxk_symbol_set_attr(fc, "name", ""), MXK_ERR_INVALID_ARGUMENT,
                "set_attr: a name must not be empty");
    mxk_symbol_free(fc);
    mxk_symbol_free(w);
}

/* A deep copy has new nodes: changing one does not change the other. */
static void test_deep_copy_is_independent(void) {
    mxk_symbol *mlp = st_mlp("128", "64"), *copy = NULL;
    CHECK_EQ_INT(mxk_symbol_copy(mlp, &copy), MXK_OK);
    char *j1 = st_json(mlp), *j2 = st_json(copy);
    CHECK(j1 && j2 && strcmp(j1, j2) == 0);
    CHECK_EQ_INT(mxk_symbol_set_attr(copy, "lr_mult", "3"), MXK_OK);
    CHECK_EQ_INT(mxk_symbol_set_attr(copy, "name", "sm"), MXK_OK);
    CHECK(mxk_symbol_get_attr(mlp, "lr_mult") == NULL);
    CHECK(strcmp(mxk_symbol_name(mlp), "softmax") == 0);
    mxk_symbol *w = st_internal(copy, "fc1_weight");
    CHECK_EQ_INT(mxk_symbol_set_attr(w, "wd_mult", "0"), MXK_OK);
    char buf[32];
    CHECK(strcmp(st_internal_attr(mlp, "fc1_weight", "wd_mult", buf, sizeof buf), "") == 0);
    CHECK(strcmp(st_internal_attr(copy, "fc1_weight", "wd_mult", buf, sizeof buf), "0") == 0);
    mxk_symbol_free(w);
    /* the original survives the copy being freed, and the other way round */
    mxk_symbol_free(mlp);
    CHECK_NAMES(copy, MXK_SYMBOL_ARGUMENTS, "data", "fc1_weight", "fc1_bias", "fc2_weight",
                "fc2_bias", "fc3_weight", "fc3_bias", "softmax_label");
    mxk_symbol_free(copy);
    free(j1);
    free(j2);
}

/* Composition errors say what was wrong. */
static void test_compose_errors(void) {
    mxk_symbol *x = NULL, *s = (mxk_symbol *)1;
    mxk_symbol_variable("x", &x);
    mxk_status st = mxk_symbol_create("Nope", "n", 0, NULL, NULL, 1, NULL, &x, &s);
    CHECK_EQ_INT(st, MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "node 'n': unknown operator 'Nope': no loaded plugin registers it");
    CHECK(s == NULL);
    const char *names[] = {"dat"};
    st = mxk_symbol_create("FullyConnected", "fc", 1, (const char *[]){"num_hidden"},
                           (const char *[]){"2"}, 1, names, &x, &s);
    CHECK_ERROR(st, MXK_ERR_NOT_FOUND,
                "FullyConnected: keyword argument 'dat' not found; the operator's arguments are: "
                "data, weight, bias");
    mxk_symbol *four[] = {x, x, x, x};
    st = mxk_symbol_create("FullyConnected", "fc", 1, (const char *[]){"num_hidden"},
                           (const char *[]){"2"}, 4, NULL, four, &s);
    CHECK_ERROR(st, MXK_ERR_INVALID_ARGUMENT,
                "FullyConnected: too many inputs: 4 given, the operator takes 3 (data, weight, "
                "bias)");
    const char *twice[] = {"data", "data"};
    st = mxk_symbol_create("FullyConnected", "fc", 1, (const char *[]){"num_hidden"},
                           (const char *[]){"2"}, 2, twice, four, &s);
    CHECK_ERROR(st, MXK_ERR_INVALID_ARGUMENT, "FullyConnected: input 'data' given twice");
    st = mxk_symbol_create("FullyConnected", "fc", 1, (const char *[]){"num_hidden"},
                           (const char *[]){"many"}, 1, NULL, &x, &s);
    CHECK_EQ_INT(st, MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "node 'fc': FullyConnected: ");
    CHECK_CONTAINS(mxk_get_last_error(), "num_hidden");
    st = mxk_symbol_create("FullyConnected", "fc", 0, NULL, NULL, 1, NULL, &x, &s);
    CHECK_EQ_INT(st, MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "num_hidden");
    st = mxk_symbol_create("FullyConnected", "fc", 2, (const char *[]){"num_hidden", "num_hidden"},
                           (const char *[]){"2", "3"}, 1, NULL, &x, &s);
    CHECK_ERROR(st, MXK_ERR_INVALID_ARGUMENT, "FullyConnected: attribute 'num_hidden' given twice");
    CHECK_ERROR(mxk_symbol_variable("", &s), MXK_ERR_INVALID_ARGUMENT,
                "mxk_symbol_variable: a variable needs a non-empty name");
    CHECK(s == NULL);
    uint32_t n;
    char **l;
    CHECK_EQ_INT(mxk_symbol_list_names(x, (mxk_symbol_names)7, &n, &l), MXK_ERR_INVALID_ARGUMENT);
    mxk_symbol_free(x);
}

/* A chain of 20000 nodes: traversal, copy, JSON and release need no recursion. */
static void test_deep_chain(void) {
    mxk_symbol *cur = NULL;
    mxk_symbol_variable("x", &cur);
    for (int i = 0; i < 20000 && cur != NULL; i++) {
        mxk_symbol *next = st_op("BlockGrad", NULL, cur, NULL, NULL, NULL, NULL);
        mxk_symbol_free(cur);
        cur = next;
    }
    CHECK(cur != NULL);
    if (cur == NULL)
        return;
    CHECK_NAMES(cur, MXK_SYMBOL_ARGUMENTS, "x");
    mxk_symbol *copy = NULL, *back = NULL;
    CHECK_EQ_INT(mxk_symbol_copy(cur, &copy), MXK_OK);
    char *j = st_json(copy);
    CHECK(j != NULL);
    CHECK_EQ_INT(mxk_symbol_from_json(j, &back), MXK_OK);
    char *j2 = back ? st_json(back) : NULL;
    CHECK(j2 != NULL && strcmp(j, j2) == 0);
    free(j);
    free(j2);
    mxk_symbol_free(back);
    mxk_symbol_free(copy);
    mxk_symbol_free(cur);
}

int main(void) {
    if (st_setup() != 0)
        return 1;
    MXK_RUN(test_mlp_lists);
    MXK_RUN(test_user_variables_replace_defaults);
    MXK_RUN(test_automatic_names);
    MXK_RUN(test_automatic_names_threads);
    MXK_RUN(test_auto_variables_carry_attributes);
    MXK_RUN(test_group_internals_outputs);
    MXK_RUN(test_multi_output_and_aux_states);
    MXK_RUN(test_attributes);
    MXK_RUN(test_deep_copy_is_independent);
    MXK_RUN(test_compose_errors);
    MXK_RUN(test_deep_chain);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
