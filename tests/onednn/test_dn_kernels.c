/*
 * The onednn kernels' own state, beyond what the agreement tables reach:
 *   - FullyConnected inference keeps its weight reordered into oneDNN's
 *     preferred layout, cached by (data pointer, write version): the output must
 *     follow every write of the weight (new values, the same values rewritten, a
 *     different weight array) and stay right when nothing was written;
 *   - add_n whose output shares memory with one or several of its inputs (oneDNN's
 *     sum allows only the first source as the output: the kernel reorders the
 *     sources or goes through scratch).
 * Expected values are computed here in float64 (FullyConnected) or exactly (small
 * integers for add_n). Usage: test_dn_kernels CONFDIR.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onednn_test.h"

enum { N = 4, K = 300, H = 70 };

/** The largest |y - (x w^T + b)| over the (N, H) output, the reference in float64. */
static double fc_error(const float *x, const float *w, const float *b, const float *y) {
    double worst = 0.0;
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++) {
            double s = b[h];
            for (int k = 0; k < K; k++)
                s += (double)x[n * K + k] * (double)w[h * K + k];
            worst = fmax(worst, fabs(s - (double)y[n * H + h]));
        }
    return worst;
}

/** Fills w with a pattern that differs per `seed`. */
static void fill_weight(float *w, int seed) {
    for (int i = 0; i < H * K; i++)
        w[i] = (float)(((i + 13 * seed) * 7) % 5) / 5.0f - 0.4f;
}

static void test_fc_inference_weight_cache(void) {
    static float x[N * K], w[H * K], b[H], y[N * H];
    mxk_shape sx = {.ndim = 2, .dims = {N, K}}, sw = {.ndim = 2, .dims = {H, K}};
    mxk_shape sb = {.ndim = 1, .dims = {H}}, sy = {.ndim = 2, .dims = {N, H}};
    mxk_shape shapes[3] = {sx, sw, sb};
    const char *keys[] = {"num_hidden"}, *vals[] = {"70"};
    mxk_op_instance *fc = NULL;
    CHECK_EQ_INT(mxk_set_op_backend("FullyConnected", "onednn"), MXK_OK);
    CHECK_EQ_INT(mxk_op_instance_create("FullyConnected", 1, keys, vals, cpu, 3, shapes, NULL, &fc),
                 MXK_OK);
    mxk_set_op_backend("FullyConnected", NULL);
    if (fc == NULL)
        return;
    CHECK(strcmp(mxk_op_instance_backend(fc), "onednn") == 0);
    for (int i = 0; i < N * K; i++)
        x[i] = (float)((i * 37) % 11) / 11.0f - 0.5f;
    for (int i = 0; i < H; i++)
        b[i] = 0.1f * (float)i;
    fill_weight(w, 0);
    mxk_ndarray *ax = array(&sx, x, N * K), *aw = array(&sw, w, H * K), *aw2 = array(&sw, NULL, 0);
    mxk_ndarray *ab = array(&sb, b, H), *ay = array(&sy, NULL, 0);
    /* rounds: 0 first use; 1 new values; 2 nothing written; 3 the same values written
     * again; 4 another array with other values; 5 back to the first array */
    for (int round = 0; round < 6; round++) {
        mxk_ndarray *weight = round == 4 ? aw2 : aw;
        if (round == 1)
            fill_weight(w, 1);
        if (round == 4)
            fill_weight(w, 2);
        if (round == 5)
            fill_weight(w, 1);
        if (round == 1 || round == 3 || round == 4)
            CHECK_EQ_INT(mxk_ndarray_copy_from_host(weight, w, sizeof w), MXK_OK);
        mxk_ndarray *in[3] = {ax, weight, ab};
        CHECK_EQ_INT(mxk_op_instance_forward(fc, 0, in, &ay, NULL, NULL), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_copy_to_host(ay, y, sizeof y), MXK_OK);
        double err = fc_error(x, w, b, y);
        if (!(err < 1e-4))
            fprintf(stderr, "round %d: max error %g\n", round, err);
        CHECK(err < 1e-4);
    }
    mxk_op_instance_free(fc);
    mxk_ndarray *all[] = {ax, aw, aw2, ab, ay};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mxk_ndarray_free(all[i]);
}

static void test_add_n_output_shares_inputs(void) {
    enum { M = 1000 };
    static float hx[M], hy[M], out[M];
    mxk_shape s = {.ndim = 1, .dims = {M}};
    mxk_shape shapes[3] = {s, s, s};
    const char *keys[] = {"num_args"}, *vals[] = {"3"};
    /* the output is x; the inputs (x, y, x), (y, x, x), (y, y, x): x shared once or twice */
    for (int pattern = 0; pattern < 3; pattern++) {
        mxk_op_instance *sum = NULL;
        CHECK_EQ_INT(mxk_set_op_backend("add_n", "onednn"), MXK_OK);
        CHECK_EQ_INT(mxk_op_instance_create("add_n", 1, keys, vals, cpu, 3, shapes, NULL, &sum),
                     MXK_OK);
        mxk_set_op_backend("add_n", NULL);
        if (sum == NULL)
            return;
        CHECK(strcmp(mxk_op_instance_backend(sum), "onednn") == 0);
        for (int i = 0; i < M; i++)
            hx[i] = 0.5f * (float)i, hy[i] = (float)(M - i);
        mxk_ndarray *x = array(&s, hx, M), *y = array(&s, hy, M);
        mxk_ndarray *ins[3][3] = {{x, y, x}, {y, x, x}, {y, y, x}};
        CHECK_EQ_INT(mxk_op_instance_forward(sum, 0, ins[pattern], &x, NULL, NULL), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_copy_to_host(x, out, sizeof out), MXK_OK);
        int wrong = 0;
        for (int i = 0; i < M; i++)
            wrong += out[i] != (pattern == 2 ? 2.0f * hy[i] + hx[i] : 2.0f * hx[i] + hy[i]);
        if (wrong)
            fprintf(stderr, "pattern %d: %d elements wrong\n", pattern, wrong);
        CHECK_EQ_INT(wrong, 0);
        mxk_op_instance_free(sum);
        mxk_ndarray_free(x);
        mxk_ndarray_free(y);
    }
}

int main(int argc, char **argv) {
    int rc = onednn_test_init(argc, argv);
    if (rc != 0)
        return rc;
    MXK_RUN(test_fc_inference_weight_cache);
    MXK_RUN(test_add_n_output_shares_inputs);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
