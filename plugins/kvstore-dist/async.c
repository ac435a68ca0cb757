/*
 * The dist_async KVStore transport (abi/mxk_abi_kvstore.h, ABI 1.5 servers) over
 * MPI point-to-point messages.
 *
 * Semantics: upstream MXNet's asynchronous distributed KVStore
 * (src/kvstore/kvstore_dist.h, kvstore_dist_server.h with sync_mode_ false,
 * python/mxnet/kvstore/kvstore_server.py): server processes hold the keys; each
 * worker's push is applied by the servers' updater as soon as it arrives, without
 * waiting for the other workers; a pull returns the servers' current value; the
 * optimizer reaches the servers as a command (set_optimizer); a key of at least
 * MXK_KVSTORE_BIGARRAY_BOUND elements (upstream MXNET_KVSTORE_BIGARRAY_BOUND,
 * default 1,000,000) is split into one contiguous part per server, a smaller one
 * lives whole on server hash(key) mod S (upstream: key * 9973 mod S).
 *
 * Roles: the last S = MXK_KVSTORE_NUM_SERVERS (default 1) ranks of the MPI job
 * are servers, the others workers (upstream's DMLC_ROLE, without a scheduler).
 * Every process creates the store; a server then runs run_server.
 *
 * Messages (tag ASYNC_TAG_REQ on a dup of MPI_COMM_WORLD): a header, the key, a
 * payload. Workers send INIT (every worker; rank 0's carries the value, the others'
 * are checked against it), PUSH (the value or its 2-bit codes), PULL, CMD and STOP
 * (when a worker frees its store; the server returns once every worker stopped).
 * The server handles them one at a time, in arrival order, and answers INIT, PULL
 * and CMD on the tag the request names. MPI keeps the order of messages from one
 * sender, so a worker's pull after its push sees that push applied.
 *
 * Faults never hang: a worker waits at most MXK_KVSTORE_TIMEOUT seconds for a
 * server to take a message or answer, then fails naming the server's rank. A
 * server waits for workers without a limit: workers compute between messages for
 * as long as they need; a worker that dies ends the job through mpirun, and one
 * that hangs is seen by the other workers' timeouts.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist.h"
#include "mxk_sdk_dtype.h"
#include "mxk_sdk_shape.h"

/** Default of MXK_KVSTORE_BIGARRAY_BOUND (upstream MXNET_KVSTORE_BIGARRAY_BOUND). */
#define ASYNC_BIGARRAY_BOUND 1000000
/** Tag of every request to a server; answers use tags from ASYNC_TAG_FIRST_REPLY on. */
#define ASYNC_TAG_REQ 1
#define ASYNC_TAG_FIRST_REPLY 16
/** The largest number of servers (parts of a key). */
#define ASYNC_MAX_SERVERS 64

/** Kinds of request. */
enum { ASYNC_INIT = 1, ASYNC_PUSH, ASYNC_PULL, ASYNC_CMD, ASYNC_STOP };

/** Header of a request (followed by key_len bytes of key, then payload bytes). */
typedef struct async_hdr {
    int32_t op;        /**< ASYNC_* */
    int32_t dtype;     /**< of the value */
    int32_t reply_tag; /**< tag of the answer (INIT, PULL, CMD) */
    int32_t head;      /**< CMD: the command's head; PUSH: 1 when 2-bit codes */
    int32_t ndim;      /**< shape of the server's part */
    int32_t worker;    /**< the sender's worker rank */
    int64_t dims[MXK_MAX_NDIM];
    double threshold; /**< PUSH with codes: the 2-bit threshold */
    uint64_t key_len; /**< bytes of key after the header */
    uint64_t payload; /**< bytes after the key */
} async_hdr;

/** Header of an answer (followed by msg_len bytes of message, then payload bytes). */
typedef struct async_reply {
    int32_t status;
    int32_t reserved_;
    uint64_t msg_len;
    uint64_t payload;
} async_reply;

/** One part of a key: the elements [begin, end) that server `server` holds. */
typedef struct async_part {
    int server; /**< index among the servers */
    uint64_t begin, end;
} async_part;

/** The transport object (workers and servers). */
typedef struct async_transport {
    MPI_Comm world;   /**< dup of MPI_COMM_WORLD, MPI_ERRORS_RETURN */
    MPI_Comm workers; /**< the workers only (barrier, init agreement) */
    int rank, size;   /**< in MPI_COMM_WORLD */
    int num_servers, num_workers;
    int is_server;
    double timeout; /**< seconds */
    uint64_t bound; /**< MXK_KVSTORE_BIGARRAY_BOUND */
    atomic_int next_tag;
    unsigned num_tags;    /**< answer tags available: MPI_TAG_UB - ASYNC_TAG_FIRST_REPLY + 1 */
    pthread_mutex_t lock; /**< guards the compression settings and residuals */
    int compress;         /**< 2-bit compression on */
    double threshold;
    struct async_residual *residuals; /**< per key (workers) */
} async_transport;

/** A key's 2-bit residual on a worker (error feedback). */
typedef struct async_residual {
    char *key;
    float *r;
    uint64_t count;
    struct async_residual *next;
} async_residual;

static const char ASYNC_NAME[] = "dist_async";

/** MPI rank of server `s`. */
static int server_rank(const async_transport *t, int s) {
    return t->num_workers + s;
}

/**
 * The parts of a key of `count` elements: one whole part on server hash mod S
 * below the bound (or with one server), else one part per server (upstream
 * EncodeDefaultKey's rounding). Returns the number of parts (<= num_servers).
 */
