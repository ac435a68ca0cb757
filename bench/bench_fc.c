/*
 * FullyConnected forward+backward at data (100, 784) -> 128 hidden, through the
 * kernel's operator dispatch (mxk_op_instance on the cpu-blas backend: engine
 * push, kernel call, BLAS), beside raw cblas_sgemm calls of the same three GEMMs
 * in the same run. Prints GFLOP/s of both and their ratio.
 *
 * FLOPs per iteration: forward y = x.W^T (2*N*K*H), backward dW = dy^T.x
 * (2*H*N*K) and dx = dy.W (2*N*H*K); the bias terms (N*H each) are not counted.
 * Usage: bench_fc [iterations] (default 2000); uses the build tree's config dir.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mxk.h"

enum { N = 100, K = 784, H = 128 };

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what) {
    fprintf(stderr, "bench_fc: %s: %s\n", what, mxk_get_last_error());
    exit(1);
}

static mxk_ndarray *filled(int ndim, int64_t d0, int64_t d1, double v) {
    mxk_shape s = {.ndim = ndim, .dims = {d0, d1}};
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_full(&s, MXK_FLOAT32, (mxk_context){MXK_DEV_CPU, 0}, v, &a) != MXK_OK)
        die("create");
    return a;
}

/* Raw BLAS: the same three GEMMs, `iters` times; returns seconds. */
static double run_blas(int iters) {
    float *x = calloc(N * K, 4), *w = calloc(H * K, 4), *y = calloc(N * H, 4);
    float *dy = calloc(N * H, 4), *dw = calloc(H * K, 4), *dx = calloc(N * K, 4);
    for (int i = 0; i < N * K; i++)
        x[i] = 0.01f * (float)(i % 7);
    for (int i = 0; i < H * K; i++)
        w[i] = 0.02f * (float)(i % 5);
    for (int i = 0; i < N * H; i++)
        dy[i] = 0.5f;
    double t0 = now();
    for (int it = 0; it < iters; it++) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, H, K, 1.f, x, K, w, K, 0.f, y, H);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, H, K, N, 1.f, dy, H, x, K, 0.f, dw, K);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, K, H, 1.f, dy, H, w, K, 0.f, dx,
                    K);
    }
    double t = now() - t0;
    free(x), free(w), free(y), free(dy), free(dw), free(dx);
    return t;
}

/* mxk: FullyConnected forward + backward through operator instances; returns seconds. */
static double run_mxk(int iters) {
    mxk_shape shapes[3] = {{.ndim = 2, .dims = {N, K}}, {.ndim = 0}, {.ndim = 0}};
    const char *keys[] = {"num_hidden"}, *vals[] = {"128"};
    mxk_op_instance *fc = NULL;
    if (mxk_op_instance_create("FullyConnected", 1, keys, vals, (mxk_context){MXK_DEV_CPU, 0}, 3,
                               shapes, NULL, &fc) != MXK_OK)
        die("FullyConnected");
    mxk_ndarray *x = filled(2, N, K, 0.01), *w = filled(2, H, K, 0.02), *b = filled(1, H, 0, 0.1);
    mxk_ndarray *y = filled(2, N, H, 0), *dy = filled(2, N, H, 0.5);
    mxk_ndarray *dx = filled(2, N, K, 0), *dw = filled(2, H, K, 0), *db = filled(1, H, 0, 0);
    mxk_ndarray *in[3] = {x, w, b}, *grads[3] = {dx, dw, db};
    double t0 = 0;
    for (int it = -10; it < iters; it++) { /* 10 warm-up iterations */
        if (it == 0) {
            mxk_wait_all();
            t0 = now();
        }
        if (mxk_op_instance_forward(fc, 1, in, &y, NULL, NULL) != MXK_OK ||
            mxk_op_instance_backward(fc, &dy, in, &y, grads, NULL, NULL) != MXK_OK)
            die("push");
    }
    if (mxk_wait_all() != MXK_OK)
        die("run");
    double t = now() - t0;
    mxk_ndarray *all[] = {x, w, b, y, dy, dx, dw, db};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mxk_ndarray_free(all[i]);
    mxk_op_instance_free(fc);
    return t;
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = MXK_BUILD_CONFDIR};
    if (mxk_init(&o) != MXK_OK)
        die("mxk_init");
    const double flops = 3.0 * 2.0 * N * K * H;
    run_blas(10);
    double tb = run_blas(iters), tm = run_mxk(iters);
    double gb = flops * iters / tb * 1e-9, gm = flops * iters / tm * 1e-9;
    printf("FullyConnected fwd+bwd, data (%d,%d) -> %d hidden, %d iterations, %d threads\n", N, K,
           H, iters, mxk_get_num_threads());
    printf("  raw cblas_sgemm x3     %8.1f GFLOP/s  (%7.1f us/iter)\n", gb, tb / iters * 1e6);
    printf("  mxk FullyConnected     %8.1f GFLOP/s  (%7.1f us/iter)\n", gm, tm / iters * 1e6);
    printf("  ratio mxk / raw BLAS   %8.2f\n", gm / gb);
    mxk_shutdown();
    return 0;
}
