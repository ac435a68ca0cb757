/*
 * Internals of the dependency engine, shared by its source files (not part of
 * any public or plugin API).
 *
 * Layout of the implementation:
 *   engine.c          public entry points, start/stop, the global pending-op count
 *   engine_op.c       building ops from push descriptors, running them, finishing them
 *   engine_var.c      variables and their versioned request queues (ThreadedVar)
 *   engine_error.c    shared error slots and the global list of pending errors
 *   engine_pool.c     a worker thread pool serving a FIFO or a priority queue
 *   engine_threaded.c ThreadedEnginePerDevice: per-device pools, waits through the queues
 *   engine_naive.c    NaiveEngine: runs every push synchronously in the pushing thread
 *   engine_cached.c   cached ops: built once from a descriptor, pushed many times
 *   engine_watchdog.c the monitor thread reporting functions that run too long
 *   engine_stream.c   streams of GPU workers: creation, completion of functions, destruction
 *
 * Life of an op on the threaded engine: engine_op_new() validates the descriptor and
 * builds the op with a deduplicated dependency list sorted by variable address;
 * engine_deps_append() queues one request per variable (all of them under the
 * variables' locks, taken in address order, so concurrent pushers can never queue
 * two ops in opposite orders on two variables); each granted request decrements the
 * op's `wait`; the one that takes it to 0 dispatches the op to its pool; a worker
 * calls engine_run_op(); when the function is done (sync return, async completion,
 * or skip) engine_op_finish() releases the requests, which grants the next ones.
 */
#ifndef MXK_ENGINE_INTERNAL_H
#define MXK_ENGINE_INTERNAL_H

#include "engine.h"
#include "error.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/** GPU device ids served are 0 .. MXK_ENGINE_MAX_GPUS-1. */
#define MXK_ENGINE_MAX_GPUS 64

/** All defined mxk_engine_prop bits. */
#define ENGINE_PROP_MASK                                                                           \
    (MXK_ENGINE_PROP_COPY | MXK_ENGINE_PROP_PRIORITIZED | MXK_ENGINE_PROP_NO_SKIP)

/**
 * A recorded error: MXNet's shared exception slot. Every variable written by the
 * failing op (and by the ops that inherit the error) points to the same object, so
 * reporting it once (setting `reported`) marks it reported for all of them; the
 * variables stay failed until written again.
 */
typedef struct engine_error {
    atomic_int refcount;  /**< owners: variables, ops, the global list */
    atomic_int code;      /**< mxk_status, never MXK_OK */
    atomic_bool reported; /**< a wait has returned it */
    bool listed;          /**< in the global list; guarded by the list's mutex */
    const char *msg;      /**< the message (stored after the object), immutable */
} engine_error;

struct engine_op;

/** One request of an op on one variable; queued in the variable while not granted. */
typedef struct engine_dep {
    mxk_engine_var *var;
    struct engine_dep *next; /**< next queued request of the variable */
    struct engine_op *op;    /**< the op that made the request */
    bool write;              /**< exclusive request (write, wait, delete) */
    bool read;               /**< the push also reads the variable (read_vars) */
    uint32_t write_pos;      /**< index in the push's write_vars (writes only) */
    const char *label;       /**< the push's write_names entry (in the op's text), or NULL */
} engine_dep;

/**
 * An engine variable: a FIFO of requests not yet granted, plus the state of the
 * granted ones. Invariants: while a write is active no read runs; a read is granted
 * at once only when nothing is queued (so a queued write is never starved); the head
 * of a non-empty queue is a write whenever reads are running.
 */
struct mxk_engine_var {
    pthread_mutex_t mu;            /**< guards the fields below except version and err reads */
    engine_dep *qhead;             /**< oldest waiting request */
    engine_dep *qtail;             /**< newest waiting request */
    int64_t running_reads;         /**< granted reads not yet completed */
    bool write_active;             /**< an exclusive request is granted and not completed */
    atomic_uint_least64_t version; /**< completed writes */
    /**
     * Error slot (NULL: not failed). Replaced only by the holder of an exclusive
     * request (under mu), so a holder of any granted request may read it without the lock.
     */
    _Atomic(engine_error *) err;
    /** Storage block checked after each write (mxki_engine_var_set_guard), or NULL. */
    void *guard_block;
    int32_t guard_dev_type, guard_dev_id;
};

