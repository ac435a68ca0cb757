/*
 * Executor overhead. A chain of 100 tiny operators (_plus_scalar on a (4,) float32
 * array), forward + backward:
 *   executor      bound once (simple_bind), every node a prepared call pushed as a
 *                 cached engine op (no allocation per push);
 *   instances     the same 100 operators as operator instances created once, each
 *                 forward/backward pushed one-shot (a call object and an engine op
 *                 allocated per push);
 *   imperative    mxk_imperative_invoke per operator (attribute parsing, instance,
 *                 shape inference and engine push per call), forward only, into
 *                 preallocated outputs and with outputs allocated per call.
 * Figures are wall time per operator push, waiting for completion once per pass
 * (so they include the engine's execution of the tiny kernels), and the executor's
 * time when passes are pushed back to back with one wait at the end.
 * Then the bind time of a 1000-node graph (a chain of 1000 _plus_scalar), forward
 * only and with gradients.
 *
 * Usage: bench_executor [iterations] (default 2000); uses the build tree's config dir.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mxk.h"

enum { CHAIN = 100, BIG = 1000 };

static const mxk_context cpu = {MXK_DEV_CPU, 0};

/** Monotonic seconds. */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** Prints the last error and exits. */
static void die(const char *what) {
    fprintf(stderr, "bench_executor: %s: %s\n", what, mxk_get_last_error());
    exit(1);
}

/** A (4,) float32 array filled with v. */
static mxk_ndarray *vec4(double v) {
    mxk_shape s = {.ndim = 1, .dims = {4}};
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_full(&s, MXK_FLOAT32, cpu, v, &a) != MXK_OK)
        die("create");
    return a;
}

/** A chain of n _plus_scalar(scalar=1) on variable "x". */
static mxk_symbol *chain(int n) {
    mxk_symbol *cur = NULL;
    if (mxk_symbol_variable("x", &cur) != MXK_OK)
        die("variable");
    const char *k[] = {"scalar"}, *v[] = {"1"};
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "p%d", i);
        mxk_symbol *next = NULL;
        if (mxk_symbol_create("_plus_scalar", name, 1, k, v, 1, NULL, &cur, &next) != MXK_OK)
            die("compose");
        mxk_symbol_free(cur);
        cur = next;
    }
    return cur;
}

/** Binds the chain with x (4,) and grad_req. */
static mxk_executor *bind_chain(mxk_symbol *sym, const char *grad_req) {
    const char *names[] = {"x"};
    mxk_shape shapes[] = {{.ndim = 1, .dims = {4}}};
    mxk_executor *ex = NULL;
    if (mxk_executor_simple_bind(sym, cpu, 1, names, shapes, grad_req, 0, NULL, NULL, NULL, &ex) !=
        MXK_OK)
        die("simple_bind");
    return ex;
}

/** Executor: forward+backward `iters` times; wait per pass or once at the end. */
static double run_executor(mxk_executor *ex, mxk_ndarray *head, int iters, int wait_each) {
    for (int i = 0; i < 20; i++) {
        mxk_executor_forward(ex, 1);
        mxk_executor_backward(ex, 1, &head);
    }
    if (mxk_wait_all() != MXK_OK)
        die("warm-up");
    double t0 = now();
    for (int i = 0; i < iters; i++) {
        if (mxk_executor_forward(ex, 1) != MXK_OK || mxk_executor_backward(ex, 1, &head) != MXK_OK)
            die("forward/backward");
        if (wait_each)
            mxk_wait_all();
    }
    if (mxk_wait_all() != MXK_OK)
        die("wait");
    return now() - t0;
}

/** Operator instances pushed one-shot: forward through the chain, then backward. */
static double run_instances(int iters) {
    mxk_op_instance *inst = NULL;
    mxk_shape s = {.ndim = 1, .dims = {4}};
    const char *k[] = {"scalar"}, *v[] = {"1"};
    if (mxk_op_instance_create("_plus_scalar", 1, k, v, cpu, 1, &s, NULL, &inst) != MXK_OK)
        die("instance");
    mxk_ndarray *act[CHAIN + 1], *grad[CHAIN + 1];
    for (int i = 0; i <= CHAIN; i++) {
        act[i] = vec4(0);
        grad[i] = vec4(1);
    }
    double t0 = 0;
    for (int it = -20; it < iters; it++) {
        if (it == 0) {
            mxk_wait_all();
            t0 = now();
        }
        for (int i = 0; i < CHAIN; i++)
            if (mxk_op_instance_forward(inst, 1, &act[i], &act[i + 1], NULL, NULL) != MXK_OK)
                die("forward");
        for (int i = CHAIN; i > 0; i--)
            if (mxk_op_instance_backward(inst, &grad[i], NULL, NULL, &grad[i - 1], NULL, NULL) !=
                MXK_OK)
                die("backward");
        mxk_wait_all();
    }
    double t = now() - t0;
    for (int i = 0; i <= CHAIN; i++) {
        mxk_ndarray_free(act[i]);
        mxk_ndarray_free(grad[i]);
    }
    mxk_op_instance_free(inst);
    return t;
}

