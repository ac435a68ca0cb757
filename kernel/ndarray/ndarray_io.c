/*
 * NDArray list files: mxk_ndarray_save / mxk_ndarray_load / mxk_ndarray_list_free,
 * and the in-memory forms mxki_ndarray_save_buffer / mxk_ndarray_load_buffer.
 * The format is described in ndarray_io.h (MXNet's .params; upstream
 * src/ndarray/ndarray.cc NDArray::Save/Load/LegacyLoad).
 *
 * Writing: V2 dense records, the array's real context (as MXNet writes it),
 * little-endian integers and data whatever the host byte order. A list holding a
 * 0-d scalar (loaded from a V3 record) is written as mx.npx.save writes it: V3
 * records for every array (mx.npx.load refuses V2 records and mx.nd.load V3 ones,
 * upstream NDArray::Load), the scalar with ndim 0, an empty array with ndim -1.
 * Every array's pending writes are waited for (and their errors reported) before
 * anything is written; the file is written atomically (mxk_file_writer, mxk.h
 * "Files"), so a failed or killed save leaves the previous file as it was.
 *
 * Reading (a file is parsed as it is read, so every size in it is checked
 * against the file's size before anything is allocated; only a regular file is
 * read, see mxki_file_open_read):
 * - V2, V3 (dense only), V1 and legacy records; any context in the file loads on
 *   cpu(0) (MXNet copies to the saved context; mxk has no GPU in the kernel and
 *   leaves the move to the caller); dtype codes 0..6.
 * - Empty records (ndim 0; ndim -1, MXNet's unknown shape, in V1/V2/V3; V3 shapes
 *   with an unknown (-1) dim, which upstream also loads as empty) load as an
 *   empty array (ndim 0, float32, no memory).
 * - A V3 record with ndim 0 is a NumPy 0-d array (shape (), one element): it loads
 *   as shape (1,) marked `scalar` (ndarray.h), since ndim 0 means unknown in mxk.
 * - Every read is bounds-checked and every count is checked against the bytes left
 *   before anything is allocated: a record needs at least 4 bytes, a name 8, so an
 *   absurd count is rejected without allocating. Malformed input gives
 *   MXK_ERR_FORMAT "Invalid NDArray file format: <detail> (<source>)"; valid
 *   records mxk cannot hold (row_sparse/csr storage, ndim 9..32) give
 *   MXK_ERR_UNSUPPORTED. Bytes after the names are an error (upstream
 *   ignores them; a file that does not end where its names end is not one mxk
 *   wrote, or two files run together).
 *
 * Threading: all functions are thread-safe (no shared state).
 */
#include "ndarray_io.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "file_io.h"
#include "ndarray.h"
#include "shape.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define MXK_HOST_BIG_ENDIAN 1
#else
#define MXK_HOST_BIG_ENDIAN 0
#endif

/* ------------------------------------------------------------------------- */
/* Writer                                                                    */
/* ------------------------------------------------------------------------- */

/**
 * An output: an atomic file writer (save) or a growable malloc'd buffer
 * (save_buffer). The first failure sticks in `st` (its error message is set then)
 * and makes later writes no-ops, so callers check once at the end.
 */
typedef struct writer {
    mxk_file_writer *file; /**< file output, or NULL for the buffer */
    uint8_t *buf;          /**< buffer output (owned until handed out) */
    size_t len, cap;
    mxk_status st;
} writer;

/** Records that the buffer cannot grow. */
static void w_oom(writer *w) {
    w->st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "mxki_ndarray_save_buffer: out of host memory");
}

/** Appends n bytes. */
static void w_bytes(writer *w, const void *p, size_t n) {
    if (w->st != MXK_OK || n == 0)
        return;
    if (w->file != NULL) {
        w->st = mxk_file_writer_write(w->file, p, n);
        return;
    }
    if (n > SIZE_MAX - w->len) {
        w_oom(w);
        return;
    }
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n)
            cap = cap > SIZE_MAX / 2 ? w->len + n : cap * 2;
        uint8_t *nb = realloc(w->buf, cap);
        if (nb == NULL) {
            w_oom(w);
            return;
        }
        w->buf = nb;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