static int key_parts(const async_transport *t, const char *key, uint64_t count, async_part *parts) {
    int S = t->num_servers;
    if (count < t->bound || S == 1) {
        parts[0] = (async_part){(int)(dist_key_hash(key) % (uint64_t)S), 0, count};
        return 1;
    }
    for (int i = 0; i < S; i++) {
        double per = (double)count / S;
        parts[i] = (async_part){i, (uint64_t)llround(per * i), (uint64_t)llround(per * (i + 1))};
    }
    return S;
}

/** An error message being built (the transport's functions fill it; slots pass it on). */
typedef struct async_err {
    char text[768];
} async_err;

/** Writes a formatted message into `e` and returns `st`. */
static mxk_status fail(async_err *e, mxk_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mxk_status fail(async_err *e, mxk_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->text, sizeof e->text, fmt, ap);
    va_end(ap);
    return st;
}

/** Hands a failure to the kernel's sink. */
static mxk_status to_sink(mxk_status st, const async_err *e, mxk_error_sink *err) {
    return st == MXK_OK ? MXK_OK : dist_host->error(err, st, "%s", e->text);
}

/** The MPI failure of `call` during `what`. */
static mxk_status mpi_fail(async_err *e, int rc, const char *what) {
    char text[MPI_MAX_ERROR_STRING];
    return fail(e, MXK_ERR_BACKEND, "KVStore %s: %s: %s", ASYNC_NAME, what,
                dist_mpi_error(rc, text, sizeof text));
}

/** A key's value split into its servers' parts, and the phrase naming an operation on it. */
typedef struct key_layout {
    uint64_t count; /**< elements of the value */
    size_t es;      /**< bytes per element */
    int np;         /**< parts */
    async_part parts[ASYNC_MAX_SERVERS];
    char what[300]; /**< e.g. "the push of key 3", for messages */
} key_layout;

/** The layout of value `v` of `key` for operation `op` ("push", "pull", "init"). */
static void layout_of(const async_transport *t, const char *key, const mxk_tensor *v,
                      const char *op, key_layout *l) {
    l->count = mxk_sdk_shape_count(&v->shape);
    l->es = mxk_sdk_dtype_size(v->dtype);
    l->np = key_parts(t, key, l->count, l->parts);
    snprintf(l->what, sizeof l->what, "the %s of key %s", op, key);
}

/**
 * Polls `req` until it completes, at most the timeout, and writes its status into
 * `status` (MPI_STATUS_IGNORE: not wanted). On a timeout the message names server
 * `server` (index; -1: the workers' collective `what`). A request that timed out is
 * left pending (MPI cannot cancel it safely).
 */
static mxk_status async_wait_status(const async_transport *t, MPI_Request *req, int server,
                                    const char *what, async_err *e, MPI_Status *status) {
    double start = MPI_Wtime();
    for (;;) {
        int flag = 0;
        int rc = MPI_Test(req, &flag, status);
        if (rc != MPI_SUCCESS)
            return mpi_fail(e, rc, what);
        if (flag)
            return MXK_OK;
        if (MPI_Wtime() - start > t->timeout) {
            if (server < 0)
                return fail(e, MXK_ERR_BACKEND,
                            "KVStore %s: no progress on %s for %g s: a worker may have died or "
                            "stopped (worker %d of %d here)",
                            ASYNC_NAME, what, t->timeout, t->rank, t->num_workers);
            return fail(e, MXK_ERR_BACKEND,
                        "KVStore %s: server rank %d (server %d of %d) did not answer %s within "
                        "%g s: it may have died or hang",
                        ASYNC_NAME, server_rank(t, server), server, t->num_servers, what,
                        t->timeout);
        }
        if (MPI_Wtime() - start < 200e-6) /* answers usually come within: yield, then sleep */
            sched_yield();
        else
            nanosleep(&(struct timespec){0, 50000}, NULL);
    }
}

/** async_wait_status without the status. */
static mxk_status async_wait(const async_transport *t, MPI_Request *req, int server,
                             const char *what, async_err *e) {
    return async_wait_status(t, req, server, what, e, MPI_STATUS_IGNORE);
}

/** A new request: header, key and `h->payload` bytes of room after it (NULL: out of memory). */
static char *make_request(const async_hdr *h, const char *key, size_t *len) {
    size_t klen = strlen(key);
    *len = sizeof *h + klen + (size_t)h->payload;
    char *m = malloc(*len);
    if (m == NULL)
        return NULL;
    async_hdr hh = *h;
    hh.key_len = klen;
    memcpy(m, &hh, sizeof hh);
    memcpy(m + sizeof hh, key, klen);
    return m;
}

/** The payload area of a request made by make_request. */
static char *request_payload(char *m) {
    async_hdr h;
    memcpy(&h, m, sizeof h);
    return m + sizeof h + h.key_len;
}

/**
 * Sends request `m` (len bytes; freed here unless a timeout leaves it to MPI) to
 * server `s`; with `want_reply` also receives the answer: its error, or `payload`
 * bytes into `answer`. Synchronous, bounded by the timeout.
 */
