/*
 * mxk SDK: shape helpers for shape inference and kernels.
 *
 * Header-only, depends on abi/ and mxk_sdk_host.h. Conventions (abi/mxk_abi_base.h,
 * MXNet's legacy shape semantics): ndim == 0 is an unknown shape, a dim of 0 is
 * an unknown dimension; dims past ndim are 0. Messages format shapes as
 * "(a,b,c)", one-dimensional shapes as "(a,)" and the unknown shape as "()".
 */
#ifndef MXK_SDK_SHAPE_H
#define MXK_SDK_SHAPE_H

#include <stdio.h>
#include <string.h>

#include "mxk_sdk_dtype.h"
#include "mxk_sdk_host.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Room for a formatted shape: "(" + 8 dims of up to 20 chars + commas + ")". */
#define MXK_SDK_SHAPE_STR_MAX 200

/**
 * Largest element count, dimension or intermediate size that shape inference
 * accepts: 2^60, so that a count times the widest dtype (8 bytes) still fits
 * int64_t and a 64-bit size_t. Larger sizes are refused as MXK_ERR_SHAPE, never
 * computed with signed overflow (MXNet checks its index type the same way,
 * src/operator/nn/convolution-inl.h, include/mxnet/tuple.h Size()).
 */
#define MXK_SDK_MAX_ELEMS (INT64_C(1) << 60)

/**
 * Checked shape arithmetic: *out = a * b for 0 <= a, b, when the product is at
 * most MXK_SDK_MAX_ELEMS. Otherwise (or for a negative factor) *out is set to 0
 * and MXK_ERR_SHAPE is returned with "<what>: <a> * <b> is too large (more
 * than 1152921504606846976 elements)", `what` naming the product, e.g.
 * "output height * width". The message goes through the host table
 * (mxk_sdk_error: without one only the status is returned). Thread-safe.
 */
static inline mxk_status mxk_sdk_dim_mul(int64_t a, int64_t b, int64_t *out, const char *what,
                                         mxk_error_sink *err) {
    int64_t r = 0;
    *out = 0;
    if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) || r > MXK_SDK_MAX_ELEMS)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "%s: %lld * %lld is too large (more than %lld "
                             "elements)",
                             what, (long long)a, (long long)b, (long long)MXK_SDK_MAX_ELEMS);
    *out = r;
    return MXK_OK;
}

/**
 * Checked shape arithmetic: *out = a + b for 0 <= a, b, when the sum is at most
 * MXK_SDK_MAX_ELEMS; else *out = 0 and MXK_ERR_SHAPE "<what>: <a> + <b> is too
 * large (more than 1152921504606846976 elements)", as mxk_sdk_dim_mul.
 */
static inline mxk_status mxk_sdk_dim_add(int64_t a, int64_t b, int64_t *out, const char *what,
                                         mxk_error_sink *err) {
    *out = 0;
    if (a < 0 || b < 0 || a > MXK_SDK_MAX_ELEMS - b)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "%s: %lld + %lld is too large (more than %lld "
                             "elements)",
                             what, (long long)a, (long long)b, (long long)MXK_SDK_MAX_ELEMS);
    *out = a + b;
    return MXK_OK;
}

/** A zero-filled shape (unknown). */
static inline mxk_shape mxk_sdk_shape_unknown(void) {
    mxk_shape s;
    memset(&s, 0, sizeof s);
    return s;
}

/** A shape of `ndim` (clamped to [0, MXK_MAX_NDIM]) dims copied from `dims`. */
static inline mxk_shape mxk_sdk_shape_from(const int64_t *dims, int32_t ndim) {
    mxk_shape s = mxk_sdk_shape_unknown();
    if (ndim < 0)
        ndim = 0;
    if (ndim > MXK_MAX_NDIM)
        ndim = MXK_MAX_NDIM;
    s.ndim = ndim;
    for (int32_t i = 0; i < ndim; i++)
        s.dims[i] = dims[i];
    return s;
}

/** The one-dimensional shape (a,). */
static inline mxk_shape mxk_sdk_shape1(int64_t a) {
    return mxk_sdk_shape_from(&a, 1);
}

/** The two-dimensional shape (a,b). */
static inline mxk_shape mxk_sdk_shape2(int64_t a, int64_t b) {
    int64_t d[2] = {a, b};
    return mxk_sdk_shape_from(d, 2);
}

/** 1 when the shape is fully known: ndim > 0 and every dim > 0. */
static inline int mxk_sdk_shape_is_known(const mxk_shape *s) {
    if (s->ndim <= 0 || s->ndim > MXK_MAX_NDIM)
        return 0;
    for (int32_t i = 0; i < s->ndim; i++)
        if (s->dims[i] <= 0)
            return 0;
    return 1;
}

