/*
 * Engine overhead benchmark.
 *
 *   bench_engine [pushes]
 *
 * Prints, for ThreadedEnginePerDevice and NaiveEngine:
 *   - microseconds per pushed no-op with one read and one write variable (push,
 *     dependency tracking, dispatch, run and completion, measured to wait_all),
 *   - ops/s for N independent chains (one variable each, pushes interleaved) on
 *     the threaded engine with 1 and 4 CPU workers,
 * beside a plain loop calling the same no-op through a function pointer, and the
 * ratio of the two. Finishes in a few seconds.
 */
#include "engine.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/** Monotonic time in seconds. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/** The no-op pushed (and called directly by the plain loop). */
static mxk_status noop_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    (void)arg;
    return MXK_OK;
}

/** Called through a volatile pointer so the plain loop cannot be optimised away. */
static mxk_engine_sync_fn volatile g_fn = noop_fn;

/** Nanoseconds per direct call of the no-op. */
static double plain_call_ns(long n) {
    mxk_run_ctx rctx = {MXK_DEV_CPU, 0, NULL};
    double t0 = now_s();
    for (long i = 0; i < n; i++)
        g_fn(NULL, &rctx, NULL);
    return (now_s() - t0) / (double)n * 1e9;
}

/** Starts the engine of `type` with `workers` CPU workers; exits on failure. */
static void start(const char *type, int workers) {
    char buf[16];
    snprintf(buf, sizeof buf, "%d", workers);
    setenv("MXK_ENGINE_TYPE", type, 1);
    setenv("MXK_CPU_WORKER_NTHREADS", buf, 1);
    if (mxki_engine_start() != MXK_OK) {
        fprintf(stderr, "bench_engine: cannot start %s: %s\n", type, mxki_last_error_message());
        exit(1);
    }
}

/** Microseconds per no-op push with one read and one write variable, run to completion. */
static double noop_push_us(long n) {
    mxk_engine_var *r = mxki_engine_new_var(), *w = mxki_engine_new_var();
    for (long i = 0; i < n / 10; i++) /* warm-up */
        mxki_engine_push_sync(noop_fn, NULL, NULL, MXK_DEV_CPU, 0, &r, 1, &w, 1, 0, 0, "noop");
    mxki_engine_wait_all();
    double t0 = now_s();
    for (long i = 0; i < n; i++)
        mxki_engine_push_sync(noop_fn, NULL, NULL, MXK_DEV_CPU, 0, &r, 1, &w, 1, 0, 0, "noop");
    mxki_engine_wait_all();
    double us = (now_s() - t0) / (double)n * 1e6;
    mxki_engine_delete_var(r, NULL, NULL, MXK_DEV_CPU, 0);
    mxki_engine_delete_var(w, NULL, NULL, MXK_DEV_CPU, 0);
    mxki_engine_wait_all();
    return us;
}

/** Ops per second for `chains` independent chains of no-ops, `n` ops in all. */
static double chains_ops_per_s(int chains, long n) {
    mxk_engine_var **vars = malloc((size_t)chains * sizeof *vars);
    for (int c = 0; c < chains; c++)
        vars[c] = mxki_engine_new_var();
    double t0 = now_s();
    for (long i = 0; i < n; i++)
        mxki_engine_push_sync(noop_fn, NULL, NULL, MXK_DEV_CPU, 0, NULL, 0, &vars[i % chains], 1, 0,
                              0, "chain");
    mxki_engine_wait_all();
    double ops = (double)n / (now_s() - t0);
    for (int c = 0; c < chains; c++)
        mxki_engine_delete_var(vars[c], NULL, NULL, MXK_DEV_CPU, 0);
    mxki_engine_wait_all();
    free(vars);
    return ops;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 200000;
    if (n < 1000)
        n = 1000;
    const int chains = 8;
    double plain_ns = plain_call_ns(50 * n);
    printf("plain function call loop:        %8.4f us per call (%.2f ns)\n", plain_ns * 1e-3,
           plain_ns);

    start("ThreadedEnginePerDevice", 1);
    double thr_us = noop_push_us(n);
    double thr_chain1 = chains_ops_per_s(chains, n);
    mxki_engine_stop();
    start("ThreadedEnginePerDevice", 4);
    double thr_chain4 = chains_ops_per_s(chains, n);
    mxki_engine_stop();
    start("NaiveEngine", 1);
    double naive_us = noop_push_us(n);
    double naive_chain = chains_ops_per_s(chains, n);
    mxki_engine_stop();

    printf("ThreadedEnginePerDevice no-op push (1 read, 1 write var): %8.3f us per op, "
           "ratio to plain call %.0fx\n",
           thr_us, thr_us * 1e3 / plain_ns);
    printf("NaiveEngine             no-op push (1 read, 1 write var): %8.3f us per op, "
           "ratio to plain call %.0fx\n",
           naive_us, naive_us * 1e3 / plain_ns);
    printf("ThreadedEnginePerDevice %d chains, 1 CPU worker:  %10.0f ops/s (plain loop %.0f "
           "calls/s, ratio %.0fx)\n",
           chains, thr_chain1, 1e9 / plain_ns, (1e9 / plain_ns) / thr_chain1);
    printf("ThreadedEnginePerDevice %d chains, 4 CPU workers: %10.0f ops/s (plain loop %.0f "
           "calls/s, ratio %.0fx)\n",
           chains, thr_chain4, 1e9 / plain_ns, (1e9 / plain_ns) / thr_chain4);
    printf("NaiveEngine             %d chains:                %10.0f ops/s\n", chains, naive_chain);
    return 0;
}