static mxk_status exchange(const async_transport *t, int s, char *m, size_t len, const char *what,
                           void *answer, size_t payload, int want_reply, async_err *e) {
    MPI_Request rreq = MPI_REQUEST_NULL, sreq = MPI_REQUEST_NULL;
    size_t rlen = sizeof(async_reply) + sizeof e->text + payload;
    mxk_status st = MXK_OK;
    if (len > (size_t)INT_MAX || rlen > (size_t)INT_MAX) { /* MPI counts are int */
        free(m);
        return fail(e, MXK_ERR_UNSUPPORTED,
                    "KVStore %s: %s: a message of %zu bytes is more than one MPI message takes",
                    ASYNC_NAME, what, len > rlen ? len : rlen);
    }
    char *reply = want_reply ? malloc(rlen) : NULL;
    if (want_reply && reply == NULL)
        st = fail(e, MXK_ERR_OUT_OF_MEMORY, "KVStore %s: out of memory", ASYNC_NAME);
    if (st == MXK_OK && want_reply) {
        async_hdr h;
        memcpy(&h, m, sizeof h);
        int rc =
            MPI_Irecv(reply, (int)rlen, MPI_BYTE, server_rank(t, s), h.reply_tag, t->world, &rreq);
        if (rc != MPI_SUCCESS)
            st = mpi_fail(e, rc, what);
    }
    if (st == MXK_OK) {
        int rc =
            MPI_Isend(m, (int)len, MPI_BYTE, server_rank(t, s), ASYNC_TAG_REQ, t->world, &sreq);
        st = rc == MPI_SUCCESS ? async_wait(t, &sreq, s, what, e) : mpi_fail(e, rc, what);
    }
    int sent = st == MXK_OK;
    MPI_Status rstatus;
    if (st == MXK_OK && want_reply)
        st = async_wait_status(t, &rreq, s, what, e, &rstatus);
    int answered = st == MXK_OK, got = 0;
    if (answered && want_reply && MPI_Get_count(&rstatus, MPI_BYTE, &got) != MPI_SUCCESS)
        got = 0;
    if (answered && want_reply) { /* the answer's sizes are checked before they are used */
        async_reply r;
        memset(&r, 0, sizeof r);
        if ((size_t)got >= sizeof r)
            memcpy(&r, reply, sizeof r);
        size_t body = (size_t)got >= sizeof r ? (size_t)got - sizeof r : 0;
        if ((size_t)got < sizeof r || r.msg_len > body ||
            (r.status == MXK_OK && (r.msg_len != 0 || r.payload != payload || body != payload)))
            st = fail(e, MXK_ERR_BACKEND,
                      "KVStore %s: %s: a malformed answer of %d bytes from server rank %d "
                      "(expected %zu bytes of value)",
                      ASYNC_NAME, what, got, server_rank(t, s), payload);
        else if (r.status != MXK_OK)
            st = fail(e, (mxk_status)r.status, "%.*s", (int)r.msg_len, reply + sizeof r);
        else if (payload)
            memcpy(answer, reply + sizeof r, payload);
    }
    if (sent || sreq == MPI_REQUEST_NULL)
        free(m);
    if (answered || rreq == MPI_REQUEST_NULL)
        free(reply);
    return st;
}

/**
 * A fresh answer tag: they cycle through every tag MPI allows above
 * ASYNC_TAG_FIRST_REPLY (MPI_TAG_UB: at least 32767, about 2^31 with Open MPI), so
 * a receive left pending by a timed-out request is not matched by a later answer.
 */
static int32_t new_tag(async_transport *t) {
    unsigned v = (unsigned)atomic_fetch_add(&t->next_tag, 1);
    return ASYNC_TAG_FIRST_REPLY + (int32_t)(v % t->num_tags);
}

/* ------------------------------------------------------------------------- */
/* Worker side                                                               */
/* ------------------------------------------------------------------------- */

/** The residual of `key` (count elements), created zeroed (lock held); NULL: OOM. */
static float *residual_of(async_transport *t, const char *key, uint64_t count) {
    for (async_residual *r = t->residuals; r; r = r->next)
        if (strcmp(r->key, key) == 0)
            return r->r;
    async_residual *r = calloc(1, sizeof *r);
    if (r == NULL || (r->key = strdup(key)) == NULL ||
        (r->r = calloc(count ? count : 1, sizeof(float))) == NULL) {
        if (r)
            free(r->key);
        free(r);
        return NULL;
    }
    r->count = count;
    r->next = t->residuals;
    t->residuals = r;
    return r->r;
}

/** Frees every residual (lock held). */
static void drop_residuals(async_transport *t) {
    while (t->residuals) {
        async_residual *r = t->residuals;
        t->residuals = r->next;
        free(r->r);
        free(r->key);
        free(r);
    }
}

/** A request header for part `p` of value `v` (whole shape, or 1-D for a split key). */
static async_hdr part_header(const async_transport *t, int op, const mxk_tensor *v,
                             const async_part *p, int nparts) {
    async_hdr h;
    memset(&h, 0, sizeof h);
    h.op = op;
    h.dtype = v->dtype;
    h.worker = t->rank;
    if (nparts == 1) {
        h.ndim = v->shape.ndim;
        for (int32_t i = 0; i < v->shape.ndim; i++)
            h.dims[i] = v->shape.dims[i];
    } else {
        h.ndim = 1;
        h.dims[0] = (int64_t)(p->end - p->begin);
    }
    return h;
}

/** Pulls every part of `key` into `out` (synchronous). */
static mxk_status pull_parts(async_transport *t, const char *key, const mxk_tensor *out,
                             async_err *e) {
    key_layout l;
    layout_of(t, key, out, "pull", &l);
    for (int i = 0; i < l.np; i++) {
        async_hdr h = part_header(t, ASYNC_PULL, out, &l.parts[i], l.np);
        h.reply_tag = new_tag(t);
        size_t len;
        char *m = make_request(&h, key, &len);
        if (m == NULL)
            return fail(e, MXK_ERR_OUT_OF_MEMORY, "KVStore %s: out of memory", ASYNC_NAME);
        size_t bytes = (size_t)(l.parts[i].end - l.parts[i].begin) * l.es;
        mxk_status st = exchange(t, l.parts[i].server, m, len, l.what,
                                 (char *)out->data + l.parts[i].begin * l.es, bytes, 1, e);
        if (st != MXK_OK)
            return st;
    }
    return MXK_OK;
}

/** Reads a positive integer environment variable (default `def` when unset). */
static int env_positive(const char *name, long long def, long long *out) {
    const char *s = getenv(name);
    *out = def;
    if (s == NULL || *s == '\0')
        return 1;
    char *end = NULL;
    *out = strtoll(s, &end, 10);
    return *end == '\0' && *out >= 1;
}