/** Kinds of ops: user functions, and the engine's own wait and delete ops. */
typedef enum engine_op_kind {
    ENGINE_OP_FN = 0, /**< a pushed sync or async function */
    ENGINE_OP_WAIT,   /**< mxki_engine_wait_var: exclusive, no version bump, no error */
    ENGINE_OP_DELETE  /**< mxki_engine_delete_var: runs the deleter, then frees the var */
} engine_op_kind;

/** An async function's completion handle: embedded in its op. */
struct mxk_async_handle {
    struct engine_op *op;
};

struct engine_impl;
struct engine_pool;
struct engine_stream;

/** Rendezvous between a thread in mxki_engine_wait_var and the engine granting its op. */
typedef struct engine_waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool ready; /**< the wait op has been granted its exclusive request */
} engine_waiter;

/** One pushed function (or wait/delete op); a single allocation with its deps and name. */
typedef struct engine_op {
    const struct engine_impl *impl; /**< the engine that runs it */
    engine_op_kind kind;
    mxk_engine_sync_fn sync_fn;
    mxk_engine_async_fn async_fn;
    void *arg;
    mxk_engine_arg_free arg_free;
    void (*del_fn)(void *); /**< ENGINE_OP_DELETE: the deleter (may be NULL) */
    void *del_arg;
    int32_t dev_type;
    int32_t dev_id;
    uint32_t props;
    int32_t priority;
    atomic_long wait;         /**< requests not yet granted, +1 while pushing */
    engine_error *err;        /**< own or inherited error; owned by the running thread */
    struct engine_pool *pool; /**< threaded engine: where it runs once ready */
    struct engine_op *qnext;  /**< link in a pool's FIFO (naive: deferred deletions) */
    uint64_t seq;             /**< enqueue order in a pool (priority tie-break) */
    engine_waiter *waiter;    /**< ENGINE_OP_WAIT: whom to wake */
    int naive_done;           /**< NaiveEngine: the function has completed */
    mxk_async_handle handle;  /**< handed to async functions */
    uint32_t ndeps;           /**< deduplicated requests, sorted by var address */
    engine_dep *deps;
    /** Copies of the push's strings, in one block after the requests ("" when none). */
    const char *name;
    const char *node;    /**< graph node ("" when none) */
    const char *backend; /**< backend ("" when none) */
    size_t text_bytes;   /**< bytes of the string block (name first) */
    /** Watchdog (engine_watchdog.c): links of the running list, guarded by its mutex. */
    struct engine_op *wd_prev, *wd_next;
    int64_t wd_start_ns; /**< when the function started (monotonic clock) */
    bool wd_reported;    /**< reported as running too long */
    /** An instance of a cached op (engine_cached.c), recycled instead of freed; else NULL. */
    struct mxk_engine_cached_op *cached;
} engine_op;

/** An engine type: what differs between ThreadedEnginePerDevice and NaiveEngine. */
typedef struct engine_impl {
    const char *name;
    /** Reads the type's settings and prepares it. Sets the last error on failure. */
    mxk_status (*start)(void);
    /** Releases the type's resources; called with no op pending. */
    void (*stop)(void);
    /**
     * Takes a new op (which holds one pending count). On failure the op was not
     * queued and the caller discards it; the last error is set.
     */
    mxk_status (*push)(engine_op *op);
    /** The op is ready (all requests granted): run it. NULL for engines without queues. */
    void (*dispatch)(engine_op *op);
    /** The op's function has completed, failed, or was skipped. */
    void (*op_done)(engine_op *op);
    /** mxki_engine_wait_var while running; consumes one pending count taken by the caller. */
    mxk_status (*wait_var)(mxk_engine_var *var);
    /** Whether ops hold requests in the variables' queues (false for NaiveEngine). */
    bool uses_queues;
} engine_impl;

/** The two engine types. */
extern const engine_impl engine_threaded_impl;
extern const engine_impl engine_naive_impl;

/* ---- engine.c ---- */

/**
 * Admits one unit of work: increments the pending count and returns true if the
 * engine accepts work; otherwise undoes the increment and returns false.
 */
bool engine_enter(void);

