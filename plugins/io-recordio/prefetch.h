/*
 * A producer thread with a bounded queue of batches: mxk's version of MXNet's
 * PrefetcherIter (src/io/iter_prefetcher.h) over dmlc-core's ThreadedIter
 * (include/dmlc/threadediter.h); upstream docs/static_site/src/pages/api/architecture/
 * note_data_loading.md and exception_handling.md.
 *
 * The producer fills free slots (at most `capacity` batches in flight) by calling
 * the source's produce callback; the consumer takes full slots in order and gives
 * each back at its next call of next/reset. All source callbacks (produce,
 * rewind) run on the producer thread, so a source needs no locking of its own.
 *
 * Errors: the producer keeps only the *first* error (code + message), stops
 * producing and exits its loop; the error is sticky: every later next/reset
 * returns it, until the prefetcher is destroyed. As in dmlc-core, next checks the
 * error before waiting and again after dequeuing, so a batch produced before the
 * failure may be withheld.
 */
#ifndef MXK_IO_PREFETCH_H
#define MXK_IO_PREFETCH_H

#include <pthread.h>
#include <stdint.h>

#include "mxk_abi_base.h"

/** Longest error message kept by the prefetcher (bytes, with the terminator). */
#define PF_MSG_MAX 1024

/** One batch buffer: data (of the source's dtype), label (float32), example ids, padding count. */
typedef struct pf_slot {
    void *data;
    float *label;
    uint64_t *index;
    uint32_t pad;
} pf_slot;

/**
 * A batch source. produce fills `slot` and sets *produced (1: a batch, 0: end
 * of the epoch); rewind starts the next epoch (BeforeFirst). Both return MXK_OK
 * or an error code with a message written into msg (PF_MSG_MAX bytes).
 */
typedef struct pf_source {
    void *ctx;
    mxk_status (*produce)(void *ctx, pf_slot *slot, int *produced, char *msg);
    mxk_status (*rewind)(void *ctx, char *msg);
} pf_source;

/** The prefetcher (opaque to users; fields private to prefetch.c). */
typedef struct prefetcher {
    pf_source src;
    uint32_t capacity;
    pf_slot *slots;
    uint32_t *free_q, *full_q; /**< rings of slot ids */
    uint32_t free_head, free_count, full_head, full_count;
    int32_t current; /**< slot held by the consumer, or -1 */
    int ended;       /**< the producer reached the end of the epoch (or failed) */
    int reset_req;   /**< the consumer asked for a rewind; cleared by the producer */
    int stop;
    mxk_status err_code;
    char err_msg[PF_MSG_MAX];
    pthread_mutex_t mu;
    pthread_cond_t producer_cv, consumer_cv;
    pthread_t thread;
    int thread_started;
} prefetcher;

/**
 * Allocates `capacity` (>= 1) slots of data_bytes bytes of data, label_floats
 * floats and index_count ids, zero-filled, and starts the producer thread. Returns MXK_OK or an
 * error code with a message in msg.
 */
mxk_status pf_create(prefetcher *pf, pf_source src, uint32_t capacity, uint64_t data_bytes,
                     uint64_t label_floats, uint64_t index_count, char *msg);
/** Stops the producer thread (waits for it) and frees the slots. Safe on a zeroed pf. */
void pf_destroy(prefetcher *pf);
/**
 * Gives back the current slot and takes the next full one: *slot is set and
 * *has_next = 1, or *has_next = 0 at the end of the epoch. A producer error is
 * returned (sticky), its message copied into msg.
 */
mxk_status pf_next(prefetcher *pf, const pf_slot **slot, int32_t *has_next, char *msg);
/**
 * Rewinds: gives back every queued slot, asks the producer to call the source's
 * rewind and waits until it has. Returns a (sticky) producer error.
 */
mxk_status pf_reset(prefetcher *pf, char *msg);

#endif /* MXK_IO_PREFETCH_H */
