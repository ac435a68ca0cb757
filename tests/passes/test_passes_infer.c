/*
 * The indexed graph and shape/type inference (kernel/graph/igraph.c, infer.c):
 * node order and argument lists, FullyConnected inference both ways (MXNet.jl's
 * example: FC(num_hidden=10) with data (64,10) gives weight (10,10), bias (10,),
 * output (64,10)), partial inference reported as incomplete, `__shape__` and
 * `__dtype__` attributes, inconsistencies naming node, argument, expected and actual,
 * unknown names, aux states, and type inference.
 */
#include <string.h>

#include "passes_util.h"
#include "testing.h"

/** The shape (a,b). */
static mxk_shape s2(int64_t a, int64_t b) {
    mxk_shape s;
    memset(&s, 0, sizeof s);
    s.ndim = 2;
    s.dims[0] = a;
    s.dims[1] = b;
    return s;
}

/** The shape (a,). */
static mxk_shape s1(int64_t a) {
    mxk_shape s;
    memset(&s, 0, sizeof s);
    s.ndim = 1;
    s.dims[0] = a;
    return s;
}

/** 1 when s has the dims given (ndim = count). */
static int is_shape(const mxk_shape *s, int ndim, int64_t d0, int64_t d1) {
    if (s->ndim != ndim)
        return 0;
    if (ndim >= 1 && s->dims[0] != d0)
        return 0;
    if (ndim >= 2 && s->dims[1] != d1)
        return 0;
    return 1;
}

/* nnvm DFS post-order, entry numbering, list_arguments order. */
static void test_igraph_order_and_lists(void) {
    mxk_symbol *net = pu_mlp(128, 10, "relu");
    mxk_igraph *g = NULL;
    CHECK_EQ_INT(mxki_igraph_build(net, &g), MXK_OK);
    if (g == NULL)
        return;
    /* DFS post-order: data, fc1_weight, fc1_bias, fc1, act1, fc2_weight, fc2_bias, fc2,
     * out_label, out */
    const char *order[] = {"data",       "fc1_weight", "fc1_bias", "fc1",       "act1",
                           "fc2_weight", "fc2_bias",   "fc2",      "out_label", "out"};
    CHECK_EQ_INT(g->num_nodes, 10);
    for (uint32_t i = 0; i < g->num_nodes && i < 10; i++)
        CHECK(strcmp(g->nodes[i]->name, order[i]) == 0);
    CHECK_EQ_INT(g->num_entries, 10);
    CHECK_EQ_INT(g->num_outputs, 1);
    CHECK_EQ_INT(g->outputs[0], mxk_igraph_entry(g, 9, 0));
    /* fc2's inputs: act1, fc2_weight, fc2_bias */
    CHECK_EQ_INT(g->in_ptr[8] - g->in_ptr[7], 3);
    CHECK_EQ_INT(g->in_entries[g->in_ptr[7]], mxk_igraph_entry(g, 4, 0));
    /* argument list = list_arguments */
    uint32_t n = 0;
    char **names = NULL;
    CHECK_EQ_INT(mxk_symbol_list_names(net, MXK_SYMBOL_ARGUMENTS, &n, &names), MXK_OK);
    CHECK_EQ_INT(g->num_args, n);
    for (uint32_t a = 0; a < g->num_args && a < n; a++)
        CHECK(strcmp(g->nodes[g->arg_nodes[a]]->name, names[a]) == 0);
    CHECK_EQ_INT(g->num_aux, 0);
    mxk_string_list_free(names);
    mxki_igraph_free(g);
    mxk_symbol_free(net);
}

