/*
 * Inference speed of the reference networks (mxkt_net_create: mlp, lenet, and
 * resnet with 20 layers on 1x28x28 images) through a bound executor, forward
 * only (is_train 0): latency at batch 1 in microseconds (median of `reps`
 * forwards, each waited for) and samples/s at batch 100 (median of 3 passes of
 * 100 forwards, 10,000 samples like the peers' pass over the test set).
 * `bench_infer mlp|lenet|resnet20 [reps]`; the backend comes from the usual
 * preference (MXK_BACKEND, --backend is not parsed here). Prints one JSON line.
 * The peers' figures come from bench/infer_peers.py, run beside it by
 * bench/bench_onednn.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mxk_train.h"

/** Monotonic seconds. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** Exits with the library's message when st failed. */
static void ok(mxk_status st, const char *what) {
    if (st != MXK_OK) {
        fprintf(stderr, "bench_infer: %s: %s\n", what, mxk_get_last_error());
        exit(1);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/** Binds `sym` for inference at `batch` (flat 784 or 1x28x28 data); arguments uniform in [-0.1,
 * 0.1). */
static mxk_executor *bind_at(const mxk_symbol *sym, int flat, int64_t batch) {
    mxk_shape s = {.ndim = flat ? 2 : 4, .dims = {(uint64_t)batch, 784}};
    if (!flat) {
        s.dims[1] = 1;
        s.dims[2] = 28;
        s.dims[3] = 28;
    }
    const char *name = "data";
    mxk_executor *ex = NULL;
    ok(mxk_executor_simple_bind(sym, (mxk_context){MXK_DEV_CPU, 0}, 1, &name, &s, "null", 0, NULL,
                                NULL, NULL, &ex),
       "bind");
    uint32_t n = 0;
    char **names = NULL;
    ok(mxk_symbol_list_names(sym, MXK_SYMBOL_ARGUMENTS, &n, &names), "arguments");
    uint32_t state = 1;
    for (uint32_t i = 0; i < n; i++) {
        mxk_ndarray *a = mxk_executor_arg(ex, names[i]);
        uint64_t size = mxk_ndarray_size(a);
        float *v = malloc(size * sizeof *v);
        for (uint64_t j = 0; j < size; j++) {
            state = state * 1664525u + 1013904223u; /* uniform in [-0.1, 0.1) */
            v[j] = (float)((double)(state >> 8) / 16777216.0 * 0.2 - 0.1);
        }
        ok(mxk_ndarray_copy_from_host(a, v, size * sizeof *v), "init");
        free(v);
    }
    mxk_string_list_free(names);
    return ex;
}

/** One forward, waited for. */
static void run(mxk_executor *ex) {
    ok(mxk_executor_forward(ex, 0), "forward");
    ok(mxk_ndarray_wait_to_read(mxk_executor_output(ex, 0)), "wait");
}

int main(int argc, char **argv) {
    const char *net = argc > 1 ? argv[1] : "lenet";
    int reps = argc > 2 ? atoi(argv[2]) : 300;
    if (reps < 3 || reps > 100000) {
        fprintf(stderr, "usage: bench_infer mlp|lenet|resnet20 [reps >= 3]\n");
        return 2;
    }
    ok(mxk_init(NULL), "init");
    mxkt_net_config c;
    mxkt_net_config_default(&c, strcmp(net, "resnet20") == 0 ? "resnet" : net);
    c.num_layers = strcmp(net, "resnet20") == 0 ? 20 : 0;
    mxk_symbol *sym = NULL;
    if (mxkt_net_create(&c, &sym) != MXK_OK) {
        fprintf(stderr, "bench_infer: %s\n", mxkt_last_error());
        return 1;
    }
    int flat = strcmp(net, "mlp") == 0;
    mxk_executor *one = bind_at(sym, flat, 1);
    double *t = malloc((size_t)reps * sizeof *t);
    run(one); /* warm-up: primitive creation */
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        run(one);
        t[r] = now_s() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    double lat_us = 1e6 * t[reps / 2];
    mxk_executor *hundred = bind_at(sym, flat, 100);
    run(hundred);
    double pass[3];
    for (int p = 0; p < 3; p++) {
        double t0 = now_s();
        for (int i = 0; i < 100; i++)
            run(hundred);
        pass[p] = now_s() - t0;
    }
    qsort(pass, 3, sizeof *pass, cmp_double);
    printf("{\"model\": \"%s\", \"backend\": \"%s\", \"threads\": %d, \"infer_latency_us_bs1\": "
           "%.1f, \"infer_sps_bs100\": %.1f}\n",
           net, mxk_get_backend_preference(), mxk_get_num_threads(), lat_us, 10000.0 / pass[1]);
    free(t);
    mxk_executor_free(one);
    mxk_executor_free(hundred);
    mxk_symbol_free(sym);
    mxk_shutdown();
    return 0;
}
