/*
 * The KVStore (public API in mxk.h, section "KVStore").
 *
 * Semantics: MXNet's KVStoreLocal (upstream src/kvstore/kvstore_local.h, comm.h,
 * python/mxnet/kvstore/kvstore.py, and the KVStore tutorial
 * docs/python_docs/python/tutorials/packages/kvstore/kvstore.md): init stores a
 * copy per key; the values pushed to one key in one call are summed; without an
 * updater the sum replaces the stored value, with one the updater is called once
 * per key and push on the sum; pull copies the stored value into each output.
 *
 * Design (per key: `stored`, the store's value; `merged`, the reduce buffer;
 * `comm`, a host staging buffer used only when `merged` is not in host memory):
 *
 *   push(key, v1..vk)
 *     1. reduce  merged = v1 + ... + vk. "local" (and transports) reduce on the CPU:
 *        an engine function adding host memory (float32/64, float16 through float32,
 *        int8/uint8/int32/int64), values on other devices copied to host temporaries
 *        first. "device" reduces on the first value's device: on a host device the
 *        same host function, elsewhere the ElementWiseSum operator (through
 *        mxk_imperative_invoke) on that device: the reduce contract (KV_REDUCE_OP,
 *        abi/README.md "Operators the kernel calls"), after copying the values from
 *        other devices there. When the values lie on n >= 2 distinct devices of one
 *        type whose backend has `reduce` (ABI 1.4; the cuda plugin's is NCCL), one
 *        engine function calls it instead, reading every value where it is (MXNet's
 *        KVStoreNCCL, src/kvstore/kvstore_nccl.h). The kernel has no math of its
 *        own beyond these adds.
 *     2. exchange  transport->push(key, merged) then transport->pull(key, merged):
 *        two async engine functions writing the buffer's variable. The transport
 *        returns the aggregate over all workers; the built-in in-process transport
 *        (kvstore_local_transport.c, one worker) returns the value itself, so
 *        "local"/"device" go through the same contract as dist transports will.
 *     3. apply  no updater: stored = merged (an engine copy). With an updater:
 *        updater(key, merged, stored, user), called in the pushing thread during
 *        mxk_kvstore_push, once per key (as upstream KVStoreLocal::PushImpl calls
 *        updater_ in the pushing thread). The updater receives arrays whose values
 *        are produced by pending engine work, so it must do its own work through the
 *        engine (imperative operators, copies: ordered by the arrays' variables) or
 *        wait for them (mxk_ndarray_wait_to_read and friends are allowed: it does not
 *        run inside an engine function).
 *   One host value on a host store skips the copies: the transport reads it where
 *   it is, and without an updater pulls the aggregate straight into `stored`.
 *   Stores whose transport has servers (ABI 1.5, dist_async) stop after the push:
 *   the servers' updater applies it (kvstore_server.c), and no updater runs here.
 *   pull(key, out...)  one engine copy stored -> out per output; with servers, a
 *   transport pull into `stored` first (ordered after this worker's pushes).
 *
 * Ordering: every step reads and writes the arrays' engine variables; the per-key
 * variable of the store is its `stored` array's variable (and `merged`'s for the
 * exchange), so a pull pushed after a push sees the push's result, and pushes and
 * pulls of one key from one thread act in program order (engine.h semantics).
 * Errors of engine steps travel along those variables and are reported by waits on
 * the pulled arrays (engine error propagation).
 *
 * Thread safety: a mutex guards the key table; the updater is called without it.
 * As upstream, the order of calls from different threads is not defined.
 */
#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "dtype_convert.h"
#include "engine.h"
#include "error.h"
#include "kvstore.h"
#include "mxk.h"
#include "ndarray.h"
#include "registry.h"
#include "shape.h"

/**
 * The reduce contract (abi/README.md, "Operators the kernel calls"): the operator
 * the "device" KVStore sums pushed values with on a device that is not host memory,
 * as upstream's CommDevice::Reduce calls ElementwiseSum (src/kvstore/comm.h):
 * attribute num_args = N (>= 2), inputs arg0..arg{N-1} of one shape and dtype on
 * that device, one output, their elementwise sum, written with MXK_REQ_WRITE.
 */
#define KV_REDUCE_OP "ElementWiseSum"

/** True for host memory devices. */
static int kv_is_host(mxk_context c) {
    return c.dev_type == MXK_DEV_CPU || c.dev_type == MXK_DEV_CPU_PINNED;
}

/** True when two contexts are the same device. */
static int kv_same_ctx(mxk_context a, mxk_context b) {
    return a.dev_type == b.dev_type && a.dev_id == b.dev_id;
}

/* ------------------------------------------------------------------------- */
/* Engine functions                                                          */
/* ------------------------------------------------------------------------- */

/** Argument of the host sum: dst = src[0] + ... + src[n-1] (all host, same dtype/size). */
typedef struct kv_sum {
    mxk_ndarray *dst;
    uint32_t n;
    mxk_ndarray *src[]; /**< owned handles (retained views or host temporaries) */
} kv_sum;

/** Frees a sum argument and its handles. */
static void kv_sum_free(void *p) {
    kv_sum *a = p;
    mxk_ndarray_free(a->dst);
    for (uint32_t i = 0; i < a->n; i++)
        mxk_ndarray_free(a->src[i]);
    free(a);
}

