/*
 * Tests of the cross-check (mxk_crosscheck_executor, kernel/crosscheck.c) with a
 * deliberately wrong kernels (wrong_plugin.c: backend "wrong", Activation relu
 * computing 1.01 * relu(x), a sigmoid whose backward reads an undeclared input).
 *
 *   test_crosscheck CONFDIR WRONG_PLUGIN
 *
 * The expected numbers come from the graph's own inputs: the wrong node's input is
 * fc1's output, computed here in float64 from the data, weight and bias, so the
 * maximum error is 0.01 * max(fc1 output) at the position of that maximum.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "mxk.h"
#include "testing.h"

/** The test MLP's sizes: batch, inputs, hidden units, classes. */
enum { B = 4, IN = 5, HID = 8, CLS = 3 };

/** A symbol of operator `op` named `name` on the inputs, with attributes k=v (NULL-ended). */
static mxk_symbol *op_sym(const char *op, const char *name, mxk_symbol *input,
                          const char *const *kv) {
    const char *keys[8] = {0}, *vals[8] = {0};
    uint32_t n = 0;
    for (; kv && kv[2 * n] && n < 8; n++) {
        keys[n] = kv[2 * n];
        vals[n] = kv[2 * n + 1];
    }
    mxk_symbol *out = NULL;
    CHECK_EQ_INT(mxk_symbol_create(op, name, n, keys, vals, 1, NULL, &input, &out), MXK_OK);
    mxk_symbol_free(input);
    return out;
}

/** data -> fc1 (HID) -> relu1 (act_type `act`) -> fc2 (CLS) -> softmax (SoftmaxOutput). */
static mxk_symbol *mlp(const char *act) {
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_variable("data", &s), MXK_OK);
    s = op_sym("FullyConnected", "fc1", s, (const char *const[]){"num_hidden", "8", NULL});
    s = op_sym("Activation", "relu1", s, (const char *const[]){"act_type", act, NULL});
    s = op_sym("FullyConnected", "fc2", s, (const char *const[]){"num_hidden", "3", NULL});
    return op_sym("SoftmaxOutput", "softmax", s, NULL);
}

/** Fills every argument of ex with uniform values in [-1, 1) (the label with classes). */
static void fill_args(mxk_executor *ex, const mxk_symbol *sym, unsigned seed) {
    uint32_t n = 0;
    char **names = NULL;
    CHECK_EQ_INT(mxk_symbol_list_names(sym, MXK_SYMBOL_ARGUMENTS, &n, &names), MXK_OK);
    srand(seed);
    for (uint32_t i = 0; i < n; i++) {
        mxk_ndarray *a = mxk_executor_arg(ex, names[i]);
        uint64_t size = mxk_ndarray_size(a);
        float *v = malloc(size * sizeof *v);
        int label = strstr(names[i], "label") != NULL;
        for (uint64_t j = 0; j < size; j++)
            v[j] = label ? (float)(rand() % CLS) : (float)rand() / ((float)RAND_MAX / 2) - 1.0f;
        CHECK_EQ_INT(mxk_ndarray_copy_from_host(a, v, size * sizeof *v), MXK_OK);
        free(v);
    }
    mxk_string_list_free(names);
}

/** Binds sym with data of `shape` (gradients written) under backend preference `pref`. */
static mxk_executor *bind(const mxk_symbol *sym, mxk_shape shape, const char *pref) {
    CHECK_EQ_INT(mxk_set_backend_preference(pref), MXK_OK);
    const char *names[] = {"data"};
    mxk_executor *ex = NULL;
    mxk_context cpu = {MXK_DEV_CPU, 0};
    CHECK_EQ_INT(
        mxk_executor_simple_bind(sym, cpu, 1, names, &shape, "write", 0, NULL, NULL, NULL, &ex),
        MXK_OK);
    if (ex)
        fill_args(ex, sym, 7);
    return ex;
}

/** The options every test uses: against cpu-blas, training forward and backward. */
static mxk_crosscheck_options train_options(void) {
    mxk_crosscheck_options o = {.struct_size = sizeof o,
                                .reference = "cpu-blas",
                                .is_train = 1,
                                .check_backward = 1,
                                .seed = 3};
    return o;
}

/** Copies array `name` of ex to a malloc'd float buffer. */
static float *host(mxk_executor *ex, const char *name) {
    mxk_ndarray *a = mxk_executor_arg(ex, name);
    uint64_t n = mxk_ndarray_size(a);
    float *v = malloc(n * sizeof *v);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(a, v, n * sizeof *v), MXK_OK);
    return v;
}