/** Ends one unit of work admitted by engine_enter(); wakes waiters at zero. */
void engine_leave(void);

/** Blocks until no work is pending. */
void engine_wait_idle(void);

/** The running engine type (valid while the caller holds a count from engine_enter). */
const engine_impl *engine_current_impl(void);

/** The stream hooks set by mxki_engine_set_stream_hooks (NULL: none). */
const mxk_engine_stream_hooks *engine_stream_hooks(void);

/**
 * Reads a positive integer setting from the environment into `*out` (`def` when
 * unset or empty). Returns MXK_ERR_INVALID_ARGUMENT naming the variable when the
 * value is not an integer in [lo, hi].
 */
mxk_status engine_env_int(const char *name, int def, int lo, int hi, int *out);

/* ---- engine_op.c ---- */

/**
 * Bytes of the string block of an op built from `desc` (name, node, backend and the
 * write_names; each "" when absent, NUL-terminated). Also used for wait/delete ops
 * (desc with only a name).
 */
size_t engine_op_text_size(const mxk_engine_push_desc *desc);

/**
 * Gives `dst` (whose requests are copies of src's, in the same order) its own copy of
 * src's string block at `blob` (src->text_bytes bytes) and points its strings and
 * request labels into it. For cached-op instances.
 */
void engine_op_copy_text(engine_op *dst, char *blob, const engine_op *src);

/**
 * "operator 'NAME' (node 'N', backend 'B')" into buf (the parts in parentheses only
 * when set). Returns buf.
 */
const char *engine_op_describe(const engine_op *op, char *buf, size_t size);

/**
 * Validates a push descriptor and builds its op (kind ENGINE_OP_FN, impl unset).
 * On failure returns MXK_ERR_INVALID_ARGUMENT or MXK_ERR_OUT_OF_MEMORY with the
 * last error set; `desc->arg_free` has NOT been called.
 */
mxk_status engine_op_new(const mxk_engine_push_desc *desc, engine_op **out);

/** Builds an engine-internal op with one exclusive request on `var`. NULL when out of memory. */
engine_op *engine_op_new_exclusive(engine_op_kind kind, mxk_engine_var *var, int32_t dev_type,
                                   int32_t dev_id);

/**
 * Runs a ready op in the calling thread with the thread's stream (NULL: none):
 * inherits an error from its variables, skips it, refuses it (the stream could not
 * be created) or calls its function; for a sync function it then completes the
 * stream's work (engine_stream_complete). For sync functions, skips, refusals and
 * deletes calls op->impl->op_done(). The op may be gone when this returns.
 */
void engine_run_op(engine_op *op, const struct engine_stream *stream);

/**
 * Finishes a completed op: frees its argument, releases its requests (recording its
 * error on the variables it writes), frees it and ends its pending count.
 */
void engine_op_finish(engine_op *op);

/** Frees an op that was never queued (arg_free is called) and ends its pending count. */
void engine_op_discard(engine_op *op);

/* ---- engine_stream.c ---- */

/**
 * The stream of one worker thread (threaded engine) or of one GPU and kind of work
 * (NaiveEngine): created through the stream hooks, used by every op the thread runs.
 */
typedef struct engine_stream {
    const mxk_engine_stream_hooks *hooks; /**< the hooks that created it; NULL: no stream */
    int32_t dev_type;
    int32_t dev_id;
    void *stream;      /**< the backend's stream; NULL: none */
    mxk_status failed; /**< MXK_OK, or why the creation failed */
    char *failed_msg;  /**< the creation's message (owned), when failed */
} engine_stream;

/**
 * Opens the stream of a worker of (dev_type, dev_id) with `hooks` (NULL: none) on
 * the calling thread: only GPU workers get one. A failed creation is kept in the
 * stream (engine_stream_refuse then fails every op).
 */
void engine_stream_open(engine_stream *s, const mxk_engine_stream_hooks *hooks, int32_t dev_type,
                        int32_t dev_id, int is_copy);

/** Destroys the stream (if any) and frees the kept message; `s` is closed afterwards. */
void engine_stream_close(engine_stream *s);

/**
 * When the stream could not be created: records on `op` the error "<op> was not
 * run: the worker of gpu(N) has no stream: <message>" and returns true (the caller
 * finishes the op without running it). False otherwise (NULL `s` included).
 */
