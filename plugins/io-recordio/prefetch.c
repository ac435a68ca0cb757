/*
 * The prefetcher (see prefetch.h). Upstream: MXNet src/io/iter_prefetcher.h and
 * dmlc-core include/dmlc/threadediter.h (first-exception-wins, sticky; checks in
 * Next before waiting and after dequeuing; BeforeFirst handshake with the producer).
 */
#include "prefetch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Pushes slot id to a ring (capacity pf->capacity). Caller holds mu. */
static void ring_push(const prefetcher *pf, uint32_t *q, uint32_t head, uint32_t *count,
                      uint32_t id) {
    q[(head + *count) % pf->capacity] = id;
    (*count)++;
}

/** Pops from a ring; caller holds mu and checks count > 0. */
static uint32_t ring_pop(const prefetcher *pf, const uint32_t *q, uint32_t *head, uint32_t *count) {
    uint32_t id = q[*head];
    *head = (*head + 1) % pf->capacity;
    (*count)--;
    return id;
}

/** Records the first error (later ones are dropped). Caller holds mu. */
static void set_error_locked(prefetcher *pf, mxk_status code, const char *msg) {
    if (pf->err_code != MXK_OK)
        return;
    pf->err_code = code;
    snprintf(pf->err_msg, sizeof pf->err_msg, "%s", msg && msg[0] ? msg : "data iterator error");
}

/** Handles a rewind request on the producer thread. Caller holds mu (released around rewind). */
static void do_rewind_locked(prefetcher *pf, char *msg) {
    /* Queued batches of the old epoch go back to the free list. */
    while (pf->full_count > 0) {
        uint32_t id = ring_pop(pf, pf->full_q, &pf->full_head, &pf->full_count);
        ring_push(pf, pf->free_q, pf->free_head, &pf->free_count, id);
    }
    if (pf->err_code == MXK_OK) {
        pthread_mutex_unlock(&pf->mu);
        msg[0] = '\0';
        mxk_status st = pf->src.rewind ? pf->src.rewind(pf->src.ctx, msg) : MXK_OK;
        pthread_mutex_lock(&pf->mu);
        if (st != MXK_OK)
            set_error_locked(pf, st, msg);
    }
    pf->ended = pf->err_code != MXK_OK;
    pf->reset_req = 0;
    pthread_cond_broadcast(&pf->consumer_cv);
}

/** The producer thread: fills free slots until the end of the epoch, an error or stop. */
static void *producer_main(void *arg) {
    prefetcher *pf = arg;
    char msg[PF_MSG_MAX];
    pthread_mutex_lock(&pf->mu);
    for (;;) {
        while (!pf->stop && !pf->reset_req && (pf->ended || pf->free_count == 0))
            pthread_cond_wait(&pf->producer_cv, &pf->mu);
        if (pf->stop)
            break;
        if (pf->reset_req) {
            do_rewind_locked(pf, msg);
            continue;
        }
        uint32_t id = ring_pop(pf, pf->free_q, &pf->free_head, &pf->free_count);
        pf_slot *slot = &pf->slots[id];
        pthread_mutex_unlock(&pf->mu);
        int produced = 0;
        msg[0] = '\0';
        mxk_status st = pf->src.produce(pf->src.ctx, slot, &produced, msg);
        pthread_mutex_lock(&pf->mu);
        if (st != MXK_OK) {
            set_error_locked(pf, st, msg);
            pf->ended = 1;
            ring_push(pf, pf->free_q, pf->free_head, &pf->free_count, id);
        } else if (!produced) {
            pf->ended = 1;
            ring_push(pf, pf->free_q, pf->free_head, &pf->free_count, id);
        } else {
            ring_push(pf, pf->full_q, pf->full_head, &pf->full_count, id);
        }
        pthread_cond_broadcast(&pf->consumer_cv);
    }
    pthread_mutex_unlock(&pf->mu);
    return NULL;
}

