/*
 * A fixed pool of worker threads running one parallel loop at a time: the
 * preprocess_threads of ImageRecordIter (upstream runs its decoding in an
 * `#pragma omp parallel` region of src/io/iter_image_recordio_2.cc). The
 * calling thread is worker 0 and takes part; `n` workers mean n - 1 threads.
 * Thread safety: one thread at a time calls pool_run (the prefetch thread);
 * items of one run may run concurrently and must not share mutable state
 * except per worker (indexed by the worker id).
 */
#ifndef MXK_IO_IMAGE_POOL_H
#define MXK_IO_IMAGE_POOL_H

#include <stdint.h>

/** The body of a loop: item `item` on worker `worker` (0 .. n-1). */
typedef void (*pool_fn)(void *ctx, uint32_t worker, uint32_t item);

/** A pool (opaque). */
typedef struct img_pool img_pool;

/**
 * Starts a pool of `n` (>= 1) workers. Returns NULL when out of memory or when a
 * thread cannot start.
 */
img_pool *pool_create(uint32_t n);

/** Number of workers (the n of pool_create). */
uint32_t pool_size(const img_pool *p);

/**
 * Runs fn(ctx, worker, i) for every i in [0, count), spread over the workers,
 * and returns when all have finished. Items are taken in increasing order.
 */
void pool_run(img_pool *p, pool_fn fn, void *ctx, uint32_t count);

/** Stops and joins the threads and frees the pool (NULL: no-op). */
void pool_free(img_pool *p);

#endif /* MXK_IO_IMAGE_POOL_H */