/** create() of dist_async: roles, the communicators. */
static mxk_status async_create(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    (void)attrs;
    double timeout = 0;
    mxk_status st = dist_mpi_start(ASYNC_NAME, &timeout, err);
    if (st != MXK_OK)
        return st;
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long long servers = 1, bound = ASYNC_BIGARRAY_BOUND;
    const char *ns = getenv("MXK_KVSTORE_NUM_SERVERS");
    if (!env_positive("MXK_KVSTORE_NUM_SERVERS", 1, &servers) || servers > ASYNC_MAX_SERVERS)
        return dist_host->error(err, MXK_ERR_INVALID_ARGUMENT,
                                "KVStore %s: MXK_KVSTORE_NUM_SERVERS must be a number of server "
                                "processes from 1 to %d, got '%s'",
                                ASYNC_NAME, ASYNC_MAX_SERVERS, ns);
    if (!env_positive("MXK_KVSTORE_BIGARRAY_BOUND", ASYNC_BIGARRAY_BOUND, &bound))
        return dist_host->error(err, MXK_ERR_INVALID_ARGUMENT,
                                "KVStore %s: MXK_KVSTORE_BIGARRAY_BOUND must be a positive number "
                                "of elements, got '%s'",
                                ASYNC_NAME, getenv("MXK_KVSTORE_BIGARRAY_BOUND"));
    if (servers >= size)
        return dist_host->error(err, MXK_ERR_INVALID_ARGUMENT,
                                "KVStore %s: %lld server%s (MXK_KVSTORE_NUM_SERVERS) and at least "
                                "one worker need %lld MPI processes, this job has %d: mpirun -np "
                                "%lld ... (the last ranks serve)",
                                ASYNC_NAME, servers, servers == 1 ? "" : "s", servers + 1, size,
                                servers + 1);
    async_transport *t = calloc(1, sizeof *t);
    if (t == NULL)
        return dist_host->error(err, MXK_ERR_OUT_OF_MEMORY, "KVStore %s: out of memory",
                                ASYNC_NAME);
    t->rank = rank;
    t->size = size;
    t->num_servers = (int)servers;
    t->num_workers = size - (int)servers;
    t->is_server = rank >= t->num_workers;
    t->timeout = timeout;
    t->bound = (uint64_t)bound;
    int *tag_ub = NULL, has_ub = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &has_ub);
    t->num_tags =
        (unsigned)((has_ub && *tag_ub > 32767 ? *tag_ub : 32767) - ASYNC_TAG_FIRST_REPLY + 1);
    t->world = t->workers = MPI_COMM_NULL;
    pthread_mutex_init(&t->lock, NULL);
    async_err e;
    MPI_Request req;
    int rc = MPI_Comm_idup(MPI_COMM_WORLD, &t->world, &req);
    st = rc == MPI_SUCCESS ? async_wait(t, &req, -1, "the creation of the store", &e)
                           : mpi_fail(&e, rc, "MPI_Comm_idup");
    /* Every process just took part in the dup, so the (blocking) split finds them all. */
    if (st == MXK_OK) {
        MPI_Comm_set_errhandler(t->world, MPI_ERRORS_RETURN);
        rc = MPI_Comm_split(t->world, t->is_server, rank, &t->workers);
        if (rc != MPI_SUCCESS)
            st = mpi_fail(&e, rc, "MPI_Comm_split");
        else
            MPI_Comm_set_errhandler(t->workers, MPI_ERRORS_RETURN);
    }
    if (st != MXK_OK) { /* a timed-out dup may still write t->world: kept */
        pthread_mutex_destroy(&t->lock);
        return to_sink(st, &e, err);
    }
    *out = t;
    return MXK_OK;
}

