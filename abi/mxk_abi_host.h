/*
 * mxk plugin ABI 1.0: host services and the registrar.
 *
 * Plugins never link against libmxk: everything they need from the kernel comes
 * through the mxk_host_api table handed to their init function (errors, logging,
 * attribute access, name lists, storage, temp space, random numbers, streams,
 * engine variables and pushes, async completion). The table stays valid until the
 * process exits. Slots added in later minors are at the end; a plugin must check
 * `host->struct_size` (or the negotiated minor) before using a slot it knows but
 * the host may not have.
 *
 * Every function is thread-safe unless stated otherwise.
 */
#ifndef MXK_ABI_HOST_H
#define MXK_ABI_HOST_H

#include "mxk_abi_base.h"
#include "mxk_abi_device.h"
#include "mxk_abi_iter.h"
#include "mxk_abi_kvstore.h"
#include "mxk_abi_op.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Log levels for host->log. */
typedef enum mxk_log_level {
    MXK_LOG_DEBUG = 0,
    MXK_LOG_INFO = 1,
    MXK_LOG_WARNING = 2,
    MXK_LOG_ERROR = 3
} mxk_log_level;

/** An engine function pushed by a plugin; finishes by host->async_complete(done, ...). */
typedef void (*mxk_host_engine_fn)(void *arg, int32_t dev_type, int32_t dev_id, void *stream,
                                   mxk_async_handle *done);

