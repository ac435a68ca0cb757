/*
 * Executor reshape and memory sharing between executors (upstream
 * python/mxnet/executor.py reshape, src/executor/graph_executor.cc InitDataEntryMemory,
 * tests/python/unittest/test_executor.py test_reshape): up-sizing with and without allow_up_sizing,
 * unspecified shape changes, the upstream sharing test, shared_exec's pool (best fit, growth
 * appended to the donor), and simple_bind reusing the shared executor's same-named arrays.
 */
#include "exec_test_util.h"

/** c = 2a + b (T5's symbol). */
static mxk_symbol *two_a_plus_b(void) {
    mxk_symbol *a = et_var("a"), *b = et_var("b");
    mxk_symbol *m = et_op("_mul_scalar", "_mulscalar0", "scalar=2", 1, a);
    mxk_symbol *c = et_op("_plus", "_plus0", NULL, 2, m, b);
    et_free_syms(3, a, b, m);
    return c;
}

/** T5: up-sizing needs the flag (MXNet's message), then gives fresh arrays. */
static void test_t5_up_sizing(void) {
    mxk_symbol *c = two_a_plus_b();
    mxk_ndarray *args[2] = {et_full(et_shape(2, 2, 1, 0, 0), 0),
                            et_full(et_shape(2, 2, 1, 0, 0), 1)};
    mxk_executor *ex = NULL, *nx = (mxk_executor *)args[0];
    CHECK_EQ_INT(mxk_executor_bind(c, et_cpu, 2, args, NULL, NULL, 0, NULL, NULL, &ex), MXK_OK);
    if (ex == NULL)
        return;
    const char *names[] = {"a", "b"};
    mxk_shape shapes[] = {et_shape(2, 4, 2, 0, 0), et_shape(2, 4, 2, 0, 0)};
    CHECK_EQ_INT(mxk_executor_reshape(ex, 0, 0, 2, names, shapes, &nx), MXK_ERR_INVALID_ARGUMENT);
    CHECK(nx == NULL);
    CHECK(strcmp(mxk_get_last_error(),
                 "New shape of arg: a is larger than original.First making a big executor and "
                 "then down sizing it is more efficient than the reverse.If you really want to up "
                 "size, set allow_up_sizing=True to enable allocation of new arrays.") == 0);
    CHECK_EQ_INT(mxk_executor_reshape(ex, 0, 1, 2, names, shapes, &nx), MXK_OK);
    if (nx != NULL) {
        mxk_ndarray *na = mxk_executor_arg(nx, "a");
        CHECK(na != NULL && mxk_ndarray_size(na) == 8);
        mxk_ndarray_fill(na, 1);
        mxk_ndarray_fill(mxk_executor_arg(nx, "b"), 2);
        CHECK_EQ_INT(mxk_executor_forward(nx, 0), MXK_OK);
        const float four[8] = {4, 4, 4, 4, 4, 4, 4, 4};
        ET_CHECK_ARRAY(mxk_executor_output(nx, 0), four, 8, 0);
        /* Fresh arrays: the old ones are untouched. */
        ET_CHECK_ARRAY(args[0], ((const float[]){0, 0}), 2, 0);
        ET_CHECK_ARRAY(args[1], ((const float[]){1, 1}), 2, 0);
        mxk_executor_free(nx);
    }
    /* Duplicate names. */
    const char *dup[] = {"a", "a"};
    CHECK_EQ_INT(mxk_executor_reshape(ex, 0, 1, 2, dup, shapes, &nx), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "Duplicate shapes are provided for argument a in reshape of executor");
    /* Smaller, naming only a: b's shape changes too, which needs partial_shaping. */
    mxk_shape one[] = {et_shape(2, 1, 1, 0, 0)};
    CHECK_EQ_INT(mxk_executor_reshape(ex, 0, 0, 1, names, one, &nx), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxk_get_last_error(),
                 "Shape of unspecifie arg: b changed. This can cause the new executor to not share "
                 "parameters with the old one. Please check for error in network.If this is "
                 "intended, set partial_shaping=True to suppress this warning.") == 0);
    CHECK_EQ_INT(mxk_executor_reshape(ex, 1, 0, 1, names, one, &nx), MXK_OK);
    if (nx != NULL) {
        /* Down-sized arrays are prefix views of the old ones. */
        mxk_ndarray_fill(mxk_executor_arg(nx, "b"), 5);
        CHECK_EQ_INT(mxk_executor_forward(nx, 0), MXK_OK);
        ET_CHECK_ARRAY(mxk_executor_output(nx, 0), ((const float[]){5}), 1, 0);
        ET_CHECK_ARRAY(args[1], ((const float[]){5, 1}), 2, 0);
        mxk_executor_free(nx);
    }
    mxk_executor_free(ex);
    mxk_ndarray_free(args[0]);
    mxk_ndarray_free(args[1]);
    mxk_symbol_free(c);
}