bool engine_stream_refuse(const engine_stream *s, engine_op *op);

/**
 * After op's sync function returned `st` (message in *sink): synchronises the
 * stream when there is one, so the op's stream work is complete. Returns `st`, or,
 * when st was MXK_OK and the synchronisation failed, its code with "<op>: its work
 * on gpu(N)'s stream failed: <message>" in *sink.
 */
mxk_status engine_stream_complete(const engine_stream *s, const engine_op *op, mxk_status st,
                                  mxk_error_sink *sink);

/* ---- engine_watchdog.c ---- */

/**
 * Reads MXK_ENGINE_WATCHDOG (seconds, [0, 86400], 0: off) and starts the monitor
 * thread when it is set. Errors: the variable's (engine_env_int), or MXK_ERR_INTERNAL
 * when the thread cannot start. Called by mxki_engine_start with no op running.
 */
mxk_status engine_watchdog_start(void);

/** Stops and joins the monitor thread (if any). Called by mxki_engine_stop when idle. */
void engine_watchdog_stop(void);

/** The op's function starts running (no-op when the watchdog is off). */
void engine_watchdog_begin(engine_op *op);

/** The op's function has returned (sync) or completed (async). */
void engine_watchdog_end(engine_op *op);

/* ---- engine_cached.c ---- */

/**
 * engine_op_finish for an instance of a cached op: lists its error, releases its
 * requests, then returns the instance to its cached op (never frees the argument,
 * unless the cached op was deleted and this was its last instance in flight) and
 * ends its pending count.
 */
void engine_cached_finish(engine_op *op);

/** engine_op_discard for an instance of a cached op that was never queued. */
void engine_cached_discard(engine_op *op);

/* ---- engine_var.c ---- */

/**
 * Queues the op's requests on its variables (all at once, under the variables' locks
 * in address order) and dispatches the op through op->impl->dispatch when all are granted.
 */
void engine_deps_append(engine_op *op);

/**
 * Completes the op's requests: bumps the version of written variables; a function
 * (ENGINE_OP_FN) records its error, own or inherited, on them (the caller listed a
 * pending one globally) or, without an error, clears their failed state; when
 * `queued`, grants the next requests. For ENGINE_OP_DELETE frees the variable.
 */
void engine_deps_release(engine_op *op, bool queued);

/** Frees a variable that no op uses any more, dropping its error slot. */
void engine_var_destroy(mxk_engine_var *var);

/* ---- engine_error.c ---- */

/** A new error object (refcount 1). Never NULL: falls back to a static out-of-memory error. */
engine_error *engine_error_new(mxk_status code, const char *msg);

/** Takes a reference. */
void engine_error_ref(engine_error *e);

/** Drops a reference (NULL allowed); frees the object at zero. */
void engine_error_unref(engine_error *e);

/** True when `e` is non-NULL and not yet reported. */
bool engine_error_pending(const engine_error *e);

/**
 * After the op's function completed without an error: checks the red zones of the
 * guarded blocks of the variables it writes (mxki_engine_var_set_guard) and records
 * the first damage as the op's error (message in engine.h).
 */
void engine_op_check_guards(engine_op *op);

/** Records `code`/`msg` as the op's own error, replacing an inherited one. */
void engine_op_set_error(engine_op *op, mxk_status code, const char *msg);

/**
 * Before an op runs: if it has no error yet, inherits the error of its first
 * failed read variable, else the first not yet reported one of its write variables
 * (upstream order; a write after the report clears the failure instead).
 */
void engine_op_inherit_error(engine_op *op);

/** Adds `e` to the global list of pending errors (once). */
void engine_errors_add_global(engine_error *e);

/**
 * Reports the error of a failed `var` (sets the thread's last error to its exact
 * message, marks it reported and returns its code); MXK_OK when `var` is not failed.
 * The caller must hold exclusive access to `var` (or know it is idle).
 */
mxk_status engine_var_take_error(mxk_engine_var *var);

/**
 * Reports the first not yet reported error of the global list, marks every listed
 * error reported and empties the list; MXK_OK when none was pending.
 */
mxk_status engine_errors_take_all(void);

#endif /* MXK_ENGINE_INTERNAL_H */
