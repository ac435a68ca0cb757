/*
 * The dependency engine (kernel-internal API).
 *
 * Semantics: MXNet's engine (upstream docs/static_site/src/pages/api/architecture/
 * note_engine.md; src/engine/threaded_engine.{h,cc}, threaded_engine_perdevice.cc,
 * naive_engine.cc) and its error propagation (upstream
 * docs/static_site/src/pages/api/architecture/exception_handling.md).
 *
 * - Every function is pushed with the engine variables it reads and writes.
 *   Per variable, requests are served in push order; consecutive reads run in
 *   parallel; a write runs alone. So the result per variable equals running its
 *   functions in push order.
 * - Sync functions return a status; async functions finish when
 *   mxki_engine_complete() is called on their handle, from any thread.
 * - A failing function's error is recorded on every variable it writes: the
 *   variable is *failed* until a function writes it again without an error (upstream
 *   exception_handling.md: the exception stays with the variable). A later function
 *   that reads a failed variable, or writes one whose error was not reported yet,
 *   inherits the error and is skipped (unless pushed with MXK_ENGINE_PROP_NO_SKIP);
 *   it passes the error on to the variables it writes. mxki_engine_wait_var() on a
 *   failed variable returns its error every time (never MXK_OK with undefined
 *   contents); mxki_engine_wait_all() reports each error once, the first one not
 *   reported yet by any wait (the error object is shared by all variables the
 *   failing op wrote).
 * - Watchdog (MXK_ENGINE_WATCHDOG=SECONDS, 0 or unset: off): a monitor thread
 *   reports once per call, at log level ERROR on stderr, a function running longer
 *   than SECONDS: "engine watchdog: operator 'OP' (node 'N', backend 'B') has been
 *   running for more than S s (MXK_ENGINE_WATCHDOG=S); it cannot be interrupted:
 *   waits on the variables it uses, mxki_engine_wait_all and mxki_engine_stop wait for
 *   it". A thread cannot be killed safely (it may hold locks and writes memory the
 *   engine would free), so waits still wait: the report names the culprit of a hang.
 *   An async function counts until mxki_engine_complete.
 * - Engine types (env MXK_ENGINE_TYPE): "ThreadedEnginePerDevice" (default):
 *   per-device worker pools; "NaiveEngine": runs every push synchronously in the
 *   pushing thread (for debugging); errors then still follow the rules above
 *   (unlike upstream's NaiveEngine, which loses async errors).
 * - GPU streams (MXNet's ThreadedEnginePerDevice and RunContext, upstream
 *   src/engine/threaded_engine_perdevice.cc, src/engine/threaded_engine.h): with
 *   stream hooks installed (mxki_engine_set_stream_hooks), each GPU worker creates
 *   its own stream on its thread when it starts (compute streams for the normal and
 *   priority pools, copy streams for the copy pool; NaiveEngine: one of each per GPU)
 *   and passes it to every function it runs (mxk_run_ctx.stream). After a sync
 *   function returns, the engine synchronises the stream before it releases the
 *   function's variables, so a function is complete when its stream work is; a
 *   failed synchronisation becomes the function's error ("<operator>: its work on
 *   gpu(N)'s stream failed: <backend message>"). Async functions complete themselves.
 *   A failed stream creation makes every function given to that worker fail
 *   ("<operator> was not run: the worker of gpu(N) has no stream: <message>").
 * - Worker counts: MXK_CPU_WORKER_NTHREADS (default 1), MXK_CPU_PRIORITY_NTHREADS
 *   (default 4), MXK_GPU_WORKER_NTHREADS (default 2: compute streams per GPU and per
 *   pool), MXK_GPU_COPY_NTHREADS (default 2: copy streams per GPU),
 *   integers in [1, 1024]; MXK_ENGINE_WATCHDOG in [0, 86400]. A bad value fails
 *   mxki_engine_start() ("engine: NAME=\"VALUE\" is invalid: expected an integer in
 *   [MIN, MAX]").
 *
 * Threading: pushes may come from any thread, but push order is only defined
 * between pushes of one thread (as upstream). All functions here are thread-safe.
 */
#ifndef MXK_ENGINE_H
#define MXK_ENGINE_H

#include "mxk_abi_base.h"

/** Where a function runs: device type/id and the worker's stream (NULL on CPU). */
typedef struct mxk_run_ctx {
    int32_t dev_type; /**< mxk_dev_type */
    int32_t dev_id;
    void *stream; /**< backend stream of the worker thread, NULL when none */
} mxk_run_ctx;

/**
 * A synchronous engine function. Returns MXK_OK, or an error code with the message
 * written into `err`; the engine then records the error on the written variables.
 */
typedef mxk_status (*mxk_engine_sync_fn)(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err);

/**
 * An asynchronous engine function: it starts work and returns; the work is finished
 * when mxki_engine_complete(done, ...) is called (once), from any thread.
 */
typedef void (*mxk_engine_async_fn)(void *arg, const mxk_run_ctx *rctx, mxk_async_handle *done);

/** Frees a function's `arg` after the function has completed (or was skipped). May be NULL. */
typedef void (*mxk_engine_arg_free)(void *arg);