/** destroy(): a worker tells every server it stopped (upstream's kStopServer). */
static void async_destroy(void *p) {
    async_transport *t = p;
    async_hdr h;
    memset(&h, 0, sizeof h);
    h.op = ASYNC_STOP;
    h.worker = t->rank;
    for (int s = 0; !t->is_server && s < t->num_servers; s++) {
        size_t len;
        char *m = make_request(&h, "", &len);
        async_err e;
        if (m != NULL)
            (void)exchange(t, s, m, len, "the stop message", NULL, 0, 0, &e);
    }
    drop_residuals(t);
    MPI_Comm_free(&t->workers);
    MPI_Comm_free(&t->world);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/** rank(): a worker's rank, or a server's index among the servers. */
static int32_t async_rank(void *p) {
    async_transport *t = p;
    return t->is_server ? t->rank - t->num_workers : t->rank;
}

/** num_workers(): the number of worker processes. */
static int32_t async_num_workers(void *p) {
    return ((async_transport *)p)->num_workers;
}

/** is_server(): the last MXK_KVSTORE_NUM_SERVERS ranks. */
static int32_t async_is_server(void *p) {
    return ((async_transport *)p)->is_server;
}

/**
 * Waits for every worker (MPI_Iallreduce MAX of the failure flags on the workers'
 * communicator): *any_failed tells whether some worker failed.
 */
static mxk_status workers_agree(const async_transport *t, int failed, int *any_failed,
                                const char *what, async_err *e) {
    MPI_Request req;
    *any_failed = 0;
    int rc = MPI_Iallreduce(&failed, any_failed, 1, MPI_INT, MPI_MAX, t->workers, &req);
    return rc == MPI_SUCCESS ? async_wait(t, &req, -1, what, e) : mpi_fail(e, rc, what);
}

/**
 * init(): every worker sends the key's description (rank 0 with its value) to the
 * servers of its parts, which check it against the first one they got; then the
 * workers wait for each other and every one pulls the value: rank 0's.
 */
static mxk_status async_init(void *p, const char *key, const mxk_tensor *value,
                             mxk_error_sink *err) {
    async_transport *t = p;
    async_err e;
    if (t->is_server)
        return dist_host->error(err, MXK_ERR_STATE, "KVStore %s: a server cannot init keys",
                                ASYNC_NAME);
    key_layout l;
    layout_of(t, key, value, "init", &l);
    if (l.es == 0 || l.count > ((uint64_t)INT32_MAX - 4096) / l.es)
        return dist_host->error(err, MXK_ERR_UNSUPPORTED,
                                "KVStore %s: init of key %s: dtype %s, %" PRIu64
                                " elements: more than one MPI message takes",
                                ASYNC_NAME, key, mxk_sdk_dtype_name(value->dtype), l.count);
    mxk_status st = MXK_OK;
    for (int i = 0; st == MXK_OK && i < l.np; i++) {
        async_hdr h = part_header(t, ASYNC_INIT, value, &l.parts[i], l.np);
        h.reply_tag = new_tag(t);
        size_t bytes = (size_t)(l.parts[i].end - l.parts[i].begin) * l.es;
        h.payload = t->rank == 0 ? bytes : 0;
        size_t len;
        char *m = make_request(&h, key, &len);
        if (m == NULL) {
            st = fail(&e, MXK_ERR_OUT_OF_MEMORY, "KVStore %s: out of memory", ASYNC_NAME);
            break;
        }
        if (h.payload)
            memcpy(request_payload(m), (const char *)value->data + l.parts[i].begin * l.es, bytes);
        st = exchange(t, l.parts[i].server, m, len, l.what, NULL, 0, 1, &e);
    }
    int any_failed = 0;
    async_err e2;
    mxk_status sa = workers_agree(t, st != MXK_OK, &any_failed, l.what, &e2);
    if (st != MXK_OK)
        return to_sink(st, &e, err);
    if (sa != MXK_OK)
        return to_sink(sa, &e2, err);
    if (any_failed)
        return dist_host->error(err, MXK_ERR_STATE,
                                "KVStore %s: the init of key %s failed on another worker (see "
                                "its error)",
                                ASYNC_NAME, key);
    return to_sink(pull_parts(t, key, value, &e), &e, err);
}

/** push(): sends this worker's value, or its 2-bit codes, to the servers of its parts. */
static void async_push(void *p, const char *key, const mxk_tensor *value, int32_t priority,
                       mxk_async_handle *done) {
    (void)priority;
    async_transport *t = p;
    async_err e;
    key_layout l;
    layout_of(t, key, value, "push", &l);
    pthread_mutex_lock(&t->lock);
    int compress = t->compress && value->dtype == MXK_FLOAT32;
    double threshold = t->threshold;
    pthread_mutex_unlock(&t->lock);
    mxk_status st = MXK_OK;
    for (int i = 0; st == MXK_OK && i < l.np; i++) {
        uint64_t n = l.parts[i].end - l.parts[i].begin;
        async_hdr h = part_header(t, ASYNC_PUSH, value, &l.parts[i], l.np);
        h.head = compress;
        h.threshold = threshold;
        h.payload = compress ? dist_2bit_words((size_t)n) * sizeof(uint32_t) : (size_t)n * l.es;
        size_t len;
        char *m = make_request(&h, key, &len);
        if (m == NULL) {
            st = fail(&e, MXK_ERR_OUT_OF_MEMORY, "KVStore %s: out of memory", ASYNC_NAME);
            break;
        }
        if (compress) { /* the residual is the worker's, per key: quantised under the lock */
            pthread_mutex_lock(&t->lock);
            float *residual = residual_of(t, key, l.count);
            if (residual != NULL)
                dist_2bit_quantize((const float *)value->data + l.parts[i].begin,
                                   residual + l.parts[i].begin, (uint32_t *)request_payload(m),
                                   (size_t)n, (float)threshold);
            pthread_mutex_unlock(&t->lock);
            if (residual == NULL) {
                free(m);
                st = fail(&e, MXK_ERR_OUT_OF_MEMORY, "KVStore %s: out of memory", ASYNC_NAME);
                break;
            }
        } else {
            memcpy(request_payload(m), (const char *)value->data + l.parts[i].begin * l.es,
                   (size_t)n * l.es);
        }
        st = exchange(t, l.parts[i].server, m, len, l.what, NULL, 0, 0, &e);
    }
    dist_host->async_complete(done, st, st == MXK_OK ? NULL : e.text);
}

/** pull(): the servers' current value of every part. */
static void async_pull(void *p, const char *key, const mxk_tensor *out, int32_t priority,
                       mxk_async_handle *done) {
    (void)priority;
    async_err e;
    mxk_status st = pull_parts(p, key, out, &e);
    dist_host->async_complete(done, st, st == MXK_OK ? NULL : e.text);
}

/** barrier(): the workers' MPI_Ibarrier, bounded by the timeout. */
static mxk_status async_barrier(void *p, mxk_error_sink *err) {
    async_transport *t = p;
    async_err e;
    if (t->is_server)
        return dist_host->error(err, MXK_ERR_STATE, "KVStore %s: a server has no barrier",
                                ASYNC_NAME);
    MPI_Request req;
    int rc = MPI_Ibarrier(t->workers, &req);
    mxk_status st = rc == MPI_SUCCESS ? async_wait(t, &req, -1, "the barrier", &e)
                                      : mpi_fail(&e, rc, "MPI_Ibarrier");
    return to_sink(st, &e, err);
}

/**
 * send_command(): rank 0 sends the command to every server and waits for each to
 * run it; then rank 0 broadcasts the outcome to the workers, so that no worker
 * goes on (and pushes) before the servers have run it.
 */
static mxk_status async_send_command(void *p, int32_t head, const char *body, mxk_error_sink *err) {
    async_transport *t = p;
    async_err e;
    mxk_status st = MXK_OK;
    char what[64];
    snprintf(what, sizeof what, "command %d", (int)head);
    for (int s = 0; t->rank == 0 && st == MXK_OK && s < t->num_servers; s++) {
        async_hdr h;
        memset(&h, 0, sizeof h);
        h.op = ASYNC_CMD;
        h.head = head;
        h.worker = t->rank;
        h.reply_tag = new_tag(t);
        h.payload = strlen(body) + 1;
        size_t len;
        char *m = make_request(&h, "", &len);
        if (m == NULL)
            st = fail(&e, MXK_ERR_OUT_OF_MEMORY, "KVStore %s: out of memory", ASYNC_NAME);
        else {
            memcpy(request_payload(m), body, (size_t)h.payload);
            st = exchange(t, s, m, len, what, NULL, 0, 1, &e);
        }
    }
    /* The outcome, from rank 0 to every worker: status then message. */
    struct {
        int32_t status;
        char text[sizeof e.text];
    } outcome = {(int32_t)st, ""};
    if (st != MXK_OK)
        snprintf(outcome.text, sizeof outcome.text, "%s", e.text);
    MPI_Request req;
    async_err e2;
    int rc = MPI_Ibcast(&outcome, (int)sizeof outcome, MPI_BYTE, 0, t->workers, &req);
    mxk_status sb =
        rc == MPI_SUCCESS ? async_wait(t, &req, -1, what, &e2) : mpi_fail(&e2, rc, "MPI_Ibcast");
    if (st != MXK_OK)
        return to_sink(st, &e, err);
    if (sb != MXK_OK)
        return to_sink(sb, &e2, err);
    if (outcome.status != MXK_OK)
        return dist_host->error(err, (mxk_status)outcome.status, "%s", outcome.text);
    return MXK_OK;
}

/** set_gradient_compression(): 2-bit for float32 pushes from now on, or none. */
static mxk_status async_set_compression(void *p, const char *type, double threshold,
                                        mxk_error_sink *err) {
    (void)err;
    async_transport *t = p;
    pthread_mutex_lock(&t->lock);
    t->compress = strcmp(type, "2bit") == 0;
    t->threshold = threshold;
    if (!t->compress)
        drop_residuals(t);
    pthread_mutex_unlock(&t->lock);
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* Server side                                                               */
/* ------------------------------------------------------------------------- */

/** What a server knows of one key: the first init's description and push failures. */
typedef struct server_key {
    char *key;
    int32_t dtype;
    mxk_shape shape;
    int first_worker; /**< the worker whose init described it first */
    /** Per worker: the last failed push, reported at that worker's next pull of the key. */
    struct {
        mxk_status status;
        char text[768];
    } * failed;
    struct server_key *next;
} server_key;

/** The server's state during run_server. */
typedef struct server_state {
    async_transport *t;
    const mxk_kvstore_server_handler *h;
    server_key *keys;
    float *dequant; /**< scratch for 2-bit pushes */
    size_t dequant_cap;
} server_state;

/** The record of `key`, or NULL. */
static server_key *server_find(server_state *s, const char *key) {
    for (server_key *k = s->keys; k; k = k->next)
        if (strcmp(k->key, key) == 0)
            return k;
    return NULL;
}

/** Sends an answer (status, message, payload) to `dest` on `tag`, bounded by the timeout. */
static void server_answer(server_state *s, int dest, int tag, mxk_status st, const char *msg,
                          const void *payload, size_t bytes) {
    async_reply r = {.status = st, .msg_len = st == MXK_OK ? 0 : strlen(msg), .payload = bytes};
    size_t len = sizeof r + r.msg_len + bytes;
    char *m = malloc(len);
    if (m == NULL) { /* the worker needs an answer: the short one */
        static const char oom[] = "KVStore dist_async server: out of memory";
        r = (async_reply){.status = MXK_ERR_OUT_OF_MEMORY, .msg_len = sizeof oom - 1};
        char small[sizeof r + sizeof oom];
        memcpy(small, &r, sizeof r);
        memcpy(small + sizeof r, oom, sizeof oom - 1);
        MPI_Send(small, (int)(sizeof r + r.msg_len), MPI_BYTE, dest, tag, s->t->world);
        return;
    }
    memcpy(m, &r, sizeof r);
    memcpy(m + sizeof r, msg, r.msg_len);
    if (bytes)
        memcpy(m + sizeof r + r.msg_len, payload, bytes);
    MPI_Request req;
    async_err e;
    if (MPI_Isend(m, (int)len, MPI_BYTE, dest, tag, s->t->world, &req) == MPI_SUCCESS &&
        async_wait(s->t, &req, -1, "an answer to a worker", &e) != MXK_OK) {
        dist_host->log(MXK_LOG_WARNING, "%s", e.text);
        return; /* left to MPI with its buffer */
    }
    free(m);
}

/** The tensor of a request's part: dtype and shape from the header, data `data`. */
static mxk_tensor request_tensor(const async_hdr *h, void *data) {
    mxk_tensor v;
    memset(&v, 0, sizeof v);
    v.struct_size = sizeof v;
    v.dtype = h->dtype;
    v.data = data;
    v.shape = mxk_sdk_shape_from(h->dims, h->ndim);
    v.dev_type = MXK_DEV_CPU;
    return v;
}

/** INIT: the first description of a key wins; rank 0's value is stored. */
static void server_init(server_state *s, int src, const async_hdr *h, const char *key,
                        char *payload) {
    mxk_tensor v = request_tensor(h, payload);
    server_key *k = server_find(s, key);
    async_err e;
    mxk_status st = MXK_OK;
    if (k != NULL && (k->dtype != h->dtype || !mxk_sdk_shape_equal(&k->shape, &v.shape))) {
        char b0[160], b1[160];
        st = fail(&e, MXK_ERR_SHAPE,
                  "KVStore %s: key %s has %s %s on worker %d but %s %s on "
                  "worker %d",
                  ASYNC_NAME, key, mxk_sdk_shape_format(&k->shape, b0, sizeof b0),
                  mxk_sdk_dtype_name(k->dtype), k->first_worker,
                  mxk_sdk_shape_format(&v.shape, b1, sizeof b1), mxk_sdk_dtype_name(h->dtype),
                  h->worker);
    } else if (k == NULL) {
        k = calloc(1, sizeof *k);
        if (k == NULL || (k->key = strdup(key)) == NULL ||
            (k->failed = calloc((size_t)s->t->num_workers, sizeof *k->failed)) == NULL) {
            if (k != NULL)
                free(k->key);
            free(k);
            k = NULL;
            st = fail(&e, MXK_ERR_OUT_OF_MEMORY, "KVStore %s server: out of memory", ASYNC_NAME);
        } else {
            k->dtype = h->dtype;
            k->shape = v.shape;
            k->first_worker = h->worker;
            k->next = s->keys;
            s->keys = k;
        }
    }
    if (st == MXK_OK && h->worker == 0)
        st = s->h->init(s->h->user, key, &v, e.text, sizeof e.text);
    server_answer(s, src, h->reply_tag, st, e.text, NULL, 0);
}

/**
 * PUSH: the updater at once (2-bit codes decoded first); a failure waits for the
 * pushing worker's next pull of the key.
 */
static void server_push(server_state *s, const async_hdr *h, const char *key, char *payload) {
    server_key *k = server_find(s, key);
    mxk_tensor v = request_tensor(h, payload);
    async_err e;
    mxk_status st = MXK_OK;
    if (h->head) { /* 2-bit codes of a float32 part */
        uint64_t n = mxk_sdk_shape_count(&v.shape);
        if (s->dequant_cap < n) {
            float *d = realloc(s->dequant, (size_t)n * sizeof *d);
            if (d == NULL)
                st =
                    fail(&e, MXK_ERR_OUT_OF_MEMORY, "KVStore %s server: out of memory", ASYNC_NAME);
            else {
                s->dequant = d;
                s->dequant_cap = (size_t)n;
            }
        }
        if (st == MXK_OK) {
            memset(s->dequant, 0, (size_t)n * sizeof(float));
            dist_2bit_dequantize_add((const uint32_t *)payload, s->dequant, (size_t)n,
                                     (float)h->threshold);
            v.data = s->dequant;
        }
    }
    if (st == MXK_OK)
        st = s->h->push(s->h->user, key, &v, e.text, sizeof e.text);
    if (st != MXK_OK && k != NULL && h->worker >= 0 && h->worker < s->t->num_workers) {
        k->failed[h->worker].status = st;
        snprintf(k->failed[h->worker].text, sizeof k->failed[h->worker].text, "%s", e.text);
    } else if (st != MXK_OK) {
        dist_host->log(MXK_LOG_WARNING, "%s", e.text);
    }
}

/** PULL: the current value, or the failure of an earlier push of the key. */
static void server_pull(server_state *s, int src, const async_hdr *h, const char *key) {
    server_key *k = server_find(s, key);
    async_err e;
    mxk_status st = MXK_OK;
    size_t bytes = 0;
    void *buf = NULL;
    int w = h->worker >= 0 && h->worker < s->t->num_workers ? h->worker : 0;
    if (k != NULL && k->failed[w].status != MXK_OK) {
        st = fail(&e, k->failed[w].status, "%s", k->failed[w].text);
        k->failed[w].status = MXK_OK;
    } else {
        mxk_tensor v = request_tensor(h, NULL);
        bytes = (size_t)mxk_sdk_shape_count(&v.shape) * mxk_sdk_dtype_size(h->dtype);
        v.data = buf = malloc(bytes ? bytes : 1);
        st = buf == NULL
                 ? fail(&e, MXK_ERR_OUT_OF_MEMORY, "KVStore %s server: out of memory", ASYNC_NAME)
                 : s->h->pull(s->h->user, key, &v, e.text, sizeof e.text);
    }
    server_answer(s, src, h->reply_tag, st, e.text, buf, st == MXK_OK ? bytes : 0);
    free(buf);
}

/**
 * Waits for the next request. MPI_Mprobe would spin a core inside Open MPI's
 * progress loop while the workers compute; this polls MPI_Improbe, sleeping 20 us
 * between polls once nothing came for 1 ms (the added latency is at most that).
 */
static int server_probe(const async_transport *t, MPI_Message *msg, MPI_Status *status) {
    double idle_since = MPI_Wtime();
    for (;;) {
        int flag = 0;
        int rc = MPI_Improbe(MPI_ANY_SOURCE, ASYNC_TAG_REQ, t->world, &flag, msg, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        if (MPI_Wtime() - idle_since > 1e-3)
            nanosleep(&(struct timespec){0, 20000}, NULL);
    }
}

/**
 * Why request header `h` of a message of `len` bytes from MPI rank `src` is
 * malformed, or NULL when it is well formed: the sender is a worker and says so,
 * the key and payload fill the message exactly, the op is known, and the payload
 * holds what the shape and dtype say (INIT: rank 0's value or nothing; PUSH: the
 * value or, for float32, its 2-bit codes; PULL: an answer that fits one message;
 * CMD: at least the body's NUL).
 */
static const char *request_problem(const async_transport *t, const async_hdr *h, size_t len,
                                   int src) {
    if (src < 0 || src >= t->num_workers || h->worker != src)
        return "not from the worker it names";
    if (h->key_len > len - sizeof *h || h->payload != len - sizeof *h - h->key_len)
        return "key and payload sizes do not add up";
    if (h->op < ASYNC_INIT || h->op > ASYNC_STOP)
        return "an unknown request";
    if (h->op == ASYNC_CMD)
        return h->payload == 0 ? "a command without a body" : NULL;
    if (h->op == ASYNC_STOP)
        return NULL;
    if (h->ndim < 0 || h->ndim > MXK_MAX_NDIM)
        return "a bad number of dimensions";
    for (int32_t i = 0; i < h->ndim; i++)
        if (h->dims[i] < 0)
            return "a negative dimension";
    size_t es = mxk_sdk_dtype_size(h->dtype);
    mxk_shape shape = mxk_sdk_shape_from(h->dims, h->ndim);
    uint64_t n = mxk_sdk_shape_count(&shape);
    if (es == 0 || n > ((uint64_t)INT32_MAX - 4096) / es)
        return "an unknown dtype or a value larger than one MPI message";
    uint64_t bytes = n * es;
    if (h->op == ASYNC_INIT && h->payload != (h->worker == 0 ? bytes : 0))
        return "an init whose value does not match its shape";
    if (h->op == ASYNC_PUSH && h->head &&
        (h->dtype != MXK_FLOAT32 ||
         h->payload != (uint64_t)dist_2bit_words((size_t)n) * sizeof(uint32_t) ||
         !(h->threshold > 0)))
        return "2-bit codes that do not match their shape, dtype or threshold";
    if (h->op == ASYNC_PUSH && !h->head && h->payload != bytes)
        return "a push whose value does not match its shape";
    if (h->op == ASYNC_PULL && h->payload != 0)
        return "a pull with a payload";
    return NULL;
}

/** run_server(): serves the workers until every one has sent STOP. */
static mxk_status async_run_server(void *p, const mxk_kvstore_server_handler *handler,
                                   mxk_error_sink *err) {
    async_transport *t = p;
    if (!t->is_server)
        return dist_host->error(err, MXK_ERR_STATE, "KVStore %s: rank %d is a worker", ASYNC_NAME,
                                t->rank);
    server_state s = {.t = t, .h = handler};
    async_err e;
    mxk_status st = MXK_OK;
    for (int stopped = 0; st == MXK_OK && stopped < t->num_workers;) {
        MPI_Message msg;
        MPI_Status status;
        int rc = server_probe(t, &msg, &status);
        int len = 0;
        if (rc == MPI_SUCCESS)
            rc = MPI_Get_count(&status, MPI_BYTE, &len);
        char *m = rc == MPI_SUCCESS ? malloc(len > 0 ? (size_t)len : 1) : NULL;
        if (rc != MPI_SUCCESS) {
            st = mpi_fail(&e, rc, "a server's receive");
            break;
        }
        if (m == NULL) {
            st = fail(&e, MXK_ERR_OUT_OF_MEMORY, "KVStore %s server: out of memory (%d bytes)",
                      ASYNC_NAME, len);
            break;
        }
        rc = MPI_Mrecv(m, len, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        async_hdr h;
        memset(&h, 0, sizeof h);
        if (rc == MPI_SUCCESS && (size_t)len >= sizeof h)
            memcpy(&h, m, sizeof h);
        const char *bad = rc != MPI_SUCCESS ? NULL
                          : (size_t)len < sizeof h
                              ? "shorter than a header"
                              : request_problem(t, &h, (size_t)len, status.MPI_SOURCE);
        if (rc != MPI_SUCCESS || bad != NULL) {
            free(m);
            st = rc != MPI_SUCCESS ? mpi_fail(&e, rc, "a server's receive")
                                   : fail(&e, MXK_ERR_BACKEND,
                                          "KVStore %s server: a malformed message of %d bytes "
                                          "from rank %d: %s",
                                          ASYNC_NAME, len, status.MPI_SOURCE, bad);
            break;
        }
        char *key = strndup(m + sizeof h, (size_t)h.key_len);
        char *payload = m + sizeof h + h.key_len;
        if (key == NULL)
            st = fail(&e, MXK_ERR_OUT_OF_MEMORY, "KVStore %s server: out of memory", ASYNC_NAME);
        else if (h.op == ASYNC_STOP)
            stopped++;
        else if (h.op == ASYNC_INIT)
            server_init(&s, status.MPI_SOURCE, &h, key, payload);
        else if (h.op == ASYNC_PUSH)
            server_push(&s, &h, key, payload);
        else if (h.op == ASYNC_PULL)
            server_pull(&s, status.MPI_SOURCE, &h, key);
        else if (h.op == ASYNC_CMD) {
            payload[h.payload - 1] = '\0'; /* request_problem: at least one byte */
            mxk_status cs = handler->command(handler->user, h.head, payload, e.text, sizeof e.text);
            server_answer(&s, status.MPI_SOURCE, h.reply_tag, cs, e.text, NULL, 0);
        }
        free(key);
        free(m);
    }
    while (s.keys) {
        server_key *k = s.keys;
        s.keys = k->next;
        free(k->failed);
        free(k->key);
        free(k);
    }
    free(s.dequant);
    return to_sink(st, &e, err);
}

/** Registers dist_async. */
mxk_status dist_register_async(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_kvstore_transport_def d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.abi_minor = MXK_ABI_MINOR;
    d.name = ASYNC_NAME;
    d.description = "asynchronous data parallelism over MPI: parameter servers (the last "
                    "MXK_KVSTORE_NUM_SERVERS ranks) apply each push at once";
    d.create = async_create;
    d.destroy = async_destroy;
    d.rank = async_rank;
    d.num_workers = async_num_workers;
    d.init = async_init;
    d.push = async_push;
    d.pull = async_pull;
    d.barrier = async_barrier;
    d.is_server = async_is_server;
    d.send_command = async_send_command;
    d.run_server = async_run_server;
    d.set_gradient_compression = async_set_compression;
    return reg->register_kvstore_transport(reg, &d, err);
}