/** Appends a little-endian unsigned integer of `size` bytes (4 or 8). */
static void w_le(writer *w, uint64_t v, size_t size) {
    uint8_t b[8];
    for (size_t i = 0; i < size; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    w_bytes(w, b, size);
}

/** Appends a little-endian uint32. */
static void w_u32(writer *w, uint32_t v) {
    w_le(w, v, 4);
}
/** Appends a little-endian int32 (two's complement). */
static void w_i32(writer *w, int32_t v) {
    w_le(w, (uint32_t)v, 4);
}
/** Appends a little-endian uint64. */
static void w_u64(writer *w, uint64_t v) {
    w_le(w, v, 8);
}
/** Appends a little-endian int64 (two's complement). */
static void w_i64(writer *w, int64_t v) {
    w_le(w, (uint64_t)v, 8);
}

/** Appends `count` elements of `esize` bytes in little-endian order. */
static void w_elems(writer *w, const void *p, uint64_t count, size_t esize) {
#if MXK_HOST_BIG_ENDIAN
    uint8_t tmp[4096];
    const uint8_t *s = p;
    size_t per = sizeof tmp / esize;
    while (count > 0) {
        size_t n = count < per ? (size_t)count : per;
        for (size_t i = 0; i < n; i++)
            for (size_t b = 0; b < esize; b++)
                tmp[i * esize + b] = s[i * esize + esize - 1 - b];
        w_bytes(w, tmp, n * esize);
        s += n * esize;
        count -= n;
    }
#else
    w_bytes(w, p, (size_t)(count * esize));
#endif
}

/* ------------------------------------------------------------------------- */
/* Save                                                                      */
/* ------------------------------------------------------------------------- */

/** Checks save arguments and waits for pending writes of every array (errors reported). */
static mxk_status save_prepare(const char *who, uint32_t num, mxk_ndarray *const *arrays,
                               const char *const *names) {
    if (num > 0 && arrays == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: arrays is NULL", who);
    for (uint32_t i = 0; i < num; i++) {
        if (arrays[i] == NULL)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: arrays[%" PRIu32 "] is NULL", who,
                                 i);
        if (names != NULL && names[i] == NULL)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: names[%" PRIu32 "] is NULL", who,
                                 i);
    }
    for (uint32_t i = 0; i < num; i++) {
        mxk_status st = mxk_ndarray_wait_to_read(arrays[i]);
        if (st != MXK_OK)
            return st;
    }
    return MXK_OK;
}

/**
 * Writes one dense record, V3 (NumPy shape semantics) when `v3` is set, else V2.
 * Data of device arrays goes through a host copy.
 */
static mxk_status save_record(writer *w, mxk_ndarray *a, bool v3) {
    mxk_shape s = mxk_ndarray_shape(a);
    w_u32(w, v3 ? MXK_NDARRAY_V3_MAGIC : MXK_NDARRAY_V2_MAGIC);
    w_i32(w, 0); /* dense storage */
    if (s.ndim == 0) {
        w_i32(w, v3 ? -1 : 0); /* empty array: the unknown shape ends the record */
        return MXK_OK;
    }
    int32_t ndim = a->scalar ? 0 : s.ndim; /* a scalar's (1,) is written as () */
    w_i32(w, ndim);
    for (int32_t i = 0; i < ndim; i++)
        w_i64(w, s.dims[i]);
    mxk_context ctx = mxk_ndarray_context(a);
    w_i32(w, ctx.dev_type);
    w_i32(w, ctx.dev_id);
    int32_t dtype = mxk_ndarray_dtype(a);
    w_i32(w, dtype);
    uint64_t count = mxk_ndarray_size(a), bytes = mxki_ndarray_bytes(a);
    if (bytes == 0)
        return MXK_OK;
    if (ctx.dev_type == MXK_DEV_CPU || ctx.dev_type == MXK_DEV_CPU_PINNED) {
        w_elems(w, mxk_ndarray_ptr(a), count, mxk_dtype_size(dtype)); /* waited for above */
        return MXK_OK;
    }
    void *tmp = malloc((size_t)bytes);
    if (tmp == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY,
                             "mxk_ndarray_save: out of host memory for a %" PRIu64
                             "-byte copy of a device array",
                             bytes);
    mxk_status st = mxk_ndarray_copy_to_host(a, tmp, bytes);
    if (st == MXK_OK)
        w_elems(w, tmp, count, mxk_dtype_size(dtype));
    free(tmp);
    return st;
}

