/*
 * NDArray: creation, views, data movement and waits (public API in mxk.h, layout
 * in ndarray.h; save/load live in ndarray_io.c).
 *
 * Source: upstream src/ndarray/ndarray.cc (NDArray, Chunk, Slice, Reshape,
 * CopyFromTo, SyncCopyFromCPU/ToCPU), include/mxnet/ndarray.h (WaitToRead,
 * WaitToWrite), include/mxnet/engine.h.
 *
 * Design
 * - A handle (struct mxk_ndarray) is a view: chunk + byte offset + shape + dtype.
 *   Views made by slice/reshape share the chunk, and so its engine variable: work on
 *   a view is ordered with work on its parent. A chunk counts its handles; when the
 *   last one is freed, deleting the variable is scheduled on the engine (after all
 *   pending work that uses it) with a deleter that returns the memory to the storage
 *   pool and frees the chunk.
 * - Every data movement is pushed to the engine: fill and copies write the
 *   destination's variable (and read the source's). Pushed functions capture raw
 *   pointers (chunk memory never moves), never handles, so a handle may be freed
 *   right after a push.
 * - Host memory is that of MXK_DEV_CPU and MXK_DEV_CPU_PINNED arrays; all other
 *   device memory is only touched through the device backend's copy/fill. Copies
 *   between host and a device use the device's backend; between two devices of one
 *   type, that backend's DEVICE_TO_DEVICE copy; between devices of two types, a host
 *   bounce buffer (D2H by one backend, H2D by the other). dtype conversion always
 *   runs on the host (dtype_convert.h).
 * - Functions pushed for a device with a stream use the worker's stream when it is
 *   the stream of the backend device they call. The engine synchronises that stream
 *   after the function returns, before it releases the arrays' variables (engine.h),
 *   so a function synchronises it itself only before the host touches memory the
 *   stream writes or reads within the function (a bounce buffer it reads or frees).
 * - copy_from_host stages the caller's buffer (malloc + memcpy) before pushing, so
 *   the caller may reuse its buffer at once; copy_to_host and mxk_ndarray_data wait
 *   for the variable (reporting recorded errors once) and then read directly.
 *
 * Threading: every function may be called from any thread; push order of one thread
 * is the order of work on the arrays. Handles are not locked: do not free a handle
 * while another thread uses that same handle.
 */
#include "ndarray.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_convert.h"
#include "error.h"
#include "mxk_abi_device.h"
#include "mxk_assert.h"
#include "ndarray_io.h"
#include "registry.h"
#include "shape.h"
#include "storage.h"

/* ------------------------------------------------------------------------- */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------- */

/** True for device types whose memory the host may read and write directly. */
static bool is_host_dev(int32_t dev_type) {
    return dev_type == MXK_DEV_CPU || dev_type == MXK_DEV_CPU_PINNED;
}

/** Formats a context as "cpu(0)" into buf; returns buf. */
static const char *ctx_str(mxk_context ctx, char *buf, size_t size) {
    snprintf(buf, size, "%s(%" PRId32 ")", mxk_dev_type_name(ctx.dev_type), ctx.dev_id);
    return buf;
}

/**
 * Number of elements of a shape with overflow checking. Returns false when a dim is
 * negative or the product does not fit in uint64 (or, with esize, the byte count).
 */
static bool shape_elems_checked(const mxk_shape *s, size_t esize, uint64_t *elems,
                                uint64_t *bytes) {
    uint64_t n = s->ndim > 0 ? 1 : 0;
    for (int32_t i = 0; i < s->ndim; i++) {
        if (s->dims[i] < 0)
            return false;
        uint64_t d = (uint64_t)s->dims[i];
        if (d != 0 && n > UINT64_MAX / d)
            return false;
        n *= d;
    }
    if (esize != 0 && n > UINT64_MAX / esize)
        return false;
    *elems = n;
    if (bytes)
        *bytes = n * esize;
    return true;
}

/** The engine device a function touching memory on ctx runs on (host memory: a CPU worker). */
static void exec_dev(mxk_context ctx, int32_t *dev_type, int32_t *dev_id) {
    if (is_host_dev(ctx.dev_type)) {
        *dev_type = MXK_DEV_CPU;
        *dev_id = ctx.dev_type == MXK_DEV_CPU ? ctx.dev_id : 0;
    } else {
        *dev_type = ctx.dev_type;
        *dev_id = ctx.dev_id;
    }
}

