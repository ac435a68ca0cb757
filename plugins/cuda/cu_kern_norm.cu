/*
 * cuda plugin: the normalisation kernels (cu_kern_norm.h): LayerNorm,
 * InstanceNorm, GroupNorm and L2Normalization, forward and backward, as cpu-blas's
 * op_norm_moments.c and op_norm_l2.c compute them (the shared formulas are in
 * plugins/common/mxk_norm.h). Semantics: MXNet src/operator/nn/layer_norm-inl.h,
 * src/operator/instance_norm-inl.h, src/operator/nn/group_norm-inl.h,
 * src/operator/l2_normalization-inl.h.
 *
 * One block of CU_THREADS threads normalises one group (o, i) at a time (a
 * grid-stride loop over the groups): its threads stride over the K elements, and
 * block sums (warp shuffles, then one warp over the warp sums) give the group's
 * statistics in float. Every element is written by the thread that read it after
 * the group's sums are complete, so y may alias x (forward in place) and dx may
 * alias dy (L2Normalization's backward in place). The parameter gradients sum
 * across groups instead: InstanceNorm and GroupNorm one block per parameter,
 * LayerNorm tiles of 32 neighbouring positions (coalesced along the axis).
 */
#include "cu_kern_norm.h"
#include "cu_launch.cuh"
#include "mxk_norm.h"

/** Warps per block (CU_THREADS is a multiple of 32). */
#define CU_NORM_WARPS (CU_THREADS / 32)

/**
 * The sum of v over the block, returned to every thread. `scratch` is shared
 * memory of CU_NORM_WARPS + 1 floats; every thread of the block must call it.
 */
static __device__ float cu_block_sum(float v, float *scratch) {
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads(); /* the previous call's readers are done with scratch */
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < CU_NORM_WARPS ? scratch[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0)
            scratch[CU_NORM_WARPS] = v;
    }
    __syncthreads();
    return scratch[CU_NORM_WARPS];
}

/** Stores v into *out, or adds it with `add` (MXK_REQ_ADD). */
static __device__ void cu_norm_store(float *out, float v, int add) {
    *out = add ? *out + v : v;
}

/** Offset of the first element of group g (= o * inner + i) in an (outer, K, inner) array. */
static __device__ uint64_t cu_group_base(uint64_t g, uint64_t K, uint64_t inner) {
    return g / inner * K * inner + g % inner;
}

/** 1 / sqrt(var + eps) of a group from its second statistic (variance or std). */
static __device__ float cu_norm_inv(const cu_norm_view &v, float stat) {
    return v.is_var ? 1.0f / sqrtf(stat + v.eps) : 1.0f / stat;
}

/** Blocks of a launch over `groups` groups (at least 1, at most CU_MAX_BLOCKS). */
static unsigned cu_group_blocks(uint64_t groups) {
    return groups == 0 ? 1u : groups > CU_MAX_BLOCKS ? (unsigned)CU_MAX_BLOCKS : (unsigned)groups;
}

/** Moments forward (cu_launch_norm_moments_forward). */
__global__ void cu_moments_fwd_kernel(cu_norm_view v, const float *x, const float *gamma,
                                      const float *beta, float *y, int add_y, float *mean,
                                      int add_mean, float *stat, int add_stat) {
    __shared__ float scratch[CU_NORM_WARPS + 1];
    const uint64_t groups = v.outer * v.inner;
    for (uint64_t g = blockIdx.x; g < groups; g += gridDim.x) {
        const uint64_t base = cu_group_base(g, v.K, v.inner), o = g / v.inner;
        float s = 0.0f;
        for (uint64_t k = threadIdx.x; k < v.K; k += blockDim.x)
            s += x[base + k * v.inner];
        const float m = cu_block_sum(s, scratch) / (float)v.K;
        float s2 = 0.0f;
        for (uint64_t k = threadIdx.x; k < v.K; k += blockDim.x) {
            const float d = x[base + k * v.inner] - m;
            s2 += d * d;
        }
        const float var = cu_block_sum(s2, scratch) / (float)v.K;
        const float sd = sqrtf(var + v.eps), inv = 1.0f / sd;
        if (threadIdx.x == 0 && mean != NULL)
            cu_norm_store(&mean[g], m, add_mean);
        if (threadIdx.x == 0 && stat != NULL)
            cu_norm_store(&stat[g], v.is_var ? var : sd, add_stat);
        if (y == NULL)
            continue;
        for (uint64_t k = threadIdx.x; k < v.K; k += blockDim.x) {
            const uint64_t e = base + k * v.inner, p = mxk_norm_param_index(v.per_k, v.P, o, k);
            cu_norm_store(&y[e], (x[e] - m) * inv * gamma[p] + beta[p], add_y);
        }
    }
}

