/*
 * cuda plugin: the GPU kernels of the bilinear sampler, the sampling grids and
 * ROI pooling (cu_ops_vision.c), on the per-element math that cpu-blas shares
 * (plugins/common/mxk_vision.h), compiled without fused multiply-add
 * (sources.cmake) so every product is rounded as cpu-blas rounds it.
 *
 * Semantics: MXNet src/operator/bilinear_sampler.cu (one thread per output
 * element; the backward one thread per grid point looping over the channels,
 * scattering into the data gradient with atomicAdd), grid_generator-inl.h,
 * spatial_transformer.cu, roi_pooling.cu (ROIPoolForwardKernel,
 * ROIPoolBackwardAccKernel) and contrib/roi_align.cu (RoIAlignForwardKernel,
 * RoIAlignBackwardKernel with atomicAdd). The atomic scatters make the data
 * gradients' summation order, hence their last bits, vary between runs.
 */
#include <float.h>

#include "cu_kern_vision.h"
#include "cu_launch.cuh"
#include "cu_req.cuh"
#include "mxk_vision.h"

/** Sampler forward: output element i = (n, c, k). */
static __global__ void cu_smp_fwd_kernel(cu_smp_geom g, const float *x, const float *grid, float *y,
                                         int32_t req) {
    const int64_t ohw = g.oh * g.ow;
    CU_KERNEL_LOOP(i, (uint64_t)(g.n * g.c * ohw)) {
        const int64_t k = (int64_t)i % ohw, nc = (int64_t)i / ohw, n = nc / g.c;
        const float *gp = grid + n * 2 * ohw + k;
        const mxk_vis_point pt = mxk_vis_point_at(gp[0], gp[ohw], g.h, g.w);
        float v[4];
        mxk_vis_corners(&pt, x + nc * g.h * g.w, g.w, v);
        cu_store(&y[i], mxk_vis_interp(&pt, v), req);
    }
}

/** Sampler backward: grid point i = (n, k), its channels in increasing order. */
static __global__ void cu_smp_bwd_kernel(cu_smp_geom g, const float *x, const float *grid,
                                         const float *dy, float *dx, float *dgrid, int32_t greq) {
    const int64_t ohw = g.oh * g.ow, hw = g.h * g.w;
    CU_KERNEL_LOOP(i, (uint64_t)(g.n * ohw)) {
        const int64_t k = (int64_t)i % ohw, n = (int64_t)i / ohw;
        const float *gp = grid + n * 2 * ohw + k;
        const mxk_vis_point pt = mxk_vis_point_at(gp[0], gp[ohw], g.h, g.w);
        const int64_t at = pt.ty * g.w + pt.tx;
        float gy = 0.0f, gx = 0.0f, v[4];
        for (int64_t c = 0; c < g.c; c++) {
            const float d = dy[(n * g.c + c) * ohw + k];
            mxk_vis_corners(&pt, x + (n * g.c + c) * hw, g.w, v);
            if (dx != NULL) {
                float *dc = dx + (n * g.c + c) * hw;
                if (pt.in_y0 && pt.in_x0)
                    atomicAdd(&dc[at], d * pt.wy * pt.wx);
                if (pt.in_y0 && pt.in_x1)
                    atomicAdd(&dc[at + 1], d * pt.wy * (1.0f - pt.wx));
                if (pt.in_y1 && pt.in_x0)
                    atomicAdd(&dc[at + g.w], d * (1.0f - pt.wy) * pt.wx);
                if (pt.in_y1 && pt.in_x1)
                    atomicAdd(&dc[at + g.w + 1], d * (1.0f - pt.wy) * (1.0f - pt.wx));
            }
            mxk_vis_grid_grad(&pt, v, d, &gy, &gx);
        }
        if (dgrid != NULL) {
            float *dg = dgrid + n * 2 * ohw + k;
            cu_store(&dg[ohw], gy * (float)(g.h - 1) / 2.0f, greq);
            cu_store(&dg[0], gx * (float)(g.w - 1) / 2.0f, greq);
        }
    }
}

/** The affine target grid: element i = (row, k) of (3, m). */
static __global__ void cu_grid_dst_kernel(int64_t th, int64_t tw, float *gd) {
    const int64_t m = th * tw;
    CU_KERNEL_LOOP(i, (uint64_t)(3 * m))
    gd[i] = mxk_vis_grid_dst((int64_t)i % m, th, tw, (int)((int64_t)i / m));
}

