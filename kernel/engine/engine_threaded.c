/*
 * ThreadedEnginePerDevice (upstream src/engine/threaded_engine_perdevice.cc):
 * ops wait in the variables' queues and, once ready, go to a worker pool of their
 * device:
 *   CPU (and CPU pinned): a FIFO served by MXK_CPU_WORKER_NTHREADS threads (default 1);
 *     MXK_ENGINE_PROP_PRIORITIZED ops to a priority queue served by
 *     MXK_CPU_PRIORITY_NTHREADS threads (default 4).
 *   GPU, per device id: a FIFO and a priority queue (MXK_ENGINE_PROP_PRIORITIZED),
 *     each served by MXK_GPU_WORKER_NTHREADS threads (default 2), and for
 *     MXK_ENGINE_PROP_COPY ops a priority queue served by MXK_GPU_COPY_NTHREADS
 *     threads (default 2).
 * Every pool is created on first use. A GPU worker opens its own stream through the
 * stream hooks when it starts (a compute stream in the normal and priority pools, a
 * copy stream in the copy pool), synchronises it after every sync function it runs
 * and destroys it when the engine stops (engine_stream.c).
 */
#include "engine_pool.h"

#include <stdlib.h>

/** Which pool of a device. */
enum { POOL_NORMAL = 0, POOL_PRIORITY = 1, POOL_COPY = 2, POOL_KINDS = 3 };

/** State of the running threaded engine. */
static struct {
    int cpu_workers;                                             /**< MXK_CPU_WORKER_NTHREADS */
    int cpu_prio_workers;                                        /**< MXK_CPU_PRIORITY_NTHREADS */
    int gpu_workers;                                             /**< MXK_GPU_WORKER_NTHREADS */
    int gpu_copy_workers;                                        /**< MXK_GPU_COPY_NTHREADS */
    int flush_denormals;                                         /**< MXK_FLUSH_DENORMALS */
    pthread_mutex_t create_mu;                                   /**< serialises pool creation */
    _Atomic(engine_pool *) cpu[POOL_KINDS];                      /**< CPU pools (no copy pool) */
    _Atomic(engine_pool *) gpu[MXK_ENGINE_MAX_GPUS][POOL_KINDS]; /**< GPU pools by device id */
} T = {.create_mu = PTHREAD_MUTEX_INITIALIZER};

/**
 * engine_impl.start: reads the worker counts and whether workers flush denormals
 * (pools are created on first use).
 */
static mxk_status threaded_start(void) {
    mxk_status st = engine_env_int("MXK_CPU_WORKER_NTHREADS", 1, 1, 1024, &T.cpu_workers);
    if (st == MXK_OK)
        st = engine_env_int("MXK_CPU_PRIORITY_NTHREADS", 4, 1, 1024, &T.cpu_prio_workers);
    if (st == MXK_OK)
        st = engine_env_int("MXK_GPU_WORKER_NTHREADS", 2, 1, 1024, &T.gpu_workers);
    if (st == MXK_OK)
        st = engine_env_int("MXK_GPU_COPY_NTHREADS", 2, 1, 1024, &T.gpu_copy_workers);
    if (st == MXK_OK)
        st = engine_env_int("MXK_FLUSH_DENORMALS", 1, 0, 1, &T.flush_denormals);
    return st;
}

/** engine_impl.stop: stops and frees every pool. */
static void threaded_stop(void) {
    for (int k = 0; k < POOL_KINDS; k++) {
        engine_pool *p = atomic_exchange(&T.cpu[k], NULL);
        if (p != NULL)
            engine_pool_destroy(p);
        for (int d = 0; d < MXK_ENGINE_MAX_GPUS; d++) {
            p = atomic_exchange(&T.gpu[d][k], NULL);
            if (p != NULL)
                engine_pool_destroy(p);
        }
    }
}

/**
 * The pool an op runs in, created if needed. NULL on failure (last error set).
 * Deletions go to the device's FIFO whatever their props.
 */
static engine_pool *pool_for(const engine_op *op) {
    bool gpu = op->dev_type == MXK_DEV_GPU;
    int kind = POOL_NORMAL;
    if (op->kind == ENGINE_OP_FN) {
        if (gpu && (op->props & MXK_ENGINE_PROP_COPY))
            kind = POOL_COPY;
        else if (op->props & MXK_ENGINE_PROP_PRIORITIZED)
            kind = POOL_PRIORITY;
    }
    _Atomic(engine_pool *) *slot = gpu ? &T.gpu[op->dev_id][kind] : &T.cpu[kind];
    engine_pool *p = atomic_load(slot);
    if (p != NULL)
        return p;
    pthread_mutex_lock(&T.create_mu);
    p = atomic_load(slot);
    if (p == NULL) {
        int n = gpu ? (kind == POOL_COPY ? T.gpu_copy_workers : T.gpu_workers)
                    : (kind == POOL_PRIORITY ? T.cpu_prio_workers : T.cpu_workers);
        int32_t dev_id = gpu ? op->dev_id : 0;
        p = engine_pool_create(n, kind != POOL_NORMAL, gpu ? MXK_DEV_GPU : MXK_DEV_CPU, dev_id,
                               kind == POOL_COPY, engine_stream_hooks(), T.flush_denormals);
        if (p != NULL)
            atomic_store(slot, p);
    }
    pthread_mutex_unlock(&T.create_mu);
    return p;
}

/** engine_impl.push: finds (or creates) the op's pool, then queues its requests. */
static mxk_status threaded_push(engine_op *op) {
    if (op->kind != ENGINE_OP_WAIT) {
        engine_pool *p = pool_for(op);
        if (p == NULL)
            return mxki_last_error_code();
        mxk_status st = engine_pool_reserve(p);
        if (st != MXK_OK)
            return st;
        op->pool = p;
    }
    engine_deps_append(op);
    return MXK_OK;
}

/** A ready op: wake its waiter (wait ops) or queue it in its pool. */
static void threaded_dispatch(engine_op *op) {
    if (op->kind == ENGINE_OP_WAIT) {
        engine_waiter *w = op->waiter;
        pthread_mutex_lock(&w->mu);
        w->ready = true;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
        return;
    }
    engine_pool_enqueue(op->pool, op);
}

/**
 * Pushes an exclusive wait op on `var`, blocks until it is granted (every earlier
 * reader and writer has completed), takes the variable's error, then releases it.
 */
static mxk_status threaded_wait_var(mxk_engine_var *var) {
    engine_op *op = engine_op_new_exclusive(ENGINE_OP_WAIT, var, MXK_DEV_CPU, 0);
    if (op == NULL) {
        engine_leave();
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "mxki_engine_wait_var: out of memory");
    }
    engine_waiter w = {.ready = false};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    op->impl = &engine_threaded_impl;
    op->waiter = &w;
    engine_deps_append(op);
    pthread_mutex_lock(&w.mu);
    while (!w.ready)
        pthread_cond_wait(&w.cv, &w.mu);
    pthread_mutex_unlock(&w.mu);
    mxk_status st = engine_var_take_error(var);
    engine_op_finish(op);
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.mu);
    return st;
}

const engine_impl engine_threaded_impl = {
    .name = "ThreadedEnginePerDevice",
    .start = threaded_start,
    .stop = threaded_stop,
    .push = threaded_push,
    .dispatch = threaded_dispatch,
    .op_done = engine_op_finish,
    .wait_var = threaded_wait_var,
    .uses_queues = true,
};