/* Aux states listed apart; hidden outputs (Dropout mask) are entries. */
static void test_igraph_aux_and_hidden_outputs(void) {
    mxk_symbol *x = pu_var("x");
    mxk_symbol *d = pu_op("TestDropout", "drop", NULL, 1, x);
    mxk_symbol *a = pu_op("TestAux", "bn", NULL, 1, d);
    mxk_igraph *g = NULL;
    CHECK_EQ_INT(mxki_igraph_build(a, &g), MXK_OK);
    if (g != NULL) {
        /* x, drop (2 outputs: output, mask), bn_state, bn */
        CHECK_EQ_INT(g->num_nodes, 4);
        CHECK_EQ_INT(g->num_entries, 5);
        CHECK_EQ_INT(g->num_args, 1);
        CHECK_EQ_INT(g->num_aux, 1);
        CHECK(strcmp(g->nodes[g->aux_nodes[0]]->name, "bn_state") == 0);
        CHECK(strcmp(g->nodes[g->arg_nodes[0]]->name, "x") == 0);
    }
    /* aux shape inferred from data (public API) */
    const char *nm[] = {"x"};
    mxk_shape sh[] = {s2(4, 5)}, args[1], outs[1], aux[1];
    int32_t complete = -1;
    CHECK_EQ_INT(mxk_symbol_infer_shape(a, 1, nm, sh, args, outs, aux, &complete), MXK_OK);
    CHECK(complete == 1);
    CHECK(is_shape(&aux[0], 2, 4, 5));
    CHECK(is_shape(&outs[0], 2, 4, 5));
    mxki_igraph_free(g);
    pu_free(x, d, a, NULL);
}

/* One variable as argument and aux state: an error naming it. */
static void test_igraph_variable_both_arg_and_aux(void) {
    /* x feeds TestAux both as data (argument) and as its aux state */
    mxk_symbol *x = pu_var("x");
    mxk_symbol *a = NULL;
    mxk_symbol *in[2] = {x, x};
    const char *names[2] = {"data", "state"};
    if (mxk_symbol_create("TestAux", "bn", 0, NULL, NULL, 2, names, in, &a) != MXK_OK) {
        mxk_symbol_free(x);
        MXK_SKIP("the symbol layer does not bind aux states by name");
    }
    mxk_igraph *g = NULL;
    CHECK_EQ_INT(mxki_igraph_build(a, &g), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "variable 'x' is used both as an argument");
    CHECK_CONTAINS(mxk_get_last_error(), "auxiliary state (of node 'bn')");
    CHECK(g == NULL);
    pu_free(x, a, NULL);
}

/* MXNet.jl: FullyConnected(num_hidden=10) with data (64,10). */
static void test_fc_infer_mxnet_jl_example(void) {
    mxk_symbol *data = pu_var("data");
    mxk_symbol *fc = pu_op("FullyConnected", "fc1", "num_hidden=10", 1, data);
    const char *nm[] = {"data"};
    mxk_shape sh[] = {s2(64, 10)}, args[3], outs[1];
    int32_t complete = -1;
    CHECK_EQ_INT(mxk_symbol_infer_shape(fc, 1, nm, sh, args, outs, NULL, &complete), MXK_OK);
    CHECK(complete == 1);
    CHECK(is_shape(&args[0], 2, 64, 10));
    CHECK(is_shape(&args[1], 2, 10, 10)); /* weight (H,K) */
    CHECK(is_shape(&args[2], 1, 10, 0));  /* bias (H,) */
    CHECK(is_shape(&outs[0], 2, 64, 10));
    pu_free(data, fc, NULL);
}

/* Both ways: data (N,K) gives weight (H,K), bias, output; the output gives data's batch. */
static void test_fc_infer_both_ways(void) {
    mxk_symbol *data = pu_var("data");
    mxk_symbol *fc = pu_op("FullyConnected", "fc1", "num_hidden=5", 1, data);
    const char *nm[] = {"data"};
    mxk_shape sh[] = {s2(8, 20)}, args[3], outs[1];
    int32_t complete = -1;
    CHECK_EQ_INT(mxk_symbol_infer_shape(fc, 1, nm, sh, args, outs, NULL, &complete), MXK_OK);
    CHECK(complete == 1);
    CHECK(is_shape(&args[1], 2, 5, 20));
    CHECK(is_shape(&args[2], 1, 5, 0));
    CHECK(is_shape(&outs[0], 2, 8, 5));

    /* backwards on the indexed graph: data (0,20) partial, output (8,5) known */
    mxk_igraph *g = NULL;
    CHECK_EQ_INT(mxki_igraph_build(fc, &g), MXK_OK);
    if (g != NULL) {
        mxk_shape *all = calloc(g->num_entries, sizeof *all);
        all[g->entry_ptr[g->arg_nodes[0]]] = s2(0, 20);
        all[g->outputs[0]] = s2(8, 5);
        uint32_t unknown = 99;
        CHECK_EQ_INT(mxki_igraph_infer_shape(g, all, &unknown), MXK_OK);
        CHECK_EQ_INT(unknown, 0);
        CHECK(is_shape(&all[g->entry_ptr[g->arg_nodes[0]]], 2, 8, 20));
        free(all);
        mxki_igraph_free(g);
    }
    pu_free(data, fc, NULL);
}

