/*
 * Worker pools of the threaded engine: threads that take ready ops from a FIFO or a
 * priority queue and run them (upstream ThreadPool + dmlc ConcurrentBlockingQueue).
 */
#include "engine_pool.h"

#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#endif

/** Whether `a` should run before `b` in a priority queue. */
static bool runs_before(const engine_op *a, const engine_op *b) {
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return a->seq < b->seq;
}

/** Inserts into the heap (pool locked; room reserved). */
static void heap_push(engine_pool *p, engine_op *op) {
    size_t i = p->heap_len++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!runs_before(op, p->heap[parent]))
            break;
        p->heap[i] = p->heap[parent];
        i = parent;
    }
    p->heap[i] = op;
}

/** Removes the heap's top (pool locked; heap non-empty). */
static engine_op *heap_pop(engine_pool *p) {
    engine_op *top = p->heap[0];
    engine_op *last = p->heap[--p->heap_len];
    size_t n = p->heap_len, i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && runs_before(p->heap[c + 1], p->heap[c]))
            c++;
        if (!runs_before(p->heap[c], last))
            break;
        p->heap[i] = p->heap[c];
        i = c;
    }
    if (n > 0)
        p->heap[i] = last;
    return top;
}

/** Takes the next op (pool locked), or NULL when the queue is empty. */
static engine_op *take_locked(engine_pool *p) {
    if (p->prioritized) {
        if (p->heap_len == 0)
            return NULL;
        p->reserved--;
        return heap_pop(p);
    }
    engine_op *op = p->head;
    if (op != NULL) {
        p->head = op->qnext;
        if (p->head == NULL)
            p->tail = NULL;
    }
    return op;
}

/**
 * Flushes denormal floats to zero on the calling thread: arithmetic on denormals
 * (values below 2^-126 in float32, which trained recurrent networks produce, e.g. in
 * Adam's second moments and saturated gates) is microcoded on x86 and can make a
 * training step several times slower; flushed, such values become 0.
 */
static void flush_denormals(void) {
#if defined(__x86_64__) || defined(__i386__)
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#elif defined(__aarch64__)
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    fpcr |= (uint64_t)1 << 24; /* FZ */
    __asm__ volatile("msr fpcr, %0" : : "r"(fpcr));
#endif
}

/**
 * Worker thread: opens its stream (GPU pools), runs ops until the pool stops, then
 * closes the stream.
 */
static void *worker_main(void *arg) {
    engine_pool *p = arg;
    if (p->flush_denormals)
        flush_denormals();
    engine_stream stream;
    engine_stream_open(&stream, p->hooks, p->dev_type, p->dev_id, p->is_copy);
    pthread_mutex_lock(&p->mu);
    p->nstarted++;
    pthread_cond_broadcast(&p->ready_cv);
    for (;;) {
        engine_op *op = take_locked(p);
        if (op == NULL) {
            if (p->stopping)
                break;
            p->nidle++;
            pthread_cond_wait(&p->cv, &p->mu);
            p->nidle--;
            continue;
        }
        pthread_mutex_unlock(&p->mu);
        engine_run_op(op, &stream);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    engine_stream_close(&stream);
    return NULL;
}

/** Stops and joins the first `n` workers of a pool, then frees it. */
static void pool_teardown(engine_pool *p, int n) {
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < n; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->ready_cv);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p->heap);
    free(p->threads);
    free(p);
}

engine_pool *engine_pool_create(int nthreads, bool prioritized, int32_t dev_type, int32_t dev_id,
                                int is_copy, const mxk_engine_stream_hooks *hooks,
                                bool flush_denormals) {
    engine_pool *p = calloc(1, sizeof *p);
    pthread_t *threads = calloc((size_t)nthreads, sizeof *threads);
    if (p == NULL || threads == NULL) {
        free(p);
        free(threads);
        mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "engine: out of memory creating a worker pool");
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    pthread_cond_init(&p->ready_cv, NULL);
    p->prioritized = prioritized;
    p->threads = threads;
    p->nthreads = nthreads;
    p->dev_type = dev_type;
    p->dev_id = dev_id;
    p->is_copy = is_copy;
    p->hooks = hooks;
    p->flush_denormals = flush_denormals;
    for (int i = 0; i < nthreads; i++) {
        int rc = pthread_create(&p->threads[i], NULL, worker_main, p);
        if (rc != 0) {
            pool_teardown(p, i);
            mxk_set_error(MXK_ERR_INTERNAL,
                          "engine: cannot start worker thread %d of %d for device %d:%d: %s", i,
                          nthreads, (int)dev_type, (int)dev_id, strerror(rc));
            return NULL;
        }
    }
    pthread_mutex_lock(&p->mu);
    while (p->nstarted < nthreads)
        pthread_cond_wait(&p->ready_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    return p;
}

mxk_status engine_pool_reserve(engine_pool *p) {
    if (!p->prioritized)
        return MXK_OK;
    mxk_status st = MXK_OK;
    pthread_mutex_lock(&p->mu);
    if (p->reserved == p->heap_cap) {
        size_t cap = p->heap_cap ? 2 * p->heap_cap : 64;
        engine_op **heap = realloc(p->heap, cap * sizeof *heap);
        if (heap == NULL) {
            st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "engine: out of memory queueing an op");
        } else {
            p->heap = heap;
            p->heap_cap = cap;
        }
    }
    if (st == MXK_OK)
        p->reserved++;
    pthread_mutex_unlock(&p->mu);
    return st;
}

void engine_pool_enqueue(engine_pool *p, engine_op *op) {
    pthread_mutex_lock(&p->mu);
    op->seq = p->seq++;
    if (p->prioritized) {
        heap_push(p, op);
    } else if (op->kind == ENGINE_OP_DELETE) {
        op->qnext = p->head; /* upstream: deletions jump the queue */
        p->head = op;
        if (p->tail == NULL)
            p->tail = op;
    } else {
        op->qnext = NULL;
        if (p->tail != NULL)
            p->tail->qnext = op;
        else
            p->head = op;
        p->tail = op;
    }
    if (p->nidle > 0)
        pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void engine_pool_destroy(engine_pool *p) {
    pool_teardown(p, p->nthreads);
}
