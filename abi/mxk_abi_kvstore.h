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
 *
 * ABI 1.5 appends the server side of stores with parameter servers (dist_async,
 * upstream src/kvstore/kvstore_dist_server.h) and gradient compression; a 1.0-1.4
 * transport's struct ends before them (no servers, no compression).
 */
#ifndef MXK_ABI_KVSTORE_H
#define MXK_ABI_KVSTORE_H

#include "mxk_abi_base.h"
#include "mxk_abi_op.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * What a server process of a store runs for each message it receives
 * (run_server), implemented by the kernel (upstream KVStoreDistServer's
 * DataHandle and CommandHandle, src/kvstore/kvstore_dist_server.h). Keys are the
 * transport's: a key split over several servers (upstream
 * MXNET_KVSTORE_BIGARRAY_BOUND) reaches each of them under its own name with the
 * server's slice of the value, a 1-D tensor. Tensors are host memory owned by the
 * transport, valid during the call. Every callback is synchronous, called from the
 * thread running run_server, one at a time. On failure a callback returns the
 * status and writes a NUL-terminated message into `msg` (msg_len bytes, owned by
 * the transport), which the transport returns to the worker whose message caused
 * it (init, pull, command) or keeps for that key's next pull (push).
 */
typedef struct mxk_kvstore_server_handler {
    void *user; /**< passed to every callback */
    /** A command of the workers (mxk_kvstore_send_command_to_servers): upstream's controller. */
    mxk_status (*command)(void *user, int32_t head, const char *body, char *msg, size_t msg_len);
    /** Stores a copy of `value` as key's value on this server. */
    mxk_status (*init)(void *user, const char *key, const mxk_tensor *value, char *msg,
                       size_t msg_len);
    /** Applies one worker's pushed `value` to the key: the updater, run at once (async mode). */
    mxk_status (*push)(void *user, const char *key, const mxk_tensor *value, char *msg,
                       size_t msg_len);
    /** Copies the key's current value into `out` (same shape and dtype as at init). */
    mxk_status (*pull)(void *user, const char *key, const mxk_tensor *out, char *msg,
                       size_t msg_len);
} mxk_kvstore_server_handler;

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
    /* ---- ABI 1.5: optional (NULL) ---- */
    /**
     * 1 when this process is one of the store's servers (upstream
     * MXKVStoreIsServerNode), 0 for a worker. NULL: every process is a worker.
     * A server's rank() is its index among the servers, num_workers() the number
     * of workers. Set together with send_command and run_server.
     */
    int32_t (*is_server)(void *transport);
    /**
     * Worker side: sends command (head, body) to every server and waits until each
     * has run it (upstream KVStoreDist::SendCommandToServers). Called by every
     * worker: rank 0's command is sent, then the workers wait for each other, so no
     * worker pushes before every server has run it. Synchronous; returns the first
     * server's error.
     */
    mxk_status (*send_command)(void *transport, int32_t head, const char *body,
                               mxk_error_sink *err);
    /**
     * Server side: serves the workers' init, push, pull and command messages
     * through `handler` until every worker has destroyed its store (upstream
     * MXKVStoreRunServer). Blocks the calling thread.
     */
    mxk_status (*run_server)(void *transport, const mxk_kvstore_server_handler *handler,
                             mxk_error_sink *err);
    /**
     * Sets gradient compression for later pushes (upstream
     * KVStore::SetGradientCompression, src/kvstore/gradient_compression.cc): type
     * "2bit" with `threshold` > 0, or "none". Every worker calls it alike, before
     * its first push. NULL: compression is refused with MXK_ERR_UNSUPPORTED.
     */
    mxk_status (*set_gradient_compression)(void *transport, const char *type, double threshold,
                                           mxk_error_sink *err);
} mxk_kvstore_transport_def;

#ifdef __cplusplus
}
#endif

#endif /* MXK_ABI_KVSTORE_H */
