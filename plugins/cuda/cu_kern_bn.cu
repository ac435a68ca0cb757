/*
 * cuda plugin: the GPU kernels of BatchNorm (cu_ops_bn.c), one block per
 * channel: its statistics reduced in double as cpu-blas computes them, then the
 * channel's elements and (C,) outputs written by the block.
 *
 * Semantics: MXNet src/operator/nn/batch_norm-inl.h, batch_norm.cc and
 * batch_norm.cu (BatchNormalizationUpdateOutputKernel,
 * BatchNormalizationBackwardKernel) with cpu-blas op_batchnorm.c's conventions:
 * biased batch variance, the `var` output holds the inverse standard deviation,
 * the moving statistics are updated in the training backward, a constant channel
 * with eps 0 gets inv 0. Compiled without fused multiply-add (sources.cmake), so
 * every product is rounded as cpu-blas rounds it.
 */
#include <float.h>

#include "cu_kern_layer.h"
#include "cu_launch.cuh"
#include "cu_req.cuh"

/** v rounded to float, +-inf beyond float's range (cpu-blas cb_norm_f32). */
static __device__ float cu_bn_f32(double v) {
    if (v > FLT_MAX)
        return INFINITY;
    if (v < -FLT_MAX)
        return -INFINITY;
    return (float)v;
}

/** The block's sum of v in shared memory; every thread gets it. */
static __device__ double cu_bn_sum(double v) {
    __shared__ double part[CU_THREADS];
    return cu_block_reduce(v, part, cu_sum_op());
}

/** Offset of element t (of outer * inner) of channel c. */
static __device__ __forceinline__ int64_t cu_bn_at(const cu_bn_geom &g, int64_t c, int64_t t) {
    return (t / g.inner * g.C + c) * g.inner + t % g.inner;
}

/** Forward of channels blockIdx.x, blockIdx.x + gridDim.x, ... */
static __global__ void cu_bn_fwd_kernel(cu_bn_geom g, const float *x, float *gamma,
                                        const float *beta, const float *mm, const float *mv,
                                        float *y, float *mean_out, float *inv_out, int32_t req_y,
                                        int32_t req_m, int32_t req_v) {
    const int64_t M = g.outer * g.inner;
    for (int64_t c = blockIdx.x; c < g.C; c += gridDim.x) {
        double mean, var;
        if (g.train) {
            double s = 0.0;
            for (int64_t t = threadIdx.x; t < M; t += blockDim.x)
                s += x[cu_bn_at(g, c, t)];
            mean = cu_bn_sum(s) / (double)M;
            double s2 = 0.0;
            for (int64_t t = threadIdx.x; t < M; t += blockDim.x) {
                double d = x[cu_bn_at(g, c, t)] - mean;
                s2 += d * d;
            }
            var = cu_bn_sum(s2) / (double)M;
        } else {
            mean = mm[c];
            var = mv[c];
        }
        const double inv = g.train && var == 0.0 && g.eps == 0.0 ? 0.0 : 1.0 / sqrt(var + g.eps);
        const float gm = g.fix_gamma ? 1.0f : gamma[c];
        const float scale = cu_bn_f32(inv * gm), shift = cu_bn_f32(beta[c] - mean * inv * gm);
        if (y != NULL)
            for (int64_t t = threadIdx.x; t < M; t += blockDim.x) {
                const int64_t e = cu_bn_at(g, c, t);
                cu_store(&y[e], x[e] * scale + shift, req_y);
            }
        if (threadIdx.x == 0) {
            if (g.fix_gamma && gamma[c] != 1.0f)
                gamma[c] = 1.0f;
            if (mean_out != NULL)
                cu_store(&mean_out[c], (float)mean, req_m);
            if (inv_out != NULL)
                cu_store(&inv_out[c], cu_bn_f32(inv), req_v);
        }
    }
}

