/*
 * LeNet's two convolution layers, forward and backward, through the kernel's
 * operator dispatch (mxk_op_instance on the cpu-blas backend: engine push,
 * temp-space resource, im2col, GEMM, col2im), beside raw cblas_sgemm calls of
 * the equivalent GEMMs (whole batch, no im2col) in the same run; then max
 * pooling 2x2/2 and tanh (Activation) forward in ns per input element.
 *
 * Layers: conv1 20 5x5 filters on (100,1,28,28); conv2 50 5x5 filters on
 * (100,20,12,12). FLOPs: forward 2*N*F*C*k*k*OH*OW; backward (dW and dx) twice
 * that; the bias is not counted.
 * Usage: bench_conv [iterations] (default 20); uses the build tree's config dir.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mxk.h"

/** Monotonic seconds. */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** Prints the last error and exits. */
static void die(const char *what) {
    fprintf(stderr, "bench_conv: %s: %s\n", what, mxk_get_last_error());
    exit(1);
}

/** A float32 CPU array of a 1-4 dim shape filled with v. */
static mxk_ndarray *filled(const mxk_shape *s, double v) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_full(s, MXK_FLOAT32, (mxk_context){MXK_DEV_CPU, 0}, v, &a) != MXK_OK)
        die("create");
    return a;
}

/** One convolution layer of the benchmark. */
typedef struct layer {
    const char *name;
    int N, C, H, W, F, k;
} layer;

/** Raw BLAS: forward GEMM, then dW and dx GEMMs, `iters` times each; seconds per phase. */
static void run_blas(const layer *l, int iters, double *tf, double *tb) {
    int P = (l->H - l->k + 1) * (l->W - l->k + 1), CKK = l->C * l->k * l->k, NP = l->N * P;
    float *w = calloc((size_t)l->F * CKK, 4), *col = calloc((size_t)CKK * NP, 4);
    float *y = calloc((size_t)l->F * NP, 4), *dw = calloc((size_t)l->F * CKK, 4);
    for (int i = 0; i < CKK * NP; i++)
        col[i] = 0.01f * (float)(i % 7);
    for (int i = 0; i < l->F * CKK; i++)
        w[i] = 0.02f * (float)(i % 5);
    double t0 = now();
    for (int it = 0; it < iters; it++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, l->F, NP, CKK, 1.f, w, CKK, col, NP,
                    0.f, y, NP);
    *tf = now() - t0;
    t0 = now();
    for (int it = 0; it < iters; it++) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, l->F, CKK, NP, 1.f, y, NP, col, NP,
                    0.f, dw, CKK);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, CKK, NP, l->F, 1.f, w, CKK, y, NP, 0.f,
                    col, NP);
    }
    *tb = now() - t0;
    free(w), free(col), free(y), free(dw);
}

/** mxk Convolution: forward then backward phases, `iters` each; seconds per phase. */
static void run_mxk(const layer *l, int iters, double *tf, double *tb) {
    char nf[16], kern[32];
    snprintf(nf, sizeof nf, "%d", l->F);
    snprintf(kern, sizeof kern, "(%d,%d)", l->k, l->k);
    const char *keys[] = {"kernel", "num_filter"}, *vals[] = {kern, nf};
    mxk_shape shapes[3] = {{.ndim = 4, .dims = {l->N, l->C, l->H, l->W}}, {.ndim = 0}, {.ndim = 0}};
    mxk_op_instance *cv = NULL;
    if (mxk_op_instance_create("Convolution", 2, keys, vals, (mxk_context){MXK_DEV_CPU, 0}, 3,
                               shapes, NULL, &cv) != MXK_OK)
        die("Convolution");
    mxk_shape ws, bs, ys;
    mxk_op_instance_shape(cv, 0, 1, &ws, NULL);
    mxk_op_instance_shape(cv, 0, 2, &bs, NULL);
    mxk_op_instance_shape(cv, 1, 0, &ys, NULL);
    mxk_ndarray *x = filled(&shapes[0], 0.01), *w = filled(&ws, 0.02), *b = filled(&bs, 0.1);
    mxk_ndarray *y = filled(&ys, 0), *dy = filled(&ys, 0.5), *dx = filled(&shapes[0], 0);
    mxk_ndarray *dw = filled(&ws, 0), *db = filled(&bs, 0);
    mxk_ndarray *in[3] = {x, w, b}, *grads[3] = {dx, dw, db};
    for (int phase = 0; phase < 2; phase++) {
        double t0 = 0;
        for (int it = -3; it < iters; it++) { /* 3 warm-up iterations */
            if (it == 0) {
                mxk_wait_all();
                t0 = now();
            }
            mxk_status st = phase == 0
                                ? mxk_op_instance_forward(cv, 1, in, &y, NULL, NULL)
                                : mxk_op_instance_backward(cv, &dy, in, NULL, grads, NULL, NULL);
            if (st != MXK_OK)
                die("push");
        }
        if (mxk_wait_all() != MXK_OK)
            die("run");
        *(phase == 0 ? tf : tb) = now() - t0;
    }
    mxk_ndarray *all[] = {x, w, b, y, dy, dx, dw, db};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mxk_ndarray_free(all[i]);
    mxk_op_instance_free(cv);
}

