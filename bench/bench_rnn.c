/*
 * The fused RNN operator, forward (training) and backward through time, on the
 * cpu-blas kernel (plugins/cpu-blas/op_rnn.c) and on the onednn kernel
 * (plugins/onednn/dn_rnn.c) in the same run, through the kernel's operator
 * dispatch (mxk_op_instance: engine push, kernel call).
 *
 * Configuration: the char-LSTM's recurrent part, mode lstm, 2 layers, T 32,
 * N 32, C 256, H 256 (override with bench_rnn ITERS MODE T N C H L). Each backend
 * runs 2 warm-up iterations, then 3 timed rounds of ITERS iterations (default 5);
 * prints the median round in ms per forward+backward and the ratio. Arguments
 * are uniform in [-0.1, 0.1) (seeded), so the gates stay off saturation.
 * Usage: bench_rnn [iters] [mode] [T N C H L]; uses the build tree's config dir.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mxk.h"

/** Arguments (data, parameters, state, state_cell) at most; all outputs at most. */
enum { NI = 4, NO = 4, ROUNDS = 3 };

/** Monotonic seconds. */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** Prints the last error and exits. */
static void die(const char *what) {
    fprintf(stderr, "bench_rnn: %s: %s\n", what, mxk_get_last_error());
    exit(1);
}

/** A float32 CPU array of shape s, uniform in [-0.1, 0.1) from `seed`. */
static mxk_ndarray *random_array(const mxk_shape *s, uint64_t seed) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_create(s, MXK_FLOAT32, (mxk_context){MXK_DEV_CPU, 0}, &a) != MXK_OK)
        die("create");
    uint64_t n = mxk_ndarray_size(a), x = seed * 2654435761u + 1;
    float *v = malloc((n ? n : 1) * sizeof *v);
    for (uint64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (float)((double)(x >> 11) * 0x1.0p-53 * 0.2 - 0.1);
    }
    if (mxk_ndarray_copy_from_host(a, v, n * sizeof *v) != MXK_OK)
        die("copy");
    free(v);
    return a;
}

/** The benchmark's operator configuration. */
typedef struct rnn_config {
    const char *mode;
    char T[16], N[16], C[16], H[16], L[16];
} rnn_config;

/** Median of ROUNDS values (sorts them). */
static double median(double *v) {
    for (int i = 0; i < ROUNDS; i++)
        for (int j = i + 1; j < ROUNDS; j++)
            if (v[j] < v[i]) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
            }
    return v[ROUNDS / 2];
}

/** Median ms per forward+backward on backend preference `prefer`. */
static double run(const rnn_config *c, const char *prefer, int iters) {
    if (mxk_set_backend_preference(prefer) != MXK_OK)
        die(prefer);
    const char *keys[] = {"mode", "state_size", "num_layers"}, *vals[] = {c->mode, c->H, c->L};
    mxk_shape in_shapes[NI] = {{.ndim = 3, .dims = {atoll(c->T), atoll(c->N), atoll(c->C)}}};
    mxk_op_instance *op = NULL;
    uint32_t num_args = strcmp(c->mode, "lstm") == 0 ? 4 : 3;
    if (mxk_op_instance_create("RNN", 3, keys, vals, (mxk_context){MXK_DEV_CPU, 0}, num_args,
                               in_shapes, NULL, &op) != MXK_OK)
        die("RNN");
    if (strcmp(mxk_op_instance_backend(op), prefer) != 0)
        die("the backend declined the configuration");
    uint32_t ni, no, nv;
    mxk_op_instance_counts(op, &ni, &no, &nv, NULL);
    mxk_ndarray *in[NI] = {0}, *out[NO] = {0}, *grad[NI] = {0}, *og[NO] = {0};
    for (uint32_t i = 0; i < ni; i++) {
        mxk_shape s;
        int32_t dt;
        mxk_op_instance_shape(op, 0, i, &s, &dt);
        in[i] = random_array(&s, i + 1);
        grad[i] = random_array(&s, 0);
    }
    for (uint32_t i = 0; i < no; i++) {
        mxk_shape s;
        int32_t dt;
        mxk_op_instance_shape(op, 1, i, &s, &dt);
        out[i] = random_array(&s, 0);
        og[i] = i < nv ? random_array(&s, 10 + i) : NULL;
    }
    double ms[ROUNDS];
    for (int r = -1; r < ROUNDS; r++) {
        int n = r < 0 ? 2 : iters; /* round -1: warm-up */
        mxk_wait_all();
        double t0 = now();
        for (int it = 0; it < n; it++)
            if (mxk_op_instance_forward(op, 1, in, out, NULL, NULL) != MXK_OK ||
                mxk_op_instance_backward(op, og, in, out, grad, NULL, NULL) != MXK_OK)
                die("push");
        if (mxk_wait_all() != MXK_OK)
            die("run");
        if (r >= 0)
            ms[r] = (now() - t0) / n * 1e3;
    }
    for (uint32_t i = 0; i < NI; i++) {
        mxk_ndarray_free(in[i]);
        mxk_ndarray_free(grad[i]);
        mxk_ndarray_free(out[i]);
        mxk_ndarray_free(og[i]);
    }
    mxk_op_instance_free(op);
    return median(ms);
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 5;
    rnn_config c = {.mode = argc > 2 ? argv[2] : "lstm"};
    const char *dims[5] = {"32", "32", "256", "256", "2"};
    char *dst[5] = {c.T, c.N, c.C, c.H, c.L};
    for (int i = 0; i < 5; i++)
        snprintf(dst[i], 16, "%s", argc > 3 + i ? argv[3 + i] : dims[i]);
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = MXK_BUILD_CONFDIR};
    if (mxk_init(&o) != MXK_OK)
        die("mxk_init");
    double cb = run(&c, "cpu-blas", iters), dn = run(&c, "onednn", iters);
    printf("RNN %s fwd+bwd, T %s N %s C %s H %s layers %s, %d threads, median of %d rounds of %d\n",
           c.mode, c.T, c.N, c.C, c.H, c.L, mxk_get_num_threads(), ROUNDS, iters);
    printf("  cpu-blas  %8.2f ms/iter\n", cb);
    printf("  onednn    %8.2f ms/iter\n", dn);
    printf("  speed-up onednn / cpu-blas  %.2f\n", cb / dn);
    mxk_shutdown();
    return 0;
}