/* Backwards through an element-wise operator: c = a + b with only a known. */
static void test_infer_backwards_elementwise(void) {
    mxk_symbol *a = pu_var("a"), *b = pu_var("b");
    mxk_symbol *c = pu_op("_plus", "c", NULL, 2, a, b);
    mxk_symbol *f = pu_op("FullyConnected", "f", "num_hidden=3", 1, c);
    const char *nm[] = {"b"};
    mxk_shape sh[] = {s2(4, 7)}, args[5], outs[1];
    int32_t complete = -1;
    CHECK_EQ_INT(mxk_symbol_infer_shape(f, 1, nm, sh, args, outs, NULL, &complete), MXK_OK);
    CHECK(complete == 1);
    CHECK(is_shape(&args[0], 2, 4, 7)); /* a from b through _plus */
    CHECK(is_shape(&args[2], 2, 3, 7)); /* f_weight */
    CHECK(is_shape(&outs[0], 2, 4, 3));
    pu_free(a, b, c, f, NULL);
}

/* MXNet.jl / MXNet: incomplete inference is reported, not raised. */
static void test_partial_is_not_an_error(void) {
    mxk_symbol *net = pu_mlp(16, 4, "relu");
    mxk_shape args[6], outs[1];
    int32_t complete = -1;
    /* nothing known: everything unknown, complete 0 */
    CHECK_EQ_INT(mxk_symbol_infer_shape(net, 0, NULL, NULL, args, outs, NULL, &complete), MXK_OK);
    CHECK(complete == 0);
    CHECK(args[0].ndim == 0 && outs[0].ndim == 0);
    mxk_symbol_free(net);

    /* __shape__ with an unknown batch (0): weights known, outputs partial */
    mxk_symbol *data = pu_var("data");
    CHECK_EQ_INT(mxk_symbol_set_attr(data, "__shape__", "(0,20)"), MXK_OK);
    mxk_symbol *fc = pu_op("FullyConnected", "fc1", "num_hidden=5", 1, data);
    mxk_shape a3[3], o1[1];
    complete = -1;
    CHECK_EQ_INT(mxk_symbol_infer_shape(fc, 0, NULL, NULL, a3, o1, NULL, &complete), MXK_OK);
    CHECK(complete == 0);
    CHECK(is_shape(&a3[0], 2, 0, 20));
    CHECK(is_shape(&a3[1], 2, 5, 20));
    CHECK(is_shape(&o1[0], 2, 0, 5));
    pu_free(data, fc, NULL);
}

/* `__shape__` fills an unknown variable; a given shape wins. */
static void test_shape_attribute(void) {
    mxk_symbol *data = pu_var("data");
    CHECK_EQ_INT(mxk_symbol_set_attr(data, "__shape__", "(2,3)"), MXK_OK);
    mxk_symbol *fc = pu_op("FullyConnected", "fc1", "num_hidden=4", 1, data);
    mxk_shape args[3], outs[1];
    int32_t complete = -1;
    CHECK_EQ_INT(mxk_symbol_infer_shape(fc, 0, NULL, NULL, args, outs, NULL, &complete), MXK_OK);
    CHECK(complete == 1);
    CHECK(is_shape(&outs[0], 2, 2, 4));
    /* a given shape wins over the attribute */
    const char *nm[] = {"data"};
    mxk_shape sh[] = {s2(6, 3)};
    CHECK_EQ_INT(mxk_symbol_infer_shape(fc, 1, nm, sh, args, outs, NULL, &complete), MXK_OK);
    CHECK(is_shape(&outs[0], 2, 6, 4));
    pu_free(data, fc, NULL);
}

