/*
 * cuda plugin: the C declarations of the normalisation kernels (cu_kern_norm.cu)
 * that cu_ops_norm.c launches: LayerNorm, InstanceNorm, GroupNorm (the moments
 * family) and L2Normalization. Data is viewed as (outer, K, inner) and each (o, i)
 * is a group of K elements of stride inner (plugins/common/mxk_norm.h); one block
 * normalises one group at a time. Output pointers may be NULL (not requested);
 * each has an `add` flag (MXK_REQ_ADD: accumulate, else overwrite). Launchers
 * queue on `stream` and return the launch status.
 */
#ifndef MXK_CU_KERN_NORM_H
#define MXK_CU_KERN_NORM_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The grouping of a normalisation (mxk_norm_view of mxk_norm.h) and what its kernels read. */
typedef struct cu_norm_view {
    uint64_t outer, K, inner;
    uint64_t P;     /**< gamma / beta length */
    int32_t per_k;  /**< 1: LayerNorm (gamma along K); 0: per outer row modulo P */
    int32_t is_var; /**< 1: the second statistic is the variance (InstanceNorm), else the std */
    float eps;
} cu_norm_view;

/**
 * Moments forward: per group mean m and biased variance v (two passes in
 * float), y = (x - m) / sqrt(v + eps) gamma[p] + beta[p]; the statistics mean and
 * std = sqrt(v + eps) (or v when v->is_var), one per group. y may be x.
 */
cudaError_t cu_launch_norm_moments_forward(const cu_norm_view *v, const float *x,
                                           const float *gamma, const float *beta, float *y,
                                           int add_y, float *mean, int add_mean, float *stat,
                                           int add_stat, cudaStream_t stream);

/**
 * Moments backward, the data gradient: per group, from the forward's statistics,
 * dx = inv (g - mean(g) - xh mean(g xh)) with g = dy gamma[p] (mxk_norm.h).
 */
cudaError_t cu_launch_norm_moments_backward_data(const cu_norm_view *v, const float *x,
                                                 const float *gamma, const float *dy,
                                                 const float *mean, const float *stat, float *dx,
                                                 int add_dx, cudaStream_t stream);

/**
 * Moments backward, the parameter gradients: dgamma[p] = sum dy xh and
 * dbeta[p] = sum dy over the elements p scales, each parameter summed by one
 * block (no atomics: deterministic). Either output may be NULL.
 */
cudaError_t cu_launch_norm_moments_backward_param(const cu_norm_view *v, const float *x,
                                                  const float *dy, const float *mean,
                                                  const float *stat, float *dgamma, int add_dgamma,
                                                  float *dbeta, int add_dbeta, cudaStream_t stream);

/**
 * L2Normalization forward: per group norm = sqrt(sum x^2 + eps), y = x / norm.
 */
cudaError_t cu_launch_norm_l2_forward(uint64_t outer, uint64_t K, uint64_t inner, float eps,
                                      const float *x, float *y, int add_y, float *norm,
                                      int add_norm, cudaStream_t stream);

/**
 * L2Normalization backward: per group dx = (dy - y sum(dy y)) / norm (mxk_norm.h).
 * dx may be dy.
 */
cudaError_t cu_launch_norm_l2_backward(uint64_t outer, uint64_t K, uint64_t inner, const float *y,
                                       const float *norm, const float *dy, float *dx, int add_dx,
                                       cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MXK_CU_KERN_NORM_H */
