/*
 * cpu-blas plugin: Reshape's shape rules (see reshape_infer.h). Pure functions
 * of their arguments; thread-safe.
 */
#include "reshape_infer.h"

#include <stdio.h>
#include <string.h>

/** Formats dims as "(a,b)" ("(a,)" for one) into buf. */
static const char *ri_format(const int64_t *d, int32_t n, char *buf, size_t len) {
    size_t pos = 0;
    int w = snprintf(buf, len, "(");
    pos = w > 0 ? (size_t)w : 0;
    for (int32_t i = 0; i < n && pos < len; i++) {
        w = snprintf(buf + pos, len - pos, i ? ",%lld" : "%lld", (long long)d[i]);
        if (w > 0)
            pos += (size_t)w;
    }
    if (pos < len)
        snprintf(buf + pos, len - pos, n == 1 ? ",)" : ")");
    return buf;
}

/** Product of n dims (all positive); 0 on overflow. */
static uint64_t ri_prod(const int64_t *d, int32_t n) {
    uint64_t p = 1;
    for (int32_t i = 0; i < n; i++)
        if (__builtin_mul_overflow(p, (uint64_t)d[i], &p))
            return 0;
    return p;
}

/** Checks the element counts of result and input agree. */
static mxk_status ri_check_size(const int64_t *o, int32_t no, const mxk_shape *in, char *msg,
                                size_t msg_len) {
    uint64_t a = ri_prod(o, no), b = ri_prod(in->dims, in->ndim);
    if (a != b || a == 0) {
        char s1[200], s2[200];
        snprintf(msg, msg_len, "target shape %s has %llu elements, input %s has %llu",
                 ri_format(o, no, s1, sizeof s1), (unsigned long long)a,
                 ri_format(in->dims, in->ndim, s2, sizeof s2), (unsigned long long)b);
        return MXK_ERR_SHAPE;
    }
    return MXK_OK;
}

/** Validates a `shape` attribute (see reshape_infer.h). */
mxk_status cb_reshape_check_spec(const int64_t *spec, int32_t nspec, int reverse, char *msg,
                                 size_t msg_len) {
    int minus1 = 0;
    if (nspec < 0 || nspec > MXK_MAX_NDIM) {
        snprintf(msg, msg_len, "attribute 'shape': at most %d values", MXK_MAX_NDIM);
        return MXK_ERR_INVALID_ARGUMENT;
    }
    for (int32_t k = 0; k < nspec; k++) {
        /* k walks the values in processing order (right to left with reverse) */
        int32_t i = reverse ? nspec - 1 - k : k;
        int64_t v = spec[i];
        if (v < -4) {
            snprintf(msg, msg_len, "attribute 'shape': invalid value %lld at position %d",
                     (long long)v, (int)i);
            return MXK_ERR_INVALID_ARGUMENT;
        }
        if (v == -1 && ++minus1 > 1) {
            snprintf(msg, msg_len, "attribute 'shape': only one dim can be -1 (inferred)");
            return MXK_ERR_INVALID_ARGUMENT;
        }
        if (v == -4) {
            if (k + 2 >= nspec) {
                snprintf(msg, msg_len,
                         "attribute 'shape': -4 at position %d needs two split sizes %s it", (int)i,
                         reverse ? "before" : "after");
                return MXK_ERR_INVALID_ARGUMENT;
            }
            int64_t d1 = spec[reverse ? i - 1 : i + 1], d2 = spec[reverse ? i - 2 : i + 2];
            if (d1 == 0 || d2 == 0 || d1 < -1 || d2 < -1 || (d1 == -1 && d2 == -1)) {
                snprintf(msg, msg_len,
                         "attribute 'shape': split sizes of -4 must be positive or one -1, "
                         "got %lld, %lld",
                         (long long)d1, (long long)d2);
                return MXK_ERR_INVALID_ARGUMENT;
            }
            k += 2;
        }
    }
    return MXK_OK;
}

