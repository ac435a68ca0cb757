/*
 * The dist_sync and dist_device_sync KVStore transports (abi/mxk_abi_kvstore.h)
 * over MPI.
 *
 * Semantics: upstream MXNet's synchronous distributed KVStore
 * (src/kvstore/kvstore_dist.h, python/mxnet/kvstore/kvstore.py,
 * python/mxnet/module/module.py _create_kvstore / update_on_kvstore): every worker
 * pushes its gradient of a key, the store sums them over the workers, every worker
 * pulls the same sum; rank() and num_workers() are the worker's rank and the
 * number of workers; init takes rank 0's value; barrier waits for every worker.
 *
 * Design: an allreduce per key instead of upstream's parameter servers. The kernel
 * sums the values a worker pushes to a key, hands this worker's sum to push, pulls
 * the aggregate into the same buffer and then runs the updater (or copies) on every
 * worker (kernel/kvstore/kvstore.c). A push is therefore an MPI_Iallreduce(SUM) of
 * the key: every worker receives the same sum and applies the same updater to it,
 * so the parameters stay identical on every worker without server processes (as
 * Horovod). Upstream's sync mode gives the same numbers: its servers sum the
 * workers' pushes and run the updater once, then workers pull the result.
 * Compared to upstream, there is no server process to launch, one collective per
 * key and push instead of a push and a pull message per worker and server, and the
 * optimizer state lives on every worker instead of on the servers.
 *
 * - Ordering: engine workers push different keys in an order that differs between
 *   workers. Every key therefore has a communicator of its own (MPI_Comm_idup of
 *   the transport's, in init, which the kernel calls synchronously in program order
 *   on every worker), so the collectives of different keys never need one order;
 *   those of one key are ordered by the kernel (its engine variable).
 * - Progress: push starts MPI_Iallreduce from the engine worker calling it
 *   (MPI_THREAD_MULTIPLE); one communication thread per transport polls the
 *   requests with MPI_Testsome and completes the engine's handles. Pull copies the
 *   last aggregate out of the key's receive buffer.
 * - init: every worker MPI_Iallgather's a record of the key (hash, a prefix of its
 *   name, dtype, shape); a mismatch is an error on every worker naming the key and
 *   both values. Then MPI_Ibcast of rank 0's value, written into the tensor the
 *   kernel passed (its stored copy, host memory), as upstream's InitImpl stores
 *   rank 0's value on the servers for every worker's later pulls.
 * - Gradient compression (set_gradient_compression "2bit", upstream
 *   src/kvstore/gradient_compression.cc): a push of a float32 key quantises the
 *   value plus the key's residual into 2-bit codes (compress.c) and MPI_Iallgather's
 *   them on the key's communicator; on completion the communication thread sums the
 *   dequantised codes of every rank, in rank order, into the key's aggregate
 *   (start_push, sum_gathered).
 * - Faults never hang: a collective without completion for MXK_KVSTORE_TIMEOUT
 *   seconds (default 60) fails its push, or init or barrier, with an error naming
 *   the key and the workers that did not answer a liveness probe (probe_peers,
 *   serve_probes: a side channel whose receive the communication thread keeps
 *   posted and answers at once), or saying that all are alive. Such a collective cannot be
 * cancelled (MPI forbids freeing a pending collective request): it stays polled, its key fails
 * every later push and pull, and the memory it may write is kept until exit (bury). The
 * communicators return errors (MPI_ERRORS_RETURN), which become mxk errors.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist.h"
#include "mxk_sdk_dtype.h"
#include "mxk_sdk_shape.h"

/** The longest wait for the answers to a liveness probe, seconds (less when the timeout is). */
#define DIST_PROBE_WAIT 2.0
/** How often an idle communication thread answers liveness probes, nanoseconds. */
#define DIST_IDLE_POLL_NS 20000000L

/** One key. */
typedef struct dist_key {
    char *key;
    MPI_Comm comm; /**< this key's communicator (a dup of the transport's) */
    MPI_Datatype type;
    MPI_Op op;
    int32_t dtype;
    int count;        /**< elements */
    size_t bytes;     /**< bytes of the value */
    void *recv;       /**< the last aggregate (after init: rank 0's value) */
    void *send;       /**< this worker's value during an allreduce (allocated at the first) */
    int pending;      /**< an allreduce of this key is in flight (abandoned ones included) */
    char failed[512]; /**< non-empty once a collective of this key failed */
    /* 2-bit compression (float32 keys), allocated at the first compressed push: */
    float *residual;    /**< this worker's residual (NULL: zero) */
    uint32_t *codes;    /**< this worker's codes of the push in flight */
    uint32_t *gathered; /**< every rank's codes, rank after rank (MPI_Iallgather) */
} dist_key;

/** An allreduce in flight. */
typedef struct dist_op {
    dist_key *k;
    mxk_async_handle *done; /**< NULL once completed with an error (abandoned) */
    double start;           /**< MPI_Wtime at the start */
    float gc_threshold;     /**< > 0: an allgather of 2-bit codes, dequantised into k->recv */
} dist_op;

/** A completion to deliver without the lock. */
typedef struct dist_completion {
    mxk_async_handle *done;
    mxk_status status;
    dist_key
        *timed_out; /**< the key when this is a timeout (its message gets the probe's result) */
    char msg[512];
} dist_completion;