/**
 * The worker's stream when the function runs on (dev_type, dev_id) of `def`'s
 * backend; NULL otherwise (another backend's stream must never be passed).
 */
static void *stream_for(const mxk_run_ctx *rctx, const mxk_device_def *def, int32_t dev_id) {
    if (rctx == NULL || rctx->stream == NULL || rctx->dev_type != def->dev_type ||
        rctx->dev_id != dev_id)
        return NULL;
    return rctx->stream;
}

/**
 * Calls def's copy with the right stream; with `host_waits` also waits for it (the
 * host then reads or frees a buffer of the copy). dev_id is the device side of the
 * copy (for DEVICE_TO_DEVICE, the destination) that decides the stream.
 */
static mxk_status backend_copy(const mxk_device_def *def, mxk_copy_kind kind, void *dst,
                               int32_t dst_dev, const void *src, int32_t src_dev, uint64_t bytes,
                               const mxk_run_ctx *rctx, bool host_waits, mxk_error_sink *err) {
    int32_t side = kind == MXK_COPY_DEVICE_TO_HOST ? src_dev : dst_dev;
    void *stream = stream_for(rctx, def, side);
    mxk_status st = def->copy(kind, dst, dst_dev, src, src_dev, bytes, stream, err);
    if (st == MXK_OK && host_waits && stream != NULL && def->synchronize != NULL)
        st = def->synchronize(side, stream, err);
    if (st != MXK_OK && err != NULL && err->msg[0] == '\0')
        mxki_sink_set(err, st, "the %s backend's copy of %" PRIu64 " bytes failed (%s)",
                      def->name ? def->name : "device", bytes, mxk_status_name(st));
    return st;
}

/** The backend of a non-host context, checked to have a copy function (last error set). */
static const mxk_device_def *copy_backend(mxk_context ctx, const char *who) {
    const mxk_device_def *def = mxki_registry_device(ctx.dev_type);
    char cs[48];
    if (def == NULL) {
        mxk_set_error(MXK_ERR_NOT_FOUND, "%s: no device backend is registered for %s", who,
                      ctx_str(ctx, cs, sizeof cs));
        return NULL;
    }
    if (def->copy == NULL) {
        mxk_set_error(MXK_ERR_UNSUPPORTED, "%s: the %s backend of %s has no copy function", who,
                      def->name ? def->name : "device", ctx_str(ctx, cs, sizeof cs));
        return NULL;
    }
    return def;
}

/* ------------------------------------------------------------------------- */
/* Chunks and handles                                                        */
/* ------------------------------------------------------------------------- */

/** Engine deleter of a chunk: returns its memory to the pool and frees it. */
static void chunk_delete(void *p) {
    mxk_ndarray_chunk *c = p;
    mxki_storage_free(c->ctx, c->data);
    free(c);
}

/** Drops one handle's reference; the last one schedules the chunk's deletion. */
static void chunk_release(mxk_ndarray_chunk *c) {
    unsigned before = atomic_fetch_sub(&c->refcount, 1);
    MXK_ASSERT(before > 0, "an NDArray chunk is released more often than it was referenced");
    if (before == 1)
        mxki_engine_delete_var(c->var, chunk_delete, c, c->ctx.dev_type, c->ctx.dev_id);
}

/** A new handle on chunk c (reference taken) with the given view. NULL when out of memory. */
static mxk_ndarray *handle_new(mxk_ndarray_chunk *c, uint64_t offset, const mxk_shape *shape,
                               int32_t dtype) {
    mxk_ndarray *a = calloc(1, sizeof *a);
    if (a == NULL)
        return NULL;
    atomic_fetch_add(&c->refcount, 1);
    a->chunk = c;
    a->offset = offset;
    a->shape = *shape;
    a->dtype = dtype;
    return a;
}

/**
 * Validates the device of ctx (a backend is registered, dev_id in range) for `who`;
 * cpu_pinned devices are validated by the storage manager, which chooses their
 * backend (storage.h). Sets the last error and returns its code on failure.
 */
