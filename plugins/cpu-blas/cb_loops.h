/*
 * cpu-blas plugin: generators of element-wise float32 loops honouring a write
 * request (MXNet's ASSIGN_DISPATCH / KERNEL_ASSIGN, include/mxnet/op_attr_types.h).
 *
 * CB_DEFINE_UNARY(name, EXPR) defines
 *     static void name(float *out, const float *in, float s, size_t n, mxk_op_req req);
 * computing out[i] = EXPR (WRITE, INPLACE) or out[i] += EXPR (ADD), nothing for
 * NULL, where EXPR is an expression of `x` (= in[i]) and the scalar `s`.
 *
 * CB_DEFINE_BINARY(name, EXPR) defines
 *     static void name(float *out, const float *a, const float *b, float s, size_t n,
 *                      mxk_op_req req);
 * with EXPR an expression of `a` (= a[i]), `b` (= b[i]) and the scalar `s`.
 *
 * `out` may be the same array as an input (in-place) or disjoint from all of
 * them; partially overlapping arrays are not supported. The disjoint case runs a
 * restrict-qualified loop per request, which compilers vectorise at -O3 (and
 * -O2 with -ftree-vectorize); the aliased case runs a plain loop that reads
 * element i before writing it.
 */
#ifndef MXK_CB_LOOPS_H
#define MXK_CB_LOOPS_H

#include <stddef.h>

#include "mxk_abi_base.h"

#define CB_DEFINE_UNARY(name, EXPR)                                                                \
    static void name##_w_(float *restrict o_, const float *restrict p_, float s, size_t n) {       \
        (void)s;                                                                                   \
        for (size_t i_ = 0; i_ < n; i_++) {                                                        \
            const float x = p_[i_];                                                                \
            o_[i_] = (EXPR);                                                                       \
        }                                                                                          \
    }                                                                                              \
    static void name##_a_(float *restrict o_, const float *restrict p_, float s, size_t n) {       \
        (void)s;                                                                                   \
        for (size_t i_ = 0; i_ < n; i_++) {                                                        \
            const float x = p_[i_];                                                                \
            o_[i_] += (EXPR);                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void name##_ip_(float *o_, float s, size_t n, int add) {                                \
        (void)s;                                                                                   \
        if (add) {                                                                                 \
            for (size_t i_ = 0; i_ < n; i_++) {                                                    \
                const float x = o_[i_];                                                            \
                o_[i_] = x + (EXPR);                                                               \
            }                                                                                      \
        } else {                                                                                   \
            for (size_t i_ = 0; i_ < n; i_++) {                                                    \
                const float x = o_[i_];                                                            \
                o_[i_] = (EXPR);                                                                   \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void name(float *out, const float *in, float s, size_t n, mxk_op_req req) {             \
        if (req == MXK_REQ_NULL)                                                                   \
            return;                                                                                \
        if (out == in)                                                                             \
            name##_ip_(out, s, n, req == MXK_REQ_ADD);                                             \
        else if (req == MXK_REQ_ADD)                                                               \
            name##_a_(out, in, s, n);                                                              \
        else                                                                                       \
            name##_w_(out, in, s, n);                                                              \
    }

#define CB_DEFINE_BINARY(name, EXPR)                                                               \
    static void name##_w_(float *restrict o_, const float *restrict pa_,                           \
                          const float *restrict pb_, float s, size_t n) {                          \
        (void)s;                                                                                   \
        for (size_t i_ = 0; i_ < n; i_++) {                                                        \
            const float a = pa_[i_], b = pb_[i_];                                                  \
            o_[i_] = (EXPR);                                                                       \
        }                                                                                          \
    }                                                                                              \
    static void name##_a_(float *restrict o_, const float *restrict pa_,                           \
                          const float *restrict pb_, float s, size_t n) {                          \
        (void)s;                                                                                   \
        for (size_t i_ = 0; i_ < n; i_++) {                                                        \
            const float a = pa_[i_], b = pb_[i_];                                                  \
            o_[i_] += (EXPR);                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void name##_al_(float *o_, const float *pa_, const float *pb_, float s, size_t n,       \
                           int add) {                                                              \
        (void)s;                                                                                   \
        if (add) {                                                                                 \
            for (size_t i_ = 0; i_ < n; i_++) {                                                    \
                const float a = pa_[i_], b = pb_[i_];                                              \
                o_[i_] += (EXPR);                                                                  \
            }                                                                                      \
        } else {                                                                                   \
            for (size_t i_ = 0; i_ < n; i_++) {                                                    \
                const float a = pa_[i_], b = pb_[i_];                                              \
                o_[i_] = (EXPR);                                                                   \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void name(float *out, const float *a, const float *b, float s, size_t n,                \
                     mxk_op_req req) {                                                             \
        if (req == MXK_REQ_NULL)                                                                   \
            return;                                                                                \
        if (out == a || out == b)                                                                  \
            name##_al_(out, a, b, s, n, req == MXK_REQ_ADD);                                       \
        else if (req == MXK_REQ_ADD)                                                               \
            name##_a_(out, a, b, s, n);                                                            \
        else                                                                                       \
            name##_w_(out, a, b, s, n);                                                            \
    }

#endif /* MXK_CB_LOOPS_H */