/** The transport object. */
typedef struct dist_transport {
    const char *name; /**< the store type: dist_sync or dist_device_sync */
    MPI_Comm world;   /**< a dup of MPI_COMM_WORLD with MPI_ERRORS_RETURN */
    int rank, size;
    double timeout;       /**< seconds */
    pthread_mutex_t lock; /**< guards everything below */
    pthread_cond_t wake;  /**< signalled when an op starts or at destroy */
    dist_key **keys;
    uint32_t nkeys, capkeys;
    dist_op *ops; /**< in flight, parallel to reqs */
    MPI_Request *reqs;
    int *indices;
    MPI_Status *statuses;
    uint32_t nops, capops;
    int stop;
    pthread_t thread;
    char broken[512];   /**< non-empty once a collective of init or barrier failed */
    float gc_threshold; /**< 2-bit compression of float32 pushes with this threshold; 0: none */
    /* The liveness side channel (probe_peers, serve_probes): */
    MPI_Comm live;             /**< probes arrive here (a dup of world), tagged with the round */
    MPI_Comm live_answers;     /**< answers go back here, with the probe's tag */
    pthread_mutex_t live_lock; /**< guards probe_req, probe_round */
    MPI_Request probe_req;     /**< the receive of the next probe (MPI_REQUEST_NULL: none) */
    int probe_in;              /**< its buffer */
    int probe_round;           /**< rounds of probes sent by this worker */
} dist_transport;

/*
 * Memory that an abandoned collective may still write (MPI cannot cancel a started
 * collective): kept, reachable, until the process exits.
 */
static pthread_mutex_t graveyard_lock = PTHREAD_MUTEX_INITIALIZER;
static void **graveyard;
static size_t graveyard_count, graveyard_capacity;

/** Keeps block `p` until exit instead of freeing it (out of memory: leaks it). */
static void bury(void *p) {
    pthread_mutex_lock(&graveyard_lock);
    if (graveyard_count == graveyard_capacity) {
        size_t cap = graveyard_capacity ? graveyard_capacity * 2 : 16;
        void **g = realloc(graveyard, cap * sizeof *g);
        if (g != NULL) {
            graveyard = g;
            graveyard_capacity = cap;
        }
    }
    if (graveyard_count < graveyard_capacity)
        graveyard[graveyard_count++] = p;
    pthread_mutex_unlock(&graveyard_lock);
}

/** The MPI type and sum operator of a dtype; 0 when the dtype has none. */
static int dtype_mpi(int32_t dtype, MPI_Datatype *type, MPI_Op *op) {
    *op = MPI_SUM;
    switch (dtype) {
    case MXK_FLOAT32:
        *type = MPI_FLOAT;
        return 1;
    case MXK_FLOAT64:
        *type = MPI_DOUBLE;
        return 1;
    case MXK_FLOAT16:
        *type = MPI_UINT16_T;
        *op = dist_half_sum_op();
        return 1;
    case MXK_UINT8:
        *type = MPI_UINT8_T;
        return 1;
    case MXK_INT32:
        *type = MPI_INT32_T;
        return 1;
    case MXK_INT8:
        *type = MPI_INT8_T;
        return 1;
    case MXK_INT64:
        *type = MPI_INT64_T;
        return 1;
    default:
        return 0;
    }
}

/** True when the tensor lives in host memory. */
static int is_host(const mxk_tensor *t) {
    return t->dev_type == MXK_DEV_CPU || t->dev_type == MXK_DEV_CPU_PINNED;
}

/** The payload of probes and answers (only their tags and sources matter). */
static const int probe_payload = 0;

/**
 * Answers the liveness probes that have arrived (thread-safe): each gets an answer
 * with its tag, sent to its source on t->live_answers, and the receive is posted again.
 * Called by the communication thread at least every DIST_IDLE_POLL_NS, and by every
 * wait for probe answers (so that two workers probing each other both answer).
 */
static void serve_probes(dist_transport *t) {
    pthread_mutex_lock(&t->live_lock);
    while (t->probe_req != MPI_REQUEST_NULL) {
        int flag = 0;
        MPI_Status status;
        if (MPI_Test(&t->probe_req, &flag, &status) != MPI_SUCCESS) {
            t->probe_req = MPI_REQUEST_NULL; /* the channel is broken: probes go unanswered */
            break;
        }
        if (!flag)
            break;
        MPI_Request answer;
        if (MPI_Isend(&probe_payload, 1, MPI_INT, status.MPI_SOURCE, status.MPI_TAG,
                      t->live_answers, &answer) == MPI_SUCCESS)
            MPI_Request_free(&answer); /* completes on its own; the buffer is static */
        if (MPI_Irecv(&t->probe_in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, t->live,
                      &t->probe_req) != MPI_SUCCESS)
            t->probe_req = MPI_REQUEST_NULL;
    }
    pthread_mutex_unlock(&t->live_lock);
}

/**
 * Sends a liveness probe to every other worker and waits up to min(DIST_PROBE_WAIT,
 * timeout) for the answers, answering probes meanwhile. Sets alive[r] (t->size
 * entries) to 1 for this worker and each worker that answered. Returns 0 when the
 * channel does not exist (a timeout during create), else 1. Thread-safe.
 */