static mxk_status check_ctx(mxk_context ctx, const char *who) {
    char cs[48];
    if (ctx.dev_type == MXK_DEV_CPU_PINNED)
        return ctx.dev_id >= 0 ? MXK_OK
                               : mxk_set_error(MXK_ERR_NOT_FOUND, "%s: device %s does not exist",
                                               who, ctx_str(ctx, cs, sizeof cs));
    const mxk_device_def *def = mxki_registry_device(ctx.dev_type);
    if (def == NULL)
        return mxk_set_error(MXK_ERR_NOT_FOUND,
                             "%s: no device backend is registered for device type %" PRId32 " (%s)",
                             who, ctx.dev_type, mxk_dev_type_name(ctx.dev_type));
    int32_t count = def->device_count ? def->device_count() : 0;
    if (ctx.dev_id < 0 || ctx.dev_id >= count)
        return mxk_set_error(
            MXK_ERR_NOT_FOUND,
            "%s: device %s does not exist: the %s backend has %" PRId32 " device(s)", who,
            ctx_str(ctx, cs, sizeof cs), def->name ? def->name : "device", count);
    return MXK_OK;
}

/**
 * Creates a chunk of `bytes` on ctx and one handle on it. allow_empty: the shape
 * may be ndim 0 (an empty array); otherwise it must have 1..MXK_MAX_NDIM dims >= 0.
 */
