/*
 * Graph outputs that list one entry several times (a GRU's last output and its
 * state, mx.rnn's unroll with merge_outputs=False): MXNet sums their head
 * gradients (nnvm src/pass/gradient.cc aggregates every output gradient of an
 * entry). With y = 2 x and Group([y, y]) the gradient of x is 2 (g1 + g2) in
 * closed form; with Group([y, y + 1, y]) it is 2 (g1 + g2 + g3).
 */
#include "exec_test_util.h"

/** 6 elements: the (2,3) arrays of these tests. */
enum { N = 6 };

/** Binds `sym` (one argument x of shape (2,3)) with x = xv and a gradient of request req. */
static mxk_executor *bind_x(mxk_symbol *sym, const float *xv, mxk_ndarray *grad, mxk_op_req req) {
    mxk_ndarray *x = et_array(et_shape(2, 2, 3, 0, 0), xv);
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(mxk_executor_bind(sym, et_cpu, 1, &x, &grad, &req, 0, NULL, NULL, &ex), MXK_OK);
    mxk_ndarray_free(x);
    return ex;
}

/** Group([y, y]), y = 2 x: forward outputs equal, d/dx = 2 (g1 + g2), repeatably. */
static void test_two_heads_of_one_entry(void) {
    mxk_symbol *x = et_var("x");
    mxk_symbol *y = et_op("_mul_scalar", "y", "scalar=2", 1, x);
    mxk_symbol *pair[2] = {y, y}, *g = NULL;
    CHECK_EQ_INT(mxk_symbol_group(2, pair, &g), MXK_OK);
    const float xv[N] = {1, -2, 3, 0.5f, -1, 4};
    const float g1[N] = {1, 2, 3, 4, 5, 6}, g2[N] = {0.5f, -1, 0.25f, 2, -3, 1};
    mxk_ndarray *grad = et_full(et_shape(2, 2, 3, 0, 0), 0.f);
    mxk_executor *ex = bind_x(g, xv, grad, MXK_REQ_WRITE);
    CHECK(ex != NULL);
    if (ex != NULL) {
        mxk_ndarray *heads[2] = {et_array(et_shape(2, 2, 3, 0, 0), g1),
                                 et_array(et_shape(2, 2, 3, 0, 0), g2)};
        float y_expect[N], dx[N];
        for (int i = 0; i < N; i++) {
            y_expect[i] = 2 * xv[i];
            dx[i] = 2 * (g1[i] + g2[i]);
        }
        for (int pass = 0; pass < 2; pass++) { /* the second backward must not accumulate */
            CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
            CHECK_EQ_INT(mxk_executor_backward(ex, 2, heads), MXK_OK);
            ET_CHECK_ARRAY(mxk_executor_output(ex, 0), y_expect, N, 1e-6);
            ET_CHECK_ARRAY(mxk_executor_output(ex, 1), y_expect, N, 1e-6);
            ET_CHECK_ARRAY(grad, dx, N, 1e-5);
        }
        /* The same array as both head gradients: 2 (g1 + g1). */
        mxk_ndarray *same[2] = {heads[0], heads[0]};
        float dx_same[N];
        for (int i = 0; i < N; i++)
            dx_same[i] = 4 * g1[i];
        CHECK_EQ_INT(mxk_executor_backward(ex, 2, same), MXK_OK);
        ET_CHECK_ARRAY(grad, dx_same, N, 1e-5);
        mxk_ndarray_free(heads[0]);
        mxk_ndarray_free(heads[1]);
        mxk_executor_free(ex);
    }
    mxk_ndarray_free(grad);
    et_free_syms(3, x, y, g);
}

/** Group([y, y + 1, y]) with grad_req add: grad = start + 2 (g1 + g2 + g3). */
static void test_three_heads_add(void) {
    mxk_symbol *x = et_var("x");
    mxk_symbol *y = et_op("_mul_scalar", "y", "scalar=2", 1, x);
    mxk_symbol *z = et_op("_plus_scalar", "z", "scalar=1", 1, y);
    mxk_symbol *three[3] = {y, z, y}, *g = NULL;
    CHECK_EQ_INT(mxk_symbol_group(3, three, &g), MXK_OK);
    const float xv[N] = {0, 1, 2, 3, 4, 5};
    const float hv[3][N] = {{1, 1, 1, 1, 1, 1}, {2, 0, -2, 1, 3, -1}, {0.5f, 0.25f, 0, -1, 2, 1}};
    const float start[N] = {10, 20, 30, 40, 50, 60};
    mxk_ndarray *grad = et_array(et_shape(2, 2, 3, 0, 0), start);
    mxk_executor *ex = bind_x(g, xv, grad, MXK_REQ_ADD);
    CHECK(ex != NULL);
    if (ex != NULL) {
        mxk_ndarray *heads[3];
        float expect[N];
        for (int h = 0; h < 3; h++)
            heads[h] = et_array(et_shape(2, 2, 3, 0, 0), hv[h]);
        for (int i = 0; i < N; i++)
            expect[i] = start[i] + 2 * (hv[0][i] + hv[1][i] + hv[2][i]);
        CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
        CHECK_EQ_INT(mxk_executor_backward(ex, 3, heads), MXK_OK);
        ET_CHECK_ARRAY(grad, expect, N, 1e-4);
        for (int h = 0; h < 3; h++)
            mxk_ndarray_free(heads[h]);
        mxk_executor_free(ex);
    }
    mxk_ndarray_free(grad);
    et_free_syms(4, x, y, z, g);
}

int main(void) {
    if (et_init() != 0)
        return 1;
    MXK_RUN(test_two_heads_of_one_entry);
    MXK_RUN(test_three_heads_add);
    int rc = MXK_TEST_EXIT();
    mxk_shutdown();
    return rc;
}
