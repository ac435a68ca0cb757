/* The worker pool (image_pool.h). */
#include "image_pool.h"

#include <pthread.h>
#include <stdlib.h>

/** One thread's argument. */
typedef struct pool_thread {
    img_pool *pool;
    uint32_t worker;
} pool_thread;

struct img_pool {
    uint32_t n;         /**< workers, the caller included */
    pthread_t *threads; /**< n - 1 threads */
    pool_thread *args;
    uint32_t started; /**< threads started */
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    uint64_t generation; /**< incremented by each run */
    pool_fn fn;
    void *ctx;
    uint32_t count, next; /**< items of the run, next item to take */
    uint32_t busy;        /**< workers still inside the current run */
    int stop;
};

/** Takes and runs items of the current run until none is left. Caller holds mu; returns with it. */
static void drain_locked(img_pool *p, uint32_t worker) {
    while (p->next < p->count) {
        uint32_t i = p->next++;
        pool_fn fn = p->fn;
        void *ctx = p->ctx;
        pthread_mutex_unlock(&p->mu);
        fn(ctx, worker, i);
        pthread_mutex_lock(&p->mu);
    }
    if (--p->busy == 0)
        pthread_cond_broadcast(&p->done_cv);
}

/** A worker thread: waits for each new run and drains it. */
static void *worker_main(void *arg) {
    pool_thread *t = arg;
    img_pool *p = t->pool;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->generation == seen)
            pthread_cond_wait(&p->work_cv, &p->mu);
        if (p->stop)
            break;
        seen = p->generation;
        drain_locked(p, t->worker);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

img_pool *pool_create(uint32_t n) {
    img_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->n = n ? n : 1;
    p->threads = calloc(p->n, sizeof *p->threads);
    p->args = calloc(p->n, sizeof *p->args);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    if (p->threads == NULL || p->args == NULL) {
        pool_free(p);
        return NULL;
    }
    for (uint32_t i = 1; i < p->n; i++) {
        p->args[i].pool = p;
        p->args[i].worker = i;
        if (pthread_create(&p->threads[i - 1], NULL, worker_main, &p->args[i]) != 0) {
            pool_free(p);
            return NULL;
        }
        p->started++;
    }
    return p;
}

uint32_t pool_size(const img_pool *p) {
    return p->n;
}

void pool_run(img_pool *p, pool_fn fn, void *ctx, uint32_t count) {
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->count = count;
    p->next = 0;
    p->busy = p->started + 1;
    p->generation++;
    pthread_cond_broadcast(&p->work_cv);
    drain_locked(p, 0);
    while (p->busy > 0)
        pthread_cond_wait(&p->done_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void pool_free(img_pool *p) {
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (uint32_t i = 0; i < p->started; i++)
        pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->done_cv);
    free(p->threads);
    free(p->args);
    free(p);
}