static int probe_peers(dist_transport *t, unsigned char *alive) {
    if (t->live == MPI_COMM_NULL || t->live_answers == MPI_COMM_NULL)
        return 0;
    pthread_mutex_lock(&t->live_lock);
    int tag = 1 + t->probe_round++ % 30000; /* a late answer to an earlier round never matches */
    pthread_mutex_unlock(&t->live_lock);
    MPI_Request *reqs = malloc((size_t)t->size * sizeof *reqs);
    int *answers = malloc((size_t)t->size * sizeof *answers);
    if (reqs == NULL || answers == NULL) {
        free(reqs);
        free(answers);
        return 0;
    }
    for (int r = 0; r < t->size; r++) {
        alive[r] = r == t->rank;
        reqs[r] = MPI_REQUEST_NULL;
        if (r == t->rank)
            continue;
        MPI_Request probe;
        if (MPI_Irecv(&answers[r], 1, MPI_INT, r, tag, t->live_answers, &reqs[r]) != MPI_SUCCESS)
            reqs[r] = MPI_REQUEST_NULL;
        if (MPI_Isend(&probe_payload, 1, MPI_INT, r, tag, t->live, &probe) == MPI_SUCCESS)
            MPI_Request_free(&probe);
    }
    double wait = t->timeout < DIST_PROBE_WAIT ? t->timeout : DIST_PROBE_WAIT;
    double start = MPI_Wtime();
    for (;;) {
        int pending = 0;
        for (int r = 0; r < t->size; r++) {
            int flag = 0;
            if (reqs[r] == MPI_REQUEST_NULL)
                continue;
            if (MPI_Test(&reqs[r], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                reqs[r] = MPI_REQUEST_NULL; /* an error: not alive */
            else if (flag)
                alive[r] = 1;
            else
                pending = 1;
        }
        if (!pending || MPI_Wtime() - start > wait)
            break;
        serve_probes(t);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    for (int r = 0; r < t->size; r++)
        if (reqs[r] != MPI_REQUEST_NULL) { /* no answer: withdraw the receive */
            MPI_Cancel(&reqs[r]);
            MPI_Wait(&reqs[r], MPI_STATUS_IGNORE);
        }
    free(reqs);
    free(answers);
    return 1;
}

/** Appends the ranks r with alive[r] == want to buf as "0-2, 5" (ranges); returns how many. */
static int format_ranks(const dist_transport *t, const unsigned char *alive, int want, char *buf,
                        size_t len) {
    int count = 0;
    size_t used = strlen(buf);
    for (int r = 0; r < t->size; r++) {
        if (alive[r] != want || (r > 0 && alive[r - 1] == want))
            continue;
        int end = r;
        while (end + 1 < t->size && alive[end + 1] == want)
            end++;
        int n = end > r ? snprintf(buf + used, len - used, "%s%d-%d", count ? ", " : "", r, end)
                        : snprintf(buf + used, len - used, "%s%d", count ? ", " : "", r);
        if (n > 0 && (size_t)n < len - used)
            used += (size_t)n;
        count += end - r + 1;
    }
    return count;
}

/**
 * Writes the timeout message of collective `what` into buf: with `alive` (the result
 * of probe_peers, or NULL) it names the workers that did not answer, or says that all
 * are alive and one has not `missing` (e.g. "pushed key 3"; NULL: "reached WHAT").
 */
static void timeout_message(const dist_transport *t, const char *what, const char *missing,
                            const unsigned char *alive, char *buf, size_t len) {
    int n =
        snprintf(buf, len, "KVStore %s: no progress on %s for %g s (rank %d of %d here): ", t->name,
                 what, t->timeout, t->rank, t->size);
    if (n < 0 || (size_t)n >= len)
        return;
    char ranks[256] = "";
    double wait = t->timeout < DIST_PROBE_WAIT ? t->timeout : DIST_PROBE_WAIT;
    int silent = alive ? format_ranks(t, alive, 0, ranks, sizeof ranks) : 0;
    if (alive == NULL)
        snprintf(buf + n, len - (size_t)n, "a worker may have died or stopped pushing");
    else if (silent > 0)
        snprintf(buf + n, len - (size_t)n, "%s %s did not answer a liveness probe within %g s: %s",
                 silent > 1 ? "ranks" : "rank", ranks, wait,
                 silent > 1 ? "they died, hang, are stopped or have freed their store"
                            : "it died, hangs, is stopped or has freed its store");
    else {
        format_ranks(t, alive, 1, ranks, sizeof ranks);
        if (missing != NULL)
            snprintf(buf + n, len - (size_t)n,
                     "ranks %s are alive: a worker has not %s (do all workers push the same keys?)",
                     ranks, missing);
        else
            snprintf(buf + n, len - (size_t)n, "ranks %s are alive: a worker has not reached %s",
                     ranks, what);
    }
}

/** Probes the other workers and writes the timeout message of `what` into buf. */
static void explain_timeout(dist_transport *t, const char *what, const char *missing, char *buf,
                            size_t len) {
    unsigned char *alive = malloc((size_t)t->size);
    int probed = alive != NULL && probe_peers(t, alive);
    timeout_message(t, what, missing, probed ? alive : NULL, buf, len);
    free(alive);
}

/**
 * Waits for `req` (a collective on the transport's communicator), polling, at most
 * the timeout. On a timeout or an MPI error the transport is marked broken (the
 * communicator holds an unfinished collective) and the error written into `err`.
 */
static mxk_status wait_request(dist_transport *t, MPI_Request *req, const char *what,
                               mxk_error_sink *err) {
    double start = MPI_Wtime();
    char msg[512];
    for (;;) {
        int flag = 0;
        int rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            char text[MPI_MAX_ERROR_STRING];
            snprintf(msg, sizeof msg, "KVStore %s: %s: %s", t->name, what,
                     dist_mpi_error(rc, text, sizeof text));
            break;
        }
        if (flag)
            return MXK_OK;
        if (MPI_Wtime() - start > t->timeout) {
            explain_timeout(t, what, NULL, msg, sizeof msg);
            break;
        }
        nanosleep(&(struct timespec){0, 100000}, NULL);
    }
    pthread_mutex_lock(&t->lock);
    snprintf(t->broken, sizeof t->broken, "%s", msg);
    pthread_mutex_unlock(&t->lock);
    return dist_host->error(err, MXK_ERR_BACKEND, "%s", msg);
}

/** The earlier failure of an init or barrier collective (lock not held), or MXK_OK. */
static mxk_status check_broken(dist_transport *t, mxk_error_sink *err) {
    pthread_mutex_lock(&t->lock);
    mxk_status st = MXK_OK;
    if (t->broken[0])
        st = dist_host->error(err, MXK_ERR_STATE, "%s", t->broken);
    pthread_mutex_unlock(&t->lock);
    return st;
}

/** True once a collective of init, barrier or create was abandoned (lock not held). */
static int is_broken(dist_transport *t) {
    pthread_mutex_lock(&t->lock);
    int broken = t->broken[0] != '\0';
    pthread_mutex_unlock(&t->lock);
    return broken;
}

/** The key named `key` (lock held), or NULL. */
static dist_key *find_key(dist_transport *t, const char *key) {
    for (uint32_t i = 0; i < t->nkeys; i++)
        if (strcmp(t->keys[i]->key, key) == 0)
            return t->keys[i];
    return NULL;
}

/* ------------------------------------------------------------------------- */
/* The communication thread                                                  */
/* ------------------------------------------------------------------------- */

/**
 * Completes a compressed push of key `k` (lock held): k->recv becomes the sum of every
 * rank's dequantised codes, added in rank order so that every worker gets the same
 * bits (upstream's server sums the dequantised pushes: src/kvstore/kvstore_dist_server.h
 * DataHandleCompressed).
 */
static void sum_gathered(const dist_transport *t, dist_key *k, float threshold) {
    size_t n = (size_t)k->count, words = dist_2bit_words(n);
    if (k->bytes)
        memset(k->recv, 0, k->bytes);
    for (int r = 0; r < t->size; r++)
        dist_2bit_dequantize_add(k->gathered + (size_t)r * words, k->recv, n, threshold);
}

/**
 * Polls the first `cap` requests in flight (lock held): moves the completions and the
 * timeouts of this round into `out` (at most `cap`), drops finished requests, and
 * returns the number of completions; *live is set when a request with a handle remains.
 */
static uint32_t poll_ops(dist_transport *t, dist_completion *out, uint32_t cap, int *live) {
    uint32_t n = 0;
    int outcount = 0;
    int rc = MPI_Testsome((int)(t->nops < cap ? t->nops : cap), t->reqs, &outcount, t->indices,
                          t->statuses);
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)
        outcount = MPI_UNDEFINED;
    for (int i = 0; outcount != MPI_UNDEFINED && i < outcount; i++) {
        dist_op *o = &t->ops[t->indices[i]];
        int code = rc == MPI_ERR_IN_STATUS ? t->statuses[i].MPI_ERROR : MPI_SUCCESS;
        o->k->pending = 0;
        if (o->done == NULL)
            continue; /* an abandoned collective finished late: nothing to report */
        dist_completion *c = &out[n++];
        c->done = o->done;
        c->status = MXK_OK;
        c->timed_out = NULL;
        c->msg[0] = '\0';
        o->done = NULL;
        if (code == MPI_SUCCESS && o->gc_threshold > 0)
            sum_gathered(t, o->k, o->gc_threshold);
        if (code != MPI_SUCCESS) {
            char text[MPI_MAX_ERROR_STRING];
            snprintf(o->k->failed, sizeof o->k->failed, "KVStore %s: %s of key %s: %s", t->name,
                     o->gc_threshold > 0 ? "allgather" : "allreduce", o->k->key,
                     dist_mpi_error(code, text, sizeof text));
            c->status = MXK_ERR_BACKEND;
            snprintf(c->msg, sizeof c->msg, "%s", o->k->failed);
        }
    }
    double now = MPI_Wtime();
    uint32_t kept = 0;
    *live = 0;
    for (uint32_t i = 0; i < t->nops; i++) {
        dist_op *o = &t->ops[i];
        if (t->reqs[i] == MPI_REQUEST_NULL)
            continue; /* finished: handled above */
        if (o->done != NULL && now - o->start > t->timeout && n < cap) {
            char what[300];
            snprintf(what, sizeof what, "key %s", o->k->key);
            /* the key fails at once; complete_timeouts adds the probe's result */
            timeout_message(t, what, NULL, NULL, o->k->failed, sizeof o->k->failed);
            dist_completion *c = &out[n++];
            c->done = o->done;
            c->status = MXK_ERR_BACKEND;
            c->timed_out = o->k;
            snprintf(c->msg, sizeof c->msg, "%s", o->k->failed);
            o->done = NULL;
        }
        *live |= o->done != NULL;
        t->ops[kept] = *o;
        t->reqs[kept] = t->reqs[i];
        kept++;
    }
    t->nops = kept;
    return n;
}

/**
 * Writes the probe's result into the messages of the timeouts among the n completions
 * `done` and their keys' failures (lock not held; one probe for all of them).
 */
static void complete_timeouts(dist_transport *t, dist_completion *done, uint32_t n) {
    unsigned char *alive = NULL;
    int probed = 0;
    for (uint32_t i = 0; i < n; i++) {
        dist_key *k = done[i].timed_out;
        if (k == NULL)
            continue;
        if (alive == NULL && (alive = malloc((size_t)t->size)) != NULL)
            probed = probe_peers(t, alive);
        char what[300], missing[300];
        snprintf(what, sizeof what, "key %s", k->key);
        snprintf(missing, sizeof missing, "pushed key %s", k->key);
        timeout_message(t, what, missing, probed ? alive : NULL, done[i].msg, sizeof done[i].msg);
        pthread_mutex_lock(&t->lock);
        snprintf(k->failed, sizeof k->failed, "%s", done[i].msg);
        pthread_mutex_unlock(&t->lock);
    }
    free(alive);
}

/** The communication thread: completes the allreduces of the transport. */
static void *comm_thread(void *arg) {
    dist_transport *t = arg;
    dist_completion *done = NULL;
    uint32_t cap = 0;
    pthread_mutex_lock(&t->lock);
    while (!t->stop) {
        if (t->nops == 0) { /* idle: wakes every DIST_IDLE_POLL_NS to answer liveness probes */
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += DIST_IDLE_POLL_NS;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&t->wake, &t->lock, &until);
            pthread_mutex_unlock(&t->lock);
            serve_probes(t);
            pthread_mutex_lock(&t->lock);
            continue;
        }
        if (cap < t->nops) { /* room for every request (out of memory: polls the first cap) */
            dist_completion *more = realloc(done, t->nops * sizeof *more);
            if (more != NULL) {
                done = more;
                cap = t->nops;
            }
        }
        int live = 0;
        uint32_t n = cap ? poll_ops(t, done, cap, &live) : 0;
        pthread_mutex_unlock(&t->lock);
        serve_probes(t);
        complete_timeouts(t, done, n);
        for (uint32_t i = 0; i < n; i++)
            dist_host->async_complete(done[i].done, done[i].status,
                                      done[i].status == MXK_OK ? NULL : done[i].msg);
        /* Requests with handles are polled continuously, yielding the CPU (MPI moves bytes only
         * inside MPI calls); abandoned ones every 10 ms. */
        if (n == 0 && live)
            sched_yield();
        else if (n == 0)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    free(done);
    return NULL;
}

/* ------------------------------------------------------------------------- */
/* The transport contract                                                    */
/* ------------------------------------------------------------------------- */

/** Frees a transport whose communication thread is not running. */
static void free_transport(dist_transport *t) {
    for (uint32_t i = 0; i < t->nkeys; i++) {
        dist_key *k = t->keys[i];
        if (k->pending) {
            bury(k); /* an abandoned allreduce may still write k->recv */
            continue;
        }
        MPI_Comm_free(&k->comm);
        free(k->residual);
        free(k->codes);
        free(k->gathered);
        free(k->send);
        free(k->recv);
        free(k->key);
        free(k);
    }
    if (t->probe_req != MPI_REQUEST_NULL) { /* withdraw the receive of probes */
        MPI_Cancel(&t->probe_req);
        MPI_Wait(&t->probe_req, MPI_STATUS_IGNORE);
    }
    if (!t->broken[0]) {
        if (t->live != MPI_COMM_NULL)
            MPI_Comm_free(&t->live);
        if (t->live_answers != MPI_COMM_NULL)
            MPI_Comm_free(&t->live_answers);
    }
    if (t->world != MPI_COMM_NULL && !t->broken[0])
        MPI_Comm_free(&t->world);
    free(t->keys);
    free(t->ops);
    free(t->reqs);
    free(t->indices);
    free(t->statuses);
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->lock);
    pthread_mutex_destroy(&t->live_lock);
    if (t->broken[0])
        bury(t); /* an abandoned collective of create may still write t->world */
    else
        free(t);
}