/** Properties of a pushed function (bit flags). */
enum mxk_engine_prop {
    MXK_ENGINE_PROP_NORMAL = 0,
    MXK_ENGINE_PROP_COPY = 1 << 0,        /**< a device copy: goes to the copy workers */
    MXK_ENGINE_PROP_PRIORITIZED = 1 << 1, /**< goes to the priority queue (higher first) */
    MXK_ENGINE_PROP_NO_SKIP = 1 << 2      /**< runs even when it inherited an error */
};

/** Full description of one push. Lists may contain duplicates; a var both read and written is a
 * write. */
typedef struct mxk_engine_push_desc {
    mxk_engine_sync_fn sync_fn; /**< exactly one of sync_fn / async_fn is non-NULL */
    mxk_engine_async_fn async_fn;
    void *arg;
    mxk_engine_arg_free arg_free;
    int32_t dev_type; /**< where to run: mxk_dev_type */
    int32_t dev_id;
    mxk_engine_var *const *read_vars;
    uint32_t num_read;
    mxk_engine_var *const *write_vars;
    uint32_t num_write;
    uint32_t props;   /**< mxk_engine_prop bits */
    int32_t priority; /**< used by priority queues; higher runs first */
    const char *name; /**< for error messages and debugging; copied; may be NULL */
    /* Optional labels for the watchdog's and the storage guard's reports; copied. */
    const char *node;    /**< graph node the function computes (executor); NULL: none */
    const char *backend; /**< backend or plugin whose code it runs; NULL: none */
    /** Names of write_vars[i] (arrays), or NULL; an entry may be NULL too. */
    const char *const *write_names;
} mxk_engine_push_desc;

/**
 * Starts the engine (idempotent). The type comes from MXK_ENGINE_TYPE; an unknown
 * value gives MXK_ERR_INVALID_ARGUMENT naming the valid ones. Called by mxk_init().
 */
mxk_status mxki_engine_start(void);

/** Waits for all work, then stops the workers. Further pushes fail with MXK_ERR_STATE. */
void mxki_engine_stop(void);

/** Name of the running engine type ("ThreadedEnginePerDevice" or "NaiveEngine"). */
const char *mxki_engine_type_name(void);

/**
 * Streams of GPU workers (the engine knows no device backend: whoever knows them
 * installs these hooks; kernel/memory/device_streams.h serves them from the GPU
 * backend). Every slot is required.
 */
typedef struct mxk_engine_stream_hooks {
    /**
     * Creates the stream of one worker of (dev_type, dev_id), called on that worker's
     * thread when it starts; is_copy_worker: a worker of the copy pool. Sets *stream
     * (NULL: the device has no streams) and returns MXK_OK, or fails with the message
     * in err: every function given to that worker then fails with it.
     */
    mxk_status (*create)(int32_t dev_type, int32_t dev_id, int is_copy_worker, void **stream,
                         mxk_error_sink *err);
    /** Destroys a stream from create, when its worker stops (the engine is idle then). */
    void (*destroy)(int32_t dev_type, int32_t dev_id, void *stream);
    /** Waits for the work queued on `stream` and reports its failure (message in err). */
    mxk_status (*synchronize)(int32_t dev_type, int32_t dev_id, void *stream, mxk_error_sink *err);
} mxk_engine_stream_hooks;

/**
 * Installs the stream hooks (NULL: none, the default: NULL streams). `hooks` must
 * stay valid while the engine runs. Workers started afterwards use them: set them
 * before the first push to a GPU (mxk_init does, before it starts the engine).
 */
void mxki_engine_set_stream_hooks(const mxk_engine_stream_hooks *hooks);

/** Creates a variable. Returns NULL only when out of memory (last error set). */
mxk_engine_var *mxki_engine_new_var(void);

/**
 * Schedules deletion of `var`: runs after every function pushed earlier that uses it,
 * then calls `deleter(arg)` (may be NULL; used to free the memory the var guards)
 * and frees the var. The caller must not use `var` afterwards.
 */
void mxki_engine_delete_var(mxk_engine_var *var, void (*deleter)(void *), void *arg,
                            int32_t dev_type, int32_t dev_id);

/**
 * Pushes a function. Never reports the function's own failure (that comes at a
 * wait); fails only for a malformed descriptor (MXK_ERR_INVALID_ARGUMENT) or a
 * stopped engine (MXK_ERR_STATE). On failure `arg_free(arg)` has been called.
 */
mxk_status mxki_engine_push(const mxk_engine_push_desc *desc);

/** Convenience wrapper of mxki_engine_push for a sync function. */
mxk_status mxki_engine_push_sync(mxk_engine_sync_fn fn, void *arg, mxk_engine_arg_free arg_free,
                                 int32_t dev_type, int32_t dev_id, mxk_engine_var *const *read_vars,
                                 uint32_t num_read, mxk_engine_var *const *write_vars,
                                 uint32_t num_write, uint32_t props, int32_t priority,
                                 const char *name);

/* ---- Cached operators ---------------------------------------------------- */