mxk_status pf_create(prefetcher *pf, pf_source src, uint32_t capacity, uint64_t data_bytes,
                     uint64_t label_floats, uint64_t index_count, char *msg) {
    memset(pf, 0, sizeof *pf);
    pf->src = src;
    pf->capacity = capacity ? capacity : 1;
    pf->current = -1;
    pf->slots = calloc(pf->capacity, sizeof *pf->slots);
    pf->free_q = calloc(pf->capacity, sizeof *pf->free_q);
    pf->full_q = calloc(pf->capacity, sizeof *pf->full_q);
    if (!pf->slots || !pf->free_q || !pf->full_q)
        goto oom;
    for (uint32_t i = 0; i < pf->capacity; i++) {
        pf->slots[i].data = calloc(data_bytes ? data_bytes : 1, 1);
        pf->slots[i].label = calloc(label_floats ? label_floats : 1, sizeof(float));
        pf->slots[i].index = calloc(index_count ? index_count : 1, sizeof(uint64_t));
        if (!pf->slots[i].data || !pf->slots[i].label || !pf->slots[i].index)
            goto oom;
        pf->free_q[i] = i;
    }
    pf->free_count = pf->capacity;
    pthread_mutex_init(&pf->mu, NULL);
    pthread_cond_init(&pf->producer_cv, NULL);
    pthread_cond_init(&pf->consumer_cv, NULL);
    if (pthread_create(&pf->thread, NULL, producer_main, pf) != 0) {
        pthread_mutex_destroy(&pf->mu);
        pthread_cond_destroy(&pf->producer_cv);
        pthread_cond_destroy(&pf->consumer_cv);
        snprintf(msg, PF_MSG_MAX, "cannot start the prefetch thread");
        pf_destroy(pf);
        return MXK_ERR_INTERNAL;
    }
    pf->thread_started = 1;
    return MXK_OK;
oom:
    snprintf(msg, PF_MSG_MAX, "out of memory allocating %u prefetch buffers", pf->capacity);
    pf_destroy(pf);
    return MXK_ERR_OUT_OF_MEMORY;
}

void pf_destroy(prefetcher *pf) {
    if (pf == NULL)
        return;
    if (pf->thread_started) {
        pthread_mutex_lock(&pf->mu);
        pf->stop = 1;
        pthread_cond_broadcast(&pf->producer_cv);
        pthread_mutex_unlock(&pf->mu);
        pthread_join(pf->thread, NULL);
        pthread_mutex_destroy(&pf->mu);
        pthread_cond_destroy(&pf->producer_cv);
        pthread_cond_destroy(&pf->consumer_cv);
        pf->thread_started = 0;
    }
    for (uint32_t i = 0; pf->slots && i < pf->capacity; i++) {
        free(pf->slots[i].data);
        free(pf->slots[i].label);
        free(pf->slots[i].index);
    }
    free(pf->slots);
    free(pf->free_q);
    free(pf->full_q);
    pf->slots = NULL;
    pf->free_q = pf->full_q = NULL;
}

/** Gives the consumer's current slot back to the producer. Caller holds mu. */
static void recycle_current_locked(prefetcher *pf) {
    if (pf->current >= 0) {
        ring_push(pf, pf->free_q, pf->free_head, &pf->free_count, (uint32_t)pf->current);
        pf->current = -1;
        pthread_cond_broadcast(&pf->producer_cv);
    }
}

/** Copies the sticky error out; returns its code. Caller holds mu. */
static mxk_status error_locked(const prefetcher *pf, char *msg) {
    snprintf(msg, PF_MSG_MAX, "%s", pf->err_msg);
    return pf->err_code;
}

/**
 * The start of next and reset: takes mu, gives the current slot back and checks
 * the sticky error. Returns MXK_OK with mu held, or the error (its message copied
 * into msg) with mu released.
 */
static mxk_status consumer_enter(prefetcher *pf, char *msg) {
    pthread_mutex_lock(&pf->mu);
    recycle_current_locked(pf);
    if (pf->err_code == MXK_OK)
        return MXK_OK;
    mxk_status st = error_locked(pf, msg);
    pthread_mutex_unlock(&pf->mu);
    return st;
}

mxk_status pf_next(prefetcher *pf, const pf_slot **slot, int32_t *has_next, char *msg) {
    *has_next = 0;
    *slot = NULL;
    mxk_status st = consumer_enter(pf, msg);
    if (st != MXK_OK)
        return st;
    while (pf->full_count == 0 && !pf->ended)
        pthread_cond_wait(&pf->consumer_cv, &pf->mu);
    if (pf->full_count > 0) {
        uint32_t id = ring_pop(pf, pf->full_q, &pf->full_head, &pf->full_count);
        pf->current = (int32_t)id;
        if (pf->err_code != MXK_OK) { /* failed meanwhile: withhold (dmlc-core does too) */
            recycle_current_locked(pf);
            st = error_locked(pf, msg);
        } else {
            *slot = &pf->slots[id];
            *has_next = 1;
        }
    } else if (pf->err_code != MXK_OK) {
        st = error_locked(pf, msg);
    }
    pthread_mutex_unlock(&pf->mu);
    return st;
}

mxk_status pf_reset(prefetcher *pf, char *msg) {
    mxk_status st = consumer_enter(pf, msg);
    if (st != MXK_OK)
        return st;
    pf->reset_req = 1;
    pthread_cond_broadcast(&pf->producer_cv);
    while (pf->reset_req)
        pthread_cond_wait(&pf->consumer_cv, &pf->mu);
    if (pf->err_code != MXK_OK)
        st = error_locked(pf, msg);
    pthread_mutex_unlock(&pf->mu);
    return st;
}