/** Shared body of the create functions of both store types. */
static mxk_status create_named(const char *name, void **out, mxk_error_sink *err) {
    double timeout = 0;
    mxk_status st = dist_mpi_start(name, &timeout, err);
    if (st != MXK_OK)
        return st;
    dist_transport *t = calloc(1, sizeof *t);
    if (t == NULL)
        return dist_host->error(err, MXK_ERR_OUT_OF_MEMORY, "KVStore %s: out of memory", name);
    t->name = name;
    t->timeout = timeout;
    t->world = t->live = t->live_answers = MPI_COMM_NULL;
    t->probe_req = MPI_REQUEST_NULL;
    pthread_mutex_init(&t->lock, NULL);
    pthread_mutex_init(&t->live_lock, NULL);
    pthread_cond_init(&t->wake, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t->size);
    MPI_Request req;
    char text[MPI_MAX_ERROR_STRING];
    int rc = MPI_Comm_idup(MPI_COMM_WORLD, &t->world, &req);
    if (rc != MPI_SUCCESS)
        st = dist_host->error(err, MXK_ERR_BACKEND, "KVStore %s: MPI_Comm_idup: %s", name,
                              dist_mpi_error(rc, text, sizeof text));
    else
        st = wait_request(t, &req, "the creation of the store", err);
    if (st == MXK_OK)
        MPI_Comm_set_errhandler(t->world, MPI_ERRORS_RETURN);
    /* the liveness side channel: two dups of world (which hand on MPI_ERRORS_RETURN) */
    MPI_Comm *side[2] = {&t->live, &t->live_answers};
    for (int i = 0; i < 2 && st == MXK_OK; i++) {
        if ((rc = MPI_Comm_idup(t->world, side[i], &req)) != MPI_SUCCESS)
            st = dist_host->error(err, MXK_ERR_BACKEND, "KVStore %s: MPI_Comm_idup: %s", name,
                                  dist_mpi_error(rc, text, sizeof text));
        else
            st = wait_request(t, &req, "the creation of the store", err);
    }
    if (st == MXK_OK && (rc = MPI_Irecv(&t->probe_in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                        t->live, &t->probe_req)) != MPI_SUCCESS)
        st = dist_host->error(err, MXK_ERR_BACKEND, "KVStore %s: MPI_Irecv: %s", name,
                              dist_mpi_error(rc, text, sizeof text));
    if (st == MXK_OK && pthread_create(&t->thread, NULL, comm_thread, t) != 0)
        st = dist_host->error(err, MXK_ERR_BACKEND,
                              "KVStore %s: cannot start the communication thread", name);
    if (st != MXK_OK) {
        free_transport(t);
        return st;
    }
    *out = t;
    return MXK_OK;
}