/** Moments backward, data gradient (cu_launch_norm_moments_backward_data). */
__global__ void cu_moments_bwd_data_kernel(cu_norm_view v, const float *x, const float *gamma,
                                           const float *dy, const float *mean, const float *stat,
                                           float *dx, int add_dx) {
    __shared__ float scratch[CU_NORM_WARPS + 1];
    const uint64_t groups = v.outer * v.inner;
    for (uint64_t g = blockIdx.x; g < groups; g += gridDim.x) {
        const uint64_t base = cu_group_base(g, v.K, v.inner), o = g / v.inner;
        const float m = mean[g], inv = cu_norm_inv(v, stat[g]);
        float sg = 0.0f, sgx = 0.0f;
        for (uint64_t k = threadIdx.x; k < v.K; k += blockDim.x) {
            const uint64_t e = base + k * v.inner, p = mxk_norm_param_index(v.per_k, v.P, o, k);
            const float gk = dy[e] * gamma[p];
            sg += gk;
            sgx += gk * (x[e] - m) * inv;
        }
        const float mg = cu_block_sum(sg, scratch) / (float)v.K;
        const float mgx = cu_block_sum(sgx, scratch) / (float)v.K;
        for (uint64_t k = threadIdx.x; k < v.K; k += blockDim.x) {
            const uint64_t e = base + k * v.inner, p = mxk_norm_param_index(v.per_k, v.P, o, k);
            const float d =
                (float)mxk_norm_moments_dx(inv, dy[e] * gamma[p], mg, (x[e] - m) * inv, mgx);
            cu_norm_store(&dx[e], d, add_dx);
        }
    }
}

/** Columns and rows of a block of cu_layer_bwd_param_kernel (32 x 8 = CU_THREADS). */
#define CU_TILE_COLS 32
#define CU_TILE_ROWS (CU_THREADS / CU_TILE_COLS)

/**
 * LayerNorm's parameter gradients: a block sums CU_TILE_COLS neighbouring
 * positions p over every group, its rows of threads striding over the groups
 * (a warp reads consecutive positions of one group), then adds up its rows.
 */
__global__ void cu_layer_bwd_param_kernel(cu_norm_view v, const float *x, const float *dy,
                                          const float *mean, const float *stat, float *dgamma,
                                          int add_dgamma, float *dbeta, int add_dbeta) {
    __shared__ float sg[CU_TILE_ROWS][CU_TILE_COLS + 1], sb[CU_TILE_ROWS][CU_TILE_COLS + 1];
    const uint64_t groups = v.outer * v.inner;
    for (uint64_t p0 = (uint64_t)blockIdx.x * CU_TILE_COLS; p0 < v.P;
         p0 += (uint64_t)gridDim.x * CU_TILE_COLS) {
        const uint64_t p = p0 + threadIdx.x;
        float sdg = 0.0f, sdb = 0.0f;
        for (uint64_t g = threadIdx.y; p < v.P && g < groups; g += CU_TILE_ROWS) {
            const uint64_t e = cu_group_base(g, v.K, v.inner) + p * v.inner;
            const float xh = (x[e] - mean[g]) * cu_norm_inv(v, stat[g]);
            sdg += dy[e] * xh;
            sdb += dy[e];
        }
        sg[threadIdx.y][threadIdx.x] = sdg;
        sb[threadIdx.y][threadIdx.x] = sdb;
        __syncthreads();
        if (threadIdx.y == 0 && p < v.P) {
            for (int r = 1; r < CU_TILE_ROWS; r++) {
                sdg += sg[r][threadIdx.x];
                sdb += sb[r][threadIdx.x];
            }
            if (dgamma != NULL)
                cu_norm_store(&dgamma[p], sdg, add_dgamma);
            if (dbeta != NULL)
                cu_norm_store(&dbeta[p], sdb, add_dbeta);
        }
        __syncthreads(); /* the next tile reuses sg, sb */
    }
}

/**
 * InstanceNorm's and GroupNorm's parameter gradients: one block per parameter p,
 * which scales the K contiguous elements of the groups o = n * P + p (outer / P
 * groups).
 */
__global__ void cu_group_bwd_param_kernel(cu_norm_view v, const float *x, const float *dy,
                                          const float *mean, const float *stat, float *dgamma,
                                          int add_dgamma, float *dbeta, int add_dbeta) {
    __shared__ float scratch[CU_NORM_WARPS + 1];
    const uint64_t count = v.outer / v.P * v.K;
    for (uint64_t p = blockIdx.x; p < v.P; p += gridDim.x) {
        float sdg = 0.0f, sdb = 0.0f;
        for (uint64_t j = threadIdx.x; j < count; j += blockDim.x) {
            const uint64_t g = j / v.K * v.P + p, e = g * v.K + j % v.K;
            const float xh = (x[e] - mean[g]) * cu_norm_inv(v, stat[g]);
            sdg += dy[e] * xh;
            sdb += dy[e];
        }
        sdg = cu_block_sum(sdg, scratch);
        sdb = cu_block_sum(sdb, scratch);
        if (threadIdx.x == 0 && dgamma != NULL)
            cu_norm_store(&dgamma[p], sdg, add_dgamma);
        if (threadIdx.x == 0 && dbeta != NULL)
            cu_norm_store(&dbeta[p], sdb, add_dbeta);
    }
}

