/*
 * KVStore internals (kernel-internal). The public API is in mxk.h ("KVStore").
 *
 * The store semantics (summing, updater, pull into several arrays, key checks) live
 * in kernel/kvstore/kvstore.c (MXNet's KVStoreLocal, upstream
 * src/kvstore/kvstore_local.h, python/mxnet/kvstore/kvstore.py). Moving the merged bytes is a
 * transport's job (abi/mxk_abi_kvstore.h); the in-process stores "local" and "device" use the
 * built-in transport below, through the very same struct as plugin transports
 * (dist_sync, dist_async), so that those plug in without changing kvstore.c.
 */
#ifndef MXK_KVSTORE_H
#define MXK_KVSTORE_H

#include <pthread.h>

#include "mxk.h"
#include "mxk_abi_kvstore.h"

/** The host device, where the store keeps values that are not on a device. */
static const mxk_context KV_CPU = {MXK_DEV_CPU, 0};

/** Kind of keys a store has seen (mixing is an error, upstream kvstore.py). */
enum { KV_KEYS_NONE = 0, KV_KEYS_STR = 1, KV_KEYS_INT = 2 };

/** One key of the store. */
typedef struct kv_entry {
    char *key;           /**< string form (integer keys in decimal) */
    mxk_ndarray *stored; /**< the store's value: CPU, or the init value's device ("device") */
    mxk_ndarray *merged; /**< reduce buffer, created on the first push (reduce device) */
    mxk_ndarray *comm;   /**< host staging for the transport when merged is on a device */
} kv_entry;

/** Definition of the public opaque handle. */
struct mxk_kvstore {
    char *type;      /**< as given to mxk_kvstore_create */
    int device_mode; /**< "device": reduce and keep values on the values' device */
    const mxk_kvstore_transport_def *tdef;
    void *transport;
    pthread_mutex_t lock; /**< guards everything below */
    int key_kind; /**< KV_KEYS_* of the keys held: set by the init that adds the first key */
    kv_entry **items;
    uint32_t count, capacity;
    mxk_kvstore_updater updater;
    void *updater_user;
};

/** The entry of `key` (lock held), or NULL. */
kv_entry *mxki_kvstore_find(mxk_kvstore *kv, const char *key);

/** Appends entry `e` to the key table (lock held); MXK_ERR_OUT_OF_MEMORY (set) on failure. */
mxk_status mxki_kvstore_append(mxk_kvstore *kv, kv_entry *e);

/**
 * True when the store's transport has parameter servers (ABI 1.5 is_server set:
 * dist_async): workers then push to the servers and pull from them, and the
 * updater runs on the servers (kernel/kvstore/kvstore_server.c).
 */
int mxki_kvstore_has_servers(const mxk_kvstore *kv);

/**
 * The built-in in-process transport (kernel/kvstore_local_transport.c): one worker
 * (rank 0 of 1), a no-op barrier, and per key a host buffer that push overwrites
 * and pull copies out, completing synchronously. Its name is "local"; it serves
 * the store types "local" and "device". Tensors must be in host memory.
 */
const mxk_kvstore_transport_def *mxki_kvstore_local_transport(void);

#endif /* MXK_KVSTORE_H */