/** T6: the upstream reshape test (test_executor.py test_reshape). */
static void test_t6_upstream_reshape(void) {
    mxk_symbol *x = et_var("x");
    mxk_symbol *y = et_op("FullyConnected", "fc", "num_hidden=4", 1, x);
    const char *xn[] = {"x"};
    mxk_shape xs[] = {et_shape(2, 5, 4, 0, 0)};
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(mxk_executor_simple_bind(y, et_cpu, 1, xn, xs, "null", 0, NULL, NULL, NULL, &ex),
                 MXK_OK);
    if (ex == NULL) {
        fprintf(stderr, "simple_bind: %s\n", mxk_get_last_error());
        return;
    }
    mxk_ndarray_fill(mxk_executor_arg(ex, "x"), 1);
    mxk_ndarray_fill(mxk_executor_arg(ex, "fc_weight"), 1);
    mxk_ndarray_fill(mxk_executor_arg(ex, "fc_bias"), 0);
    mxk_shape s3[] = {et_shape(2, 3, 4, 0, 0)};
    mxk_executor *nx = NULL;
    CHECK_EQ_INT(mxk_executor_reshape(ex, 0, 0, 1, xn, s3, &nx), MXK_OK);
    if (nx != NULL) {
        CHECK_EQ_INT(mxk_executor_forward(nx, 0), MXK_OK);
        float four[20];
        for (int i = 0; i < 20; i++)
            four[i] = 4;
        ET_CHECK_ARRAY(mxk_executor_output(nx, 0), four, 12, 0);
        /* Shared memory: the old output's first 3 rows are the new output. */
        float old[20];
        et_host(mxk_executor_output(ex, 0), old);
        for (int i = 0; i < 12; i++)
            CHECK(old[i] == 4);
        mxk_executor_free(nx);
    }
    CHECK_EQ_INT(mxk_executor_forward(ex, 0), MXK_OK);
    float four[20];
    for (int i = 0; i < 20; i++)
        four[i] = 4;
    ET_CHECK_ARRAY(mxk_executor_output(ex, 0), four, 20, 0);
    mxk_shape s6[] = {et_shape(2, 6, 4, 0, 0)};
    CHECK_EQ_INT(mxk_executor_reshape(ex, 0, 1, 1, xn, s6, &nx), MXK_OK);
    if (nx != NULL) {
        /* The data array is not shared; the weight is. */
        mxk_ndarray_fill(mxk_executor_arg(nx, "x"), 0);
        float xv[20];
        et_host(mxk_executor_arg(ex, "x"), xv);
        for (int i = 0; i < 20; i++)
            CHECK(xv[i] == 1);
        float wv[16];
        et_host(mxk_executor_arg(nx, "fc_weight"), wv);
        for (int i = 0; i < 16; i++)
            CHECK(wv[i] == 1);
        mxk_ndarray_fill(mxk_executor_arg(nx, "fc_weight"), 2);
        et_host(mxk_executor_arg(ex, "fc_weight"), wv);
        CHECK(wv[0] == 2 && wv[15] == 2);
        CHECK_EQ_INT(mxk_executor_forward(nx, 0), MXK_OK);
        float z[24] = {0};
        ET_CHECK_ARRAY(mxk_executor_output(nx, 0), z, 24, 0);
        mxk_executor_free(nx);
    }
    mxk_executor_free(ex);
    et_free_syms(2, x, y);
}

