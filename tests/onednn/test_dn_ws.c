/*
 * The workspace the onednn max-pooling and LRN kernels keep per node for their
 * backward (plugins/onednn/dn_util.h dn_ws): keyed by the data's (pointer, write
 * version), it must never serve a backward whose data it was not computed from.
 * Each case runs the onednn kernel's backward and compares dx with cpu-blas's
 * (forward then backward on the same data) within 1e-5:
 *   - a backward with no forward on the node's state (recomputed);
 *   - a forward, then the data array rewritten with other values, then the
 *     backward (stale: recomputed; reusing it routes max pooling's gradient to
 *     the old maxima, which this case catches);
 *   - a forward and a backward on the same data (the kept workspace).
 * Usage: test_dn_ws CONFDIR.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onednn_test.h"

/** Most elements of a case's data. */
enum { MAXN = 2 * 16 * 6 * 6 };

/** One operator configuration: name, attributes, data shape. */
typedef struct ws_case {
    const char *op;
    uint32_t nattrs;
    const char *keys[4], *vals[4];
    mxk_shape shape;
} ws_case;

/** An instance of the case's operator on `prefer` (preference list); checks its backend. */
static mxk_op_instance *make(const ws_case *c, const char *prefer, const char *backend) {
    mxk_op_instance *op = NULL;
    CHECK_EQ_INT(mxk_set_backend_preference(prefer), MXK_OK);
    CHECK_EQ_INT(
        mxk_op_instance_create(c->op, c->nattrs, c->keys, c->vals, cpu, 1, &c->shape, NULL, &op),
        MXK_OK);
    if (op != NULL)
        CHECK(strcmp(mxk_op_instance_backend(op), backend) == 0);
    return op;
}

/** The instance's outputs (all of them, hidden ones too) as new arrays. */
static uint32_t outputs(mxk_op_instance *op, mxk_ndarray **out) {
    uint32_t ni, no, nv, na;
    mxk_op_instance_counts(op, &ni, &no, &nv, &na);
    for (uint32_t i = 0; i < no; i++) {
        mxk_shape s;
        int32_t dt;
        CHECK_EQ_INT(mxk_op_instance_shape(op, 1, i, &s, &dt), MXK_OK);
        out[i] = array(&s, NULL, 0);
    }
    return no;
}

/**
 * cpu-blas's dx for data xv and output gradient dyv (forward, then backward),
 * and its outputs into y (reused as the onednn backward's out_data).
 */
static void reference(const ws_case *c, const float *xv, mxk_ndarray *dy, mxk_ndarray **y,
                      float *dx, size_t n) {
    mxk_op_instance *op = make(c, "cpu-blas", "cpu-blas");
    mxk_ndarray *x = array(&c->shape, xv, n), *g = array(&c->shape, NULL, 0);
    CHECK_EQ_INT(mxk_op_instance_forward(op, 1, &x, y, NULL, NULL), MXK_OK);
    CHECK_EQ_INT(mxk_op_instance_backward(op, &dy, &x, y, &g, NULL, NULL), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(g, dx, n * sizeof *dx), MXK_OK);
    mxk_ndarray_free(g);
    mxk_ndarray_free(x);
    mxk_op_instance_free(op);
}

/** Runs onednn's backward on data array x and checks dx against `want` (1e-5). */
static void check_backward(mxk_op_instance *op, mxk_ndarray *x, mxk_ndarray *dy, mxk_ndarray **y,
                           const float *want, size_t n, const char *what) {
    static float got[MAXN];
    mxk_shape xs = mxk_ndarray_shape(x);
    mxk_ndarray *g = array(&xs, NULL, 0);
    CHECK_EQ_INT(mxk_op_instance_backward(op, &dy, &x, y, &g, NULL, NULL), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(g, got, n * sizeof *got), MXK_OK);
    double worst = 0.0;
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs((double)got[i] - want[i]));
    if (worst > 1e-5)
        printf("%s: dx differs from cpu-blas by %g\n", what, worst);
    CHECK(worst <= 1e-5);
    mxk_ndarray_free(g);
}

/** The three cases of the file comment for one configuration. */
static void run_case(const ws_case *c) {
    static float x1[MAXN], x2[MAXN], dyv[MAXN], dx1[MAXN], dx2[MAXN];
    const size_t n =
        (size_t)(c->shape.dims[0] * c->shape.dims[1] * c->shape.dims[2] * c->shape.dims[3]);
    for (size_t i = 0; i < n; i++) { /* distinct values; x2 puts the maxima elsewhere */
        x1[i] = (float)((int)(i * 37 % 101) - 50) / 50.0f;
        x2[i] = (float)((int)(i * 53 % 103) - 51) / 51.0f;
        dyv[i] = (float)((int)(i * 11 % 17) - 8) / 8.0f;
    }
    mxk_op_instance *op = make(c, "onednn,cpu-blas", "onednn");
    if (op == NULL)
        return;
    mxk_ndarray *y1[2] = {NULL, NULL}, *y2[2] = {NULL, NULL};
    uint32_t no = outputs(op, y1);
    outputs(op, y2);
    mxk_shape ys;
    int32_t dt;
    CHECK_EQ_INT(mxk_op_instance_shape(op, 1, 0, &ys, &dt), MXK_OK);
    size_t ny = 1;
    for (int32_t i = 0; i < ys.ndim; i++)
        ny *= (size_t)ys.dims[i];
    mxk_ndarray *dy = array(&ys, dyv, ny);
    reference(c, x1, dy, y1, dx1, n);
    reference(c, x2, dy, y2, dx2, n);

    mxk_ndarray *x = array(&c->shape, x1, n);
    check_backward(op, x, dy, y1, dx1, n, "no forward on the state");
    mxk_ndarray *yo[2] = {NULL, NULL};
    outputs(op, yo);
    CHECK_EQ_INT(mxk_op_instance_forward(op, 1, &x, yo, NULL, NULL), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(x, x2, n * sizeof *x2), MXK_OK);
    check_backward(op, x, dy, y2, dx2, n, "data rewritten after the forward");
    CHECK_EQ_INT(mxk_op_instance_forward(op, 1, &x, yo, NULL, NULL), MXK_OK);
    check_backward(op, x, dy, y2, dx2, n, "forward and backward on the same data");

    for (uint32_t i = 0; i < no; i++) {
        mxk_ndarray_free(y1[i]);
        mxk_ndarray_free(y2[i]);
        mxk_ndarray_free(yo[i]);
    }
    mxk_ndarray_free(dy);
    mxk_ndarray_free(x);
    mxk_op_instance_free(op);
}

/** Max pooling 2x2, stride 2: the workspace holds each window's argmax. */
static void test_max_pooling_workspace(void) {
    ws_case c = {"Pooling",
                 3,
                 {"kernel", "stride", "pool_type"},
                 {"(2,2)", "(2,2)", "max"},
                 {.ndim = 4, .dims = {2, 16, 6, 6}}};
    run_case(&c);
}

/** LRN (nsize 5, a JIT configuration run in a channel-blocked layout). */
static void test_lrn_workspace(void) {
    ws_case c = {"LRN",
                 4,
                 {"nsize", "alpha", "beta", "knorm"},
                 {"5", "0.5", "0.75", "1"},
                 {.ndim = 4, .dims = {2, 16, 6, 6}}};
    run_case(&c);
}

int main(int argc, char **argv) {
    int rc = onednn_test_init(argc, argv);
    if (rc != 0)
        return rc;
    MXK_RUN(test_max_pooling_workspace);
    MXK_RUN(test_lrn_workspace);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
