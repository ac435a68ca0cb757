/*
 * The built-in in-process KVStore transport (see kernel/kvstore/kvstore.h).
 *
 * It implements the transport contract of abi/mxk_abi_kvstore.h for a single
 * worker: init copies the value into a host buffer owned by the transport, push
 * overwrites the buffer with this worker's merged value (with one worker the
 * "aggregate over workers" is that value), pull copies the buffer out. Push and
 * pull complete synchronously through the engine's completion handle (the
 * contract allows completion from any thread, the calling one included). Rank 0,
 * one worker, and a barrier that returns at once, as MXNet's KVStoreLocal
 * (upstream include/mxnet/kvstore.h: get_rank 0, get_group_size 1, Barrier no-op).
 *
 * Thread safety: a mutex guards the key table, so pushes and pulls of different
 * keys may run concurrently on engine workers; the kernel orders the calls of one key.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "error.h"
#include "kvstore.h"
#include "mxk.h"

/** One key's buffer. */
typedef struct lt_entry {
    char *key;
    void *data;
    uint64_t bytes;
    int32_t dtype;
    mxk_shape shape;
} lt_entry;

/** The transport object: a growable array of keys (a few hundred at most in practice). */
typedef struct local_transport {
    pthread_mutex_t lock;
    lt_entry *items;
    uint32_t count, capacity;
} local_transport;

/** Bytes of a tensor (0 for an unknown dtype). */
static uint64_t lt_bytes(const mxk_tensor *t) {
    uint64_t n = 1;
    for (int32_t i = 0; i < t->shape.ndim; i++)
        n *= (uint64_t)t->shape.dims[i];
    return n * mxk_dtype_size(t->dtype);
}

/** True when the tensor lives in host memory. */
static int lt_host(const mxk_tensor *t) {
    return t->dev_type == MXK_DEV_CPU || t->dev_type == MXK_DEV_CPU_PINNED;
}

/** The entry of `key` (lock held), or NULL. */
static lt_entry *lt_find(local_transport *lt, const char *key) {
    for (uint32_t i = 0; i < lt->count; i++)
        if (strcmp(lt->items[i].key, key) == 0)
            return &lt->items[i];
    return NULL;
}

/** mxk_kvstore_transport_def.create: no options. */
static mxk_status lt_create(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    (void)attrs;
    local_transport *lt = calloc(1, sizeof *lt);
    if (lt == NULL)
        return mxki_sink_set(err, MXK_ERR_OUT_OF_MEMORY, "local transport: out of memory");
    pthread_mutex_init(&lt->lock, NULL);
    *out = lt;
    return MXK_OK;
}

/** mxk_kvstore_transport_def.destroy: frees every buffer. */
static void lt_destroy(void *p) {
    local_transport *lt = p;
    if (lt == NULL)
        return;
    for (uint32_t i = 0; i < lt->count; i++) {
        free(lt->items[i].key);
        free(lt->items[i].data);
    }
    free(lt->items);
    pthread_mutex_destroy(&lt->lock);
    free(lt);
}

/** mxk_kvstore_transport_def.rank: always 0. */
static int32_t lt_rank(void *p) {
    (void)p;
    return 0;
}

/** mxk_kvstore_transport_def.num_workers: always 1. */
static int32_t lt_num_workers(void *p) {
    (void)p;
    return 1;
}