/* Inconsistencies name the node, the argument, expected and actual. */
static void test_inconsistent_shapes_name_node_argument_expected_actual(void) {
    mxk_symbol *data = pu_var("data");
    mxk_symbol *fc = pu_op("FullyConnected", "fc1", "num_hidden=5", 1, data);
    const char *nm[] = {"data", "fc1_weight"};
    mxk_shape sh[] = {s2(8, 20), s2(5, 30)}, args[3], outs[1];
    int32_t complete = -1;
    CHECK_EQ_INT(mxk_symbol_infer_shape(fc, 2, nm, sh, args, outs, NULL, &complete), MXK_ERR_SHAPE);
    const char *msg = mxk_get_last_error();
    CHECK_CONTAINS(msg, "Error in operator fc1: FullyConnected: argument 'weight'");
    CHECK_CONTAINS(msg, "expected (5,20), got (5,30)");
    pu_free(data, fc, NULL);

    /* two operators disagreeing about one entry: a + b with a (2,3), b (3,3) */
    mxk_symbol *a = pu_var("a"), *b = pu_var("b");
    mxk_symbol *c = pu_op("_plus", "plus0", NULL, 2, a, b);
    const char *nm2[] = {"a", "b"};
    mxk_shape sh2[] = {s2(2, 3), s2(3, 3)};
    CHECK_EQ_INT(mxk_symbol_infer_shape(c, 2, nm2, sh2, NULL, NULL, NULL, NULL), MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(), "Error in operator plus0: elemwise_add:"); /* alias */
    CHECK_CONTAINS(mxk_get_last_error(), "'rhs'");
    CHECK_CONTAINS(mxk_get_last_error(), "expected (2,3), got (3,3)");
    pu_free(a, b, c, NULL);
}

/* MXNet MatchArguments: unknown keyword with the candidate list. */
static void test_unknown_name(void) {
    mxk_symbol *net = pu_mlp(16, 4, "relu");
    const char *nm[] = {"dta"};
    mxk_shape sh[] = {s2(2, 3)};
    CHECK_EQ_INT(mxk_symbol_infer_shape(net, 1, nm, sh, NULL, NULL, NULL, NULL), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "Keyword argument name dta not found.");
    CHECK_CONTAINS(mxk_get_last_error(), "Candidate arguments:\n\t[0]data\n\t[1]fc1_weight");
    int32_t t[] = {MXK_FLOAT32};
    CHECK_EQ_INT(mxk_symbol_infer_type(net, 1, nm, t, NULL, NULL, NULL, NULL), MXK_ERR_NOT_FOUND);
    mxk_symbol_free(net);
}

/* Types: float32 throughout, mismatches, `__dtype__`, the default rule. */
static void test_type_inference(void) {
    mxk_symbol *net = pu_mlp(16, 4, "relu");
    const char *nm[] = {"data"};
    int32_t t[] = {MXK_FLOAT32}, args[6], outs[1];
    int32_t complete = -1;
    CHECK_EQ_INT(mxk_symbol_infer_type(net, 1, nm, t, args, outs, NULL, &complete), MXK_OK);
    CHECK(complete == 1);
    for (int i = 0; i < 6; i++)
        CHECK_EQ_INT(args[i], MXK_FLOAT32);
    CHECK_EQ_INT(outs[0], MXK_FLOAT32);

    /* float64 data into a float32-only operator: an error naming the node */
    int32_t t64[] = {MXK_FLOAT64};
    CHECK_EQ_INT(mxk_symbol_infer_type(net, 1, nm, t64, args, outs, NULL, &complete), MXK_ERR_TYPE);
    CHECK_CONTAINS(mxk_get_last_error(), "Error in operator fc1: FullyConnected:");
    mxk_symbol_free(net);

    /* __dtype__ attributes (MXNet writes the code) */
    mxk_symbol *data = pu_var("data");
    CHECK_EQ_INT(mxk_symbol_set_attr(data, "__dtype__", "1"), MXK_OK);
    mxk_symbol *fc = pu_op("FullyConnected", "fc1", "num_hidden=5", 1, data);
    CHECK_EQ_INT(mxk_symbol_infer_type(fc, 0, NULL, NULL, args, outs, NULL, &complete),
                 MXK_ERR_TYPE);
    CHECK_CONTAINS(mxk_get_last_error(), "float64");
    pu_free(data, fc, NULL);

    /* default type inference (TestDropout has none): the first known type everywhere */
    mxk_symbol *x = pu_var("x");
    mxk_symbol *d = pu_op("TestDropout", "drop", NULL, 1, x);
    const char *nx[] = {"x"};
    int32_t t16[] = {MXK_FLOAT16}, a1[1], o1[1];
    CHECK_EQ_INT(mxk_symbol_infer_type(d, 1, nx, t16, a1, o1, NULL, &complete), MXK_OK);
    CHECK(complete == 1);
    CHECK_EQ_INT(o1[0], MXK_FLOAT16);
    pu_free(x, d, NULL);
}