/** Adds `count` elements of `s` into `d` (host memory, dtype `dt`); false if unsupported. */
static int kv_add_host(void *d, const void *s, int32_t dt, uint64_t count) {
#define KV_ADD(T)                                                                                  \
    do {                                                                                           \
        T *x = d;                                                                                  \
        const T *y = s;                                                                            \
        for (uint64_t i = 0; i < count; i++)                                                       \
            x[i] = (T)(x[i] + y[i]);                                                               \
    } while (0)
    switch (dt) {
    case MXK_FLOAT32:
        KV_ADD(float);
        return 1;
    case MXK_FLOAT64:
        KV_ADD(double);
        return 1;
    case MXK_INT32:
        KV_ADD(int32_t);
        return 1;
    case MXK_INT64:
        KV_ADD(int64_t);
        return 1;
    case MXK_INT8:
        KV_ADD(int8_t);
        return 1;
    case MXK_UINT8:
        KV_ADD(uint8_t);
        return 1;
    default:
        return 0;
    }
#undef KV_ADD
}

/** Engine function of the host sum (MXNet CommCPU::Reduce, upstream src/kvstore/comm.h). */
static mxk_status kv_sum_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    kv_sum *a = arg;
    uint64_t count = mxk_ndarray_size(a->dst);
    int32_t dt = a->dst->dtype;
    void *d = mxk_ndarray_ptr(a->dst);
    if (count == 0)
        return MXK_OK;
    memcpy(d, mxk_ndarray_ptr(a->src[0]), (size_t)mxki_ndarray_bytes(a->dst));
    if (a->n == 1)
        return MXK_OK;
    if (dt == MXK_FLOAT16) { /* accumulate in float32, round once at the end */
        float *acc = malloc((size_t)count * sizeof *acc),
              *tmp = malloc((size_t)count * sizeof *tmp);
        if (acc == NULL || tmp == NULL) {
            free(acc);
            free(tmp);
            return mxki_sink_set(err, MXK_ERR_OUT_OF_MEMORY, "KVStore sum: out of host memory");
        }
        mxki_dtype_convert(acc, MXK_FLOAT32, d, MXK_FLOAT16, count);
        for (uint32_t k = 1; k < a->n; k++) {
            mxki_dtype_convert(tmp, MXK_FLOAT32, mxk_ndarray_ptr(a->src[k]), MXK_FLOAT16, count);
            kv_add_host(acc, tmp, MXK_FLOAT32, count);
        }
        mxki_dtype_convert(d, MXK_FLOAT16, acc, MXK_FLOAT32, count);
        free(acc);
        free(tmp);
        return MXK_OK;
    }
    for (uint32_t k = 1; k < a->n; k++)
        if (!kv_add_host(d, mxk_ndarray_ptr(a->src[k]), dt, count))
            return mxki_sink_set(err, MXK_ERR_TYPE, "KVStore: cannot sum values of dtype %s",
                                 mxk_dtype_name(dt));
    return MXK_OK;
}

/** Argument of a device backend's multi-device reduce: dst = src[0] + ... + src[n-1]. */
typedef struct kv_dreduce {
    const mxk_device_def *def; /**< the backend of the values' device type (has reduce) */
    mxk_ndarray *dst;          /**< retained view, on src[0]'s device */
    uint32_t n;
    const void **ptrs;  /**< n data pointers, filled when the function runs */
    int32_t *devs;      /**< n device ids */
    mxk_ndarray *src[]; /**< retained views, one per device */
} kv_dreduce;

/** Frees a device-reduce argument and its views. */
static void kv_dreduce_free(void *p) {
    kv_dreduce *a = p;
    mxk_ndarray_free(a->dst);
    for (uint32_t i = 0; i < a->n; i++)
        mxk_ndarray_free(a->src[i]);
    free(a->ptrs);
    free(a->devs);
    free(a);
}

/**
 * Engine function of the reduce across devices of one type through the backend's
 * `reduce` slot (MXNet's KVStoreNCCL Reduce, upstream src/kvstore/kvstore_nccl.h).
 */
static mxk_status kv_dreduce_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    kv_dreduce *a = arg;
    for (uint32_t i = 0; i < a->n; i++) {
        a->ptrs[i] = mxk_ndarray_ptr(a->src[i]);
        a->devs[i] = a->src[i]->chunk->ctx.dev_id;
    }
    return a->def->reduce(a->n, a->ptrs, a->devs, mxk_ndarray_ptr(a->dst), a->dst->dtype,
                          mxk_ndarray_size(a->dst), err);
}

/**
 * The backend whose `reduce` sums `vals` when they lie on n >= 2 distinct devices of
 * one non-host type with such a backend; NULL otherwise (the copy-and-sum path).
 */
static const mxk_device_def *kv_dreduce_backend(mxk_ndarray *const *vals, uint32_t n) {
    mxk_context c0 = vals[0]->chunk->ctx;
    if (n < 2 || kv_is_host(c0))
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < i; j++)
            if (vals[i]->chunk->ctx.dev_type != c0.dev_type ||
                kv_same_ctx(vals[i]->chunk->ctx, vals[j]->chunk->ctx))
                return NULL;
    const mxk_device_def *def = mxki_registry_device(c0.dev_type);
    return def != NULL && def->reduce != NULL ? def : NULL;
}