/** The wrong relu is reported: its node, operator, both backends, the exact error. */
static void test_wrong_kernel_named(void) {
    mxk_symbol *sym = mlp("relu");
    mxk_executor *ex = bind(sym, (mxk_shape){.ndim = 2, .dims = {B, IN}}, "wrong,cpu-blas");
    mxk_crosscheck_options o = train_options();
    mxk_crosscheck_report r;
    CHECK_EQ_INT(mxk_crosscheck_executor(ex, &o, &r), MXK_OK);
    CHECK_EQ_INT(r.diverged, 1);
    CHECK(strcmp(r.node, "relu1") == 0);
    CHECK(strcmp(r.op, "Activation") == 0);
    CHECK(strcmp(r.backend, "wrong") == 0);
    CHECK(strcmp(r.reference, "cpu-blas") == 0);
    CHECK(strcmp(r.result, "output 'output'") == 0);
    CHECK_EQ_INT(r.nodes_checked, 2); /* fc1 on cpu-blas, then relu1 */
    CHECK_EQ_INT(r.nodes_on_reference, 1);
    CHECK_EQ_INT(r.nodes_skipped, 0);
    /* fc1's output in float64: the largest one is where the error is largest */
    float *x = host(ex, "data"), *w = host(ex, "fc1_weight"), *b = host(ex, "fc1_bias");
    double best = -INFINITY;
    uint64_t at = 0;
    for (int i = 0; i < B; i++)
        for (int h = 0; h < HID; h++) {
            double y = b[h];
            for (int k = 0; k < IN; k++)
                y += (double)x[i * IN + k] * w[h * IN + k];
            if (y > best) {
                best = y;
                at = (uint64_t)(i * HID + h);
            }
        }
    CHECK(best > 0);
    CHECK_NEAR(r.max_abs_err, 0.01 * best, 1e-5);
    CHECK_NEAR(r.max_rel_err, 0.01, 1e-4);
    CHECK_EQ_INT(r.worst_index, at);
    CHECK_NEAR(r.value, 1.01 * best, 1e-5);
    CHECK_NEAR(r.reference_value, best, 1e-5);
    CHECK_NEAR(r.rtol, 1e-4, 1e-12);
    CHECK_NEAR(r.atol, 1e-5, 1e-12);
    free(x);
    free(w);
    free(b);
    /* explicit tolerances above the error: everything agrees */
    o.rtol = 0.02;
    CHECK_EQ_INT(mxk_crosscheck_executor(ex, &o, &r), MXK_OK);
    CHECK_EQ_INT(r.diverged, 0);
    CHECK_EQ_INT(r.nodes_checked, 4);
    mxk_executor_free(ex);
    mxk_symbol_free(sym);
}

/** With cpu-blas alone every node agrees with itself; an activation "wrong" declines too. */
static void test_all_agree(void) {
    const char *acts[] = {"relu", "tanh"};
    const char *prefs[] = {"cpu-blas", "wrong,cpu-blas"};
    for (int c = 0; c < 2; c++) {
        mxk_symbol *sym = mlp(acts[c]);
        mxk_executor *ex = bind(sym, (mxk_shape){.ndim = 2, .dims = {B, IN}}, prefs[c]);
        mxk_crosscheck_options o = train_options();
        mxk_crosscheck_report r;
        CHECK_EQ_INT(mxk_crosscheck_executor(ex, &o, &r), MXK_OK);
        CHECK_EQ_INT(r.diverged, 0);
        CHECK_EQ_INT(r.nodes_checked, 4);
        CHECK_EQ_INT(r.nodes_on_reference, 4);
        CHECK_EQ_INT(r.nodes_skipped, 0);
        mxk_executor_free(ex);
        mxk_symbol_free(sym);
    }
}

/**
 * A LeNet-like graph with aux states (BatchNorm) and a random operator (Dropout):
 * cpu-blas against itself agrees in training (dropout masks seeded alike) and in
 * inference.
 */
static void test_lenet_aux_and_random_agree(void) {
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_variable("data", &s), MXK_OK);
    s = op_sym("Convolution", "conv1", s,
               (const char *const[]){"kernel", "(3,3)", "num_filter", "4", NULL});
    s = op_sym("BatchNorm", "bn1", s, NULL);
    s = op_sym("Activation", "relu1", s, (const char *const[]){"act_type", "relu", NULL});
    s = op_sym(
        "Pooling", "pool1", s,
        (const char *const[]){"kernel", "(2,2)", "stride", "(2,2)", "pool_type", "max", NULL});
    s = op_sym("Dropout", "drop1", s, (const char *const[]){"p", "0.5", NULL});
    s = op_sym("Flatten", "flat", s, NULL);
    s = op_sym("FullyConnected", "fc1", s, (const char *const[]){"num_hidden", "3", NULL});
    s = op_sym("SoftmaxOutput", "softmax", s, NULL);
    mxk_executor *ex = bind(s, (mxk_shape){.ndim = 4, .dims = {2, 1, 8, 8}}, "cpu-blas");
    for (int train = 1; train >= 0; train--) {
        mxk_crosscheck_options o = train_options();
        o.is_train = train;
        mxk_crosscheck_report r;
        CHECK_EQ_INT(mxk_crosscheck_executor(ex, &o, &r), MXK_OK);
        CHECK_EQ_INT(r.diverged, 0);
        CHECK_EQ_INT(r.nodes_checked, 8);
    }
    mxk_executor_free(ex);
    mxk_symbol_free(s);
}