/** Backward of channels blockIdx.x, blockIdx.x + gridDim.x, ... */
static __global__ void cu_bn_bwd_kernel(cu_bn_geom g, const float *x, const float *gamma,
                                        const float *dy, const float *mean_in, const float *inv_in,
                                        float *mm, float *mv, float *dx, float *dgamma,
                                        float *dbeta, int32_t req_x, int32_t req_g, int32_t req_b) {
    const int64_t M = g.outer * g.inner;
    for (int64_t c = blockIdx.x; c < g.C; c += gridDim.x) {
        /* training reads mean_in / inv_in only, so thread 0 may update mm / mv */
        const double mean = g.train ? mean_in[c] : mm[c];
        const double inv = g.train ? inv_in[c] : 1.0 / sqrt((double)mv[c] + g.eps);
        if (g.train && threadIdx.x == 0) {
            const float iv = inv_in[c], mom = g.momentum;
            const double var = iv > 0.0f ? 1.0 / ((double)iv * iv) - g.eps : INFINITY;
            mm[c] = mm[c] * mom + mean_in[c] * (1.0f - mom);
            mv[c] = mv[c] * mom + cu_bn_f32(var) * (1.0f - mom);
        }
        if (dy == NULL)
            continue;
        double sg = 0.0, dot = 0.0;
        for (int64_t t = threadIdx.x; t < M; t += blockDim.x) {
            const int64_t e = cu_bn_at(g, c, t);
            sg += dy[e];
            dot += (x[e] - mean) * dy[e];
        }
        sg = cu_bn_sum(sg);
        dot = cu_bn_sum(dot);
        if (threadIdx.x == 0) {
            if (dgamma != NULL)
                cu_store(&dgamma[c], g.fix_gamma ? 0.0f : cu_bn_f32(dot * inv), req_g);
            if (dbeta != NULL)
                cu_store(&dbeta[c], cu_bn_f32(sg), req_b);
        }
        if (dx == NULL)
            continue;
        const float gm = g.fix_gamma ? 1.0f : gamma[c];
        const double gbar = g.train ? sg / (double)M : 0.0;
        const double k = g.train ? dot * inv * inv / (double)M : 0.0, s = inv * gm;
        for (int64_t t = threadIdx.x; t < M; t += blockDim.x) {
            const int64_t e = cu_bn_at(g, c, t);
            cu_store(&dx[e], cu_bn_f32((dy[e] - gbar - (x[e] - mean) * k) * s), req_x);
        }
    }
}

/** Blocks for C channels: one each, at most CU_MAX_BLOCKS. */
static unsigned cu_bn_blocks(int64_t C) {
    return C <= 0 ? 1u : (C > CU_MAX_BLOCKS ? (unsigned)CU_MAX_BLOCKS : (unsigned)C);
}

extern "C" cudaError_t cu_launch_bn_forward(cu_bn_geom g, const float *x, float *gamma,
                                            const float *beta, const float *moving_mean,
                                            const float *moving_var, float *y, float *mean,
                                            float *inv, const int32_t req[3], cudaStream_t stream) {
    cu_bn_fwd_kernel<<<cu_bn_blocks(g.C), CU_THREADS, 0, stream>>>(
        g, x, gamma, beta, moving_mean, moving_var, y, mean, inv, req[0], req[1], req[2]);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_bn_backward(cu_bn_geom g, const float *x, const float *gamma,
                                             const float *dy, const float *mean, const float *inv,
                                             float *moving_mean, float *moving_var, float *dx,
                                             float *dgamma, float *dbeta, const int32_t req[3],
                                             cudaStream_t stream) {
    cu_bn_bwd_kernel<<<cu_bn_blocks(g.C), CU_THREADS, 0, stream>>>(
        g, x, gamma, dy, mean, inv, moving_mean, moving_var, dx, dgamma, dbeta, req[0], req[1],
        req[2]);
    return cu_launched();
}