/** MXNet's InferReshapeShape plus the size check (see reshape_infer.h). */
mxk_status cb_reshape_infer(const int64_t *spec, int32_t nspec, int reverse, const mxk_shape *in,
                            mxk_shape *out, char *msg, size_t msg_len) {
    mxk_status st = cb_reshape_check_spec(spec, nspec, reverse, msg, msg_len);
    if (st != MXK_OK)
        return st;
    int32_t nd = in->ndim;
    if (nd < 0 || nd > MXK_MAX_NDIM) {
        snprintf(msg, msg_len, "input has an invalid ndim %d", (int)nd);
        return MXK_ERR_SHAPE;
    }
    /* MXNet's reverse: reverse input dims and spec, apply the rules, reverse the result */
    int64_t d[MXK_MAX_NDIM], p[MXK_MAX_NDIM], t[MXK_MAX_NDIM];
    for (int32_t i = 0; i < nd; i++)
        d[i] = reverse ? in->dims[nd - 1 - i] : in->dims[i];
    for (int32_t i = 0; i < nspec; i++)
        p[i] = reverse ? spec[nspec - 1 - i] : spec[i];
    int32_t nt = 0, src = 0, inf = -1;
    char s1[200], s2[200];
    ri_format(spec, nspec, s1, sizeof s1);
    ri_format(in->dims, nd, s2, sizeof s2);
#define RI_PUSH(v)                                                                                 \
    do {                                                                                           \
        if (nt >= MXK_MAX_NDIM) {                                                                  \
            snprintf(msg, msg_len, "shape %s gives more than %d dims", s1, MXK_MAX_NDIM);          \
            return MXK_ERR_SHAPE;                                                                  \
        }                                                                                          \
        t[nt++] = (v);                                                                             \
    } while (0)
    for (int32_t i = 0; i < nspec; i++) {
        int64_t v = p[i];
        if (v == 0) {
            if (src >= nd) {
                snprintf(msg, msg_len, "shape %s: 0 copies input dim %d, but the input %s has %d",
                         s1, (int)src, s2, (int)nd);
                return MXK_ERR_SHAPE;
            }
            RI_PUSH(d[src++]);
        } else if (v == -1) {
            inf = nt;
            RI_PUSH(1);
            src++;
        } else if (v == -2) {
            while (src < nd)
                RI_PUSH(d[src++]);
        } else if (v == -3) {
            if (src + 1 >= nd) {
                snprintf(msg, msg_len,
                         "shape %s: -3 merges input dims %d and %d, but the input %s has %d", s1,
                         (int)src, (int)src + 1, s2, (int)nd);
                return MXK_ERR_SHAPE;
            }
            uint64_t merged = ri_prod(&d[src], 2);
            if (merged == 0 || merged > (uint64_t)INT64_MAX) {
                snprintf(msg, msg_len,
                         "shape %s: -3 merges input dims %lld and %lld of %s into "
                         "more than %lld elements",
                         s1, (long long)d[src], (long long)d[src + 1], s2, (long long)INT64_MAX);
                return MXK_ERR_SHAPE;
            }
            RI_PUSH((int64_t)merged);
            src += 2;
        } else if (v == -4) {
            if (src >= nd) {
                snprintf(msg, msg_len, "shape %s: -4 splits input dim %d, but the input %s has %d",
                         s1, (int)src, s2, (int)nd);
                return MXK_ERR_SHAPE;
            }
            int64_t d0 = d[src++], d1 = p[i + 1], d2 = p[i + 2];
            if (d1 == -1)
                d1 = d0 % d2 == 0 ? d0 / d2 : -1;
            else if (d2 == -1)
                d2 = d0 % d1 == 0 ? d0 / d1 : -1;
            /* d1 * d2 == d0 without the product (the spec's sizes may be huge) */
            if (d1 <= 0 || d2 <= 0 || d0 % d1 != 0 || d0 / d1 != d2) {
                snprintf(msg, msg_len,
                         "shape %s: split sizes %lld, %lld do not divide input dim "
                         "%lld of %s",
                         s1, (long long)p[i + 1], (long long)p[i + 2], (long long)d0, s2);
                return MXK_ERR_SHAPE;
            }
            RI_PUSH(d1);
            RI_PUSH(d2);
            i += 2;
        } else {
            RI_PUSH(v);
            src++;
        }
    }
#undef RI_PUSH
    if (inf >= 0) {
        uint64_t rest = ri_prod(t, nt), total = ri_prod(d, nd);
        if (rest == 0 || total % rest != 0) {
            snprintf(msg, msg_len, "shape %s: cannot infer the -1 dim, input %s has %llu elements",
                     s1, s2, (unsigned long long)total);
            return MXK_ERR_SHAPE;
        }
        t[inf] = (int64_t)(total / rest);
    }
    mxk_shape o;
    memset(&o, 0, sizeof o);
    o.ndim = nt;
    for (int32_t i = 0; i < nt; i++)
        o.dims[i] = reverse ? t[nt - 1 - i] : t[i];
    st = ri_check_size(o.dims, o.ndim, in, msg, msg_len);
    if (st != MXK_OK)
        return st;
    *out = o;
    return MXK_OK;
}

/** The deprecated target_shape rule (see reshape_infer.h). */
mxk_status cb_reshape_infer_legacy(const int64_t *target, int32_t ntarget, int keep_highest,
                                   const mxk_shape *in, mxk_shape *out, char *msg, size_t msg_len) {
    if (ntarget <= 0 || ntarget > MXK_MAX_NDIM || in->ndim <= 0) {
        snprintf(msg, msg_len, "attribute 'target_shape': expected 1 to %d values", MXK_MAX_NDIM);
        return MXK_ERR_INVALID_ARGUMENT;
    }
    mxk_shape o;
    memset(&o, 0, sizeof o);
    o.ndim = ntarget;
    int32_t start = keep_highest ? 1 : 0, zeros = 0, zi = -1;
    for (int32_t i = 0; i < ntarget; i++) {
        o.dims[i] = target[i];
        if (o.dims[i] < 0) {
            snprintf(msg, msg_len, "attribute 'target_shape': negative value %lld",
                     (long long)target[i]);
            return MXK_ERR_INVALID_ARGUMENT;
        }
    }
    if (keep_highest)
        o.dims[0] = in->dims[0];
    for (int32_t i = start; i < ntarget; i++) {
        if (o.dims[i] == 0) {
            zeros++;
            zi = i;
        }
    }
    if (zeros > 1) {
        snprintf(msg, msg_len, "attribute 'target_shape': only one dim can be 0 (inferred)");
        return MXK_ERR_INVALID_ARGUMENT;
    }
    if (zi >= 0) {
        o.dims[zi] = 1;
        uint64_t rest = ri_prod(o.dims, o.ndim), total = ri_prod(in->dims, in->ndim);
        if (rest == 0 || total % rest != 0) {
            snprintf(msg, msg_len, "attribute 'target_shape': cannot infer the 0 dim");
            return MXK_ERR_SHAPE;
        }
        o.dims[zi] = (int64_t)(total / rest);
    }
    mxk_status st = ri_check_size(o.dims, o.ndim, in, msg, msg_len);
    if (st != MXK_OK)
        return st;
    *out = o;
    return MXK_OK;
}