static mxk_status ndarray_new(const mxk_shape *shape, int32_t dtype, mxk_context ctx,
                              bool allow_empty, const char *who, mxk_ndarray **out) {
    if (out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: out is NULL", who);
    *out = NULL;
    if (shape == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: shape is NULL", who);
    size_t esize = mxk_dtype_size(dtype);
    if (esize == 0)
        return mxk_set_error(MXK_ERR_TYPE,
                             "%s: unknown dtype code %" PRId32
                             " (valid: 0 float32, 1 float64, 2 float16, 3 uint8, 4 int32, "
                             "5 int8, 6 int64)",
                             who, dtype);
    char sbuf[256];
    if (shape->ndim < 0 || shape->ndim > MXK_MAX_NDIM || (shape->ndim == 0 && !allow_empty))
        return mxk_set_error(MXK_ERR_SHAPE, "%s: ndim %" PRId32 " is invalid (expected 1..%d)", who,
                             shape->ndim, MXK_MAX_NDIM);
    uint64_t elems = 0, bytes = 0;
    if (!shape_elems_checked(shape, esize, &elems, &bytes))
        return mxk_set_error(MXK_ERR_SHAPE,
                             "%s: shape %s is invalid (negative dimension, or more elements of "
                             "%s than fit in 64 bits)",
                             who, mxki_shape_format(shape, sbuf, sizeof sbuf),
                             mxk_dtype_name(dtype));
    mxk_status st = check_ctx(ctx, who);
    if (st != MXK_OK)
        return st;
    mxk_ndarray_chunk *c = calloc(1, sizeof *c);
    if (c == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of host memory", who);
    c->ctx = ctx;
    c->bytes = bytes;
    atomic_init(&c->refcount, 0);
    st = mxki_storage_alloc(ctx, bytes, &c->data);
    if (st != MXK_OK) {
        free(c);
        return st;
    }
    c->var = mxki_engine_new_var();
    if (c->var == NULL) {
        mxki_storage_free(ctx, c->data);
        free(c);
        return mxki_last_error_code() != MXK_OK ? mxki_last_error_code() : MXK_ERR_OUT_OF_MEMORY;
    }
    if (c->data != NULL && mxki_storage_guarded(ctx)) /* MXK_STORAGE_GUARD: checked per write */
        mxki_engine_var_set_guard(c->var, ctx.dev_type, ctx.dev_id, c->data);
    mxk_shape s = *shape;
    for (int32_t i = s.ndim; i < MXK_MAX_NDIM; i++)
        s.dims[i] = 0;
    s.reserved_ = 0;
    mxk_ndarray *a = handle_new(c, 0, &s, dtype);
    if (a == NULL) {
        /* No handle holds the chunk: nothing can have used the variable. */
        mxki_engine_delete_var(c->var, chunk_delete, c, ctx.dev_type, ctx.dev_id);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of host memory", who);
    }
    *out = a;
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* Creation, properties                                                      */
/* ------------------------------------------------------------------------- */

mxk_status mxk_ndarray_create(const mxk_shape *shape, int32_t dtype, mxk_context ctx,
                              mxk_ndarray **out) {
    return ndarray_new(shape, dtype, ctx, false, "mxk_ndarray_create", out);
}

mxk_status mxki_ndarray_create_empty(int32_t dtype, mxk_context ctx, mxk_ndarray **out) {
    mxk_shape s;
    memset(&s, 0, sizeof s);
    return ndarray_new(&s, dtype, ctx, true, "mxki_ndarray_create_empty", out);
}

mxk_ndarray *mxki_ndarray_retain_view(const mxk_ndarray *a) {
    if (a == NULL) {
        mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxki_ndarray_retain_view: array is NULL");
        return NULL;
    }
    mxk_ndarray *v = handle_new(a->chunk, a->offset, &a->shape, a->dtype);
    if (v == NULL)
        mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "mxki_ndarray_retain_view: out of host memory");
    return v;
}

void mxk_ndarray_free(mxk_ndarray *arr) {
    if (arr == NULL)
        return;
    chunk_release(arr->chunk);
    free(arr);
}

mxk_shape mxk_ndarray_shape(const mxk_ndarray *arr) {
    return arr->shape;
}

int32_t mxk_ndarray_dtype(const mxk_ndarray *arr) {
    return arr->dtype;
}

mxk_context mxk_ndarray_context(const mxk_ndarray *arr) {
    return arr->chunk->ctx;
}

uint64_t mxk_ndarray_size(const mxk_ndarray *arr) {
    uint64_t n = 0;
    return shape_elems_checked(&arr->shape, 0, &n, NULL) ? n : 0;
}

uint64_t mxki_ndarray_bytes(const mxk_ndarray *a) {
    return mxk_ndarray_size(a) * mxk_dtype_size(a->dtype);
}

void mxki_ndarray_to_tensor(const mxk_ndarray *a, mxk_tensor *t) {
    memset(t, 0, sizeof *t);
    t->struct_size = (uint32_t)sizeof *t;
    t->dtype = a->dtype;
    t->data = mxk_ndarray_ptr(a);
    t->shape = a->shape;
    t->dev_type = a->chunk->ctx.dev_type;
    t->dev_id = a->chunk->ctx.dev_id;
}

/* ------------------------------------------------------------------------- */
/* Waits                                                                     */
/* ------------------------------------------------------------------------- */

mxk_status mxk_ndarray_wait_to_read(mxk_ndarray *arr) {
    if (arr == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_ndarray_wait_to_read: arr is NULL");
    return mxki_engine_wait_var(arr->chunk->var);
}

/** The empty write pushed by wait_to_write (upstream's WaitToWrite pushes the same). */
static mxk_status nd_noop_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    return MXK_OK;
}

mxk_status mxk_ndarray_wait_to_write(mxk_ndarray *arr) {
    if (arr == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_ndarray_wait_to_write: arr is NULL");
    int32_t dt, di;
    exec_dev(arr->chunk->ctx, &dt, &di);
    mxk_engine_var *v = arr->chunk->var;
    mxk_status st = mxki_engine_push_sync(nd_noop_fn, NULL, NULL, dt, di, NULL, 0, &v, 1,
                                          MXK_ENGINE_PROP_NORMAL, 0, "ndarray_wait_to_write");
    if (st != MXK_OK)
        return st;
    return mxki_engine_wait_var(v);
}

/* ------------------------------------------------------------------------- */
/* Copies                                                                    */
/* ------------------------------------------------------------------------- */

/** Argument of a pushed copy (owned by the engine; freed by nd_copy_free). */
typedef struct nd_copy {
    mxk_context src_ctx, dst_ctx;
    const void *src; /**< first source element (host or device memory) */
    void *dst;       /**< first destination element */
    int32_t src_dtype, dst_dtype;
    uint64_t count; /**< elements */
    bool bounce;    /**< same-type device copy of overlapping ranges: go through the host */
    void *owned;    /**< staging buffer of copy_from_host (freed with the argument) */
} nd_copy;

/** Frees a copy argument and its staging buffer. */
static void nd_copy_free(void *p) {
    nd_copy *a = p;
    free(a->owned);
    free(a);
}

/** Brings `bytes` of the source to host memory: returns a host pointer (*tmp owns it if set). */
static mxk_status copy_src_to_host(const nd_copy *a, uint64_t bytes, const mxk_run_ctx *rctx,
                                   const void **host, void **tmp, mxk_error_sink *err) {
    *tmp = NULL;
    if (is_host_dev(a->src_ctx.dev_type)) {
        *host = a->src;
        return MXK_OK;
    }
    const mxk_device_def *def = mxki_registry_device(a->src_ctx.dev_type);
    void *buf = malloc((size_t)bytes);
    if (buf == NULL)
        return mxki_sink_set(err, MXK_ERR_OUT_OF_MEMORY,
                             "copy: out of host memory for a %" PRIu64 "-byte bounce buffer",
                             bytes);
    mxk_status st = backend_copy(def, MXK_COPY_DEVICE_TO_HOST, buf, 0, a->src, a->src_ctx.dev_id,
                                 bytes, rctx, true, err);
    if (st != MXK_OK) {
        free(buf);
        return st;
    }
    *host = buf;
    *tmp = buf;
    return MXK_OK;
}

/**
 * Writes `bytes` of host memory to the destination; `host_waits`: `host` is a buffer
 * the caller frees on return, so the copy must be complete then.
 */
static mxk_status copy_host_to_dst(const nd_copy *a, const void *host, uint64_t bytes,
                                   const mxk_run_ctx *rctx, bool host_waits, mxk_error_sink *err) {
    if (is_host_dev(a->dst_ctx.dev_type)) {
        if (host != a->dst)
            memmove(a->dst, host, (size_t)bytes);
        return MXK_OK;
    }
    const mxk_device_def *def = mxki_registry_device(a->dst_ctx.dev_type);
    return backend_copy(def, MXK_COPY_HOST_TO_DEVICE, a->dst, a->dst_ctx.dev_id, host, 0, bytes,
                        rctx, host_waits, err);
}

/** Engine function of every copy (copy_to, copy_from_host). */
static mxk_status nd_copy_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    const nd_copy *a = arg;
    if (a->count == 0)
        return MXK_OK;
    bool src_host = is_host_dev(a->src_ctx.dev_type), dst_host = is_host_dev(a->dst_ctx.dev_type);
    uint64_t sbytes = a->count * mxk_dtype_size(a->src_dtype);
    if (a->src_dtype == a->dst_dtype && !a->bounce) {
        if (src_host || dst_host || a->src_ctx.dev_type != a->dst_ctx.dev_type) {
            if (src_host && dst_host) {
                memmove(a->dst, a->src, (size_t)sbytes);
                return MXK_OK;
            }
            if (src_host)
                return copy_host_to_dst(a, a->src, sbytes, rctx, false, err);
            if (dst_host) {
                const mxk_device_def *def = mxki_registry_device(a->src_ctx.dev_type);
                return backend_copy(def, MXK_COPY_DEVICE_TO_HOST, a->dst, 0, a->src,
                                    a->src_ctx.dev_id, sbytes, rctx, false, err);
            }
            /* Two device types: bounce through the host. */
        } else {
            const mxk_device_def *def = mxki_registry_device(a->dst_ctx.dev_type);
            return backend_copy(def, MXK_COPY_DEVICE_TO_DEVICE, a->dst, a->dst_ctx.dev_id, a->src,
                                a->src_ctx.dev_id, sbytes, rctx, false, err);
        }
    }
    /* General path: source to host, convert on the host if needed, host to destination. */
    const void *hsrc = NULL;
    void *tmp_src = NULL, *tmp_dst = NULL;
    mxk_status st = copy_src_to_host(a, sbytes, rctx, &hsrc, &tmp_src, err);
    if (st != MXK_OK)
        return st;
    const void *hout = hsrc;
    uint64_t dbytes = a->count * mxk_dtype_size(a->dst_dtype);
    if (a->src_dtype != a->dst_dtype) {
        if (dst_host) {
            mxki_dtype_convert(a->dst, a->dst_dtype, hsrc, a->src_dtype, a->count);
            free(tmp_src);
            return MXK_OK;
        }
        tmp_dst = malloc((size_t)dbytes);
        if (tmp_dst == NULL) {
            free(tmp_src);
            return mxki_sink_set(err, MXK_ERR_OUT_OF_MEMORY,
                                 "copy: out of host memory for a %" PRIu64 "-byte buffer", dbytes);
        }
        mxki_dtype_convert(tmp_dst, a->dst_dtype, hsrc, a->src_dtype, a->count);
        hout = tmp_dst;
    }
    st = copy_host_to_dst(a, hout, dbytes, rctx, true, err);
    free(tmp_src);
    free(tmp_dst);
    return st;
}

/**
 * Pushes a copy writing `write_var` and reading `read_var` (may be NULL or equal).
 * Runs on the device side of the copy (the destination's when both are devices),
 * as a COPY function when a device is involved. Takes ownership of `a`.
 */
static mxk_status push_copy(nd_copy *a, mxk_engine_var *read_var, mxk_engine_var *write_var,
                            const char *name) {
    int32_t dt, di;
    uint32_t props = MXK_ENGINE_PROP_NORMAL;
    if (!is_host_dev(a->dst_ctx.dev_type)) {
        exec_dev(a->dst_ctx, &dt, &di);
        props = MXK_ENGINE_PROP_COPY;
    } else if (!is_host_dev(a->src_ctx.dev_type)) {
        exec_dev(a->src_ctx, &dt, &di);
        props = MXK_ENGINE_PROP_COPY;
    } else {
        exec_dev(a->dst_ctx, &dt, &di);
    }
    mxk_engine_var *rv[1] = {read_var};
    return mxki_engine_push_sync(nd_copy_fn, a, nd_copy_free, dt, di, rv, read_var ? 1 : 0,
                                 &write_var, 1, props, 0, name);
}

/** Checks that a host buffer of `bytes` matches the array (last error set otherwise). */
static mxk_status check_host_bytes(const mxk_ndarray *arr, const void *buf, uint64_t bytes,
                                   const char *who, const char *what) {
    uint64_t need = mxki_ndarray_bytes(arr);
    if (bytes != need) {
        char sbuf[256];
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "%s: %s has %" PRIu64 " bytes but the array of shape %s and dtype "
                             "%s needs %" PRIu64,
                             who, what, bytes, mxki_shape_format(&arr->shape, sbuf, sizeof sbuf),
                             mxk_dtype_name(arr->dtype), need);
    }
    if (buf == NULL && bytes > 0)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, what);
    return MXK_OK;
}

mxk_status mxk_ndarray_copy_from_host(mxk_ndarray *arr, const void *src, uint64_t bytes) {
    const char *who = "mxk_ndarray_copy_from_host";
    if (arr == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: arr is NULL", who);
    mxk_status st = check_host_bytes(arr, src, bytes, who, "the source buffer");
    if (st != MXK_OK || bytes == 0)
        return st;
    mxk_context ctx = arr->chunk->ctx;
    if (!is_host_dev(ctx.dev_type) && copy_backend(ctx, who) == NULL)
        return mxki_last_error_code();
    nd_copy *a = calloc(1, sizeof *a);
    void *stage = malloc((size_t)bytes);
    if (a == NULL || stage == NULL) {
        free(a);
        free(stage);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY,
                             "%s: out of host memory staging %" PRIu64 " bytes", who, bytes);
    }
    memcpy(stage, src, (size_t)bytes);
    a->src_ctx = (mxk_context){MXK_DEV_CPU, 0};
    a->dst_ctx = ctx;
    a->src = stage;
    a->dst = mxk_ndarray_ptr(arr);
    a->src_dtype = a->dst_dtype = arr->dtype;
    a->count = mxk_ndarray_size(arr);
    a->owned = stage;
    return push_copy(a, NULL, arr->chunk->var, "ndarray_copy_from_host");
}

mxk_status mxk_ndarray_copy_to_host(mxk_ndarray *arr, void *dst, uint64_t bytes) {
    const char *who = "mxk_ndarray_copy_to_host";
    if (arr == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: arr is NULL", who);
    mxk_status st = check_host_bytes(arr, dst, bytes, who, "the destination buffer");
    if (st != MXK_OK)
        return st;
    st = mxki_engine_wait_var(arr->chunk->var);
    if (st != MXK_OK || bytes == 0)
        return st;
    mxk_context ctx = arr->chunk->ctx;
    if (is_host_dev(ctx.dev_type)) {
        memcpy(dst, mxk_ndarray_ptr(arr), (size_t)bytes);
        return MXK_OK;
    }
    const mxk_device_def *def = copy_backend(ctx, who);
    if (def == NULL)
        return mxki_last_error_code();
    mxk_error_sink err;
    mxki_error_sink_clear(&err);
    st = backend_copy(def, MXK_COPY_DEVICE_TO_HOST, dst, 0, mxk_ndarray_ptr(arr), ctx.dev_id, bytes,
                      NULL, true, &err);
    if (st != MXK_OK) {
        char cs[48];
        return mxki_set_error_from_sink(&err, "%s: copy from %s failed: ", who,
                                        ctx_str(ctx, cs, sizeof cs));
    }
    return MXK_OK;
}

mxk_status mxk_ndarray_copy_to(mxk_ndarray *src, mxk_ndarray *dst) {
    const char *who = "mxk_ndarray_copy_to";
    if (src == NULL || dst == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                             src == NULL ? "src" : "dst");
    if (!mxki_shape_equal(&src->shape, &dst->shape)) {
        char s1[256], s2[256];
        return mxk_set_error(MXK_ERR_SHAPE, "%s: shapes differ: source %s, destination %s", who,
                             mxki_shape_format(&src->shape, s1, sizeof s1),
                             mxki_shape_format(&dst->shape, s2, sizeof s2));
    }
    uint64_t count = mxk_ndarray_size(src);
    if (count == 0)
        return MXK_OK;
    mxk_context sc = src->chunk->ctx, dc = dst->chunk->ctx;
    bool same_chunk = src->chunk == dst->chunk;
    if (same_chunk && src->offset == dst->offset && src->dtype == dst->dtype)
        return MXK_OK; /* copying an array onto itself */
    if (!is_host_dev(sc.dev_type) && copy_backend(sc, who) == NULL)
        return mxki_last_error_code();
    if (!is_host_dev(dc.dev_type) && copy_backend(dc, who) == NULL)
        return mxki_last_error_code();
    nd_copy *a = calloc(1, sizeof *a);
    if (a == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of host memory", who);
    a->src_ctx = sc;
    a->dst_ctx = dc;
    a->src = mxk_ndarray_ptr(src);
    a->dst = mxk_ndarray_ptr(dst);
    a->src_dtype = src->dtype;
    a->dst_dtype = dst->dtype;
    a->count = count;
    if (same_chunk && !is_host_dev(sc.dev_type)) {
        uint64_t sb = count * mxk_dtype_size(src->dtype), db = count * mxk_dtype_size(dst->dtype);
        a->bounce = src->offset < dst->offset + db && dst->offset < src->offset + sb;
    }
    return push_copy(a, src->chunk->var, dst->chunk->var, "ndarray_copy_to");
}

/* ------------------------------------------------------------------------- */
/* Fill                                                                      */
/* ------------------------------------------------------------------------- */

/** Argument of a pushed fill. */
typedef struct nd_fill {
    mxk_context ctx;
    void *ptr;
    int32_t dtype;
    uint64_t count;
    double value;
} nd_fill;

/** Engine function of fill: the backend's fill, or a host fill when it has none. */
static mxk_status nd_fill_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    const nd_fill *a = arg;
    const mxk_device_def *def = mxki_registry_device(a->ctx.dev_type);
    if (def != NULL && def->fill != NULL) {
        void *stream = stream_for(rctx, def, a->ctx.dev_id);
        return def->fill(a->ctx.dev_id, a->ptr, a->dtype, a->count, a->value, stream, err);
    }
    mxki_dtype_fill_host(a->ptr, a->dtype, a->count, a->value);
    return MXK_OK;
}

mxk_status mxk_ndarray_fill(mxk_ndarray *arr, double value) {
    const char *who = "mxk_ndarray_fill";
    if (arr == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: arr is NULL", who);
    uint64_t count = mxk_ndarray_size(arr);
    if (count == 0)
        return MXK_OK;
    mxk_context ctx = arr->chunk->ctx;
    const mxk_device_def *def = mxki_registry_device(ctx.dev_type);
    if (!is_host_dev(ctx.dev_type) && (def == NULL || def->fill == NULL)) {
        char cs[48];
        return mxk_set_error(MXK_ERR_UNSUPPORTED, "%s: the backend of %s has no fill function", who,
                             ctx_str(ctx, cs, sizeof cs));
    }
    nd_fill *a = malloc(sizeof *a);
    if (a == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of host memory", who);
    a->ctx = ctx;
    a->ptr = mxk_ndarray_ptr(arr);
    a->dtype = arr->dtype;
    a->count = count;
    a->value = value;
    int32_t dt, di;
    exec_dev(ctx, &dt, &di);
    mxk_engine_var *v = arr->chunk->var;
    return mxki_engine_push_sync(nd_fill_fn, a, free, dt, di, NULL, 0, &v, 1,
                                 MXK_ENGINE_PROP_NORMAL, 0, "ndarray_fill");
}

mxk_status mxk_ndarray_full(const mxk_shape *shape, int32_t dtype, mxk_context ctx, double value,
                            mxk_ndarray **out) {
    mxk_ndarray *a = NULL;
    mxk_status st = ndarray_new(shape, dtype, ctx, false, "mxk_ndarray_full", &a);
    if (st != MXK_OK)
        return st;
    st = mxk_ndarray_fill(a, value);
    if (st != MXK_OK) {
        mxk_ndarray_free(a);
        return st;
    }
    *out = a;
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* Host pointer                                                              */
/* ------------------------------------------------------------------------- */

mxk_status mxk_ndarray_data(mxk_ndarray *arr, void **data) {
    const char *who = "mxk_ndarray_data";
    if (arr == NULL || data == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                             arr == NULL ? "arr" : "data");
    *data = NULL;
    mxk_context ctx = arr->chunk->ctx;
    if (!is_host_dev(ctx.dev_type)) {
        char cs[48];
        return mxk_set_error(MXK_ERR_UNSUPPORTED,
                             "%s: the array is on %s; only CPU arrays have a host pointer (use "
                             "mxk_ndarray_copy_to_host)",
                             who, ctx_str(ctx, cs, sizeof cs));
    }
    mxk_status st = mxki_engine_wait_var(arr->chunk->var);
    if (st != MXK_OK)
        return st;
    *data = mxk_ndarray_ptr(arr);
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* Views                                                                     */
/* ------------------------------------------------------------------------- */

mxk_status mxk_ndarray_slice(mxk_ndarray *arr, int64_t begin, int64_t end, mxk_ndarray **out) {
    const char *who = "mxk_ndarray_slice";
    if (out != NULL)
        *out = NULL;
    if (arr == NULL || out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                             arr == NULL ? "arr" : "out");
    char sbuf[256];
    mxki_shape_format(&arr->shape, sbuf, sizeof sbuf);
    if (arr->shape.ndim < 1)
        return mxk_set_error(MXK_ERR_SHAPE, "%s: cannot slice an array of unknown shape %s", who,
                             sbuf);
    int64_t rows = arr->shape.dims[0];
    if (begin > end)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "%s: invalid range [%" PRId64 ", %" PRId64
                             "): begin > end (array shape %s)",
                             who, begin, end, sbuf);
    if (begin < 0 || end > rows)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "%s: range [%" PRId64 ", %" PRId64
                             ") is out of bounds for shape %s (axis 0 has %" PRId64 " rows)",
                             who, begin, end, sbuf, rows);
    uint64_t row_elems = 1;
    for (int32_t i = 1; i < arr->shape.ndim; i++)
        row_elems *= (uint64_t)arr->shape.dims[i]; /* fits: the whole array's size did */
    mxk_shape s = arr->shape;
    s.dims[0] = end - begin;
    uint64_t offset = arr->offset + (uint64_t)begin * row_elems * mxk_dtype_size(arr->dtype);
    mxk_ndarray *v = handle_new(arr->chunk, offset, &s, arr->dtype);
    if (v == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of host memory", who);
    *out = v;
    return MXK_OK;
}

mxk_status mxk_ndarray_reshape(mxk_ndarray *arr, const mxk_shape *shape, mxk_ndarray **out) {
    const char *who = "mxk_ndarray_reshape";
    if (out != NULL)
        *out = NULL;
    if (arr == NULL || shape == NULL || out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                             arr == NULL     ? "arr"
                             : shape == NULL ? "shape"
                                             : "out");
    char s1[256], s2[256];
    mxki_shape_format(&arr->shape, s1, sizeof s1);
    if (shape->ndim < 1 || shape->ndim > MXK_MAX_NDIM)
        return mxk_set_error(MXK_ERR_SHAPE,
                             "%s: target ndim %" PRId32 " is invalid (expected 1..%d)", who,
                             shape->ndim, MXK_MAX_NDIM);
    mxki_shape_format(shape, s2, sizeof s2);
    uint64_t n_old = mxk_ndarray_size(arr), n_new = 0;
    bool ok = shape_elems_checked(shape, 0, &n_new, NULL);
    if (arr->shape.ndim < 1 || !ok || n_new != n_old) {
        char n2[32] = "an invalid number of";
        if (ok)
            snprintf(n2, sizeof n2, "%" PRIu64, n_new);
        return mxk_set_error(MXK_ERR_SHAPE,
                             "%s: cannot reshape an array of shape %s (%" PRIu64
                             " elements) to %s (%s elements)",
                             who, s1, n_old, s2, n2);
    }
    mxk_shape s = *shape;
    for (int32_t i = s.ndim; i < MXK_MAX_NDIM; i++)
        s.dims[i] = 0;
    s.reserved_ = 0;
    mxk_ndarray *v = handle_new(arr->chunk, arr->offset, &s, arr->dtype);
    if (v == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of host memory", who);
    *out = v;
    return MXK_OK;
}
