/*
 * cuda plugin: UpSampling's bilinear kernels (cu_kern_upsample.h), the depthwise
 * transposed convolution y[n, c, h s - p + i, w s - p + j] += x[n, c, h, w] W[c, i, j]
 * that MXNet runs as a Deconvolution (src/operator/nn/upsampling-inl.h,
 * deconvolution-inl.h), as gathers: one thread per output (or data gradient)
 * element, one block per weight element for the weight gradient.
 */
#include "cu_kern_upsample.h"
#include "cu_launch.cuh"

/** Threads of a weight-gradient block (a power of two). */
#define CU_BIL_THREADS 256

/** The first input index whose kernel window covers output index o (>= 0). */
__device__ static int64_t cu_bil_first(int64_t o, const cu_bilinear_geom &g) {
    int64_t num = o + g.pad - g.k + 1;
    return num <= 0 ? 0 : (num + g.scale - 1) / g.scale;
}

/** Forward: each output element sums the input elements whose windows cover it. */
__global__ void cu_bilinear_kernel(cu_bilinear_geom g, const float *x, const float *wt, float *y,
                                   int add, uint64_t total) {
    int64_t oh_n = g.h * g.scale, ow_n = g.w * g.scale;
    CU_KERNEL_LOOP(e, total) {
        int64_t ow = (int64_t)(e % (uint64_t)ow_n), oh = (int64_t)(e / (uint64_t)ow_n % oh_n);
        int64_t nc = (int64_t)(e / (uint64_t)(ow_n * oh_n)), c = nc % g.c;
        const float *xp = x + nc * g.h * g.w, *wp = wt + c * g.k * g.k;
        int64_t h1 = (oh + g.pad) / g.scale, w1 = (ow + g.pad) / g.scale;
        float acc = 0.0f;
        for (int64_t h = cu_bil_first(oh, g); h <= h1 && h < g.h; h++)
            for (int64_t w = cu_bil_first(ow, g); w <= w1 && w < g.w; w++)
                acc += xp[h * g.w + w] *
                       wp[(oh + g.pad - h * g.scale) * g.k + (ow + g.pad - w * g.scale)];
        y[e] = add ? y[e] + acc : acc;
    }
}

extern "C" cudaError_t cu_launch_bilinear(const cu_bilinear_geom *g, const float *x,
                                          const float *weight, float *y, int add,
                                          cudaStream_t stream) {
    uint64_t total = (uint64_t)(g->n * g->c * g->h * g->scale * g->w * g->scale);
    cu_bilinear_kernel<<<cu_blocks(total), CU_THREADS, 0, stream>>>(*g, x, weight, y, add, total);
    return cu_launched();
}

/** Data gradient: each input element sums dy over its kernel window. */
__global__ void cu_bilinear_dx_kernel(cu_bilinear_geom g, const float *dy, const float *wt,
                                      float *dx, int add, uint64_t total) {
    int64_t oh_n = g.h * g.scale, ow_n = g.w * g.scale;
    CU_KERNEL_LOOP(e, total) {
        int64_t w = (int64_t)(e % (uint64_t)g.w), h = (int64_t)(e / (uint64_t)g.w % g.h);
        int64_t nc = (int64_t)(e / (uint64_t)(g.w * g.h)), c = nc % g.c;
        const float *gp = dy + nc * oh_n * ow_n, *wp = wt + c * g.k * g.k;
        float acc = 0.0f;
        for (int64_t i = 0; i < g.k; i++) {
            int64_t oh = h * g.scale - g.pad + i;
            if (oh < 0 || oh >= oh_n)
                continue;
            for (int64_t j = 0; j < g.k; j++) {
                int64_t ow = w * g.scale - g.pad + j;
                if (ow >= 0 && ow < ow_n)
                    acc += gp[oh * ow_n + ow] * wp[i * g.k + j];
            }
        }
        dx[e] = add ? dx[e] + acc : acc;
    }
}

extern "C" cudaError_t cu_launch_bilinear_dx(const cu_bilinear_geom *g, const float *dy,
                                             const float *weight, float *dx, int add,
                                             cudaStream_t stream) {
    uint64_t total = (uint64_t)(g->n * g->c * g->h * g->w);
    cu_bilinear_dx_kernel<<<cu_blocks(total), CU_THREADS, 0, stream>>>(*g, dy, weight, dx, add,
                                                                       total);
    return cu_launched();
}

/**
 * Weight gradient element (c, i, j), one block each: the sum over n, h, w of
 * dy[n, c, h s - p + i, w s - p + j] x[n, c, h, w], per-thread strides then a
 * fixed-order tree in shared memory.
 */
__global__ void cu_bilinear_dw_kernel(cu_bilinear_geom g, const float *dy, const float *x,
                                      float *dw, int add) {
    __shared__ float part[CU_BIL_THREADS];
    int64_t oh_n = g.h * g.scale, ow_n = g.w * g.scale;
    uint64_t per_c = (uint64_t)(g.n * g.h * g.w), cells = (uint64_t)(g.c * g.k * g.k);
    for (uint64_t q = blockIdx.x; q < cells; q += gridDim.x) {
        int64_t c = (int64_t)(q / (uint64_t)(g.k * g.k)), i = (int64_t)(q / (uint64_t)g.k % g.k);
        int64_t j = (int64_t)(q % (uint64_t)g.k);
        float acc = 0.0f;
        for (uint64_t t = threadIdx.x; t < per_c; t += CU_BIL_THREADS) {
            int64_t w = (int64_t)(t % (uint64_t)g.w), h = (int64_t)(t / (uint64_t)g.w % g.h);
            int64_t n = (int64_t)(t / (uint64_t)(g.w * g.h));
            int64_t oh = h * g.scale - g.pad + i, ow = w * g.scale - g.pad + j;
            if (oh >= 0 && oh < oh_n && ow >= 0 && ow < ow_n)
                acc += dy[((n * g.c + c) * oh_n + oh) * ow_n + ow] *
                       x[((n * g.c + c) * g.h + h) * g.w + w];
        }
        float total = cu_block_reduce(acc, part, cu_sum_op());
        if (threadIdx.x == 0)
            dw[q] = add ? dw[q] + total : total;
    }
}

extern "C" cudaError_t cu_launch_bilinear_dw(const cu_bilinear_geom *g, const float *dy,
                                             const float *x, float *dweight, int add,
                                             cudaStream_t stream) {
    uint64_t cells = (uint64_t)(g->c * g->k * g->k);
    if (cells == 0)
        return cudaSuccess;
    unsigned grid = cells > CU_MAX_BLOCKS ? CU_MAX_BLOCKS : (unsigned)cells;
    cu_bilinear_dw_kernel<<<grid, CU_BIL_THREADS, 0, stream>>>(*g, dy, x, dweight, add);
    return cu_launched();
}