/** Affine transform: src element i = (b, k) of (n*2, m). */
static __global__ void cu_affine_kernel(const float *theta, const float *gd, int64_t n, int64_t m,
                                        float *src, int32_t req) {
    CU_KERNEL_LOOP(i, (uint64_t)(n * 2 * m)) {
        const int64_t k = (int64_t)i % m, b = (int64_t)i / m;
        const float *t = theta + b * 3;
        cu_store(&src[i], t[0] * gd[k] + t[1] * gd[m + k] + t[2] * gd[2 * m + k], req);
    }
}

/** Affine gradient: one block per dtheta element (b, r), a block sum in double. */
static __global__ void cu_affine_grad_kernel(const float *dsrc, const float *gd, int64_t m,
                                             float *dtheta, int32_t req) {
    __shared__ double part[CU_THREADS];
    const int64_t b = blockIdx.x / 3, r = blockIdx.x % 3;
    double s = 0.0;
    for (int64_t k = threadIdx.x; k < m; k += blockDim.x)
        s += (double)dsrc[b * m + k] * gd[r * m + k];
    s = cu_block_reduce(s, part, cu_sum_op());
    if (threadIdx.x == 0)
        cu_store(&dtheta[blockIdx.x], (float)s, req);
}

/**
 * Warp grid: element i = (n, d, k) of (n, 2, hw) into y (unless NULL); gd (2, hw)
 * (unless NULL) along the first sample's elements (at least one sample's worth).
 */
static __global__ void cu_warp_kernel(const float *flow, int64_t n, int64_t h, int64_t w, float *y,
                                      float *gd, int32_t req) {
    const int64_t hw = h * w;
    const float sx = (float)((double)(w - 1) / 2.0), sy = (float)((double)(h - 1) / 2.0);
    CU_KERNEL_LOOP(i, (uint64_t)((n > 0 ? n : 1) * 2 * hw)) {
        const int64_t k = (int64_t)i % hw, d = (int64_t)i / hw % 2;
        const float pos = (float)(d == 0 ? k % w : k / w);
        if (y != NULL && (int64_t)i < n * 2 * hw)
            cu_store(&y[i], (flow[i] + pos) / (d == 0 ? sx : sy) - 1.0f, req);
        if (gd != NULL && (int64_t)i < 2 * hw)
            gd[i] = pos;
    }
}

/** Warp gradient: element i = (n, d, k) of (n, 2, hw). */
static __global__ void cu_warp_grad_kernel(const float *dy, int64_t n, int64_t h, int64_t w,
                                           float *dx, int32_t req) {
    const int64_t hw = h * w;
    const float sx = (float)((double)(w - 1) / 2.0), sy = (float)((double)(h - 1) / 2.0);
    CU_KERNEL_LOOP(i, (uint64_t)(n * 2 * hw))
    cu_store(&dx[i], dy[i] / ((int64_t)i / hw % 2 == 0 ? sx : sy), req);
}

/** ROIPooling: output element i = (roi, c, bin i, bin j), the first maximum of its bin. */
static __global__ void cu_roi_pool_kernel(cu_roi_geom g, const float *x, const float *rois,
                                          float *y, int32_t req, int32_t *maxidx) {
    CU_KERNEL_LOOP(i, (uint64_t)(g.r * g.c * g.ph * g.pw)) {
        const int64_t bj = (int64_t)i % g.pw, bi = (int64_t)i / g.pw % g.ph;
        const int64_t c = (int64_t)i / (g.pw * g.ph) % g.c, n = (int64_t)i / (g.pw * g.ph * g.c);
        const float *roi = rois + n * 5;
        const int64_t b = mxk_vis_roi_batch(roi, g.n);
        const mxk_vis_roi_pool q = mxk_vis_roi_pool_of(roi, g.scale, g.ph, g.pw);
        int64_t hs, he, ws, we;
        mxk_vis_roi_pool_bin(&q, bi, bj, g.h, g.w, &hs, &he, &ws, &we);
        float best = -FLT_MAX;
        int64_t arg = -1;
        if (b < 0 || he <= hs || we <= ws) {
            best = 0.0f;
        } else {
            const int64_t base = (b * g.c + c) * g.h * g.w;
            for (int64_t yy = hs; yy < he; yy++)
                for (int64_t xx = ws; xx < we; xx++)
                    if (x[base + yy * g.w + xx] > best) {
                        best = x[base + yy * g.w + xx];
                        arg = base + yy * g.w + xx;
                    }
        }
        if (y != NULL)
            cu_store(&y[i], best, req);
        if (maxidx != NULL)
            maxidx[i] = (int32_t)arg;
    }
}