/** Writes the whole list (header, records, names); V3 records when an array is a scalar. */
static mxk_status save_all(writer *w, uint32_t num, mxk_ndarray *const *arrays,
                           const char *const *names) {
    bool v3 = false;
    for (uint32_t i = 0; i < num; i++)
        v3 = v3 || arrays[i]->scalar;
    w_u64(w, MXK_NDARRAY_LIST_MAGIC);
    w_u64(w, 0);
    w_u64(w, num);
    for (uint32_t i = 0; i < num; i++) {
        mxk_status st = save_record(w, arrays[i], v3);
        if (st != MXK_OK)
            return st;
    }
    w_u64(w, names ? num : 0);
    for (uint32_t i = 0; names != NULL && i < num; i++) {
        size_t len = strlen(names[i]);
        w_u64(w, len);
        w_bytes(w, names[i], len);
    }
    return MXK_OK;
}

mxk_status mxki_ndarray_save_buffer(uint32_t num, mxk_ndarray *const *arrays,
                                    const char *const *names, uint8_t **out, size_t *out_size) {
    const char *who = "mxki_ndarray_save_buffer";
    if (out == NULL || out_size == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: out is NULL", who);
    *out = NULL;
    *out_size = 0;
    mxk_status st = save_prepare(who, num, arrays, names);
    if (st != MXK_OK)
        return st;
    writer w = {0};
    st = save_all(&w, num, arrays, names);
    if (st == MXK_OK)
        st = w.st;
    if (st != MXK_OK) {
        free(w.buf);
        return st;
    }
    *out = w.buf;
    *out_size = w.len;
    return MXK_OK;
}

mxk_status mxk_ndarray_save(const char *path, uint32_t num, mxk_ndarray *const *arrays,
                            const char *const *names) {
    const char *who = "mxk_ndarray_save";
    if (path == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: path is NULL", who);
    mxk_status st = save_prepare(who, num, arrays, names);
    if (st != MXK_OK)
        return st;
    writer w = {0};
    st = mxk_file_writer_open(path, &w.file);
    if (st != MXK_OK)
        return st;
    st = save_all(&w, num, arrays, names);
    if (st == MXK_OK)
        st = w.st;
    if (st != MXK_OK) {
        mxk_file_writer_abort(w.file); /* the previous file stays */
        return st;
    }
    return mxk_file_writer_commit(w.file);
}

/* ------------------------------------------------------------------------- */
/* Reader                                                                    */
/* ------------------------------------------------------------------------- */

/**
 * A bounds-checked cursor over the input: a memory buffer (fd -1) or a file read
 * as it is parsed (fd, path; size from fstat). `where` names the current item in
 * messages.
 */
typedef struct reader {
    const uint8_t *p; /**< memory input */
    int fd;           /**< file input, or -1 */
    const char *path; /**< the file's path (messages) */
    size_t size, pos;
    const char *source; /**< "file 'x.params'" or "memory buffer" */
    char where[48];     /**< "array 3", "name 1", "header" */
} reader;

/** Bytes left. */
static size_t rd_left(const reader *r) {
    return r->size - r->pos;
}

/** Sets MXK_ERR_FORMAT "Invalid NDArray file format: <where>: <detail> (<source>)". */
static mxk_status __attribute__((format(printf, 2, 3))) rd_fail(reader *r, const char *fmt, ...) {
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return mxk_set_error(MXK_ERR_FORMAT, "Invalid NDArray file format: %s: %s (%s)", r->where,
                         detail, r->source);
}

/** Sets MXK_ERR_UNSUPPORTED for a valid record mxk cannot load. */
static mxk_status __attribute__((format(printf, 2, 3)))
rd_unsupported(reader *r, const char *fmt, ...) {
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return mxk_set_error(MXK_ERR_UNSUPPORTED, "NDArray file: %s: %s (%s)", r->where, detail,
                         r->source);
}

/** Checks that n more bytes exist for `what`. */
static mxk_status rd_need(reader *r, size_t n, const char *what) {
    if (rd_left(r) < n)
        return rd_fail(r, "truncated: %s needs %zu bytes at offset %zu but only %zu remain", what,
                       n, r->pos, rd_left(r));
    return MXK_OK;
}

/** Copies the next n bytes (checked with rd_need before) into dst. */
static mxk_status rd_copy(reader *r, void *dst, size_t n) {
    if (r->fd < 0) {
        memcpy(dst, r->p + r->pos, n);
    } else {
        mxk_status st = mxki_file_read_exact(r->fd, r->path, "NDArray file", dst, n);
        if (st != MXK_OK)
            return st;
    }
    r->pos += n;
    return MXK_OK;
}

/** Reads a little-endian unsigned integer of `size` (4 or 8) bytes. */
static mxk_status rd_le(reader *r, size_t size, const char *what, uint64_t *v) {
    uint8_t b[8];
    mxk_status st = rd_need(r, size, what);
    if (st == MXK_OK)
        st = rd_copy(r, b, size);
    if (st != MXK_OK)
        return st;
    uint64_t x = 0;
    for (size_t i = 0; i < size; i++)
        x |= (uint64_t)b[i] << (8 * i);
    *v = x;
    return MXK_OK;
}

/** Reads a little-endian uint32 (`what` names it in a truncation message). */
static mxk_status rd_u32(reader *r, const char *what, uint32_t *v) {
    uint64_t x = 0;
    mxk_status st = rd_le(r, 4, what, &x);
    *v = (uint32_t)x;
    return st;
}
/** Reads a little-endian int32. */
static mxk_status rd_i32(reader *r, const char *what, int32_t *v) {
    uint64_t x = 0;
    mxk_status st = rd_le(r, 4, what, &x);
    *v = (int32_t)(uint32_t)x;
    return st;
}
/** Reads a little-endian uint64. */
static mxk_status rd_u64(reader *r, const char *what, uint64_t *v) {
    return rd_le(r, 8, what, v);
}
/** Reads a little-endian int64. */
static mxk_status rd_i64(reader *r, const char *what, int64_t *v) {
    uint64_t x = 0;
    mxk_status st = rd_le(r, 8, what, &x);
    *v = (int64_t)x;
    return st;
}

/** Copies `count` little-endian elements of `esize` bytes (checked before) into host memory. */
static mxk_status rd_elems(reader *r, void *dst, uint64_t count, size_t esize) {
    mxk_status st = rd_copy(r, dst, (size_t)(count * esize));
#if MXK_HOST_BIG_ENDIAN
    uint8_t *d = dst;
    for (uint64_t i = 0; st == MXK_OK && i < count; i++)
        for (size_t b = 0; b < esize / 2; b++) {
            uint8_t t = d[i * esize + b];
            d[i * esize + b] = d[i * esize + esize - 1 - b];
            d[i * esize + esize - 1 - b] = t;
        }
#endif
    return st;
}

/* ------------------------------------------------------------------------- */
/* Load                                                                      */
/* ------------------------------------------------------------------------- */

/** Record kinds by their first word. */
typedef enum rec_kind { REC_LEGACY, REC_V1, REC_V2, REC_V3 } rec_kind;

/** Reads a shape of an int32 ndim and int64 dims (V1/V2/V3); ndim is range-checked. */
static mxk_status rd_shape64(reader *r, rec_kind kind, int32_t *ndim, int64_t *dims) {
    size_t at = r->pos;
    mxk_status st = rd_i32(r, "ndim", ndim);
    if (st != MXK_OK)
        return st;
    if (*ndim < -1)
        return rd_fail(r, "ndim %" PRId32 " at offset %zu is negative", *ndim, at);
    if (*ndim > MXK_NDARRAY_FILE_MAX_NDIM)
        return rd_fail(r, "ndim %" PRId32 " at offset %zu exceeds %d", *ndim, at,
                       MXK_NDARRAY_FILE_MAX_NDIM);
    if (*ndim > MXK_MAX_NDIM)
        return rd_unsupported(r, "the array has %" PRId32 " dimensions; mxk supports at most %d",
                              *ndim, MXK_MAX_NDIM);
    for (int32_t i = 0; i < *ndim; i++) {
        at = r->pos;
        st = rd_i64(r, "a dimension", &dims[i]);
        if (st != MXK_OK)
            return st;
        if (dims[i] < 0 && !(kind == REC_V3 && dims[i] == -1))
            return rd_fail(r, "dimension %" PRId32 " is %" PRId64 " at offset %zu", i, dims[i], at);
    }
    return MXK_OK;
}

/** Reads a legacy shape: ndim (already read as the first word) uint32 dims. */
static mxk_status rd_shape_legacy(reader *r, uint32_t ndim, int64_t *dims) {
    if (ndim > MXK_MAX_NDIM)
        return rd_unsupported(
            r, "the legacy record has %" PRIu32 " dimensions; mxk supports at most %d", ndim,
            MXK_MAX_NDIM);
    for (uint32_t i = 0; i < ndim; i++) {
        uint32_t d = 0;
        mxk_status st = rd_u32(r, "a legacy dimension", &d);
        if (st != MXK_OK)
            return st;
        dims[i] = d;
    }
    return MXK_OK;
}

/** Creates the empty array an empty record loads as. */
static mxk_status load_empty(mxk_ndarray **out) {
    return mxki_ndarray_create_empty(MXK_FLOAT32, (mxk_context){MXK_DEV_CPU, 0}, out);
}

/** Parses one record into a new CPU array. */
static mxk_status load_record(reader *r, mxk_ndarray **out) {
    size_t at = r->pos;
    uint32_t magic = 0;
    mxk_status st = rd_u32(r, "the record magic", &magic);
    if (st != MXK_OK)
        return st;
    rec_kind kind;
    switch (magic) {
    case MXK_NDARRAY_V1_MAGIC:
        kind = REC_V1;
        break;
    case MXK_NDARRAY_V2_MAGIC:
        kind = REC_V2;
        break;
    case MXK_NDARRAY_V3_MAGIC:
        kind = REC_V3;
        break;
    default:
        if (magic > MXK_NDARRAY_FILE_MAX_NDIM)
            return rd_fail(r,
                           "first word 0x%08" PRIx32 " at offset %zu is neither a record magic "
                           "(V1 0xF993FAC8, V2 0xF993FAC9, V3 0xF993FACA) nor a legacy ndim "
                           "(at most %d)",
                           magic, at, MXK_NDARRAY_FILE_MAX_NDIM);
        kind = REC_LEGACY;
        break;
    }
    int32_t stype = 0;
    if (kind == REC_V2 || kind == REC_V3) {
        size_t sat = r->pos;
        st = rd_i32(r, "the storage type", &stype);
        if (st != MXK_OK)
            return st;
        if (stype == 1 || stype == 2) {
            if (kind == REC_V3)
                return rd_fail(r,
                               "V3 record with storage type %" PRId32 " at offset %zu (V3 "
                               "records are dense)",
                               stype, sat);
            return rd_unsupported(r,
                                  "%s storage (type %" PRId32 ") is not supported; only "
                                  "dense arrays can be loaded",
                                  stype == 1 ? "row_sparse" : "csr", stype);
        }
        if (stype != 0 && stype != -1)
            return rd_fail(r, "unknown storage type %" PRId32 " at offset %zu", stype, sat);
    }
    int32_t ndim = 0;
    int64_t dims[MXK_NDARRAY_FILE_MAX_NDIM];
    if (kind == REC_LEGACY) {
        ndim = (int32_t)magic;
        st = rd_shape_legacy(r, magic, dims);
    } else {
        st = rd_shape64(r, kind, &ndim, dims);
    }
    if (st != MXK_OK)
        return st;
    bool empty = ndim == 0 || ndim == -1, scalar = kind == REC_V3 && ndim == 0;
    if (scalar) { /* NumPy 0-d: one element, held as shape (1,) */
        ndim = 1;
        dims[0] = 1;
    }
    if (kind == REC_V3) {
        empty = ndim == -1;
        for (int32_t i = 0; i < ndim; i++)
            if (dims[i] == -1)
                empty = true; /* unknown dim: upstream loads an empty array too */
    }
    if (empty)
        return load_empty(out);
    if (stype == -1)
        return rd_fail(r, "undefined storage type -1 with a non-empty shape");
    mxk_shape shape;
    memset(&shape, 0, sizeof shape);
    shape.ndim = ndim;
    uint64_t count = 1;
    for (int32_t i = 0; i < ndim; i++) {
        shape.dims[i] = dims[i];
        uint64_t d = (uint64_t)dims[i];
        if (d != 0 && count > UINT64_MAX / d) {
            char sb[256];
            return rd_fail(r, "shape %s has more elements than fit in 64 bits",
                           mxki_shape_format(&shape, sb, sizeof sb));
        }
        count *= d;
    }
    int32_t dev_type = 0, dev_id = 0, dtype = 0;
    if ((st = rd_i32(r, "the context's device type", &dev_type)) != MXK_OK ||
        (st = rd_i32(r, "the context's device id", &dev_id)) != MXK_OK)
        return st;
    size_t dat = r->pos;
    if ((st = rd_i32(r, "the dtype", &dtype)) != MXK_OK)
        return st;
    size_t esize = mxk_dtype_size(dtype);
    if (esize == 0)
        return rd_fail(r, "unknown dtype code %" PRId32 " at offset %zu (valid: 0..6)", dtype, dat);
    if (count > UINT64_MAX / esize || count * esize > rd_left(r)) {
        char sb[256];
        mxki_shape_format(&shape, sb, sizeof sb);
        if (count > UINT64_MAX / esize)
            return rd_fail(r, "shape %s of %s is larger than 2^64 bytes", sb,
                           mxk_dtype_name(dtype));
        return rd_fail(r,
                       "truncated: the data of shape %s and dtype %s needs %" PRIu64
                       " bytes at offset %zu but only %zu remain",
                       sb, mxk_dtype_name(dtype), count * esize, r->pos, rd_left(r));
    }
    mxk_ndarray *a = NULL;
    st = mxk_ndarray_create(&shape, dtype, (mxk_context){MXK_DEV_CPU, 0}, &a);
    if (st != MXK_OK)
        return st;
    a->scalar = scalar;
    /* A fresh array: no work can be pending on it, so its memory is written directly. */
    if (count > 0 && (st = rd_elems(r, mxk_ndarray_ptr(a), count, esize)) != MXK_OK) {
        mxk_ndarray_free(a);
        return st;
    }
    *out = a;
    return MXK_OK;
}

/** Frees a partially built result. */
static void free_partial(uint64_t n, mxk_ndarray **arrays, uint64_t nn, char **names) {
    for (uint64_t i = 0; arrays != NULL && i < n; i++)
        mxk_ndarray_free(arrays[i]);
    free(arrays);
    for (uint64_t i = 0; names != NULL && i < nn; i++)
        free(names[i]);
    free(names);
}

/** Parses a whole list from `r` into the outputs (already cleared); `who` names the caller. */
static mxk_status load_all(reader r, const char *who, uint32_t *num, mxk_ndarray ***arrays,
                           char ***names) {
    snprintf(r.where, sizeof r.where, "header");
    uint64_t magic = 0, reserved = 0, count = 0;
    mxk_status st = rd_u64(&r, "the list magic", &magic);
    if (st != MXK_OK)
        return st;
    if (magic != MXK_NDARRAY_LIST_MAGIC)
        return rd_fail(&r, "bad magic 0x%" PRIx64 " at offset 0 (expected 0x112)", magic);
    if ((st = rd_u64(&r, "the reserved word", &reserved)) != MXK_OK ||
        (st = rd_u64(&r, "the array count", &count)) != MXK_OK)
        return st;
    if (count > rd_left(&r) / 4 || count > UINT32_MAX)
        return rd_fail(&r,
                       "array count %" PRIu64 " at offset 16 is more than the remaining %zu "
                       "bytes can hold",
                       count, rd_left(&r));
    mxk_ndarray **arr = calloc(count ? (size_t)count : 1, sizeof *arr);
    if (arr == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of host memory", who);
    uint64_t i = 0;
    for (; i < count; i++) {
        snprintf(r.where, sizeof r.where, "array %" PRIu64, i);
        st = load_record(&r, &arr[i]);
        if (st != MXK_OK) {
            free_partial(i, arr, 0, NULL);
            return st;
        }
    }
    snprintf(r.where, sizeof r.where, "names");
    size_t nat = r.pos;
    uint64_t nnames = 0;
    if ((st = rd_u64(&r, "the name count", &nnames)) != MXK_OK) {
        free_partial(count, arr, 0, NULL);
        return st;
    }
    if (nnames != 0 && nnames != count) {
        free_partial(count, arr, 0, NULL);
        return rd_fail(
            &r, "name count %" PRIu64 " at offset %zu does not match the array count %" PRIu64,
            nnames, nat, count);
    }
    char **nm = NULL;
    if (nnames > 0) {
        nm = calloc((size_t)nnames, sizeof *nm);
        if (nm == NULL) {
            free_partial(count, arr, 0, NULL);
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of host memory", who);
        }
    }
    for (uint64_t k = 0; k < nnames; k++) {
        snprintf(r.where, sizeof r.where, "name %" PRIu64, k);
        size_t lat = r.pos;
        uint64_t len = 0;
        st = rd_u64(&r, "the name length", &len);
        if (st == MXK_OK && len > rd_left(&r))
            st = rd_fail(&r, "length %" PRIu64 " at offset %zu exceeds the remaining %zu bytes",
                         len, lat, rd_left(&r));
        if (st == MXK_OK && (nm[k] = malloc((size_t)len + 1)) == NULL)
            st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of host memory", who);
        if (st == MXK_OK && (st = rd_copy(&r, nm[k], (size_t)len)) == MXK_OK)
            nm[k][len] = '\0';
        if (st != MXK_OK) {
            free_partial(count, arr, nnames, nm); /* calloc: names not read are NULL */
            return st;
        }
    }
    if (rd_left(&r) > 0) {
        snprintf(r.where, sizeof r.where, "end");
        free_partial(count, arr, nnames, nm);
        return rd_fail(&r, "%zu bytes after the last name at offset %zu (the list ends there)",
                       rd_left(&r), r.pos);
    }
    *num = (uint32_t)count;
    if (count == 0) {
        free(arr);
        arr = NULL;
    }
    *arrays = arr;
    *names = nm;
    return MXK_OK;
}

mxk_status mxk_ndarray_load_buffer(const void *data, size_t size, const char *source, uint32_t *num,
                                   mxk_ndarray ***arrays, char ***names) {
    const char *who = "mxk_ndarray_load_buffer";
    if (num == NULL || arrays == NULL || names == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: an output pointer is NULL", who);
    *num = 0;
    *arrays = NULL;
    *names = NULL;
    if (data == NULL && size > 0)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: data is NULL", who);
    reader r = {.p = data, .fd = -1, .size = size, .source = source ? source : "memory buffer"};
    return load_all(r, who, num, arrays, names);
}

mxk_status mxk_ndarray_load(const char *path, uint32_t *num, mxk_ndarray ***arrays, char ***names) {
    const char *who = "mxk_ndarray_load";
    if (num == NULL || arrays == NULL || names == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: an output pointer is NULL", who);
    *num = 0;
    *arrays = NULL;
    *names = NULL;
    if (path == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: path is NULL", who);
    int fd;
    uint64_t size;
    mxk_status st = mxki_file_open_read(path, "NDArray file", SIZE_MAX, &fd, &size);
    if (st != MXK_OK)
        return st;
    size_t slen = strlen(path) + 8;
    char *source = malloc(slen);
    if (source == NULL) {
        close(fd);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of host memory", who);
    }
    snprintf(source, slen, "file '%s'", path);
    reader r = {.fd = fd, .path = path, .size = (size_t)size, .source = source};
    st = load_all(r, who, num, arrays, names);
    free(source);
    close(fd);
    return st;
}

void mxk_ndarray_list_free(uint32_t num, mxk_ndarray **arrays, char **names) {
    free_partial(num, arrays, names ? num : 0, names);
}