/** Pushes the backend reduce of `vals` into `dst` (on vals[0]'s device). */
static mxk_status kv_push_dreduce(const mxk_device_def *def, mxk_ndarray *dst,
                                  mxk_ndarray *const *vals, uint32_t n, int32_t priority) {
    kv_dreduce *a = calloc(1, sizeof *a + n * sizeof(mxk_ndarray *));
    mxk_engine_var **rv = calloc(n, sizeof *rv);
    if (a == NULL || rv == NULL) {
        free(a);
        free(rv);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore push: out of memory");
    }
    a->def = def;
    a->ptrs = calloc(n, sizeof *a->ptrs);
    a->devs = calloc(n, sizeof *a->devs);
    a->dst = mxki_ndarray_retain_view(dst);
    mxk_status st = a->ptrs && a->devs && a->dst
                        ? MXK_OK
                        : mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore push: out of memory");
    for (uint32_t k = 0; st == MXK_OK && k < n; k++) {
        a->src[k] = mxki_ndarray_retain_view(vals[k]);
        a->n = k + 1;
        if (a->src[k] == NULL)
            st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore push: out of memory");
        else
            rv[k] = mxk_ndarray_var(vals[k]);
    }
    if (st != MXK_OK) {
        kv_dreduce_free(a);
        free(rv);
        return st;
    }
    mxk_engine_var *wv = mxk_ndarray_var(dst);
    mxk_context c = dst->chunk->ctx;
    st = mxki_engine_push_sync(kv_dreduce_fn, a, kv_dreduce_free, c.dev_type, c.dev_id, rv, n, &wv,
                               1, MXK_ENGINE_PROP_NORMAL, priority, "kvstore_device_reduce");
    free(rv);
    return st;
}

/** Argument of a transport push or pull of one key's host buffer. */
typedef struct kv_xfer {
    const mxk_kvstore_transport_def *def;
    void *transport;
    char *key;
    mxk_ndarray *buf; /**< retained view of the host buffer */
    mxk_tensor t;     /**< lives until completion, as the contract requires */
    int32_t priority;
    int is_pull;
} kv_xfer;

/** Frees a transfer argument. */
static void kv_xfer_free(void *p) {
    kv_xfer *a = p;
    mxk_ndarray_free(a->buf);
    free(a->key);
    free(a);
}

/** Async engine function: hands the buffer to the transport, which completes `done`. */
static void kv_xfer_fn(void *arg, const mxk_run_ctx *rctx, mxk_async_handle *done) {
    (void)rctx;
    kv_xfer *a = arg;
    mxki_ndarray_to_tensor(a->buf, &a->t);
    if (a->is_pull)
        a->def->pull(a->transport, a->key, &a->t, a->priority, done);
    else
        a->def->push(a->transport, a->key, &a->t, a->priority, done);
}

/**
 * Pushes a transport push (is_pull 0) or pull (1) of `buf` (host) for `key`. A push
 * reads buf and a pull writes it; both also write `order` when it is not NULL (the
 * key's exchange variable, merged's, which orders a key's pushes and pulls; a push
 * of buf == order writes it).
 */