/** ROIPooling's backward: output element i routes its gradient to its maximum. */
static __global__ void cu_roi_pool_grad_kernel(const float *dy, const int32_t *maxidx, uint64_t ny,
                                               float *dx, uint64_t nx) {
    CU_KERNEL_LOOP(i, ny) {
        const int32_t at = maxidx[i];
        if (at >= 0 && (uint64_t)at < nx)
            atomicAdd(&dx[at], dy[i]);
    }
}

/**
 * ROIAlign over output element i = (roi, c, bin i, bin j): the forward (y not
 * NULL) stores the bin's average by req, the backward adds dy's share into dx.
 */
static __device__ void cu_roi_align_bin(const cu_roi_geom &g, const float *rois, uint64_t i,
                                        const float *x, float *y, int32_t req, const float *dy,
                                        float *dx) {
    const int64_t bj = (int64_t)i % g.pw, bi = (int64_t)i / g.pw % g.ph;
    const int64_t c = (int64_t)i / (g.pw * g.ph) % g.oc, n = (int64_t)i / (g.pw * g.ph * g.oc);
    mxk_vis_roi_align a;
    const int bad =
        mxk_vis_roi_align_of(rois + n * 5, g.n, g.scale, g.aligned, g.sample_ratio, g.ph, g.pw, &a);
    const int64_t cu = g.position_sensitive ? (c * g.ph + bi) * g.pw + bj : c;
    const int64_t base = (a.b * g.c + cu) * g.h * g.w;
    const double cnt = (double)(a.gh * a.gw);
    const int ok = !bad && a.b >= 0;
    double acc = 0.0;
    for (int64_t iy = 0; ok && iy < a.gh; iy++)
        for (int64_t ix = 0; ix < a.gw; ix++) {
            float yy, xx;
            mxk_vis_roi_align_at(&a, bi, bj, iy, ix, &yy, &xx);
            int64_t pos[4];
            double wt[4];
            if (!mxk_vis_roi_sample(yy, xx, g.h, g.w, pos, wt))
                continue;
            for (int k = 0; k < 4; k++) {
                if (y != NULL)
                    acc += wt[k] * x[base + pos[k]];
                else
                    atomicAdd(&dx[base + pos[k]], (float)(dy[i] * wt[k] / cnt));
            }
        }
    if (y != NULL)
        cu_store(&y[i], ok ? (float)(acc / cnt) : 0.0f, req);
}

/** ROIAlign forward: one thread per output element. */
static __global__ void cu_roi_align_kernel(cu_roi_geom g, const float *x, const float *rois,
                                           float *y, int32_t req) {
    CU_KERNEL_LOOP(i, (uint64_t)(g.r * g.oc * g.ph * g.pw))
    cu_roi_align_bin(g, rois, i, x, y, req, NULL, NULL);
}

/** ROIAlign backward: one thread per output element. */
static __global__ void cu_roi_align_grad_kernel(cu_roi_geom g, const float *rois, const float *dy,
                                                float *dx) {
    CU_KERNEL_LOOP(i, (uint64_t)(g.r * g.oc * g.ph * g.pw))
    cu_roi_align_bin(g, rois, i, NULL, NULL, 0, dy, dx);
}

/** cu_launch_smp_forward: One thread per output element. */
extern "C" cudaError_t cu_launch_smp_forward(cu_smp_geom g, const float *x, const float *grid,
                                             float *y, int32_t req, cudaStream_t stream) {
    const uint64_t n = (uint64_t)(g.n * g.c * g.oh * g.ow);
    cu_smp_fwd_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(g, x, grid, y, req);
    return cu_launched();
}

