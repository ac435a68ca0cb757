/*
 * A pool of worker threads serving one queue of ready engine ops: a FIFO, or a
 * priority queue (higher priority first, ties in enqueue order). Used by
 * ThreadedEnginePerDevice, one pool per (device, kind of work).
 */
#ifndef MXK_ENGINE_POOL_H
#define MXK_ENGINE_POOL_H

#include "engine_internal.h"

/** A worker pool. */
typedef struct engine_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;       /**< workers wait here for work or stop */
    pthread_cond_t ready_cv; /**< creation waits here for every worker's stream */
    bool prioritized;        /**< priority queue (heap) rather than FIFO */
    engine_op *head;         /**< FIFO: oldest ready op */
    engine_op *tail;         /**< FIFO: newest ready op */
    engine_op **heap;        /**< priority queue: binary max-heap */
    size_t heap_len;
    size_t heap_cap;
    size_t reserved; /**< priority queue: ops pushed for this pool and not yet taken */
    uint64_t seq;    /**< enqueue counter (priority tie-break) */
    int nidle;       /**< workers waiting on cv */
    bool stopping;
    int nthreads;
    int nstarted; /**< workers that have opened their stream */
    pthread_t *threads;
    int32_t dev_type; /**< device served: streams are asked for GPU pools only */
    int32_t dev_id;
    int is_copy;                          /**< copy workers (copy streams) */
    const mxk_engine_stream_hooks *hooks; /**< creates the GPU workers' streams; NULL: none */
    bool flush_denormals; /**< workers flush denormal floats to zero (MXK_FLUSH_DENORMALS) */
} engine_pool;

/**
 * Creates a pool and starts its `nthreads` workers; returns once every worker has
 * opened its stream with `hooks` (GPU pools; engine_stream_open). With flush_denormals each worker
 * first sets its floating-point unit to flush denormal results and inputs to zero (x86 MXCSR FTZ
 * and DAZ, AArch64 FPCR.FZ); the threads a kernel starts from a worker (a BLAS or OpenMP pool)
 * inherit the mode. NULL on failure, with the last error set.
 */
engine_pool *engine_pool_create(int nthreads, bool prioritized, int32_t dev_type, int32_t dev_id,
                                int is_copy, const mxk_engine_stream_hooks *hooks,
                                bool flush_denormals);

/**
 * Reserves room for one more op in a priority pool (no-op for a FIFO), so that
 * engine_pool_enqueue never allocates. Call when the op is pushed.
 */
mxk_status engine_pool_reserve(engine_pool *pool);

/**
 * Hands a ready op to the pool's workers. ENGINE_OP_DELETE ops go to the front of a FIFO.
 */
void engine_pool_enqueue(engine_pool *pool, engine_op *op);

/**
 * Stops the workers (the queue must be empty), which close their streams, joins
 * them and frees the pool.
 */
void engine_pool_destroy(engine_pool *pool);

#endif /* MXK_ENGINE_POOL_H */