/** mxk_kvstore_transport_def.create of dist_sync. */
static mxk_status create_sync(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    (void)attrs;
    return create_named("dist_sync", out, err);
}

/** mxk_kvstore_transport_def.create of dist_device_sync (the same host allreduce). */
static mxk_status create_device_sync(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    (void)attrs;
    return create_named("dist_device_sync", out, err);
}

/** mxk_kvstore_transport_def.destroy: stops the thread, frees the keys. */
static void transport_destroy(void *p) {
    dist_transport *t = p;
    pthread_mutex_lock(&t->lock);
    t->stop = 1;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    free_transport(t);
}

/** mxk_kvstore_transport_def.rank: the rank in MPI_COMM_WORLD. */
static int32_t transport_rank(void *p) {
    return ((dist_transport *)p)->rank;
}

/** mxk_kvstore_transport_def.num_workers: the size of MPI_COMM_WORLD. */
static int32_t transport_num_workers(void *p) {
    return ((dist_transport *)p)->size;
}

/** What every worker tells the others about a key it inits. */
typedef struct key_record {
    uint64_t hash;
    char name[48]; /**< a prefix of the key, for messages */
    int32_t dtype;
    int32_t ndim;
    int64_t dims[MXK_MAX_NDIM];
} key_record;

/** The record of `key` with value `v`. */
static key_record make_record(const char *key, const mxk_tensor *v) {
    key_record r;
    memset(&r, 0, sizeof r);
    r.hash = dist_key_hash(key);
    snprintf(r.name, sizeof r.name, "%s", key);
    r.dtype = v->dtype;
    r.ndim = v->shape.ndim;
    for (int32_t i = 0; i < v->shape.ndim && i < MXK_MAX_NDIM; i++)
        r.dims[i] = v->shape.dims[i];
    return r;
}

