/*
 * The graph-test plugin's operators (graph_test_plugin.c), run through operator
 * instances so that the passes and executor tests can rely on them: shape
 * inference (weights from data, hidden outputs, aux states), TestConv's forward
 * on a hand-computed case and its backward against finite differences, TestPool's
 * max/avg (first maximum only, as upstream src/operator/nn/pool.h).
 * BatchNorm, which the symbol tests also use, comes from cpu-blas.
 */
#include <math.h>

#include "symbol_test_util.h"

static const mxk_context cpu = {MXK_DEV_CPU, 0};

/** A float32 CPU array of `shape` filled from v (NULL: zeros). */
static mxk_ndarray *arr(const mxk_shape *shape, const float *v) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_full(shape, MXK_FLOAT32, cpu, 0.0, &a) != MXK_OK)
        return NULL;
    if (v != NULL)
        mxk_ndarray_copy_from_host(a, v, mxk_ndarray_size(a) * sizeof(float));
    return a;
}

/** Copies an array to host memory. */
static void host(mxk_ndarray *a, float *out) {
    if (mxk_ndarray_copy_to_host(a, out, mxk_ndarray_size(a) * sizeof(float)) != MXK_OK)
        fprintf(stderr, "copy_to_host: %s\n", mxk_get_last_error());
}

/** A 4-d shape. */
static mxk_shape s4(int64_t a, int64_t b, int64_t c, int64_t d) {
    mxk_shape s = {.ndim = 4, .dims = {a, b, c, d}};
    return s;
}

/* TestConv: weight/bias shapes inferred; a hand case with and without padding; ADD. */
static void test_conv_forward(void) {
    const char *k[] = {"kernel", "num_filter", "pad"}, *v[] = {"(2,2)", "1", "(1,1)"};
    mxk_shape in[3] = {s4(1, 1, 3, 3), {.ndim = 0}, {.ndim = 0}};
    mxk_op_instance *op = NULL;
    CHECK_EQ_INT(mxk_op_instance_create("TestConv", 3, k, v, cpu, 3, in, NULL, &op), MXK_OK);
    if (op == NULL)
        return;
    mxk_shape ws, bs, ys;
    mxk_op_instance_shape(op, 0, 1, &ws, NULL);
    mxk_op_instance_shape(op, 0, 2, &bs, NULL);
    mxk_op_instance_shape(op, 1, 0, &ys, NULL);
    CHECK(ws.ndim == 4 && ws.dims[0] == 1 && ws.dims[1] == 1 && ws.dims[2] == 2);
    CHECK(bs.ndim == 1 && bs.dims[0] == 1);
    CHECK(ys.ndim == 4 && ys.dims[2] == 4 && ys.dims[3] == 4); /* (3 + 2 - 2) / 1 + 1 */
    const float ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, half = 0.5f;
    mxk_ndarray *x = arr(&in[0], ones), *w = arr(&ws, ones), *b = arr(&bs, &half);
    mxk_ndarray *y = arr(&ys, NULL);
    mxk_ndarray *ins[3] = {x, w, b};
    CHECK_EQ_INT(mxk_op_instance_forward(op, 0, ins, &y, NULL, NULL), MXK_OK);
    float out[16];
    host(y, out);
    /* corners see 1 input, edges 2, the centre 4; plus the bias */
    CHECK(out[0] == 1.5f && out[1] == 2.5f && out[5] == 4.5f && out[15] == 1.5f);
    mxk_op_req add = MXK_REQ_ADD;
    CHECK_EQ_INT(mxk_op_instance_forward(op, 0, ins, &y, &add, NULL), MXK_OK);
    host(y, out);
    CHECK(out[0] == 3.0f && out[5] == 9.0f);
    mxk_ndarray *all[] = {x, w, b, y};
    for (size_t i = 0; i < 4; i++)
        mxk_ndarray_free(all[i]);
    mxk_op_instance_free(op);
}