static mxk_status kv_push_xfer(mxk_kvstore *kv, const char *key, mxk_ndarray *buf, int is_pull,
                               int32_t priority, mxk_ndarray *order) {
    kv_xfer *a = calloc(1, sizeof *a);
    if (a == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore: out of memory");
    a->def = kv->tdef;
    a->transport = kv->transport;
    a->key = strdup(key);
    a->buf = mxki_ndarray_retain_view(buf);
    a->priority = priority;
    a->is_pull = is_pull;
    if (a->key == NULL || a->buf == NULL) {
        kv_xfer_free(a);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore: out of memory");
    }
    mxk_engine_var *bv = mxk_ndarray_var(buf), *ov = order ? mxk_ndarray_var(order) : NULL;
    int reads = !is_pull && ov != NULL && ov != bv; /* a push of another array reads it */
    mxk_engine_var *w[2] = {reads ? ov : bv, ov};
    uint32_t nw = reads || ov == NULL || ov == bv ? 1 : 2;
    mxk_engine_push_desc d = {.async_fn = kv_xfer_fn,
                              .arg = a,
                              .arg_free = kv_xfer_free,
                              .dev_type = MXK_DEV_CPU,
                              .dev_id = 0,
                              .read_vars = reads ? &bv : NULL,
                              .num_read = reads ? 1 : 0,
                              .write_vars = w,
                              .num_write = nw,
                              .props = MXK_ENGINE_PROP_NORMAL,
                              .priority = priority,
                              .name =
                                  is_pull ? "kvstore_transport_pull" : "kvstore_transport_push"};
    return mxki_engine_push(&d);
}

/* ------------------------------------------------------------------------- */
/* Store lifecycle                                                           */
/* ------------------------------------------------------------------------- */

mxk_status mxk_kvstore_create(const char *type, mxk_kvstore **out) {
    if (out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_kvstore_create: out is NULL");
    *out = NULL;
    if (type == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_kvstore_create: type is NULL");
    /* KVStore::Create matches lower-cased substrings (upstream src/kvstore/kvstore.cc). */
    char lower[128];
    size_t n = strlen(type);
    if (n >= sizeof lower)
        n = sizeof lower - 1;
    for (size_t i = 0; i < n; i++)
        lower[i] = (char)tolower((unsigned char)type[i]);
    lower[n] = '\0';
    const mxk_kvstore_transport_def *def = NULL;
    int device_mode = 0;
    if (strstr(lower, "dist") == NULL &&
        (strncmp(lower, "local", 5) == 0 || strstr(lower, "device") != NULL)) {
        def = mxki_kvstore_local_transport();
        device_mode = strstr(lower, "device") != NULL;
    } else {
        const mxk_transport_entry *e = mxki_registry_find_transport(type);
        if (e == NULL)
            e = mxki_registry_find_transport(lower);
        if (e == NULL) {
            char names[512] = "";
            size_t used = 0;
            const char *nm;
            for (uint32_t i = 0; (nm = mxk_kvstore_transport_name(i)) != NULL; i++) {
                int w = snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", nm);
                if (w < 0 || (size_t)w >= sizeof names - used)
                    break;
                used += (size_t)w;
            }
            return mxk_set_error(MXK_ERR_NOT_FOUND,
                                 "unknown KVStore type '%s': built in are 'local' and 'device'; "
                                 "transport plugins registered: %s",
                                 type, used ? names : "none");
        }
        def = &e->def;
    }
    mxk_kvstore *kv = calloc(1, sizeof *kv);
    mxk_attrs *attrs = mxki_attrs_new();
    if (kv == NULL || attrs == NULL || (kv->type = strdup(type)) == NULL) {
        free(kv);
        mxki_attrs_free(attrs);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "mxk_kvstore_create: out of memory");
    }
    mxk_error_sink err;
    mxki_error_sink_clear(&err);
    mxk_status st = def->create(attrs, &kv->transport, &err);
    mxki_attrs_free(attrs);
    if (st != MXK_OK) {
        free(kv->type);
        free(kv);
        return mxki_set_error_from_sink(&err, "KVStore '%s': transport '%s' create: ", type,
                                        def->name);
    }
    kv->tdef = def;
    kv->device_mode = device_mode;
    pthread_mutex_init(&kv->lock, NULL);
    *out = kv;
    return MXK_OK;
}

void mxk_kvstore_free(mxk_kvstore *kv) {
    if (kv == NULL)
        return;
    /* Transport steps write merged/comm: wait for them before destroying the transport. */
    for (uint32_t i = 0; i < kv->count; i++) {
        kv_entry *e = kv->items[i];
        if (e->merged)
            (void)mxki_engine_wait_var(mxk_ndarray_var(e->merged));
        if (e->comm)
            (void)mxki_engine_wait_var(mxk_ndarray_var(e->comm));
    }
    kv->tdef->destroy(kv->transport);
    for (uint32_t i = 0; i < kv->count; i++) {
        kv_entry *e = kv->items[i];
        mxk_ndarray_free(e->stored); /* the engine frees memory after pending work */
        mxk_ndarray_free(e->merged);
        mxk_ndarray_free(e->comm);
        free(e->key);
        free(e);
    }
    free(kv->items);
    pthread_mutex_destroy(&kv->lock);
    free(kv->type);
    free(kv);
}

const char *mxk_kvstore_type(const mxk_kvstore *kv) {
    return kv ? kv->type : NULL;
}

int32_t mxk_kvstore_rank(const mxk_kvstore *kv) {
    return kv ? kv->tdef->rank(kv->transport) : 0;
}

int32_t mxk_kvstore_num_workers(const mxk_kvstore *kv) {
    return kv ? kv->tdef->num_workers(kv->transport) : 1;
}

int mxki_kvstore_has_servers(const mxk_kvstore *kv) {
    return kv->tdef->is_server != NULL;
}

mxk_status mxk_kvstore_set_updater(mxk_kvstore *kv, mxk_kvstore_updater fn, void *user) {
    if (kv == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_kvstore_set_updater: kv is NULL");
    if (fn != NULL && mxki_kvstore_has_servers(kv) && !mxk_kvstore_is_server(kv))
        return mxk_set_error(MXK_ERR_STATE,
                             "KVStore %s: the updater runs on the servers: send the optimizer "
                             "to them (set_optimizer, mxk_kvstore_send_command_to_servers)",
                             kv->type);
    pthread_mutex_lock(&kv->lock);
    kv->updater = fn;
    kv->updater_user = fn ? user : NULL;
    pthread_mutex_unlock(&kv->lock);
    return MXK_OK;
}

mxk_status mxk_kvstore_barrier(mxk_kvstore *kv) {
    if (kv == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_kvstore_barrier: kv is NULL");
    mxk_error_sink err;
    mxki_error_sink_clear(&err);
    if (kv->tdef->barrier(kv->transport, &err) != MXK_OK)
        return mxki_set_error_from_sink(&err, "KVStore barrier: ");
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* Keys                                                                      */
/* ------------------------------------------------------------------------- */

/**
 * Checks that `kind` matches the store's key kind (lock held); records nothing.
 * The kind is the kind of the keys the store holds: kv_init records it when it
 * adds the first key, so a failing call (which adds none) leaves an empty store
 * open to either kind. Push and pull need keys that exist, so they never record.
 * (Upstream KVStoreLocal::SetKeyType records before its checks; it is done after
 * them here, on purpose.)
 */
static mxk_status kv_check_kind(const mxk_kvstore *kv, int kind) {
    if (kv->key_kind != KV_KEYS_NONE && kv->key_kind != kind)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "Mixed key types are not allowed");
    return MXK_OK;
}

kv_entry *mxki_kvstore_find(mxk_kvstore *kv, const char *key) {
    for (uint32_t i = 0; i < kv->count; i++)
        if (strcmp(kv->items[i]->key, key) == 0)
            return kv->items[i];
    return NULL;
}

/** Sets the error for an unknown key, with upstream's wording per key kind. */
static mxk_status kv_missing(int kind, const char *key) {
    if (kind == KV_KEYS_INT)
        return mxk_set_error(MXK_ERR_NOT_FOUND, "key %s has not been inited", key);
    return mxk_set_error(MXK_ERR_NOT_FOUND, "key %s doesn't exist. Did you init?", key);
}

/** Common argument checks of init/push/pull. */
static mxk_status kv_check_args(const mxk_kvstore *kv, uint32_t num, const void *keys,
                                mxk_ndarray *const *arrays, const char *who) {
    if (kv == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: kv is NULL", who);
    if (num > 0 && (keys == NULL || arrays == NULL))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: keys or arrays is NULL", who);
    for (uint32_t i = 0; i < num; i++)
        if (arrays[i] == NULL)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: array %u is NULL", who, i);
    return MXK_OK;
}

/** Looks up every key (lock held) and checks array shapes against the stored ones. */
static mxk_status kv_resolve(mxk_kvstore *kv, int kind, uint32_t num, const char *const *keys,
                             mxk_ndarray *const *arrays, kv_entry **entries, const char *what) {
    for (uint32_t i = 0; i < num; i++) {
        if (keys[i] == NULL)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "KVStore %s: key %u is NULL", what, i);
        kv_entry *e = mxki_kvstore_find(kv, keys[i]);
        if (e == NULL)
            return kv_missing(kind, keys[i]);
        if (!mxki_shape_equal(&e->stored->shape, &arrays[i]->shape)) {
            char s1[256], s2[256];
            return mxk_set_error(MXK_ERR_SHAPE,
                                 "KVStore %s of key %s: shape mismatch: stored %s, given %s", what,
                                 keys[i], mxki_shape_format(&e->stored->shape, s1, sizeof s1),
                                 mxki_shape_format(&arrays[i]->shape, s2, sizeof s2));
        }
        entries[i] = e;
    }
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* init / push / pull                                                        */
/* ------------------------------------------------------------------------- */

mxk_status mxki_kvstore_append(mxk_kvstore *kv, kv_entry *e) {
    if (kv->count == kv->capacity) {
        uint32_t cap = kv->capacity ? kv->capacity * 2 : 16;
        kv_entry **items = realloc(kv->items, cap * sizeof *items);
        if (items == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore init: out of memory");
        kv->items = items;
        kv->capacity = cap;
    }
    kv->items[kv->count++] = e;
    return MXK_OK;
}

/** Creates one key's entry: stored copy of `value`, transport init (lock held). */
static mxk_status kv_init_one(mxk_kvstore *kv, const char *key, mxk_ndarray *value) {
    mxk_context vc = value->chunk->ctx;
    mxk_context ctx = kv->device_mode && !kv_is_host(vc) ? vc : KV_CPU;
    kv_entry *e = calloc(1, sizeof *e);
    if (e == NULL || (e->key = strdup(key)) == NULL) {
        free(e);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore init: out of memory");
    }
    mxk_status st = mxk_ndarray_create(&value->shape, value->dtype, ctx, &e->stored);
    if (st == MXK_OK)
        st = mxk_ndarray_copy_to(value, e->stored);
    /* The transport takes a host tensor, synchronously. */
    void *host = NULL;
    mxk_tensor t;
    if (st == MXK_OK) {
        st = mxk_ndarray_wait_to_read(e->stored);
        mxki_ndarray_to_tensor(e->stored, &t);
    }
    if (st == MXK_OK && !kv_is_host(ctx)) {
        uint64_t bytes = mxki_ndarray_bytes(e->stored);
        host = malloc(bytes ? (size_t)bytes : 1);
        if (host == NULL)
            st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore init: out of host memory");
        else
            st = mxk_ndarray_copy_to_host(e->stored, host, bytes);
        t.data = host;
        t.dev_type = MXK_DEV_CPU;
        t.dev_id = 0;
    }
    if (st == MXK_OK) {
        mxk_error_sink err;
        mxki_error_sink_clear(&err);
        if (kv->tdef->init(kv->transport, key, &t, &err) != MXK_OK)
            st = mxki_set_error_from_sink(&err, "KVStore init of key %s: ", key);
    }
    free(host);
    if (st == MXK_OK)
        st = mxki_kvstore_append(kv, e);
    if (st != MXK_OK) {
        mxk_ndarray_free(e->stored);
        free(e->key);
        free(e);
    }
    return st;
}

/** mxk_kvstore_init for string-form keys of `kind`. */
static mxk_status kv_init(mxk_kvstore *kv, int kind, uint32_t num, const char *const *keys,
                          mxk_ndarray *const *values) {
    pthread_mutex_lock(&kv->lock);
    mxk_status st = kv_check_kind(kv, kind);
    /* All checks first, so that a failing call initialises nothing. */
    for (uint32_t i = 0; st == MXK_OK && i < num; i++) {
        if (keys[i] == NULL) {
            st = mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "KVStore init: key %u is NULL", i);
            break;
        }
        int dup = mxki_kvstore_find(kv, keys[i]) != NULL;
        for (uint32_t j = 0; j < i && !dup; j++)
            dup = strcmp(keys[j], keys[i]) == 0;
        if (dup)
            st = mxk_set_error(MXK_ERR_STATE, "duplicate init of key %s", keys[i]);
    }
    uint32_t before = kv->count;
    for (uint32_t i = 0; st == MXK_OK && i < num; i++)
        st = kv_init_one(kv, keys[i], values[i]);
    /* Keys were added (all of them, or those before a failing transport init). */
    if (kv->count > before)
        kv->key_kind = kind;
    pthread_mutex_unlock(&kv->lock);
    return st;
}

/** Makes `*slot` an array like `like` on `ctx` (reusing it when it already is). */
static mxk_status kv_ensure(mxk_ndarray **slot, const mxk_ndarray *like, mxk_context ctx) {
    if (*slot != NULL && kv_same_ctx((*slot)->chunk->ctx, ctx))
        return MXK_OK;
    mxk_ndarray_free(*slot); /* pending work keeps its own views */
    *slot = NULL;
    return mxk_ndarray_create(&like->shape, like->dtype, ctx, slot);
}

/**
 * Pushes the reduce of `vals` into e->merged and the transport exchange (lock held).
 * Steps 1-2 of the design note at the top of this file. With `to_stored` (no
 * updater) and one host value, the transport reads the value where it is and pulls
 * the aggregate straight into e->stored (no copies of its own); *in_stored tells
 * whether it did.
 */
static mxk_status kv_reduce_exchange(mxk_kvstore *kv, kv_entry *e, mxk_ndarray *const *vals,
                                     uint32_t n, int32_t priority, int to_stored, int *in_stored) {
    mxk_context vc = vals[0]->chunk->ctx;
    mxk_context rctx = kv->device_mode && !kv_is_host(vc) ? vc : KV_CPU;
    *in_stored = 0;
    mxk_status st = kv_ensure(&e->merged, e->stored, rctx);
    if (st != MXK_OK)
        return st;
    if (n == 1 && kv_is_host(rctx) && kv_is_host(vc)) {
        if ((st = kv_push_xfer(kv, e->key, vals[0], 0, priority, e->merged)) != MXK_OK ||
            mxki_kvstore_has_servers(kv))
            return st;
        *in_stored = to_stored;
        return kv_push_xfer(kv, e->key, to_stored ? e->stored : e->merged, 1, priority, e->merged);
    }
    const mxk_device_def *ddef = NULL;
    if (kv_is_host(rctx)) {
        kv_sum *a = calloc(1, sizeof *a + n * sizeof(mxk_ndarray *));
        mxk_engine_var **rv = calloc(n, sizeof *rv);
        if (a == NULL || rv == NULL) {
            free(a);
            free(rv);
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore push: out of memory");
        }
        a->dst = mxki_ndarray_retain_view(e->merged);
        st = a->dst ? MXK_OK : mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore push: out of memory");
        for (uint32_t k = 0; st == MXK_OK && k < n; k++) {
            if (kv_is_host(vals[k]->chunk->ctx)) {
                a->src[k] = mxki_ndarray_retain_view(vals[k]);
                st = a->src[k]
                         ? MXK_OK
                         : mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore push: out of memory");
            } else { /* a device value: to a host temporary first */
                st = mxk_ndarray_create(&vals[k]->shape, vals[k]->dtype, KV_CPU, &a->src[k]);
                if (st == MXK_OK)
                    st = mxk_ndarray_copy_to(vals[k], a->src[k]);
            }
            if (st == MXK_OK)
                rv[k] = mxk_ndarray_var(a->src[k]);
            a->n = k + 1;
        }
        if (st != MXK_OK) {
            kv_sum_free(a);
            free(rv);
            return st;
        }
        mxk_engine_var *wv = mxk_ndarray_var(e->merged);
        st = mxki_engine_push_sync(kv_sum_fn, a, kv_sum_free, MXK_DEV_CPU, 0, rv, n, &wv, 1,
                                   MXK_ENGINE_PROP_NORMAL, priority, "kvstore_sum");
        free(rv);
    } else if ((ddef = kv_dreduce_backend(vals, n)) != NULL) {
        /* "device" over several devices of one type: the backend's reduce (NCCL) */
        st = kv_push_dreduce(ddef, e->merged, vals, n, priority);
    } else { /* "device" on a non-host device: the reduce contract there */
        mxk_ndarray **src = calloc(n, sizeof *src);
        if (src == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore push: out of memory");
        for (uint32_t k = 0; st == MXK_OK && k < n; k++) {
            if (kv_same_ctx(vals[k]->chunk->ctx, rctx)) {
                src[k] = mxki_ndarray_retain_view(vals[k]);
                st = src[k] ? MXK_OK
                            : mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore push: out of memory");
            } else {
                st = mxk_ndarray_create(&vals[k]->shape, vals[k]->dtype, rctx, &src[k]);
                if (st == MXK_OK)
                    st = mxk_ndarray_copy_to(vals[k], src[k]);
            }
        }
        if (st == MXK_OK && n == 1) {
            st = mxk_ndarray_copy_to(src[0], e->merged);
        } else if (st == MXK_OK) {
            char num_args[16];
            snprintf(num_args, sizeof num_args, "%u", n);
            const char *keys[1] = {"num_args"}, *vals1[1] = {num_args};
            uint32_t nout = 1;
            mxk_ndarray *outs[16] = {e->merged};
            st = mxk_imperative_invoke(KV_REDUCE_OP, n, src, &nout, outs, 1, keys, vals1);
        }
        for (uint32_t k = 0; k < n; k++)
            mxk_ndarray_free(src[k]);
        free(src);
    }
    if (st != MXK_OK)
        return st;
    /* Step 2: the exchange through the transport, on host memory. */
    mxk_ndarray *buf = e->merged;
    if (!kv_is_host(rctx)) {
        if ((st = kv_ensure(&e->comm, e->stored, KV_CPU)) != MXK_OK ||
            (st = mxk_ndarray_copy_to(e->merged, e->comm)) != MXK_OK)
            return st;
        buf = e->comm;
    }
    if ((st = kv_push_xfer(kv, e->key, buf, 0, priority, NULL)) != MXK_OK)
        return st;
    if (mxki_kvstore_has_servers(kv)) /* the servers apply it; pulls fetch their value */
        return MXK_OK;
    if ((st = kv_push_xfer(kv, e->key, buf, 1, priority, NULL)) != MXK_OK)
        return st;
    if (buf != e->merged)
        st = mxk_ndarray_copy_to(e->comm, e->merged);
    return st;
}

/** mxk_kvstore_push for string-form keys of `kind`. */
static mxk_status kv_push(mxk_kvstore *kv, int kind, uint32_t num, const char *const *keys,
                          mxk_ndarray *const *values, int32_t priority) {
    kv_entry **entries = calloc(num ? num : 1, sizeof *entries);
    mxk_ndarray **group = calloc(num ? num : 1, sizeof *group);
    /* Per distinct key: the entry and (with an updater) a view of its merged buffer. */
    kv_entry **upd_e = calloc(num ? num : 1, sizeof *upd_e);
    mxk_ndarray **upd_m = calloc(num ? num : 1, sizeof *upd_m);
    if (entries == NULL || group == NULL || upd_e == NULL || upd_m == NULL) {
        free(entries);
        free(group);
        free(upd_e);
        free(upd_m);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore push: out of memory");
    }
    uint32_t nupd = 0;
    pthread_mutex_lock(&kv->lock);
    mxk_status st = kv_check_kind(kv, kind);
    if (st == MXK_OK)
        st = kv_resolve(kv, kind, num, keys, values, entries, "push");
    for (uint32_t i = 0; st == MXK_OK && i < num; i++)
        if (values[i]->dtype != entries[i]->stored->dtype)
            st = mxk_set_error(MXK_ERR_TYPE, "KVStore push of key %s: dtype %s, stored %s", keys[i],
                               mxk_dtype_name(values[i]->dtype),
                               mxk_dtype_name(entries[i]->stored->dtype));
    mxk_kvstore_updater fn = kv->updater;
    void *user = kv->updater_user;
    for (uint32_t i = 0; st == MXK_OK && i < num; i++) {
        int seen = 0;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = entries[j] == entries[i];
        if (seen)
            continue;
        uint32_t n = 0;
        for (uint32_t j = i; j < num; j++)
            if (entries[j] == entries[i])
                group[n++] = values[j];
        kv_entry *e = entries[i];
        int in_stored = 0;
        st = kv_reduce_exchange(kv, e, group, n, priority, fn == NULL, &in_stored);
        if (st != MXK_OK)
            break;
        if (mxki_kvstore_has_servers(kv) || in_stored) {
            continue; /* the servers' updater applies the push, or stored has the sum */
        } else if (fn == NULL) {
            st = mxk_ndarray_copy_to(e->merged, e->stored);
        } else {
            upd_e[nupd] = e;
            upd_m[nupd] = mxki_ndarray_retain_view(e->merged);
            if (upd_m[nupd] == NULL)
                st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore push: out of memory");
            else
                nupd++;
        }
    }
    pthread_mutex_unlock(&kv->lock);
    /* Step 3 with an updater: in this thread, without the lock (entries never move). */
    for (uint32_t u = 0; u < nupd; u++) {
        if (st == MXK_OK)
            fn(upd_e[u]->key, upd_m[u], upd_e[u]->stored, user);
        mxk_ndarray_free(upd_m[u]);
    }
    free(entries);
    free(group);
    free(upd_e);
    free(upd_m);
    return st;
}

/** mxk_kvstore_pull for string-form keys of `kind`. */
static mxk_status kv_pull(mxk_kvstore *kv, int kind, uint32_t num, const char *const *keys,
                          mxk_ndarray *const *outs, int32_t priority) {
    kv_entry **entries = calloc(num ? num : 1, sizeof *entries);
    if (entries == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore pull: out of memory");
    pthread_mutex_lock(&kv->lock);
    mxk_status st = kv_check_kind(kv, kind);
    if (st == MXK_OK)
        st = kv_resolve(kv, kind, num, keys, outs, entries, "pull");
    /* With servers: fetch each key's value once into stored, after this worker's pushes. */
    for (uint32_t i = 0; st == MXK_OK && mxki_kvstore_has_servers(kv) && i < num; i++) {
        int seen = 0;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = entries[j] == entries[i];
        if (!seen)
            st = kv_push_xfer(kv, entries[i]->key, entries[i]->stored, 1, priority,
                              entries[i]->merged);
    }
    for (uint32_t i = 0; st == MXK_OK && i < num; i++)
        st = mxk_ndarray_copy_to(entries[i]->stored, outs[i]);
    pthread_mutex_unlock(&kv->lock);
    free(entries);
    return st;
}

/** Integer keys in their string form (decimal), as the transport contract wants them. */
typedef struct kv_int_keys {
    char (*buf)[16];
    const char **keys;
} kv_int_keys;

/** Converts integer keys to strings; false on OOM (last error set). */
static int kv_int_keys_make(kv_int_keys *k, uint32_t num, const int32_t *keys) {
    k->buf = calloc(num ? num : 1, sizeof *k->buf);
    k->keys = calloc(num ? num : 1, sizeof *k->keys);
    if (k->buf == NULL || k->keys == NULL) {
        free(k->buf);
        free(k->keys);
        mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "KVStore: out of memory");
        return 0;
    }
    for (uint32_t i = 0; i < num; i++) {
        snprintf(k->buf[i], sizeof k->buf[i], "%" PRId32, keys[i]);
        k->keys[i] = k->buf[i];
    }
    return 1;
}

/** Frees converted keys. */
static void kv_int_keys_free(kv_int_keys *k) {
    free(k->buf);
    free(k->keys);
}

mxk_status mxk_kvstore_init(mxk_kvstore *kv, uint32_t num, const char *const *keys,
                            mxk_ndarray *const *values) {
    mxk_status st = kv_check_args(kv, num, keys, values, "mxk_kvstore_init");
    return st != MXK_OK ? st : kv_init(kv, KV_KEYS_STR, num, keys, values);
}

mxk_status mxk_kvstore_push(mxk_kvstore *kv, uint32_t num, const char *const *keys,
                            mxk_ndarray *const *values, int32_t priority) {
    mxk_status st = kv_check_args(kv, num, keys, values, "mxk_kvstore_push");
    return st != MXK_OK ? st : kv_push(kv, KV_KEYS_STR, num, keys, values, priority);
}

mxk_status mxk_kvstore_pull(mxk_kvstore *kv, uint32_t num, const char *const *keys,
                            mxk_ndarray *const *outs, int32_t priority) {
    mxk_status st = kv_check_args(kv, num, keys, outs, "mxk_kvstore_pull");
    return st != MXK_OK ? st : kv_pull(kv, KV_KEYS_STR, num, keys, outs, priority);
}

mxk_status mxk_kvstore_init_int(mxk_kvstore *kv, uint32_t num, const int32_t *keys,
                                mxk_ndarray *const *values) {
    mxk_status st = kv_check_args(kv, num, keys, values, "mxk_kvstore_init_int");
    kv_int_keys k;
    if (st != MXK_OK || !kv_int_keys_make(&k, num, keys))
        return st != MXK_OK ? st : mxki_last_error_code();
    st = kv_init(kv, KV_KEYS_INT, num, k.keys, values);
    kv_int_keys_free(&k);
    return st;
}

mxk_status mxk_kvstore_push_int(mxk_kvstore *kv, uint32_t num, const int32_t *keys,
                                mxk_ndarray *const *values, int32_t priority) {
    mxk_status st = kv_check_args(kv, num, keys, values, "mxk_kvstore_push_int");
    kv_int_keys k;
    if (st != MXK_OK || !kv_int_keys_make(&k, num, keys))
        return st != MXK_OK ? st : mxki_last_error_code();
    st = kv_push(kv, KV_KEYS_INT, num, k.keys, values, priority);
    kv_int_keys_free(&k);
    return st;
}

mxk_status mxk_kvstore_pull_int(mxk_kvstore *kv, uint32_t num, const int32_t *keys,
                                mxk_ndarray *const *outs, int32_t priority) {
    mxk_status st = kv_check_args(kv, num, keys, outs, "mxk_kvstore_pull_int");
    kv_int_keys k;
    if (st != MXK_OK || !kv_int_keys_make(&k, num, keys))
        return st != MXK_OK ? st : mxki_last_error_code();
    st = kv_pull(kv, KV_KEYS_INT, num, k.keys, outs, priority);
    kv_int_keys_free(&k);
    return st;
}