/** Compares every worker's record to rank 0's; the same error on every worker. */
static mxk_status check_records(const dist_transport *t, const char *key, const key_record *all,
                                mxk_error_sink *err) {
    const key_record *r0 = &all[0];
    for (int i = 1; i < t->size; i++) {
        const key_record *ri = &all[i];
        if (ri->hash != r0->hash || strcmp(ri->name, r0->name) != 0)
            return dist_host->error(err, MXK_ERR_STATE,
                                    "KVStore %s: rank 0 inits key %s but rank %d inits key %s: "
                                    "every worker must init the same keys in the same order",
                                    t->name, r0->name, i, ri->name);
        if (ri->dtype != r0->dtype)
            return dist_host->error(
                err, MXK_ERR_TYPE, "KVStore %s: key %s has dtype %s on rank 0 but %s on rank %d",
                t->name, key, mxk_sdk_dtype_name(r0->dtype), mxk_sdk_dtype_name(ri->dtype), i);
        mxk_shape s0 = mxk_sdk_shape_from(r0->dims, r0->ndim);
        mxk_shape si = mxk_sdk_shape_from(ri->dims, ri->ndim);
        if (!mxk_sdk_shape_equal(&s0, &si)) {
            char b0[160], bi[160];
            return dist_host->error(err, MXK_ERR_SHAPE,
                                    "KVStore %s: key %s has shape %s on rank 0 but %s on rank %d",
                                    t->name, key, mxk_sdk_shape_format(&s0, b0, sizeof b0),
                                    mxk_sdk_shape_format(&si, bi, sizeof bi), i);
        }
    }
    return MXK_OK;
}

/** Adds a key to the table (lock not held). */
static mxk_status add_key(dist_transport *t, dist_key *k, mxk_error_sink *err) {
    pthread_mutex_lock(&t->lock);
    mxk_status st = MXK_OK;
    if (t->nkeys == t->capkeys) {
        uint32_t cap = t->capkeys ? t->capkeys * 2 : 16;
        dist_key **keys = realloc(t->keys, cap * sizeof *keys);
        if (keys == NULL)
            st = dist_host->error(err, MXK_ERR_OUT_OF_MEMORY, "KVStore %s: out of memory", t->name);
        else {
            t->keys = keys;
            t->capkeys = cap;
        }
    }
    if (st == MXK_OK)
        t->keys[t->nkeys++] = k;
    pthread_mutex_unlock(&t->lock);
    return st;
}

/**
 * mxk_kvstore_transport_def.init: checks that every worker inits `key` alike,
 * gives the key its communicator and replaces `value` (the kernel's stored copy)
 * with rank 0's value.
 */
static mxk_status transport_init(void *p, const char *key, const mxk_tensor *value,
                                 mxk_error_sink *err) {
    dist_transport *t = p;
    mxk_status st = check_broken(t, err);
    if (st != MXK_OK)
        return st;
    uint64_t count = mxk_sdk_shape_count(&value->shape);
    MPI_Datatype type;
    MPI_Op op;
    if (!is_host(value))
        return dist_host->error(err, MXK_ERR_UNSUPPORTED,
                                "KVStore %s: init of key %s: the value is not in host memory",
                                t->name, key);
    if (!dtype_mpi(value->dtype, &type, &op))
        return dist_host->error(err, MXK_ERR_TYPE, "KVStore %s: init of key %s: dtype %s", t->name,
                                key, mxk_sdk_dtype_name(value->dtype));
    if (count > (uint64_t)INT32_MAX)
        return dist_host->error(err, MXK_ERR_UNSUPPORTED,
                                "KVStore %s: init of key %s: %" PRIu64
                                " elements, more than one MPI collective takes (%d)",
                                t->name, key, count, INT32_MAX);
    pthread_mutex_lock(&t->lock);
    int dup = find_key(t, key) != NULL;
    pthread_mutex_unlock(&t->lock);
    if (dup)
        return dist_host->error(err, MXK_ERR_STATE, "duplicate init of key %s", key);

    key_record mine = make_record(key, value);
    key_record *all = calloc((size_t)t->size, sizeof *all);
    dist_key *k = calloc(1, sizeof *k);
    size_t bytes = (size_t)count * mxk_sdk_dtype_size(value->dtype);
    if (all == NULL || k == NULL || (k->key = strdup(key)) == NULL ||
        (k->recv = malloc(bytes ? bytes : 1)) == NULL) {
        free(all);
        if (k != NULL) {
            free(k->key);
            free(k);
        }
        return dist_host->error(err, MXK_ERR_OUT_OF_MEMORY, "KVStore %s: out of memory", t->name);
    }
    k->comm = MPI_COMM_NULL;
    k->type = type;
    k->op = op;
    k->dtype = value->dtype;
    k->count = (int)count;
    k->bytes = bytes;
    char what[300], text[MPI_MAX_ERROR_STRING];
    snprintf(what, sizeof what, "init of key %s", key);
    MPI_Request req;
    int rc = MPI_Iallgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE,
                            t->world, &req);
    if (rc == MPI_SUCCESS)
        st = wait_request(t, &req, what, err);
    if (rc == MPI_SUCCESS && st == MXK_OK)
        st = check_records(t, key, all, err);
    if (rc == MPI_SUCCESS && st == MXK_OK &&
        (rc = MPI_Comm_idup(t->world, &k->comm, &req)) == MPI_SUCCESS)
        st = wait_request(t, &req, what, err);
    if (bytes)
        memcpy(k->recv, value->data, bytes);
    if (rc == MPI_SUCCESS && st == MXK_OK &&
        (rc = MPI_Ibcast(k->recv, k->count, k->type, 0, k->comm, &req)) == MPI_SUCCESS)
        st = wait_request(t, &req, what, err);
    if (rc != MPI_SUCCESS)
        st = dist_host->error(err, MXK_ERR_BACKEND, "KVStore %s: %s: %s", t->name, what,
                              dist_mpi_error(rc, text, sizeof text));
    if (st == MXK_OK)
        st = add_key(t, k, err);
    if (st != MXK_OK && is_broken(t)) {
        bury(all); /* a collective of this init was abandoned: it may still write them */
        bury(k);
        return st;
    }
    free(all);
    if (st != MXK_OK) {
        if (k->comm != MPI_COMM_NULL)
            MPI_Comm_free(&k->comm);
        free(k->recv);
        free(k->key);
        free(k);
        return st;
    }
    if (bytes && t->rank != 0)
        memcpy(value->data, k->recv, bytes); /* the kernel's stored copy takes rank 0's value */
    return MXK_OK;
}