/** Imperative invoke through the chain (forward only); `alloc`: outputs allocated per call. */
static double run_imperative(int iters, int alloc) {
    const char *k[] = {"scalar"}, *v[] = {"1"};
    mxk_ndarray *buf[2] = {vec4(0), vec4(0)};
    double t0 = 0;
    for (int it = -20; it < iters; it++) {
        if (it == 0) {
            mxk_wait_all();
            t0 = now();
        }
        mxk_ndarray *cur = buf[0];
        mxk_ndarray *owned = NULL;
        for (int i = 0; i < CHAIN; i++) {
            mxk_ndarray *out[MXK_MAX_OUTPUTS] = {0};
            uint32_t n = 0;
            if (!alloc) {
                out[0] = buf[(i + 1) % 2];
                n = 1;
            }
            if (mxk_imperative_invoke("_plus_scalar", 1, &cur, &n, out, 1, k, v) != MXK_OK)
                die("invoke");
            if (alloc) {
                mxk_ndarray_free(owned);
                owned = out[0];
            }
            cur = out[0];
        }
        mxk_ndarray_free(owned);
        mxk_wait_all();
    }
    double t = now() - t0;
    mxk_ndarray_free(buf[0]);
    mxk_ndarray_free(buf[1]);
    return t;
}

/** Bind time of a BIG-node chain, best of `reps`. */
static double bind_time(const char *grad_req, int reps) {
    mxk_symbol *sym = chain(BIG);
    double best = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        mxk_executor *ex = bind_chain(sym, grad_req);
        double t = now() - t0;
        if (t < best)
            best = t;
        mxk_executor_free(ex);
        mxk_wait_all();
    }
    mxk_symbol_free(sym);
    return best;
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    if (iters <= 0)
        iters = 2000;
    mxk_init_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.config_dir = MXK_BUILD_CONFDIR;
    if (mxk_init(&o) != MXK_OK)
        die("mxk_init");
    mxk_symbol *sym = chain(CHAIN);
    mxk_executor *ex = bind_chain(sym, "write");
    mxk_ndarray *head = vec4(1);
    double pushes = (double)iters * 2 * CHAIN;
    double te = run_executor(ex, head, iters, 1);
    double tp = run_executor(ex, head, iters, 0);
    double ti = run_instances(iters);
    double tm = run_imperative(iters, 0);
    double ta = run_imperative(iters, 1);
    printf("bench_executor: chain of %d _plus_scalar on (4,), %d iterations, engine %s\n", CHAIN,
           iters, getenv("MXK_ENGINE_TYPE") ? getenv("MXK_ENGINE_TYPE") : "default");
    printf("  executor fwd+bwd, wait per pass:    %7.3f us/op\n", 1e6 * te / pushes);
    printf("  executor fwd+bwd, back to back:     %7.3f us/op\n", 1e6 * tp / pushes);
    printf("  op instances one-shot fwd+bwd:      %7.3f us/op\n", 1e6 * ti / pushes);
    printf("  imperative invoke fwd, given out:   %7.3f us/op\n", 1e6 * tm / (iters * CHAIN));
    printf("  imperative invoke fwd, new out:     %7.3f us/op\n", 1e6 * ta / (iters * CHAIN));
    mxk_ndarray_free(head);
    mxk_executor_free(ex);
    mxk_symbol_free(sym);
    double bf = bind_time("null", 5), bg = bind_time("write", 5);
    printf("bind of a %d-node chain (simple_bind, best of 5): forward only %.2f ms, with "
           "gradients %.2f ms\n",
           BIG, 1e3 * bf, 1e3 * bg);
    mxk_shutdown();
    return 0;
}