/** Reshape keeps the gradient requests and shares gradients (views). */
static void test_reshape_with_gradients(void) {
    mxk_symbol *x = et_var("x");
    mxk_symbol *y = et_op("FullyConnected", "fc", "num_hidden=2", 1, x);
    const char *xn[] = {"x"};
    mxk_shape xs[] = {et_shape(2, 4, 3, 0, 0)};
    const char *rn[] = {"x"}, *rv[] = {"null"};
    mxk_executor *ex = NULL, *nx = NULL;
    CHECK_EQ_INT(mxk_executor_simple_bind(y, et_cpu, 1, xn, xs, "write", 1, rn, rv, NULL, &ex),
                 MXK_OK);
    if (ex == NULL)
        return;
    mxk_shape s2[] = {et_shape(2, 2, 3, 0, 0)};
    CHECK_EQ_INT(mxk_executor_reshape(ex, 0, 0, 1, xn, s2, &nx), MXK_OK);
    if (nx != NULL) {
        CHECK(mxk_executor_grad(nx, "x") == NULL);
        mxk_ndarray *gw = mxk_executor_grad(nx, "fc_weight");
        CHECK(gw != NULL);
        mxk_ndarray_fill(mxk_executor_arg(nx, "x"), 1);
        mxk_ndarray_fill(mxk_executor_arg(nx, "fc_weight"), 1);
        mxk_ndarray *head = et_full(et_shape(2, 2, 2, 0, 0), 1);
        CHECK_EQ_INT(mxk_executor_forward(nx, 1), MXK_OK);
        CHECK_EQ_INT(mxk_executor_backward(nx, 1, &head), MXK_OK);
        /* d fc_weight = head^T . x = 2 everywhere; visible through the old executor. */
        const float two[6] = {2, 2, 2, 2, 2, 2};
        ET_CHECK_ARRAY(mxk_executor_grad(ex, "fc_weight"), two, 6, 1e-6);
        mxk_ndarray_free(head);
        mxk_executor_free(nx);
    }
    mxk_executor_free(ex);
    et_free_syms(2, x, y);
}

/** Binds a chain tanh(tanh(x)) of shape (n,) with x = 0.5, sharing `shared`'s pool. */
static mxk_executor *bind_chain(mxk_symbol *sym, int64_t n, mxk_executor *shared, mxk_ndarray **x) {
    *x = et_full(et_shape(1, n, 0, 0, 0), 0.5f);
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(mxk_executor_bind(sym, et_cpu, 1, x, NULL, NULL, 0, NULL, shared, &ex), MXK_OK);
    return ex;
}

/** shared_exec: blocks come from the donor's pool; growth is appended to it. */
static void test_shared_pool(void) {
    mxk_symbol *x = et_var("x");
    mxk_symbol *t1 = et_op("Activation", "t1", "act_type=tanh", 1, x);
    mxk_symbol *t2 = et_op("Activation", "t2", "act_type=tanh", 1, t1);
    mxk_symbol *sum = et_op("_plus", "sum", NULL, 2, t1, t2);
    mxk_ndarray *xa, *xc, *xd;
    mxk_executor *a = bind_chain(sum, 4096, NULL, &xa);
    if (a == NULL)
        return;
    CHECK_EQ_INT(mxk_wait_all(), MXK_OK);
    /* A smaller executor sharing a's pool allocates no internal memory. */
    mxk_ndarray *tmp = et_full(et_shape(1, 1024, 0, 0, 0), 0.5f);
    CHECK_EQ_INT(mxk_wait_all(), MXK_OK);
    mxk_storage_stats s0 = et_stats();
    mxk_executor *b = NULL;
    CHECK_EQ_INT(mxk_executor_bind(sum, et_cpu, 1, &tmp, NULL, NULL, 0, NULL, a, &b), MXK_OK);
    mxk_storage_stats s1 = et_stats();
    CHECK_EQ_INT(s1.raw_allocs + s1.pool_hits, s0.raw_allocs + s0.pool_hits);
    /* A larger one allocates, and its new chunks join a's pool ... */
    mxk_executor *c = bind_chain(sum, 8192, a, &xc);
    CHECK_EQ_INT(mxk_wait_all(), MXK_OK);
    mxk_storage_stats s2 = et_stats();
    /* ... so that another one of that size, sharing a, allocates nothing more. */
    mxk_executor *d = bind_chain(sum, 8192, a, &xd);
    mxk_storage_stats s3 = et_stats();
    /* Only d's own argument x was allocated. */
    CHECK_EQ_INT(s3.raw_allocs + s3.pool_hits, s2.raw_allocs + s2.pool_hits + 1);
    /* All of them compute correctly (one at a time: they share memory). */
    mxk_executor *all[] = {a, b, c, d};
    int64_t sizes[] = {4096, 1024, 8192, 8192};
    for (int i = 0; i < 4; i++) {
        if (all[i] == NULL)
            continue;
        CHECK_EQ_INT(mxk_executor_forward(all[i], 0), MXK_OK);
        float *v = malloc(sizeof(float) * (size_t)sizes[i]);
        et_host(mxk_executor_output(all[i], 0), v);
        float t = tanhf(0.5f), want = t + tanhf(t);
        CHECK_NEAR(v[0], want, 1e-6);
        CHECK_NEAR(v[sizes[i] - 1], want, 1e-6);
        free(v);
    }
    for (int i = 3; i >= 0; i--)
        mxk_executor_free(all[i]);
    mxk_ndarray *arrs[] = {xa, tmp, xc, xd};
    for (int i = 0; i < 4; i++)
        mxk_ndarray_free(arrs[i]);
    et_free_syms(4, x, t1, t2, sum);
}