/**
 * The key of a push or pull and its check against `v`: NULL after completing
 * `done` with the error (unknown key, other size or dtype, an earlier failure).
 */
static dist_key *key_for(dist_transport *t, const char *op, const char *key, const mxk_tensor *v,
                         mxk_async_handle *done) {
    char msg[600];
    dist_key *k = find_key(t, key);
    mxk_status st = MXK_OK;
    if (k == NULL) {
        snprintf(msg, sizeof msg, "key %s doesn't exist. Did you init?", key);
        st = MXK_ERR_NOT_FOUND;
    } else if (k->failed[0]) {
        snprintf(msg, sizeof msg, "%s", k->failed);
        st = MXK_ERR_BACKEND;
    } else if (!is_host(v) || v->dtype != k->dtype ||
               mxk_sdk_shape_count(&v->shape) != (uint64_t)k->count) {
        snprintf(msg, sizeof msg,
                 "KVStore %s: %s of key %s: %" PRIu64
                 " elements of %s in %s memory, stored %d of %s",
                 t->name, op, key, mxk_sdk_shape_count(&v->shape), mxk_sdk_dtype_name(v->dtype),
                 is_host(v) ? "host" : "device", k->count, mxk_sdk_dtype_name(k->dtype));
        st = MXK_ERR_SHAPE;
    }
    if (st == MXK_OK)
        return k;
    pthread_mutex_unlock(&t->lock);
    dist_host->async_complete(done, st, msg);
    pthread_mutex_lock(&t->lock);
    return NULL;
}

/** Makes room for one more op (lock held); 0 when out of memory. */
static int reserve_op(dist_transport *t) {
    if (t->nops < t->capops)
        return 1;
    uint32_t cap = t->capops ? t->capops * 2 : 16;
    dist_op *ops = realloc(t->ops, cap * sizeof *ops);
    if (ops != NULL)
        t->ops = ops;
    MPI_Request *reqs = realloc(t->reqs, cap * sizeof *reqs);
    if (reqs != NULL)
        t->reqs = reqs;
    int *indices = realloc(t->indices, cap * sizeof *indices);
    if (indices != NULL)
        t->indices = indices;
    MPI_Status *statuses = realloc(t->statuses, cap * sizeof *statuses);
    if (statuses != NULL)
        t->statuses = statuses;
    if (ops == NULL || reqs == NULL || indices == NULL || statuses == NULL)
        return 0;
    t->capops = cap;
    return 1;
}

/**
 * Allocates the compression buffers of key `k` (lock held): the residual (zero), this
 * worker's codes and every rank's. 0 when out of memory.
 */
static int alloc_compression(const dist_transport *t, dist_key *k) {
    size_t n = (size_t)k->count, words = dist_2bit_words(n);
    if (k->residual == NULL)
        k->residual = calloc(n ? n : 1, sizeof *k->residual);
    if (k->codes == NULL)
        k->codes = malloc((words ? words : 1) * sizeof *k->codes);
    if (k->gathered == NULL)
        k->gathered = malloc((words ? words : 1) * (size_t)t->size * sizeof *k->gathered);
    return k->residual != NULL && k->codes != NULL && k->gathered != NULL;
}

/**
 * Starts the collective of a push of `value` to key `k` (lock held) and sets
 * o->gc_threshold: with 2-bit compression on and a float32 key, this worker's value
 * plus the key's residual is quantised (dist_2bit_quantize) and the codes of every
 * rank MPI_Iallgather'ed (poll_ops then sums them: sum_gathered); otherwise the
 * value is copied into k->recv and MPI_Iallreduce'd there in place (the collective
 * then never reads `value` after the push completes, even when it times out).
 * Upstream compresses float32 only and refuses other dtypes
 * (src/kvstore/kvstore_dist.h PushImpl: "Gradient compression is only supported
 * for float32 type of parameters"); mxk pushes them uncompressed. On an error
 * writes the message into msg.
 */
static mxk_status start_push(dist_transport *t, dist_key *k, const mxk_tensor *value, dist_op *o,
                             MPI_Request *req, char *msg, size_t len) {
    const char *what = "MPI_Iallreduce";
    int rc;
    o->gc_threshold = k->dtype == MXK_FLOAT32 ? t->gc_threshold : 0;
    if (o->gc_threshold > 0) {
        if (!alloc_compression(t, k)) {
            snprintf(msg, len, "KVStore %s: out of memory", t->name);
            return MXK_ERR_OUT_OF_MEMORY;
        }
        size_t words = dist_2bit_words((size_t)k->count);
        dist_2bit_quantize(value->data, k->residual, k->codes, (size_t)k->count, o->gc_threshold);
        what = "MPI_Iallgather";
        rc = MPI_Iallgather(k->codes, (int)words, MPI_UINT32_T, k->gathered, (int)words,
                            MPI_UINT32_T, k->comm, req);
    } else if (k->send == NULL && (k->send = malloc(k->bytes ? k->bytes : 1)) == NULL) {
        snprintf(msg, len, "KVStore %s: out of memory", t->name);
        return MXK_ERR_OUT_OF_MEMORY;
    } else { /* from k->send, kept with the key: a timed-out collective may read its buffer
                after the push completed, and `value` may be the caller's own array (the
                kernel's one-value fast path). Not MPI_IN_PLACE on k->recv: Open MPI 4.1's
                in-place allreduce is slower (about 0.55 of MPI_Allreduce's bandwidth on 1-64
                MB against 0.7-0.95 out of place, bench_allreduce) */
        if (k->bytes)
            memcpy(k->send, value->data, k->bytes);
        rc = MPI_Iallreduce(k->send, k->recv, k->count, k->type, k->op, k->comm, req);
    }
    if (rc == MPI_SUCCESS)
        return MXK_OK;
    char text[MPI_MAX_ERROR_STRING];
    snprintf(msg, len, "KVStore %s: %s of key %s: %s", t->name, what, k->key,
             dist_mpi_error(rc, text, sizeof text));
    return MXK_ERR_BACKEND;
}