/**
 * A cached operator: a push descriptor turned into an engine op once and pushed
 * many times without allocating (MXNet's Engine::NewOperator / Push /
 * DeleteOperator, upstream include/mxnet/engine.h, src/engine/threaded_engine.cc).
 * The executor pushes every node of a bound graph this way.
 *
 * - Each push behaves exactly like mxki_engine_push of the descriptor: the same
 *   ordering per variable (in push order, with every other push), the same error
 *   rules (errors recorded on the written variables, inherited, reported by waits).
 * - A cached op may be pushed again while earlier pushes of it are still queued or
 *   running: every push is a separate instance with its own requests, queued in
 *   push order. Instances are recycled when they complete; a new one is allocated
 *   only when all existing ones are in flight, so a caller that keeps at most k
 *   pushes of the op in flight allocates at most k instances over the op's life.
 * - `arg` is shared by every push and freed (desc->arg_free) once, after the op is
 *   deleted and its last push has completed. Pushes of one cached op run one at a
 *   time when the descriptor writes at least one variable (the engine serialises
 *   writers); with reads only they may run concurrently, so `fn` must then tolerate
 *   concurrent calls on `arg`.
 * Thread safety: push and delete may be called from any thread, also from inside
 * engine functions; delete must be the last call on the handle.
 */
typedef struct mxk_engine_cached_op mxk_engine_cached_op;

/**
 * Creates a cached op from `desc` (validated as mxki_engine_push does; the variable
 * lists are copied, the name too). On failure returns MXK_ERR_INVALID_ARGUMENT or
 * MXK_ERR_OUT_OF_MEMORY with the last error set, and `desc->arg_free` has NOT been
 * called (the caller keeps `arg`).
 */
mxk_status mxki_engine_cached_op_new(const mxk_engine_push_desc *desc, mxk_engine_cached_op **out);

/**
 * Pushes the cached op once (see above). Fails only for a stopped engine
 * (MXK_ERR_STATE), a deleted op (MXK_ERR_STATE) or when a new instance cannot be
 * allocated (MXK_ERR_OUT_OF_MEMORY); `arg` stays owned by the op in every case.
 */
mxk_status mxki_engine_cached_op_push(mxk_engine_cached_op *op);

/**
 * Deletes the cached op: no further push is allowed; the instances and the argument
 * (desc->arg_free) are freed once every push made so far has completed (at once when
 * none is in flight; otherwise by the worker finishing the last one). NULL: no-op.
 */
void mxki_engine_cached_op_delete(mxk_engine_cached_op *op);

/** Test hook: instances allocated so far (each is one allocation; pushes reuse them). */
uint32_t mxki_engine_cached_op_instances(mxk_engine_cached_op *op);

/**
 * Test hook: instances allocated by all cached ops since the start of the process
 * (creation included); unchanged across pushes that reuse instances.
 */
uint64_t mxki_engine_cached_instances_total(void);

/**
 * Completes an async function. `status` MXK_OK for success; otherwise `msg` (may be
 * NULL) describes the error, which is recorded like a sync function's error.
 * Thread-safe; must be called exactly once per async invocation.
 */
void mxki_engine_complete(mxk_async_handle *done, mxk_status status, const char *msg);

/**
 * Blocks until every function pushed before this call that reads or writes `var`
 * has completed. If `var` is failed (an error was recorded on it and no function has
 * written it successfully since), returns that error (message in the thread's last
 * error), at every call; the error then counts as reported for mxki_engine_wait_all.
 * Must not be called from inside an engine function on a variable that function
 * uses (it would wait for itself). Does not count as a write (version unchanged).
 */
mxk_status mxki_engine_wait_var(mxk_engine_var *var);

/**
 * Blocks until all pushed functions have completed. Reports the first recorded,
 * not yet reported error and marks every recorded error reported (failed variables
 * stay failed: see mxki_engine_wait_var). Errors of functions
 * that write no variable are reported here too. Must not be called from inside an
 * engine function (it would wait for itself).
 */
mxk_status mxki_engine_wait_all(void);

/**
 * Marks `var` as guarding storage block `block` of device (dev_type, dev_id), from
 * mxki_storage_alloc with the storage guard on (MXK_STORAGE_GUARD=1; see storage.h).
 * After every function that writes `var` completes without an error, the engine
 * checks the block's red zones (mxki_storage_guard_verify); a damaged one becomes
 * the function's error (MXK_ERR_INTERNAL, reported at the next wait as any error):
 * "storage guard: operator 'OP' (node 'N', backend 'B') wrote outside array 'A'
 * (BYTES bytes): canary damaged at byte offset OFF" (node and backend only when the
 * push named them; 'A' is the push's write_names entry, else "write_vars[I]"; OFF
 * counts from the array's first byte, negative before it). Call it once, before the
 * variable is used in any push. Not thread-safe for that variable.
 */
void mxki_engine_var_set_guard(mxk_engine_var *var, int32_t dev_type, int32_t dev_id, void *block);

/** Number of completed writes to `var` (MXNet's version counter). Thread-safe. */
uint64_t mxki_engine_var_version(const mxk_engine_var *var);

#endif /* MXK_ENGINE_H */
