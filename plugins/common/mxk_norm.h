/*
 * Element math of the normalisation operators, shared by the CPU (cpu-blas
 * op_norm_moments.c, op_norm_l2.c) and GPU (cuda cu_kern_norm.cu) kernels so both
 * compute the same formulas. Semantics: MXNet src/operator/nn/layer_norm-inl.h,
 * src/operator/instance_norm-inl.h, src/operator/nn/group_norm-inl.h and
 * src/operator/l2_normalization-inl.h.
 *
 * The data of both families is viewed as (outer, K, inner): each (o, i) is a group
 * of K elements of stride inner, normalised together.
 */
#ifndef MXK_NORM_H
#define MXK_NORM_H

#include <stdint.h>

#include "mxk_hd.h"

/**
 * Index of gamma / beta for element k of a group in outer row o: LayerNorm
 * (`per_k` 1) scales along the normalised axis (k); InstanceNorm and GroupNorm
 * per channel or group, o modulo the P parameters (o = example * P + p).
 */
MXK_HD uint64_t mxk_norm_param_index(int per_k, uint64_t P, uint64_t o, uint64_t k) {
    return per_k ? k : o % P;
}

/**
 * The data gradient of a moments normalisation (LayerNorm, InstanceNorm,
 * GroupNorm) for one element: inv (g - mean(g) - xh mean(g xh)), with
 * inv = 1/sqrt(var + eps), xh = (x - mean) inv and g = dy gamma, the means over
 * the element's group.
 */
MXK_HD double mxk_norm_moments_dx(double inv, double g, double mean_g, double xh, double mean_gxh) {
    return inv * (g - mean_g - xh * mean_gxh);
}

/**
 * The data gradient of L2Normalization for one element: (dy - y sum(dy y)) / norm,
 * the sum over the element's group.
 */
MXK_HD double mxk_norm_l2_dx(double dy, double y, double sum_dyy, double norm) {
    return (dy - y * sum_dyy) / norm;
}

#endif /* MXK_NORM_H */