/** ns per input element of a single-input, single-output operator's forward. */
static double run_unary(const char *op, int nattr, const char *const *k, const char *const *v,
                        const mxk_shape *s, int iters) {
    mxk_op_instance *inst = NULL;
    if (mxk_op_instance_create(op, (uint32_t)nattr, k, v, (mxk_context){MXK_DEV_CPU, 0}, 1, s, NULL,
                               &inst) != MXK_OK)
        die(op);
    mxk_shape ys;
    mxk_op_instance_shape(inst, 1, 0, &ys, NULL);
    mxk_ndarray *x = filled(s, 0.3), *y = filled(&ys, 0);
    double t0 = 0;
    for (int it = -3; it < iters; it++) {
        if (it == 0) {
            mxk_wait_all();
            t0 = now();
        }
        if (mxk_op_instance_forward(inst, 0, &x, &y, NULL, NULL) != MXK_OK)
            die("push");
    }
    mxk_wait_all();
    double t = now() - t0;
    uint64_t n = 1;
    for (int i = 0; i < s->ndim; i++)
        n *= (uint64_t)s->dims[i];
    mxk_ndarray_free(x), mxk_ndarray_free(y);
    mxk_op_instance_free(inst);
    return t / iters / (double)n * 1e9;
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 20;
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = MXK_BUILD_CONFDIR};
    if (mxk_init(&o) != MXK_OK)
        die("mxk_init");
    const layer layers[2] = {{"conv1 20x5x5 on (100,1,28,28)", 100, 1, 28, 28, 20, 5},
                             {"conv2 50x5x5 on (100,20,12,12)", 100, 20, 12, 12, 50, 5}};
    printf("LeNet convolutions, %d iterations, %d threads\n", iters, mxk_get_num_threads());
    for (int i = 0; i < 2; i++) {
        const layer *l = &layers[i];
        double P = (double)(l->H - l->k + 1) * (l->W - l->k + 1);
        double ff = 2.0 * l->N * l->F * l->C * l->k * l->k * P, fb = 2.0 * ff;
        double bf = 0, bb = 0, mf = 0, mb = 0;
        run_blas(l, 2, &bf, &bb); /* warm-up */
        run_blas(l, iters, &bf, &bb);
        run_mxk(l, iters, &mf, &mb);
        printf("  %s\n", l->name);
        printf(
            "    forward   mxk %7.1f GFLOP/s (%8.1f us)   raw sgemm %7.1f GFLOP/s   ratio %.2f\n",
            ff * iters / mf * 1e-9, mf / iters * 1e6, ff * iters / bf * 1e-9, bf / mf);
        printf(
            "    backward  mxk %7.1f GFLOP/s (%8.1f us)   raw sgemm %7.1f GFLOP/s   ratio %.2f\n",
            fb * iters / mb * 1e-9, mb / iters * 1e6, fb * iters / bb * 1e-9, bb / mb);
    }
    mxk_shape ps = {.ndim = 4, .dims = {100, 20, 24, 24}};
    const char *pk[] = {"kernel", "stride", "pool_type"}, *pv[] = {"(2,2)", "(2,2)", "max"};
    const char *ak[] = {"act_type"}, *av[] = {"tanh"};
    printf("  max pooling 2x2/2 on (100,20,24,24): %.2f ns per input element\n",
           run_unary("Pooling", 3, pk, pv, &ps, iters * 5));
    printf("  tanh (Activation) on (100,20,24,24): %.2f ns per element\n",
           run_unary("Activation", 1, ak, av, &ps, iters * 5));
    mxk_shutdown();
    return 0;
}
