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

#include "mxk_abi_kvstore.h"

/**
 * The built-in in-process transport (kernel/kvstore_local_transport.c): one worker
 * (rank 0 of 1), a no-op barrier, and per key a host buffer that push overwrites
 * and pull copies out, completing synchronously. Its name is "local"; it serves
 * the store types "local" and "device". Tensors must be in host memory.
 */
const mxk_kvstore_transport_def *mxki_kvstore_local_transport(void);

#endif /* MXK_KVSTORE_H */