/** L2Normalization forward (cu_launch_norm_l2_forward). */
__global__ void cu_l2_fwd_kernel(uint64_t outer, uint64_t K, uint64_t inner, float eps,
                                 const float *x, float *y, int add_y, float *norm, int add_norm) {
    __shared__ float scratch[CU_NORM_WARPS + 1];
    for (uint64_t g = blockIdx.x; g < outer * inner; g += gridDim.x) {
        const uint64_t base = cu_group_base(g, K, inner);
        float s = 0.0f;
        for (uint64_t k = threadIdx.x; k < K; k += blockDim.x) {
            const float xv = x[base + k * inner];
            s += xv * xv;
        }
        const float n = sqrtf(cu_block_sum(s, scratch) + eps);
        if (threadIdx.x == 0 && norm != NULL)
            cu_norm_store(&norm[g], n, add_norm);
        if (y == NULL)
            continue;
        for (uint64_t k = threadIdx.x; k < K; k += blockDim.x)
            cu_norm_store(&y[base + k * inner], x[base + k * inner] / n, add_y);
    }
}

/** L2Normalization backward (cu_launch_norm_l2_backward). */
__global__ void cu_l2_bwd_kernel(uint64_t outer, uint64_t K, uint64_t inner, const float *y,
                                 const float *norm, const float *dy, float *dx, int add_dx) {
    __shared__ float scratch[CU_NORM_WARPS + 1];
    for (uint64_t g = blockIdx.x; g < outer * inner; g += gridDim.x) {
        const uint64_t base = cu_group_base(g, K, inner);
        float s = 0.0f;
        for (uint64_t k = threadIdx.x; k < K; k += blockDim.x)
            s += dy[base + k * inner] * y[base + k * inner];
        s = cu_block_sum(s, scratch);
        const float n = norm[g];
        for (uint64_t k = threadIdx.x; k < K; k += blockDim.x) {
            const uint64_t e = base + k * inner;
            cu_norm_store(&dx[e], (float)mxk_norm_l2_dx(dy[e], y[e], s, n), add_dx);
        }
    }
}

extern "C" cudaError_t cu_launch_norm_moments_forward(const cu_norm_view *v, const float *x,
                                                      const float *gamma, const float *beta,
                                                      float *y, int add_y, float *mean,
                                                      int add_mean, float *stat, int add_stat,
                                                      cudaStream_t stream) {
    cu_moments_fwd_kernel<<<cu_group_blocks(v->outer * v->inner), CU_THREADS, 0, stream>>>(
        *v, x, gamma, beta, y, add_y, mean, add_mean, stat, add_stat);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_norm_moments_backward_data(const cu_norm_view *v, const float *x,
                                                            const float *gamma, const float *dy,
                                                            const float *mean, const float *stat,
                                                            float *dx, int add_dx,
                                                            cudaStream_t stream) {
    cu_moments_bwd_data_kernel<<<cu_group_blocks(v->outer * v->inner), CU_THREADS, 0, stream>>>(
        *v, x, gamma, dy, mean, stat, dx, add_dx);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_norm_moments_backward_param(const cu_norm_view *v, const float *x,
                                                             const float *dy, const float *mean,
                                                             const float *stat, float *dgamma,
                                                             int add_dgamma, float *dbeta,
                                                             int add_dbeta, cudaStream_t stream) {
    if (v->per_k)
        cu_layer_bwd_param_kernel<<<cu_group_blocks((v->P + CU_TILE_COLS - 1) / CU_TILE_COLS),
                                    dim3(CU_TILE_COLS, CU_TILE_ROWS), 0, stream>>>(
            *v, x, dy, mean, stat, dgamma, add_dgamma, dbeta, add_dbeta);
    else
        cu_group_bwd_param_kernel<<<cu_group_blocks(v->P), CU_THREADS, 0, stream>>>(
            *v, x, dy, mean, stat, dgamma, add_dgamma, dbeta, add_dbeta);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_norm_l2_forward(uint64_t outer, uint64_t K, uint64_t inner,
                                                 float eps, const float *x, float *y, int add_y,
                                                 float *norm, int add_norm, cudaStream_t stream) {
    cu_l2_fwd_kernel<<<cu_group_blocks(outer * inner), CU_THREADS, 0, stream>>>(
        outer, K, inner, eps, x, y, add_y, norm, add_norm);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_norm_l2_backward(uint64_t outer, uint64_t K, uint64_t inner,
                                                  const float *y, const float *norm,
                                                  const float *dy, float *dx, int add_dx,
                                                  cudaStream_t stream) {
    cu_l2_bwd_kernel<<<cu_group_blocks(outer * inner), CU_THREADS, 0, stream>>>(
        outer, K, inner, y, norm, dy, dx, add_dx);
    return cu_launched();
}