/** mxk_kvstore_transport_def.push: starts the collective of this worker's value. */
static void transport_push(void *p, const char *key, const mxk_tensor *value, int32_t priority,
                           mxk_async_handle *done) {
    (void)priority;
    dist_transport *t = p;
    char msg[600];
    mxk_status st = MXK_OK;
    pthread_mutex_lock(&t->lock);
    dist_key *k = key_for(t, "push", key, value, done);
    if (k == NULL) {
        pthread_mutex_unlock(&t->lock);
        return;
    }
    if (!reserve_op(t)) {
        snprintf(msg, sizeof msg, "KVStore %s: out of memory", t->name);
        st = MXK_ERR_OUT_OF_MEMORY;
    } else {
        MPI_Request req;
        dist_op o = {.k = k, .done = done, .start = MPI_Wtime()};
        st = start_push(t, k, value, &o, &req, msg, sizeof msg);
        if (st == MXK_OK) {
            k->pending = 1;
            t->ops[t->nops] = o;
            t->reqs[t->nops++] = req;
            pthread_cond_signal(&t->wake);
        }
    }
    pthread_mutex_unlock(&t->lock);
    if (st != MXK_OK)
        dist_host->async_complete(done, st, msg);
}

/** mxk_kvstore_transport_def.pull: copies the key's last aggregate into `out`. */
static void transport_pull(void *p, const char *key, const mxk_tensor *out, int32_t priority,
                           mxk_async_handle *done) {
    (void)priority;
    dist_transport *t = p;
    pthread_mutex_lock(&t->lock);
    dist_key *k = key_for(t, "pull", key, out, done);
    if (k != NULL && k->bytes)
        memcpy(out->data, k->recv, k->bytes);
    pthread_mutex_unlock(&t->lock);
    if (k != NULL)
        dist_host->async_complete(done, MXK_OK, NULL);
}

/** mxk_kvstore_transport_def.barrier: MPI_Ibarrier, polled with the timeout. */
static mxk_status transport_barrier(void *p, mxk_error_sink *err) {
    dist_transport *t = p;
    mxk_status st = check_broken(t, err);
    if (st != MXK_OK)
        return st;
    MPI_Request req;
    int rc = MPI_Ibarrier(t->world, &req);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        return dist_host->error(err, MXK_ERR_BACKEND, "KVStore %s: MPI_Ibarrier: %s", t->name,
                                dist_mpi_error(rc, text, sizeof text));
    }
    return wait_request(t, &req, "the barrier", err);
}

/**
 * mxk_kvstore_transport_def.set_gradient_compression: "2bit" (threshold > 0, as a
 * float32) or "none", for the pushes that start after it; "none" drops the residuals.
 * Thread-safe (under the transport's lock). Errors: MXK_ERR_INVALID_ARGUMENT.
 */
static mxk_status transport_set_gradient_compression(void *p, const char *type, double threshold,
                                                     mxk_error_sink *err) {
    dist_transport *t = p;
    int on = strcmp(type, "2bit") == 0;
    if (!on && strcmp(type, "none") != 0)
        return dist_host->error(err, MXK_ERR_INVALID_ARGUMENT,
                                "KVStore %s: unknown gradient compression %s", t->name, type);
    float thr = (float)threshold;
    if (on && !(thr > 0 && isfinite(thr)))
        return dist_host->error(err, MXK_ERR_INVALID_ARGUMENT,
                                "KVStore %s: gradient compression 2bit: threshold %g is not a "
                                "positive float32",
                                t->name, threshold);
    pthread_mutex_lock(&t->lock);
    t->gc_threshold = on ? thr : 0;
    for (uint32_t i = 0; !on && i < t->nkeys; i++) {
        free(t->keys[i]->residual); /* read only by pushes, under the lock */
        t->keys[i]->residual = NULL;
    }
    pthread_mutex_unlock(&t->lock);
    return MXK_OK;
}

/** Registers one store type. */
static mxk_status register_one(mxk_registrar *reg, const char *name, const char *description,
                               mxk_status (*create)(const mxk_attrs *, void **, mxk_error_sink *),
                               mxk_error_sink *err) {
    mxk_kvstore_transport_def d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.abi_minor = 0;
    d.name = name;
    d.description = description;
    d.create = create;
    d.destroy = transport_destroy;
    d.rank = transport_rank;
    d.num_workers = transport_num_workers;
    d.init = transport_init;
    d.push = transport_push;
    d.pull = transport_pull;
    d.barrier = transport_barrier;
    d.set_gradient_compression = transport_set_gradient_compression;
    return reg->register_kvstore_transport(reg, &d, err);
}

mxk_status dist_register_transports(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_status st = register_one(reg, "dist_sync",
                                 "synchronous data parallelism over MPI: an allreduce per key",
                                 create_sync, err);
    if (st == MXK_OK)
        st = register_one(reg, "dist_device_sync",
                          "dist_sync for values on devices (the same host allreduce)",
                          create_device_sync, err);
    return st;
}