/** simple_bind with shared_exec reuses its same-named arrays (views when smaller). */
static void test_simple_bind_shares_arrays(void) {
    mxk_symbol *x = et_var("x");
    mxk_symbol *y = et_op("FullyConnected", "fc", "num_hidden=3", 1, x);
    const char *xn[] = {"x"};
    mxk_shape big[] = {et_shape(2, 8, 5, 0, 0)}, small[] = {et_shape(2, 4, 5, 0, 0)},
              bigger[] = {et_shape(2, 16, 5, 0, 0)};
    mxk_executor *a = NULL, *b = NULL, *c = NULL;
    CHECK_EQ_INT(mxk_executor_simple_bind(y, et_cpu, 1, xn, big, "write", 0, NULL, NULL, NULL, &a),
                 MXK_OK);
    if (a == NULL)
        return;
    CHECK_EQ_INT(mxk_executor_simple_bind(y, et_cpu, 1, xn, small, "write", 0, NULL, NULL, a, &b),
                 MXK_OK);
    CHECK_EQ_INT(mxk_executor_simple_bind(y, et_cpu, 1, xn, bigger, "write", 0, NULL, NULL, a, &c),
                 MXK_OK);
    if (b != NULL && c != NULL) {
        /* Parameters (same shape) and data (smaller) are shared with a ... */
        mxk_ndarray_fill(mxk_executor_arg(b, "fc_weight"), 3);
        mxk_ndarray_fill(mxk_executor_arg(b, "x"), 7);
        float w[15], xv[40];
        et_host(mxk_executor_arg(a, "fc_weight"), w);
        CHECK(w[0] == 3 && w[14] == 3);
        et_host(mxk_executor_arg(a, "x"), xv);
        CHECK(xv[0] == 7 && xv[19] == 7 && xv[20] == 0);
        mxk_ndarray_fill(mxk_executor_grad(a, "fc_bias"), 4);
        float gb[3];
        et_host(mxk_executor_grad(b, "fc_bias"), gb);
        CHECK(gb[0] == 4 && gb[2] == 4);
        /* ... but data larger than a's gets a fresh, zero-filled array. */
        float xc[80];
        et_host(mxk_executor_arg(c, "x"), xc);
        CHECK(xc[0] == 0 && xc[79] == 0);
        et_host(mxk_executor_arg(c, "fc_weight"), w);
        CHECK(w[0] == 3);
    }
    mxk_executor_free(c);
    mxk_executor_free(b);
    mxk_executor_free(a);
    et_free_syms(2, x, y);
}

int main(void) {
    if (et_init() != 0)
        return 1;
    MXK_RUN(test_t5_up_sizing);
    MXK_RUN(test_t6_upstream_reshape);
    MXK_RUN(test_reshape_with_gradients);
    MXK_RUN(test_shared_pool);
    MXK_RUN(test_simple_bind_shares_arrays);
    int rc = MXK_TEST_EXIT();
    mxk_shutdown();
    return rc;
}