/** An operator's override picks the tested kernel and is still in force afterwards. */
static void test_override_kept(void) {
    CHECK_EQ_INT(mxk_set_op_backend("Activation", "wrong"), MXK_OK);
    mxk_symbol *sym = mlp("relu");
    mxk_executor *ex = bind(sym, (mxk_shape){.ndim = 2, .dims = {B, IN}}, "cpu-blas");
    mxk_crosscheck_options o = train_options();
    mxk_crosscheck_report r;
    CHECK_EQ_INT(mxk_crosscheck_executor(ex, &o, &r), MXK_OK);
    CHECK_EQ_INT(r.diverged, 1);
    CHECK(strcmp(r.node, "relu1") == 0);
    CHECK(strcmp(r.backend, "wrong") == 0);
    char forced[32];
    CHECK_EQ_INT(mxk_get_op_backend("Activation", forced, sizeof forced), MXK_OK);
    CHECK(strcmp(forced, "wrong") == 0);
    CHECK_EQ_INT(mxk_set_op_backend("Activation", NULL), MXK_OK);
    mxk_executor_free(ex);
    mxk_symbol_free(sym);
}

/**
 * A kernel reading a tensor its operator's backward does not declare fails in the
 * cross-check as in the executor (the tensor is absent), naming node and backend.
 */
static void test_undeclared_read_fails(void) {
    mxk_symbol *sym = mlp("sigmoid");
    mxk_executor *ex = bind(sym, (mxk_shape){.ndim = 2, .dims = {B, IN}}, "wrong,cpu-blas");
    mxk_crosscheck_options o = train_options();
    mxk_crosscheck_report r;
    CHECK_EQ_INT(mxk_crosscheck_executor(ex, &o, &r), MXK_ERR_INTERNAL);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "crosscheck: node 'relu1' (Activation): Activation (backward, backend wrong): "
                   "backend 'wrong': sigmoid backward reads the undeclared input 'data'");
    /* forward only: the sigmoid is right */
    o.check_backward = 0;
    CHECK_EQ_INT(mxk_crosscheck_executor(ex, &o, &r), MXK_OK);
    CHECK_EQ_INT(r.diverged, 0);
    CHECK_EQ_INT(r.nodes_checked, 4);
    CHECK_EQ_INT(r.nodes_on_reference, 3);
    mxk_executor_free(ex);
    mxk_symbol_free(sym);
}

/** Bad arguments: the documented messages. */
static void test_errors(void) {
    mxk_symbol *sym = mlp("relu");
    mxk_executor *ex = bind(sym, (mxk_shape){.ndim = 2, .dims = {B, IN}}, "cpu-blas");
    mxk_crosscheck_options o = train_options();
    mxk_crosscheck_report r;
    CHECK_EQ_INT(mxk_crosscheck_executor(NULL, &o, &r), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxk_get_last_error(),
                 "mxk_crosscheck_executor: executor, options or report is NULL") == 0);
    o.struct_size = 4;
    CHECK_EQ_INT(mxk_crosscheck_executor(ex, &o, &r), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxk_get_last_error(),
                 "mxk_crosscheck_executor: options.struct_size is too small") == 0);
    o = train_options();
    o.reference = NULL;
    CHECK_EQ_INT(mxk_crosscheck_executor(ex, &o, &r), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxk_get_last_error(), "mxk_crosscheck_executor: no reference backend given") == 0);
    o.reference = "nosuch";
    CHECK_EQ_INT(mxk_crosscheck_executor(ex, &o, &r), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "mxk_crosscheck_executor: unknown backend 'nosuch' "
                                         "(registered: ");
    CHECK_CONTAINS(mxk_get_last_error(), "cpu-blas");
    /* a reference with no kernel for most operators: those nodes are skipped */
    o.reference = "wrong";
    CHECK_EQ_INT(mxk_crosscheck_executor(ex, &o, &r), MXK_OK);
    CHECK_EQ_INT(r.diverged, 1); /* relu1: cpu-blas against the wrong kernel */
    CHECK(strcmp(r.node, "relu1") == 0);
    CHECK(strcmp(r.backend, "cpu-blas") == 0);
    CHECK(strcmp(r.reference, "wrong") == 0);
    CHECK_EQ_INT(r.nodes_skipped, 1);
    CHECK_EQ_INT(r.nodes_checked, 1);
    mxk_executor_free(ex);
    mxk_symbol_free(sym);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_crosscheck CONFDIR WRONG_PLUGIN\n");
        return 2;
    }
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = argv[1]};
    if (mxk_init(&o) != MXK_OK || mxk_load_plugin(argv[2], NULL) != MXK_OK) {
        fprintf(stderr, "init: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_wrong_kernel_named);
    MXK_RUN(test_all_agree);
    MXK_RUN(test_lenet_aux_and_random_agree);
    MXK_RUN(test_undeclared_read_fails);
    MXK_RUN(test_override_kept);
    MXK_RUN(test_errors);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