/** mxk_kvstore_transport_def.init: copies `value` into a new buffer for `key`. */
static mxk_status lt_init(void *p, const char *key, const mxk_tensor *value, mxk_error_sink *err) {
    local_transport *lt = p;
    if (!lt_host(value))
        return mxki_sink_set(err, MXK_ERR_UNSUPPORTED,
                             "local transport: init of key %s: the value is not in host memory",
                             key);
    uint64_t bytes = lt_bytes(value);
    pthread_mutex_lock(&lt->lock);
    mxk_status st = MXK_OK;
    if (lt_find(lt, key) != NULL) {
        st = mxki_sink_set(err, MXK_ERR_STATE, "duplicate init of key %s", key);
        goto out;
    }
    if (lt->count == lt->capacity) {
        uint32_t cap = lt->capacity ? lt->capacity * 2 : 16;
        lt_entry *items = realloc(lt->items, cap * sizeof *items);
        if (items == NULL) {
            st = mxki_sink_set(err, MXK_ERR_OUT_OF_MEMORY, "local transport: out of memory");
            goto out;
        }
        lt->items = items;
        lt->capacity = cap;
    }
    lt_entry e = {.key = strdup(key),
                  .data = malloc(bytes ? (size_t)bytes : 1),
                  .bytes = bytes,
                  .dtype = value->dtype,
                  .shape = value->shape};
    if (e.key == NULL || e.data == NULL) {
        free(e.key);
        free(e.data);
        st = mxki_sink_set(err, MXK_ERR_OUT_OF_MEMORY, "local transport: out of memory");
        goto out;
    }
    if (bytes)
        memcpy(e.data, value->data, (size_t)bytes);
    lt->items[lt->count++] = e;
out:
    pthread_mutex_unlock(&lt->lock);
    return st;
}

/**
 * Shared body of push and pull: copies between the key's buffer and `t`
 * (to_store: t -> buffer) and completes `done`.
 */
static void lt_transfer(local_transport *lt, const char *key, const mxk_tensor *t, int to_store,
                        mxk_async_handle *done) {
    const char *what = to_store ? "push" : "pull";
    char msg[512];
    if (!lt_host(t)) {
        snprintf(msg, sizeof msg, "local transport: %s of key %s: the array is not in host memory",
                 what, key);
        mxki_engine_complete(done, MXK_ERR_UNSUPPORTED, msg);
        return;
    }
    uint64_t bytes = lt_bytes(t);
    pthread_mutex_lock(&lt->lock);
    lt_entry *e = lt_find(lt, key);
    mxk_status st = MXK_OK;
    if (e == NULL) {
        snprintf(msg, sizeof msg, "key %s doesn't exist. Did you init?", key);
        st = MXK_ERR_NOT_FOUND;
    } else if (e->bytes != bytes || e->dtype != t->dtype) {
        snprintf(msg, sizeof msg,
                 "local transport: %s of key %s: %" PRIu64 " bytes of %s, stored %" PRIu64
                 " bytes of %s",
                 what, key, bytes, mxk_dtype_name(t->dtype), e->bytes, mxk_dtype_name(e->dtype));
        st = MXK_ERR_SHAPE;
    } else if (bytes) {
        if (to_store)
            memcpy(e->data, t->data, (size_t)bytes);
        else
            memcpy(t->data, e->data, (size_t)bytes);
    }
    pthread_mutex_unlock(&lt->lock);
    mxki_engine_complete(done, st, st == MXK_OK ? NULL : msg);
}

/** mxk_kvstore_transport_def.push: stores this (only) worker's merged value. */
static void lt_push(void *p, const char *key, const mxk_tensor *value, int32_t priority,
                    mxk_async_handle *done) {
    (void)priority;
    lt_transfer(p, key, value, 1, done);
}

/** mxk_kvstore_transport_def.pull: copies the stored value out. */
static void lt_pull(void *p, const char *key, const mxk_tensor *out, int32_t priority,
                    mxk_async_handle *done) {
    (void)priority;
    lt_transfer(p, key, out, 0, done);
}

/** mxk_kvstore_transport_def.barrier: one worker, nothing to wait for. */
static mxk_status lt_barrier(void *p, mxk_error_sink *err) {
    (void)p;
    (void)err;
    return MXK_OK;
}

/** The definition, filled as a plugin would fill it (ABI 1.0). */
static const mxk_kvstore_transport_def LOCAL_TRANSPORT = {
    .struct_size = sizeof(mxk_kvstore_transport_def),
    .abi_minor = 0,
    .name = "local",
    .description = "in-process store of one worker (built into the kernel)",
    .attrs = NULL,
    .num_attrs = 0,
    .create = lt_create,
    .destroy = lt_destroy,
    .rank = lt_rank,
    .num_workers = lt_num_workers,
    .init = lt_init,
    .push = lt_push,
    .pull = lt_pull,
    .barrier = lt_barrier,
};

const mxk_kvstore_transport_def *mxki_kvstore_local_transport(void) {
    return &LOCAL_TRANSPORT;
}
