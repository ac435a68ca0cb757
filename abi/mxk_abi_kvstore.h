/*
 * mxk plugin ABI 1.0: the KVStore transport contract.
 *
 * The store semantics (summing values pushed to one key, the updater, pull into
 * several arrays) live in the kernel (MXNet src/kvstore/kvstore_local.h); a
 * transport only moves the merged bytes between processes (dist_sync,
 * dist_async) or, for the in-process store, keeps them. Keys cross as strings
 * (integer keys in decimal). The kernel merges the values pushed to a key before
 * the transport sees them: in host memory itself, on another device with the
 * operator ElementWiseSum (the reduce contract, abi/README.md "Operators the
 * kernel calls").
 *
 * Asynchronous completion: push and pull receive an mxk_async_handle and finish
 * by host->async_complete(done, status, msg), from any thread; the kernel runs them
 * as engine functions that write (pull) or read (push) the value's variable.
 * Ownership: the transport object is created and destroyed by the plugin; tensor
 * memory passed to push/pull is the kernel's, valid until completion.
 */
#ifndef MXK_ABI_KVSTORE_H
#define MXK_ABI_KVSTORE_H

#include "mxk_abi_base.h"
#include "mxk_abi_op.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A KVStore transport type. */
typedef struct mxk_kvstore_transport_def {
    uint32_t struct_size;
    uint32_t abi_minor;
    const char *name; /**< store type it serves, e.g. "dist_sync" */
    const char *description;
    const mxk_attr_def *attrs; /**< options schema */
    uint32_t num_attrs;
    mxk_status (*create)(const mxk_attrs *attrs, void **transport, mxk_error_sink *err);
    void (*destroy)(void *transport);
    /** This worker's rank in [0, num_workers). */
    int32_t (*rank)(void *transport);
    /** Number of workers. */
    int32_t (*num_workers)(void *transport);
    /**
     * Initialises `key` with `value` (CPU tensor), synchronously. A distributed
     * transport may overwrite value->data (the kernel's stored copy) with the value
     * every worker must start from, rank 0's (MXNet's dist init: rank 0 pushes the
     * value, the others pull it; python/mxnet/kvstore/kvstore.py), so that all
     * workers hold the same parameters.
     */
    mxk_status (*init)(void *transport, const char *key, const mxk_tensor *value,
                       mxk_error_sink *err);
    /** Sends this worker's merged value for `key`; completes through `done`. */
    void (*push)(void *transport, const char *key, const mxk_tensor *value, int32_t priority,
                 mxk_async_handle *done);
    /** Receives the stored value of `key` into `out`; completes through `done`. */
    void (*pull)(void *transport, const char *key, const mxk_tensor *out, int32_t priority,
                 mxk_async_handle *done);
    /** Blocks until every worker has reached the barrier. */
    mxk_status (*barrier)(void *transport, mxk_error_sink *err);
} mxk_kvstore_transport_def;

#ifdef __cplusplus
}
#endif

#endif /* MXK_ABI_KVSTORE_H */