/**
 * Number of elements: the product of the dims. 0 when the shape or a dim is
 * unknown (or negative); UINT64_MAX when the product overflows 64 bits.
 */
static inline uint64_t mxk_sdk_shape_count(const mxk_shape *s) {
    if (s->ndim <= 0 || s->ndim > MXK_MAX_NDIM)
        return 0;
    uint64_t n = 1;
    for (int32_t i = 0; i < s->ndim; i++) {
        if (s->dims[i] <= 0)
            return 0;
        if (__builtin_mul_overflow(n, (uint64_t)s->dims[i], &n))
            return UINT64_MAX;
    }
    return n;
}

/** Product of dims [begin, end) (clamped to ndim); 1 for an empty range, 0 if one is unknown. */
static inline uint64_t mxk_sdk_shape_prod(const mxk_shape *s, int32_t begin, int32_t end) {
    uint64_t n = 1;
    if (end > s->ndim)
        end = s->ndim;
    for (int32_t i = begin < 0 ? 0 : begin; i < end; i++) {
        if (s->dims[i] <= 0)
            return 0;
        if (__builtin_mul_overflow(n, (uint64_t)s->dims[i], &n))
            return UINT64_MAX;
    }
    return n;
}

/** 1 when both shapes have the same ndim and the same dims (unknowns compare as values). */
static inline int mxk_sdk_shape_equal(const mxk_shape *a, const mxk_shape *b) {
    if (a->ndim != b->ndim)
        return 0;
    for (int32_t i = 0; i < a->ndim && i < MXK_MAX_NDIM; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

/**
 * Formats `s` into buf as "(a,b,c)" ("(a,)" for one dim, "()" for ndim 0) and
 * returns buf. Dims are printed as stored (0 = unknown). Truncates to `len`.
 */
static inline const char *mxk_sdk_shape_format(const mxk_shape *s, char *buf, size_t len) {
    size_t pos = 0;
    int32_t nd = s->ndim < 0 ? 0 : (s->ndim > MXK_MAX_NDIM ? MXK_MAX_NDIM : s->ndim);
    if (len == 0)
        return buf;
    buf[0] = '\0';
    int w = snprintf(buf, len, "(");
    pos = w > 0 ? (size_t)w : 0;
    for (int32_t i = 0; i < nd && pos < len; i++) {
        w = snprintf(buf + pos, len - pos, i == 0 ? "%lld" : ",%lld", (long long)s->dims[i]);
        if (w > 0)
            pos += (size_t)w;
    }
    if (pos < len)
        snprintf(buf + pos, len - pos, nd == 1 ? ",)" : ")");
    return buf;
}

/**
 * Checks that the known dims of `s` (unknown 0 dims skipped) multiply to at most
 * MXK_SDK_MAX_ELEMS elements. Otherwise MXK_ERR_SHAPE "<what>: shape <s> has too
 * many elements (more than 1152921504606846976)". Thread-safe.
 */
static inline mxk_status mxk_sdk_shape_check_count(const mxk_shape *s, const char *what,
                                                   mxk_error_sink *err) {
    int64_t n = 1;
    int32_t nd = s->ndim < 0 ? 0 : (s->ndim > MXK_MAX_NDIM ? MXK_MAX_NDIM : s->ndim);
    for (int32_t i = 0; i < nd; i++) {
        if (s->dims[i] <= 0)
            continue;
        if (__builtin_mul_overflow(n, s->dims[i], &n) || n > MXK_SDK_MAX_ELEMS) {
            char b[MXK_SDK_SHAPE_STR_MAX];
            return mxk_sdk_error(
                err, MXK_ERR_SHAPE, "%s: shape %s has too many elements (more than %lld)", what,
                mxk_sdk_shape_format(s, b, sizeof b), (long long)MXK_SDK_MAX_ELEMS);
        }
    }
    return MXK_OK;
}

/**
 * mxk_sdk_shape_check_count on each of `n` shapes, the start of a shape
 * inference that computes with input dims: past it every known dim and every
 * product of the dims of one shape is at most MXK_SDK_MAX_ELEMS. `kind` and the
 * NULL-terminated `names` (may be NULL) name the slot, as "argument 'data':
 * shape (...) has too many elements (more than 1152921504606846976)".
 */
static inline mxk_status mxk_sdk_shapes_check_count(const mxk_shape *shapes, uint32_t n,
                                                    const char *kind, const char *const *names,
                                                    mxk_error_sink *err) {
    char what[160];
    for (uint32_t i = 0; i < n; i++)
        MXK_SDK_CHECK(mxk_sdk_shape_check_count(
            &shapes[i], mxk_sdk_slot_name(what, sizeof what, kind, names, i), err));
    return MXK_OK;
}

/**
 * Merges two partial shapes: unknown shape (ndim 0) yields the other one;
 * otherwise ndims must agree and each dim pair must be equal or have an unknown
 * (0) side, which takes the other's value. Returns 1 and writes the merge into
 * `out` (may be NULL, may alias a or b) when compatible, 0 otherwise.
 */
static inline int mxk_sdk_shape_merge(const mxk_shape *a, const mxk_shape *b, mxk_shape *out) {
    mxk_shape m;
    if (a->ndim == 0) {
        m = *b;
    } else if (b->ndim == 0) {
        m = *a;
    } else {
        if (a->ndim != b->ndim || a->ndim < 0 || a->ndim > MXK_MAX_NDIM)
            return 0;
        m = *a;
        for (int32_t i = 0; i < a->ndim; i++) {
            if (a->dims[i] == 0)
                m.dims[i] = b->dims[i];
            else if (b->dims[i] != 0 && b->dims[i] != a->dims[i])
                return 0;
        }
    }
    if (out != NULL)
        *out = m;
    return 1;
}

/**
 * Shape inference for one slot (MXNet's SHAPE_ASSIGN_CHECK): merges `expected`
 * into `*slot` (see mxk_sdk_shape_merge): fills an unknown slot, fills its unknown
 * dims, leaves it alone when `expected` is unknown. On a mismatch returns
 * MXK_ERR_SHAPE with "<what>: expected (128,784), got (128,100)", where `what`
 * describes the slot, e.g. "argument 'weight'"; *slot is then unchanged. An
 * `expected` shape over MXK_SDK_MAX_ELEMS elements is refused as
 * mxk_sdk_shape_check_count does, so an operator whose dims come from its
 * attributes (FullyConnected's num_hidden) cannot hand out a shape no size fits.
 */
static inline mxk_status mxk_sdk_shape_assign(mxk_shape *slot, const mxk_shape *expected,
                                              const char *what, mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_sdk_shape_check_count(expected, what, err));
    if (!mxk_sdk_shape_merge(slot, expected, slot)) {
        char e[MXK_SDK_SHAPE_STR_MAX], g[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: expected %s, got %s", what,
                             mxk_sdk_shape_format(expected, e, sizeof e),
                             mxk_sdk_shape_format(slot, g, sizeof g));
    }
    return MXK_OK;
}

/**
 * mxk_sdk_shape_assign for a named slot: `what` becomes "<kind> '<name>'", e.g.
 * kind "argument", name "weight" gives "argument 'weight': expected ...".
 */
static inline mxk_status mxk_sdk_shape_assign_named(mxk_shape *slot, const mxk_shape *expected,
                                                    const char *kind, const char *name,
                                                    mxk_error_sink *err) {
    char what[160];
    snprintf(what, sizeof what, "%s '%s'", kind, name);
    return mxk_sdk_shape_assign(slot, expected, what, err);
}

/**
 * Shape inference of an element-wise operator: every argument and output has the
 * same shape. All known (partial) shapes are merged, and the merge is written
 * back into every slot. An inconsistent slot is MXK_ERR_SHAPE naming it (names from
 * the NULL-terminated `arg_names` / `out_names`, may be NULL) with the shape
 * merged from the slots before it as "expected". Incomplete results return MXK_OK.
 */
static inline mxk_status mxk_sdk_infer_shape_same(mxk_shape *in_shapes, uint32_t num_in,
                                                  const char *const *arg_names,
                                                  mxk_shape *out_shapes, uint32_t num_out,
                                                  const char *const *out_names,
                                                  mxk_error_sink *err) {
    mxk_shape m = mxk_sdk_shape_unknown();
    char what[160];
    for (uint32_t i = 0; i < num_in + num_out; i++) {
        mxk_shape *s = i < num_in ? &in_shapes[i] : &out_shapes[i - num_in];
        if (!mxk_sdk_shape_merge(&m, s, &m)) {
            char e[MXK_SDK_SHAPE_STR_MAX], g[MXK_SDK_SHAPE_STR_MAX];
            if (i < num_in)
                mxk_sdk_slot_name(what, sizeof what, "argument", arg_names, i);
            else
                mxk_sdk_slot_name(what, sizeof what, "output", out_names, i - num_in);
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: expected %s, got %s", what,
                                 mxk_sdk_shape_format(&m, e, sizeof e),
                                 mxk_sdk_shape_format(s, g, sizeof g));
        }
    }
    for (uint32_t i = 0; i < num_in; i++)
        in_shapes[i] = m;
    for (uint32_t i = 0; i < num_out; i++)
        out_shapes[i] = m;
    return MXK_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* MXK_SDK_SHAPE_H */
