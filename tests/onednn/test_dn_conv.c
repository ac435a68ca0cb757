/*
 * The onednn Convolution kernel's weight cache (dn_conv_port.c): inference keeps
 * the weight reordered into oneDNN's blocked layout, keyed by (data pointer,
 * write version), so the output must follow every write of the weight (new
 * values, the same values written again, a different weight array) and stay
 * right when nothing was written. Expected outputs are computed here in float64
 * (a 3x3, pad 1 convolution of MXNet's definition, src/operator/nn/convolution-inl.h).
 * Usage: test_dn_conv CONFDIR.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onednn_test.h"

enum { N = 2, C = 16, F = 32, S = 8, NX = N * C * S * S, NW = F * C * 9, NY = N * F * S * S };

/** The largest |y - conv(x, w)| over the (N, F, S, S) output, the reference in float64. */
static double conv_error(const float *x, const float *w, const float *y) {
    double worst = 0.0;
    for (int n = 0; n < N; n++)
        for (int f = 0; f < F; f++)
            for (int i = 0; i < S; i++)
                for (int j = 0; j < S; j++) {
                    double s = 0.0;
                    for (int c = 0; c < C; c++)
                        for (int a = 0; a < 3; a++)
                            for (int b = 0; b < 3; b++) {
                                int r = i + a - 1, q = j + b - 1;
                                if (r >= 0 && r < S && q >= 0 && q < S)
                                    s += (double)x[((n * C + c) * S + r) * S + q] *
                                         (double)w[((f * C + c) * 3 + a) * 3 + b];
                            }
                    double e = fabs(s - y[((n * F + f) * S + i) * S + j]);
                    worst = e > worst ? e : worst;
                }
    return worst;
}

/** Runs the inference forward with weight `wa` and checks y against weight values w. */
static void check_forward(mxk_op_instance *op, mxk_ndarray *x, mxk_ndarray *wa, mxk_ndarray *y,
                          const float *xv, const float *w, const char *what) {
    static float yv[NY];
    mxk_ndarray *in[2] = {x, wa};
    CHECK_EQ_INT(mxk_op_instance_forward(op, 0, in, &y, NULL, NULL), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(y, yv, sizeof yv), MXK_OK);
    double e = conv_error(xv, w, yv);
    if (e > 1e-4)
        printf("%s: max error %g\n", what, e);
    CHECK(e <= 1e-4);
}

/** The output follows every write of the weight, and of a new weight array. */
static void test_conv_inference_weight_cache(void) {
    static float xv[NX], w1[NW], w2[NW];
    for (int i = 0; i < NX; i++)
        xv[i] = (float)((i * 37 % 101) - 50) / 50.0f;
    for (int i = 0; i < NW; i++) {
        w1[i] = (float)((i * 13 % 29) - 14) / 28.0f;
        w2[i] = (float)((i * 7 % 31) - 15) / 30.0f;
    }
    const char *keys[] = {"kernel", "num_filter", "pad", "no_bias"};
    const char *vals[] = {"(3,3)", "32", "(1,1)", "1"};
    mxk_shape shapes[2] = {{.ndim = 4, .dims = {N, C, S, S}}, {.ndim = 4, .dims = {F, C, 3, 3}}};
    mxk_shape ys = {.ndim = 4, .dims = {N, F, S, S}};
    mxk_op_instance *op = NULL;
    CHECK_EQ_INT(mxk_set_backend_preference("onednn,cpu-blas"), MXK_OK);
    CHECK_EQ_INT(mxk_op_instance_create("Convolution", 4, keys, vals, cpu, 2, shapes, NULL, &op),
                 MXK_OK);
    if (op == NULL)
        return;
    CHECK(strcmp(mxk_op_instance_backend(op), "onednn") == 0);
    mxk_ndarray *x = array(&shapes[0], xv, NX), *w = array(&shapes[1], w1, NW);
    mxk_ndarray *y = array(&ys, NULL, 0);
    check_forward(op, x, w, y, xv, w1, "first weight");
    check_forward(op, x, w, y, xv, w1, "no write since");
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(w, w2, sizeof w2), MXK_OK);
    check_forward(op, x, w, y, xv, w2, "new values");
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(w, w1, sizeof w1), MXK_OK);
    check_forward(op, x, w, y, xv, w1, "old values again");
    mxk_ndarray *w_other = array(&shapes[1], w2, NW);
    check_forward(op, x, w_other, y, xv, w2, "another weight array");
    check_forward(op, x, w, y, xv, w1, "the first array again");
    mxk_ndarray_free(w_other);
    mxk_ndarray_free(w);
    mxk_ndarray_free(x);
    mxk_ndarray_free(y);
    mxk_op_instance_free(op);
}

int main(int argc, char **argv) {
    int rc = onednn_test_init(argc, argv);
    if (rc != 0)
        return rc;
    MXK_RUN(test_conv_inference_weight_cache);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
