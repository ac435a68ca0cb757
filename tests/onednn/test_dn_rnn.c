/*
 * The saved values the onednn RNN kernel keeps per node for its backward
 * (plugins/onednn/dn_rnn.c: oneDNN's workspace, the layer outputs and final
 * states of the last training forward, keyed by the (pointer, write version) of
 * every argument) must never serve a backward whose arguments they were not
 * computed from. Each case runs the onednn kernel's backward and compares every
 * gradient (data, parameters, state, state_cell) with cpu-blas's forward then
 * backward on the same arguments (|a - b| <= 1e-4 + 1e-3 |b|):
 *   - a backward with no forward on the node's state (recomputed);
 *   - a forward on data A, a forward on data B (another executor sharing the
 *     node's operator), then the backward of A (recomputed);
 *   - a forward, then the data array rewritten, then the backward (recomputed);
 *   - a forward, then the parameters rewritten, then the backward (recomputed);
 *   - a forward and a backward on the same arguments (the kept values).
 * Configuration: a 2-layer bidirectional LSTM with state outputs, T 4, N 3, C 5,
 * H 4, so every argument and output takes part.
 * Usage: test_dn_rnn CONFDIR.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onednn_test.h"

/** Arguments (data, parameters, state, state_cell) and visible outputs. */
enum { NI = 4, NV = 3, NO = NV + 1 };

/** Most elements of any argument or output. */
enum { MAXN = 1024 };

static const char *const keys[] = {"mode", "state_size", "num_layers", "bidirectional",
                                   "state_outputs"};
static const char *const vals[] = {"lstm", "4", "2", "1", "1"};
/** The data shape (T, N, C); the other arguments' shapes are inferred. */
static const mxk_shape shapes[NI] = {{.ndim = 3, .dims = {4, 3, 5}}};

/** Host values of the arguments and the output gradients; sizes. */
typedef struct rnn_values {
    float in[NI][MAXN], og[NV][MAXN];
    size_t nin[NI], nout[NO];
    mxk_shape sin[NI], sout[NO];
} rnn_values;

/** An instance on `prefer`; checks that `backend` runs it. */
static mxk_op_instance *make(const char *prefer, const char *backend) {
    mxk_op_instance *op = NULL;
    CHECK_EQ_INT(mxk_set_backend_preference(prefer), MXK_OK);
    CHECK_EQ_INT(mxk_op_instance_create("RNN", 5, keys, vals, cpu, NI, shapes, NULL, &op), MXK_OK);
    if (op != NULL)
        CHECK(strcmp(mxk_op_instance_backend(op), backend) == 0);
    return op;
}

/** Elements of a shape. */
static size_t count(const mxk_shape *s) {
    size_t n = 1;
    for (int32_t i = 0; i < s->ndim; i++)
        n *= (size_t)s->dims[i];
    return n;
}

/** Fills v's shapes from op and its values from a seeded sequence in [-1, 1). */
static void values_init(mxk_op_instance *op, rnn_values *v) {
    int32_t dt;
    for (uint32_t i = 0; i < NI; i++) {
        CHECK_EQ_INT(mxk_op_instance_shape(op, 0, i, &v->sin[i], &dt), MXK_OK);
        v->nin[i] = count(&v->sin[i]);
        CHECK(v->nin[i] <= MAXN);
        for (size_t j = 0; j < v->nin[i] && j < MAXN; j++)
            v->in[i][j] = (float)((int)((j * 37 + i * 11) % 101) - 50) / 50.0f;
    }
    for (uint32_t i = 0; i < NO; i++) {
        CHECK_EQ_INT(mxk_op_instance_shape(op, 1, i, &v->sout[i], &dt), MXK_OK);
        v->nout[i] = count(&v->sout[i]);
    }
    for (uint32_t i = 0; i < NV; i++)
        for (size_t j = 0; j < v->nout[i] && j < MAXN; j++)
            v->og[i][j] = (float)((int)((j * 11 + i * 5) % 17) - 8) / 8.0f;
}

/** New arrays of the argument values (data from `data`, parameters from `w`). */
static void args_new(const rnn_values *v, const float *data, const float *w, mxk_ndarray **a) {
    for (uint32_t i = 0; i < NI; i++)
        a[i] = array(&v->sin[i], i == 0 ? data : i == 1 ? w : v->in[i], v->nin[i]);
}

/** New arrays of `n` slots of shapes s (values uninitialised, or `fill` when not NULL). */
static void arrays_new(const mxk_shape *s, uint32_t n, float (*fill)[MAXN], const size_t *sizes,
                       mxk_ndarray **a) {
    for (uint32_t i = 0; i < n; i++)
        a[i] = array(&s[i], fill ? fill[i] : NULL, fill ? sizes[i] : 0);
}

/** Frees n arrays. */
static void arrays_free(mxk_ndarray **a, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        mxk_ndarray_free(a[i]);
}

