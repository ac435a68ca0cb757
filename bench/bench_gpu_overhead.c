/*
 * Per-operation overhead of the engine and the cuda plugin on gpu(0): iterations
 * of many tiny GPU operations, whose cost is the framework's (push, dependency
 * tracking, dispatch to a GPU worker, the kernel launch and the stream
 * synchronisation after it), not the GPU's.
 *
 *   bench_gpu_overhead [OPS]
 *
 * Prints one JSON line with microseconds per operation for
 *   fill_chain    OPS device fills of one 1-element array (each waits for the last)
 *   fill_indep    OPS fills spread over 64 1-element arrays (independent chains)
 *   plus_chain    OPS _plus_scalar in place on one 1-element array (imperative
 *                 invoke; when the cuda plugin has that kernel)
 *   graph_node    one forward of a bound 100-node _plus_scalar chain, per node
 *                 (the executor's cached operators; when the kernel exists)
 * and, for reference, fill_chain on cpu(0). Upstream: MXNet's
 * benchmark/python/control_flow and the engine's per-op cost discussed in
 * docs/static_site/src/pages/api/architecture/note_engine.md. Without a GPU
 * prints "SKIP: no GPU" and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mxk.h"

/** Nodes of the graph_node chain. */
#define CHAIN 100
/** Arrays of fill_indep. */
#define INDEP 64

/** Monotonic seconds. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** Microseconds per fill over `ops` fills round-robin on `n` arrays of ctx; < 0 on error. */
static double fills(mxk_context ctx, int n, int ops) {
    mxk_shape s = {.ndim = 1, .dims = {1}};
    mxk_ndarray *a[INDEP] = {0};
    double us = -1;
    int ok = 1;
    for (int i = 0; i < n && ok; i++)
        ok = mxk_ndarray_create(&s, MXK_FLOAT32, ctx, &a[i]) == MXK_OK;
    if (ok && mxk_wait_all() == MXK_OK) {
        double t0 = now_s();
        for (int i = 0; i < ops && ok; i++)
            ok = mxk_ndarray_fill(a[i % n], (double)i) == MXK_OK;
        if (ok && mxk_wait_all() == MXK_OK)
            us = 1e6 * (now_s() - t0) / ops;
    }
    for (int i = 0; i < n; i++)
        mxk_ndarray_free(a[i]);
    return us;
}

/** Microseconds per in-place _plus_scalar on gpu(0); < 0 when unavailable. */
static double plus_chain(int ops) {
    mxk_context gpu = {MXK_DEV_GPU, 0};
    mxk_shape s = {.ndim = 1, .dims = {1}};
    mxk_ndarray *x = NULL;
    const char *keys[] = {"scalar"}, *vals[] = {"1"};
    double us = -1;
    if (mxk_ndarray_full(&s, MXK_FLOAT32, gpu, 0.0, &x) != MXK_OK)
        return -1;
    int ok = mxk_wait_all() == MXK_OK;
    double t0 = now_s();
    for (int i = 0; i < ops && ok; i++) {
        uint32_t nout = 1;
        ok = mxk_imperative_invoke("_plus_scalar", 1, &x, &nout, &x, 1, keys, vals) == MXK_OK;
    }
    if (ok && mxk_wait_all() == MXK_OK)
        us = 1e6 * (now_s() - t0) / ops;
    mxk_ndarray_free(x);
    return us;
}

/** Microseconds per node of a CHAIN-node _plus_scalar graph's forward; < 0 when unavailable. */
static double graph_node(int reps) {
    mxk_symbol *cur = NULL, *next = NULL;
    const char *keys[] = {"scalar"}, *vals[] = {"1"};
    if (mxk_symbol_variable("data", &cur) != MXK_OK)
        return -1;
    for (int i = 0; i < CHAIN; i++) {
        char name[32];
        snprintf(name, sizeof name, "p%d", i);
        if (mxk_symbol_create("_plus_scalar", name, 1, keys, vals, 1, NULL, &cur, &next) !=
            MXK_OK) {
            mxk_symbol_free(cur);
            return -1;
        }
        mxk_symbol_free(cur);
        cur = next;
    }
    mxk_context gpu = {MXK_DEV_GPU, 0};
    const char *names[] = {"data"};
    mxk_shape shapes[] = {{.ndim = 1, .dims = {1}}};
    mxk_executor *ex = NULL;
    double us = -1;
    if (mxk_executor_simple_bind(cur, gpu, 1, names, shapes, "null", 0, NULL, NULL, NULL, &ex) ==
            MXK_OK &&
        mxk_executor_forward(ex, 0) == MXK_OK && mxk_wait_all() == MXK_OK) {
        int ok = 1;
        double t0 = now_s();
        for (int i = 0; i < reps && ok; i++)
            ok = mxk_executor_forward(ex, 0) == MXK_OK;
        if (ok && mxk_wait_all() == MXK_OK)
            us = 1e6 * (now_s() - t0) / ((double)reps * CHAIN);
    }
    mxk_executor_free(ex);
    mxk_symbol_free(cur);
    return us;
}

/** Entry point: see the file comment. */
int main(int argc, char **argv) {
    int ops = argc > 1 ? atoi(argv[1]) : 20000;
    if (ops < 1)
        ops = 20000;
    mxk_init_options o = {.struct_size = sizeof o};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "bench_gpu_overhead: mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    mxk_context gpu = {MXK_DEV_GPU, 0}, cpu = {MXK_DEV_CPU, 0};
    mxk_device_props props = {.struct_size = sizeof props};
    if (mxk_device_count(MXK_DEV_GPU) == 0 || mxk_device_properties(gpu, &props) != MXK_OK) {
        printf("SKIP: no GPU (mxk_device_count(gpu) == 0)\n");
        mxk_shutdown();
        return 0;
    }
    fills(gpu, 1, 100); /* warm-up: streams, pools */
    double chain = fills(gpu, 1, ops), indep = fills(gpu, INDEP, ops);
    double plus = plus_chain(ops), node = graph_node(ops / CHAIN + 1);
    double cpu_chain = fills(cpu, 1, ops);
    printf("{\"bench\": \"gpu_overhead\", \"device\": \"%s\", \"ops\": %d, "
           "\"fill_chain_us\": %.2f, \"fill_indep_us\": %.2f, \"plus_chain_us\": %.2f, "
           "\"graph_node_us\": %.2f, \"cpu_fill_chain_us\": %.2f}\n",
           props.name, ops, chain, indep, plus, node, cpu_chain);
    if (plus < 0 || node < 0)
        fprintf(stderr, "bench_gpu_overhead: _plus_scalar figures -1: %s\n", mxk_get_last_error());
    mxk_shutdown();
    return chain < 0 || indep < 0 ? 1 : 0;
}
