/*
 * mxk SDK: writing float32 results through a write request (mxk_op_req).
 *
 * MXNet funnels every store of an operator through one helper that switches on
 * the request (ASSIGN_DISPATCH / KERNEL_ASSIGN, include/mxnet/op_attr_types.h):
 *   MXK_REQ_NULL            nothing is written;
 *   MXK_REQ_WRITE, INPLACE  out = value;
 *   MXK_REQ_ADD             out += value.
 * A kernel that uses these for every output honours all four requests and may
 * set MXK_KERNEL_SUPPORTS_ADDTO.
 *
 * The array forms accept `out` equal to `src` (in-place) or disjoint from it;
 * partially overlapping ranges are not supported. Disjoint arrays run through
 * restrict-qualified loops the compiler vectorises.
 */
#ifndef MXK_SDK_REQ_H
#define MXK_SDK_REQ_H

#include <stddef.h>

#include "mxk_abi_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** `restrict` in C, the common `__restrict` extension in C++ (which has no restrict). */
#ifdef __cplusplus
#define MXK_SDK_RESTRICT __restrict
#else
#define MXK_SDK_RESTRICT restrict
#endif

/** MXNet's name of a request: "null", "write", "inplace", "add", or "invalid". */
static inline const char *mxk_sdk_req_name(int32_t req) {
    switch (req) {
    case MXK_REQ_NULL:
        return "null";
    case MXK_REQ_WRITE:
        return "write";
    case MXK_REQ_INPLACE:
        return "inplace";
    case MXK_REQ_ADD:
        return "add";
    default:
        return "invalid";
    }
}

/** Stores one value: NULL: nothing; WRITE/INPLACE: *out = value; ADD: *out += value. */
static inline void mxk_sdk_assign_f32(float *out, float value, mxk_op_req req) {
    if (req == MXK_REQ_WRITE || req == MXK_REQ_INPLACE)
        *out = value;
    else if (req == MXK_REQ_ADD)
        *out += value;
}

/* Disjoint-array kernels (restrict: the compiler may vectorise without alias checks). */
static inline void mxk_sdk_axpby_f32_r_(float *MXK_SDK_RESTRICT out,
                                        const float *MXK_SDK_RESTRICT src, float alpha, size_t n,
                                        int add) {
    if (add) {
        for (size_t i = 0; i < n; i++)
            out[i] += alpha * src[i];
    } else if (alpha == 1.0f) {
        for (size_t i = 0; i < n; i++)
            out[i] = src[i];
    } else {
        for (size_t i = 0; i < n; i++)
            out[i] = alpha * src[i];
    }
}

/**
 * out[i] (=|+=) alpha * src[i] for i < n, by `req`. `out` may equal `src`
 * (in-place: WRITE with alpha 1 is then a no-op, ADD doubles).
 */
static inline void mxk_sdk_scale_f32(float *out, const float *src, float alpha, size_t n,
                                     mxk_op_req req) {
    if (req == MXK_REQ_NULL || n == 0)
        return;
    int add = req == MXK_REQ_ADD;
    if (out != src) {
        mxk_sdk_axpby_f32_r_(out, src, alpha, n, add);
    } else if (add) {
        for (size_t i = 0; i < n; i++)
            out[i] += alpha * out[i];
    } else if (alpha != 1.0f) {
        for (size_t i = 0; i < n; i++)
            out[i] *= alpha;
    }
}

/** out[i] (=|+=) src[i] for i < n, by `req` (a copy; see mxk_sdk_scale_f32 for aliasing). */
static inline void mxk_sdk_copy_f32(float *out, const float *src, size_t n, mxk_op_req req) {
    mxk_sdk_scale_f32(out, src, 1.0f, n, req);
}

/**
 * out[i] (=|+=) value for i < n, by `req`. With value 0, WRITE zeroes and ADD
 * leaves `out` unchanged (how BlockGrad-like ops write a zero gradient).
 */
static inline void mxk_sdk_fill_f32(float *MXK_SDK_RESTRICT out, float value, size_t n,
                                    mxk_op_req req) {
    if (req == MXK_REQ_WRITE || req == MXK_REQ_INPLACE) {
        for (size_t i = 0; i < n; i++)
            out[i] = value;
    } else if (req == MXK_REQ_ADD && value != 0.0f) {
        for (size_t i = 0; i < n; i++)
            out[i] += value;
    }
}

/** The cblas/gemm "beta" matching a request: 1 for ADD (accumulate), else 0. */
static inline float mxk_sdk_req_beta(mxk_op_req req) {
    return req == MXK_REQ_ADD ? 1.0f : 0.0f;
}

#ifdef __cplusplus
}
#endif

#endif /* MXK_SDK_REQ_H */