/** Host services (the kernel fills it; plugins only read it). */
typedef struct mxk_host_api {
    uint32_t struct_size;
    uint32_t abi_minor; /**< the host's MXK_ABI_MINOR */

    /* --- errors and logging --- */
    /** Writes code and a printf-style message into `sink`; returns `code`. */
    mxk_status (*error)(mxk_error_sink *sink, mxk_status code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
    /** Logs a printf-style message at `level` to stderr ("[mxk LEVEL] msg"); MXK_LOG_LEVEL filters.
     */
    void (*log)(mxk_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

    /* --- attributes (validated, defaults filled) --- */
    /** Raw string of attribute `key`, or NULL when absent. Valid as long as `attrs`. */
    const char *(*attr_get)(const mxk_attrs *attrs, const char *key);
    /** Integer attribute; MXK_ERR_NOT_FOUND if absent, MXK_ERR_INVALID_ARGUMENT if not an int. */
    mxk_status (*attr_get_int)(const mxk_attrs *attrs, const char *key, int64_t *value,
                               mxk_error_sink *err);
    /** Real attribute; same errors. */
    mxk_status (*attr_get_float)(const mxk_attrs *attrs, const char *key, double *value,
                                 mxk_error_sink *err);
    /** Boolean attribute ("1/0/true/false/True/False"); same errors. */
    mxk_status (*attr_get_bool)(const mxk_attrs *attrs, const char *key, int32_t *value,
                                mxk_error_sink *err);
    /** Tuple attribute "(a,b,...)" into shape (ndim = tuple length); same errors. */
    mxk_status (*attr_get_shape)(const mxk_attrs *attrs, const char *key, mxk_shape *value,
                                 mxk_error_sink *err);
    /** Number of attributes, and the i-th key/value (for iteration; NULL when out of range). */
    uint32_t (*attr_count)(const mxk_attrs *attrs);
    const char *(*attr_key)(const mxk_attrs *attrs, uint32_t i);
    const char *(*attr_value)(const mxk_attrs *attrs, uint32_t i);

    /* --- name lists --- */
    /** Appends a copy of `name` to a list the kernel handed to a list_* callback. */
    mxk_status (*name_list_add)(mxk_name_list *list, const char *name, mxk_error_sink *err);

    /* --- storage (pooled; see the kernel's storage manager) --- */
    /** Allocates bytes on a device through the kernel's pool. */
    mxk_status (*storage_alloc)(int32_t dev_type, int32_t dev_id, uint64_t bytes, void **ptr,
                                mxk_error_sink *err);
    /** Returns memory from storage_alloc to the pool. */
    void (*storage_free)(int32_t dev_type, int32_t dev_id, void *ptr);

    /* --- resources --- */
    /**
     * Temp space of at least `bytes` from the op's first MXK_RESOURCE_TEMP_SPACE
     * resource (growing it if needed); valid until the kernel function returns.
     * MXK_ERR_STATE if the operator did not request temp space.
     */
    mxk_status (*temp_space)(const mxk_op_ctx *ctx, uint64_t bytes, void **ptr,
                             mxk_error_sink *err);
    /** Fills n floats uniform in [lo, hi) from a random stream (CPU memory). */
    void (*random_uniform)(mxk_random *rng, float *out, uint64_t n, float lo, float hi);
    /** Fills n floats normal(mean, std) (CPU memory). */
    void (*random_normal)(mxk_random *rng, float *out, uint64_t n, float mean, float std);
    /**
     * Reserves `n_blocks` Philox-4x32-10 counter blocks for device-side generation:
     * returns the stream's 64-bit key and the first 128-bit counter (low, high)
     * of the reservation, so a device kernel computes block i as
     * philox(key, counter + i) (see mxk_philox.h) with results identical to the host's.
     */
    void (*random_reserve)(mxk_random *rng, uint64_t n_blocks, uint64_t *key, uint64_t *counter_lo,
                           uint64_t *counter_hi);

    /* --- streams --- */
    /** The stream engine workers of (dev_type, dev_id) use in the calling thread, or NULL. */
    void *(*current_stream)(int32_t dev_type, int32_t dev_id);

    /* --- engine --- */
    /** Creates an engine variable. NULL on out-of-memory. */
    mxk_engine_var *(*engine_new_var)(void);
    /** Schedules deletion of a variable after its pending users. */
    void (*engine_delete_var)(mxk_engine_var *var);
    /**
     * Pushes an async function reading `read_vars` and writing `write_vars`
     * (push order kept per variable). `arg_free(arg)` runs after completion.
     */
    mxk_status (*engine_push)(mxk_host_engine_fn fn, void *arg, void (*arg_free)(void *),
                              int32_t dev_type, int32_t dev_id, mxk_engine_var *const *read_vars,
                              uint32_t num_read, mxk_engine_var *const *write_vars,
                              uint32_t num_write, int32_t priority, const char *name,
                              mxk_error_sink *err);
    /** Waits for all pushed work touching `var`; returns an error recorded on it (once). */
    mxk_status (*engine_wait_var)(mxk_engine_var *var, mxk_error_sink *err);
    /**
     * Completes an async function or kernel: status MXK_OK, or an error with `msg`
     * (copied; may be NULL). Exactly once per handle; any thread.
     */
    void (*async_complete)(mxk_async_handle *done, mxk_status status, const char *msg);
} mxk_host_api;

/**
 * The registrar handed to init. Every register_* call validates the definition
 * (struct size, required slots, names), deep-copies it (the plugin's structs and
 * strings need not outlive the call; function pointers must stay valid while the
 * plugin is loaded) and stages it. Staged registrations are committed only when
 * init returns MXK_OK; otherwise they are discarded, leaving no trace.
 * A duplicate name (against committed or staged entries) is MXK_ERR_DUPLICATE with
 * both plugins named. Not thread-safe: call only from within init, on its thread.
 */
typedef struct mxk_registrar {
    uint32_t struct_size;
    void *impl; /**< kernel-private */
    mxk_status (*register_op)(struct mxk_registrar *reg, const mxk_op_def *def,
                              mxk_error_sink *err);
    mxk_status (*register_kernel)(struct mxk_registrar *reg, const mxk_op_kernel_def *def,
                                  mxk_error_sink *err);
    mxk_status (*register_device)(struct mxk_registrar *reg, const mxk_device_def *def,
                                  mxk_error_sink *err);
    mxk_status (*register_iterator)(struct mxk_registrar *reg, const mxk_iter_def *def,
                                    mxk_error_sink *err);
    mxk_status (*register_kvstore_transport)(struct mxk_registrar *reg,
                                             const mxk_kvstore_transport_def *def,
                                             mxk_error_sink *err);
} mxk_registrar;

#ifdef __cplusplus
}
#endif

#endif /* MXK_ABI_HOST_H */