/* LeNet shapes through the test convolution/pooling operators. */
static void test_infer_on_lenet(void) {
    mxk_symbol *net = pu_lenet();
    pu_plans pl;
    CHECK(net != NULL && pu_plan(net, "data=64,1,28,28", "null", NULL, &pl) == 0);
    if (pl.g != NULL) {
        const mxk_shape *p2 = &pl.shapes[pu_entry(pl.g, "pool2", 0)];
        CHECK(p2->ndim == 4 && p2->dims[0] == 64 && p2->dims[1] == 50 && p2->dims[2] == 4 &&
              p2->dims[3] == 4);
        CHECK(is_shape(&pl.shapes[pu_entry(pl.g, "flatten", 0)], 2, 64, 800));
        CHECK(is_shape(&pl.shapes[pu_entry(pl.g, "fc1_weight", 0)], 2, 500, 800));
        CHECK(is_shape(&pl.shapes[pu_entry(pl.g, "out", 0)], 2, 64, 10));
        CHECK(is_shape(&pl.shapes[pu_entry(pl.g, "out_label", 0)], 1, 64, 0));
    }
    pu_plans_free(&pl);
    mxk_symbol_free(net);
}

/* A pad no size can take (from a model file): refused with checked arithmetic. */
static void test_window_pad_overflow(void) {
    const char *k[] = {"kernel", "stride", "pad", "num_filter"},
               *v[] = {"(1,1)", "(1,1)", "(4611686018427387904,0)", "1"};
    mxk_shape in[3] = {{.ndim = 4, .dims = {1, 1, 4, 4}}};
    mxk_op_instance *op = NULL;
    CHECK_EQ_INT(mxk_op_instance_create("TestConv", 4, k, v, (mxk_context){MXK_DEV_CPU, 0}, 3, in,
                                        NULL, &op),
                 MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(), "TestConv: 2 * pad: 2 * 4611686018427387904 is too "
                                         "large (more than 1152921504606846976 elements)");
    CHECK(op == NULL);
}

/* NULL arguments and a lone variable. */
static void test_bad_arguments(void) {
    mxk_shape sh[1] = {s1(3)};
    CHECK_EQ_INT(mxk_symbol_infer_shape(NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL),
                 MXK_ERR_INVALID_ARGUMENT);
    mxk_symbol *x = pu_var("x");
    CHECK_EQ_INT(mxk_symbol_infer_shape(x, 1, NULL, sh, NULL, NULL, NULL, NULL),
                 MXK_ERR_INVALID_ARGUMENT);
    /* a lone variable: its own shape */
    const char *nm[] = {"x"};
    mxk_shape a[1], o[1];
    int32_t complete = 0;
    CHECK_EQ_INT(mxk_symbol_infer_shape(x, 1, nm, sh, a, o, NULL, &complete), MXK_OK);
    CHECK(complete == 1 && is_shape(&o[0], 1, 3, 0));
    mxk_symbol_free(x);
}

/* Loads cpu-blas and the passes-test plugin, runs the tests. */
int main(void) {
    if (pu_init(BUILD_CONFDIR) != 0)
        return 1;
    MXK_RUN(test_igraph_order_and_lists);
    MXK_RUN(test_igraph_aux_and_hidden_outputs);
    MXK_RUN(test_igraph_variable_both_arg_and_aux);
    MXK_RUN(test_fc_infer_mxnet_jl_example);
    MXK_RUN(test_fc_infer_both_ways);
    MXK_RUN(test_infer_backwards_elementwise);
    MXK_RUN(test_partial_is_not_an_error);
    MXK_RUN(test_shape_attribute);
    MXK_RUN(test_inconsistent_shapes_name_node_argument_expected_actual);
    MXK_RUN(test_unknown_name);
    MXK_RUN(test_window_pad_overflow);
    MXK_RUN(test_type_inference);
    MXK_RUN(test_infer_on_lenet);
    MXK_RUN(test_bad_arguments);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