/** Runs the backward of op on arguments a and outputs y; gradients into g (host). */
static void backward(mxk_op_instance *op, const rnn_values *v, mxk_ndarray **a, mxk_ndarray **y,
                     float (*g)[MAXN]) {
    mxk_ndarray *og[NV], *ig[NI];
    arrays_new(v->sout, NV, (float(*)[MAXN])v->og, v->nout, og);
    arrays_new(v->sin, NI, NULL, NULL, ig);
    CHECK_EQ_INT(mxk_op_instance_backward(op, og, a, y, ig, NULL, NULL), MXK_OK);
    for (uint32_t i = 0; i < NI; i++)
        CHECK_EQ_INT(mxk_ndarray_copy_to_host(ig[i], g[i], v->nin[i] * sizeof(float)), MXK_OK);
    arrays_free(og, NV);
    arrays_free(ig, NI);
}

/** cpu-blas's gradients for data `data` and parameters `w`: forward, then backward. */
static void reference(const rnn_values *v, const float *data, const float *w, float (*g)[MAXN]) {
    mxk_op_instance *op = make("cpu-blas", "cpu-blas");
    mxk_ndarray *a[NI], *y[NO];
    args_new(v, data, w, a);
    arrays_new(v->sout, NO, NULL, NULL, y);
    CHECK_EQ_INT(mxk_op_instance_forward(op, 1, a, y, NULL, NULL), MXK_OK);
    backward(op, v, a, y, g);
    arrays_free(a, NI);
    arrays_free(y, NO);
    mxk_op_instance_free(op);
}

/** Runs onednn's backward on a, y and checks every gradient against `want`. */
static void check_backward(mxk_op_instance *op, const rnn_values *v, mxk_ndarray **a,
                           mxk_ndarray **y, float (*want)[MAXN], const char *what) {
    static float got[NI][MAXN];
    backward(op, v, a, y, got);
    for (uint32_t i = 0; i < NI; i++) {
        double worst = 0.0;
        for (size_t j = 0; j < v->nin[i]; j++)
            worst =
                fmax(worst, fabs((double)got[i][j] - want[i][j]) - 1e-3 * fabs((double)want[i][j]));
        if (worst > 1e-4)
            printf("%s: gradient %u differs from cpu-blas by %g beyond 1e-3 relative\n", what, i,
                   worst);
        CHECK(worst <= 1e-4);
    }
}

/** The five cases of the file comment. */
static void test_rnn_saved_values(void) {
    static rnn_values v;
    static float x2[MAXN], w2[MAXN], g11[NI][MAXN], g21[NI][MAXN], g12[NI][MAXN];
    mxk_op_instance *op = make("onednn,cpu-blas", "onednn");
    if (op == NULL)
        return;
    values_init(op, &v);
    for (size_t j = 0; j < v.nin[0]; j++)
        x2[j] = (float)((int)(j * 53 % 103) - 51) / 51.0f;
    for (size_t j = 0; j < v.nin[1]; j++)
        w2[j] = (float)((int)(j * 29 % 97) - 48) / 48.0f;
    reference(&v, v.in[0], v.in[1], g11); /* data 1, parameters 1 */
    reference(&v, x2, v.in[1], g21);      /* data 2, parameters 1 */
    reference(&v, v.in[0], w2, g12);      /* data 1, parameters 2 */

    mxk_ndarray *a[NI], *b[NI], *y[NO];
    args_new(&v, v.in[0], v.in[1], a);
    args_new(&v, x2, v.in[1], b);
    arrays_new(v.sout, NO, NULL, NULL, y);
    check_backward(op, &v, a, y, g11, "no forward on the state");
    CHECK_EQ_INT(mxk_op_instance_forward(op, 1, a, y, NULL, NULL), MXK_OK);
    CHECK_EQ_INT(mxk_op_instance_forward(op, 1, b, y, NULL, NULL), MXK_OK);
    check_backward(op, &v, a, y, g11, "another data's forward in between");
    CHECK_EQ_INT(mxk_op_instance_forward(op, 1, a, y, NULL, NULL), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(a[0], x2, v.nin[0] * sizeof(float)), MXK_OK);
    check_backward(op, &v, a, y, g21, "data rewritten after the forward");
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(a[0], v.in[0], v.nin[0] * sizeof(float)), MXK_OK);
    CHECK_EQ_INT(mxk_op_instance_forward(op, 1, a, y, NULL, NULL), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(a[1], w2, v.nin[1] * sizeof(float)), MXK_OK);
    check_backward(op, &v, a, y, g12, "parameters rewritten after the forward");
    CHECK_EQ_INT(mxk_op_instance_forward(op, 1, b, y, NULL, NULL), MXK_OK);
    check_backward(op, &v, b, y, g21, "forward and backward on the same arguments");
    arrays_free(a, NI);
    arrays_free(b, NI);
    arrays_free(y, NO);
    mxk_op_instance_free(op);
}

int main(int argc, char **argv) {
    int rc = onednn_test_init(argc, argv);
    if (rc != 0)
        return rc;
    MXK_RUN(test_rnn_saved_values);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