/** sum(y * r) of TestConv for the given inputs (the loss of the gradient check). */
static double conv_loss(mxk_op_instance *op, mxk_ndarray *const *ins, mxk_ndarray *y,
                        const float *r, size_t ny) {
    mxk_op_instance_forward(op, 0, ins, &y, NULL, NULL);
    float out[256];
    host(y, out);
    double s = 0;
    for (size_t i = 0; i < ny; i++)
        s += (double)out[i] * r[i];
    return s;
}

/* TestConv backward (stride 2, padding 1) against central differences. */
static void test_conv_gradient(void) {
    const char *k[] = {"kernel", "num_filter", "stride", "pad"},
               *v[] = {"(3,3)", "2", "(2,2)", "(1,1)"};
    mxk_shape xs = s4(1, 2, 5, 5), ws = s4(2, 2, 3, 3), bs = {.ndim = 1, .dims = {2}};
    mxk_shape in[3] = {xs, ws, bs};
    mxk_op_instance *op = NULL;
    CHECK_EQ_INT(mxk_op_instance_create("TestConv", 4, k, v, cpu, 3, in, NULL, &op), MXK_OK);
    if (op == NULL)
        return;
    mxk_shape ys;
    mxk_op_instance_shape(op, 1, 0, &ys, NULL);
    CHECK(ys.dims[1] == 2 && ys.dims[2] == 3 && ys.dims[3] == 3);
    float xv[50], wv[36], bv[2] = {0.1f, -0.2f}, r[18];
    uint64_t seed = 12345;
    for (int i = 0; i < 50; i++)
        xv[i] = (float)((seed = seed * 6364136223846793005ull + 1) >> 40) / (1 << 24) - 0.5f;
    for (int i = 0; i < 36; i++)
        wv[i] = (float)((seed = seed * 6364136223846793005ull + 1) >> 40) / (1 << 24) - 0.5f;
    for (int i = 0; i < 18; i++)
        r[i] = (float)((seed = seed * 6364136223846793005ull + 1) >> 40) / (1 << 24) - 0.5f;
    mxk_ndarray *x = arr(&xs, xv), *w = arr(&ws, wv), *b = arr(&bs, bv), *y = arr(&ys, NULL);
    mxk_ndarray *dy = arr(&ys, r), *dx = arr(&xs, NULL), *dw = arr(&ws, NULL), *db = arr(&bs, NULL);
    mxk_ndarray *ins[3] = {x, w, b}, *grads[3] = {dx, dw, db};
    CHECK_EQ_INT(mxk_op_instance_backward(op, &dy, ins, NULL, grads, NULL, NULL), MXK_OK);
    float gx[50], gw[36], gb[2];
    host(dx, gx);
    host(dw, gw);
    host(db, gb);
    float *vals[3] = {xv, wv, bv}, *grad[3] = {gx, gw, gb};
    int counts[3] = {50, 36, 2}, bad = 0;
    const float eps = 1e-2f;
    for (int a = 0; a < 3; a++) {
        for (int i = 0; i < counts[a]; i++) {
            float keep = vals[a][i];
            vals[a][i] = keep + eps;
            mxk_ndarray_copy_from_host(ins[a], vals[a], (size_t)counts[a] * sizeof(float));
            double lp = conv_loss(op, ins, y, r, 18);
            vals[a][i] = keep - eps;
            mxk_ndarray_copy_from_host(ins[a], vals[a], (size_t)counts[a] * sizeof(float));
            double lm = conv_loss(op, ins, y, r, 18);
            vals[a][i] = keep;
            mxk_ndarray_copy_from_host(ins[a], vals[a], (size_t)counts[a] * sizeof(float));
            double num = (lp - lm) / (2.0 * eps);
            if (fabs(num - grad[a][i]) > 1e-3 * (1.0 + fabs(num)))
                bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
    double mag = 0;
    for (int i = 0; i < 36; i++)
        mag += fabs(gw[i]);
    CHECK(mag > 0.1 && gx[12] != 0.0f && gb[0] != 0.0f); /* a real comparison happened */
    mxk_ndarray *all[] = {x, w, b, y, dy, dx, dw, db};
    for (size_t i = 0; i < 8; i++)
        mxk_ndarray_free(all[i]);
    mxk_op_instance_free(op);
}

/* TestPool: max takes the first maximum, avg divides by the window. */
static void test_pool(void) {
    const float xv[4] = {1, 3, 3, 2}, one = 1.0f;
    mxk_shape xs = s4(1, 1, 2, 2), ys = s4(1, 1, 1, 1);
    for (int avg = 0; avg < 2; avg++) {
        const char *k[] = {"kernel", "pool_type"}, *v[] = {"(2,2)", avg ? "avg" : "max"};
        mxk_op_instance *op = NULL;
        CHECK_EQ_INT(mxk_op_instance_create("TestPool", 2, k, v, cpu, 1, &xs, NULL, &op), MXK_OK);
        if (op == NULL)
            return;
        mxk_ndarray *x = arr(&xs, xv), *y = arr(&ys, NULL), *dy = arr(&ys, &one);
        mxk_ndarray *dx = arr(&xs, NULL);
        CHECK_EQ_INT(mxk_op_instance_forward(op, 0, &x, &y, NULL, NULL), MXK_OK);
        CHECK_EQ_INT(mxk_op_instance_backward(op, &dy, &x, NULL, &dx, NULL, NULL), MXK_OK);
        float out, g[4];
        host(y, &out);
        host(dx, g);
        if (avg) {
            CHECK(out == 2.25f);
            CHECK(g[0] == 0.25f && g[1] == 0.25f && g[2] == 0.25f && g[3] == 0.25f);
        } else {
            CHECK(out == 3.0f);
            CHECK(g[0] == 0 && g[1] == 1 && g[2] == 0 && g[3] == 0);
        }
        mxk_ndarray *all[] = {x, y, dy, dx};
        for (size_t i = 0; i < 4; i++)
            mxk_ndarray_free(all[i]);
        mxk_op_instance_free(op);
    }
}

/* Shape errors name the argument. */
static void test_shape_errors(void) {
    mxk_shape in[3] = {{.ndim = 2, .dims = {3, 4}}, {.ndim = 0}, {.ndim = 0}};
    mxk_op_instance *op = NULL;
    const char *k[] = {"kernel", "num_filter"}, *v[] = {"(2,2)", "1"};
    CHECK_EQ_INT(mxk_op_instance_create("TestConv", 2, k, v, cpu, 3, in, NULL, &op), MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(), "argument 'data': expected 4 dims (N,C,H,W), got (3,4)");
    mxk_op_instance_free(op);
    /* sizes that would overflow x + 2 * pad are refused, never computed */
    const char *kp[] = {"kernel", "num_filter", "pad"},
               *vp[] = {"(2,2)", "1", "(4611686018427387904,0)"};
    in[0] = (mxk_shape){.ndim = 4, .dims = {1, 1, 4, 4}};
    CHECK_EQ_INT(mxk_op_instance_create("TestConv", 3, kp, vp, cpu, 3, in, NULL, &op),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "TestConv: attribute 'pad': expected 2 entries in [0, 2147483647] (2-D only)");
    mxk_shape big = {.ndim = 4, .dims = {1, 1, INT64_MAX, 1}};
    const char *kk[] = {"kernel"}, *vk[] = {"(1,1)"};
    CHECK_EQ_INT(mxk_op_instance_create("TestPool", 1, kk, vk, cpu, 1, &big, NULL, &op),
                 MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "TestPool: argument 'data': shape (1,1,9223372036854775807,1) has too many "
                   "elements");
}

int main(void) {
    if (st_setup() != 0)
        return 1;
    MXK_RUN(test_conv_forward);
    MXK_RUN(test_conv_gradient);
    MXK_RUN(test_pool);
    MXK_RUN(test_shape_errors);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