/** cu_launch_smp_backward: One thread per grid point. */
extern "C" cudaError_t cu_launch_smp_backward(cu_smp_geom g, const float *x, const float *grid,
                                              const float *dy, float *dx, float *dgrid,
                                              int32_t greq, cudaStream_t stream) {
    const uint64_t n = (uint64_t)(g.n * g.oh * g.ow);
    cu_smp_bwd_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(g, x, grid, dy, dx, dgrid, greq);
    return cu_launched();
}

/** cu_launch_grid_dst: One thread per grid element. */
extern "C" cudaError_t cu_launch_grid_dst(int64_t th, int64_t tw, float *gd, cudaStream_t stream) {
    cu_grid_dst_kernel<<<cu_blocks((uint64_t)(3 * th * tw)), CU_THREADS, 0, stream>>>(th, tw, gd);
    return cu_launched();
}

/** cu_launch_affine: One thread per source coordinate. */
extern "C" cudaError_t cu_launch_affine(const float *theta, const float *gd, int64_t n, int64_t m,
                                        float *src, int32_t req, cudaStream_t stream) {
    cu_affine_kernel<<<cu_blocks((uint64_t)(n * 2 * m)), CU_THREADS, 0, stream>>>(theta, gd, n, m,
                                                                                  src, req);
    return cu_launched();
}

/** cu_launch_affine_grad: One block per dtheta element. */
extern "C" cudaError_t cu_launch_affine_grad(const float *dsrc, const float *gd, int64_t n,
                                             int64_t m, float *dtheta, int32_t req,
                                             cudaStream_t stream) {
    if (n == 0)
        return cudaSuccess;
    cu_affine_grad_kernel<<<(unsigned)(n * 6), CU_THREADS, 0, stream>>>(dsrc, gd, m, dtheta, req);
    return cu_launched();
}

/** cu_launch_warp: One thread per grid element. */
extern "C" cudaError_t cu_launch_warp(const float *flow, int64_t n, int64_t h, int64_t w, float *y,
                                      float *gd, int32_t req, cudaStream_t stream) {
    cu_warp_kernel<<<cu_blocks((uint64_t)((n > 0 ? n : 1) * 2 * h * w)), CU_THREADS, 0, stream>>>(
        flow, n, h, w, y, gd, req);
    return cu_launched();
}

/** cu_launch_warp_grad: One thread per gradient element. */
extern "C" cudaError_t cu_launch_warp_grad(const float *dy, int64_t n, int64_t h, int64_t w,
                                           float *dx, int32_t req, cudaStream_t stream) {
    cu_warp_grad_kernel<<<cu_blocks((uint64_t)(n * 2 * h * w)), CU_THREADS, 0, stream>>>(
        dy, n, h, w, dx, req);
    return cu_launched();
}

/** cu_launch_roi_pool: One thread per output element. */
extern "C" cudaError_t cu_launch_roi_pool(cu_roi_geom g, const float *x, const float *rois,
                                          float *y, int32_t req, int32_t *maxidx,
                                          cudaStream_t stream) {
    const uint64_t n = (uint64_t)(g.r * g.c * g.ph * g.pw);
    cu_roi_pool_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(g, x, rois, y, req, maxidx);
    return cu_launched();
}

/** cu_launch_roi_pool_grad: One thread per output gradient element. */
extern "C" cudaError_t cu_launch_roi_pool_grad(const float *dy, const int32_t *maxidx, uint64_t ny,
                                               float *dx, uint64_t nx, cudaStream_t stream) {
    cu_roi_pool_grad_kernel<<<cu_blocks(ny), CU_THREADS, 0, stream>>>(dy, maxidx, ny, dx, nx);
    return cu_launched();
}

/** cu_launch_roi_align: One thread per output element. */
extern "C" cudaError_t cu_launch_roi_align(cu_roi_geom g, const float *x, const float *rois,
                                           float *y, int32_t req, cudaStream_t stream) {
    const uint64_t n = (uint64_t)(g.r * g.oc * g.ph * g.pw);
    cu_roi_align_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(g, x, rois, y, req);
    return cu_launched();
}

/** cu_launch_roi_align_grad: One thread per output gradient element. */
extern "C" cudaError_t cu_launch_roi_align_grad(cu_roi_geom g, const float *rois, const float *dy,
                                                float *dx, cudaStream_t stream) {
    const uint64_t n = (uint64_t)(g.r * g.oc * g.ph * g.pw);
    cu_roi_align_grad_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(g, rois, dy, dx);
    return cu_launched();
}
