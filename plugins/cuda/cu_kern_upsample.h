/*
 * cuda plugin: launchers of UpSampling's bilinear kernels (cu_kern_upsample.cu):
 * MXNet's bilinear UpSampling is a depthwise transposed convolution (Deconvolution
 * with kernel k = 2 scale - scale % 2, stride scale, pad ceil((scale - 1) / 2),
 * one group per channel, weight (C, 1, k, k)), computed here directly, float32,
 * NCHW, every output element a sum in a fixed order (no atomics).
 */
#ifndef MXK_CU_KERN_UPSAMPLE_H
#define MXK_CU_KERN_UPSAMPLE_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The geometry of one call: x (N, C, H, W), y (N, C, H s, W s), weight (C, 1, k, k). */
typedef struct cu_bilinear_geom {
    int64_t n, c, h, w, scale, k, pad;
} cu_bilinear_geom;

/** y (=|+=) the transposed convolution of x with weight. */
cudaError_t cu_launch_bilinear(const cu_bilinear_geom *g, const float *x, const float *weight,
                               float *y, int add, cudaStream_t stream);

/** dx (=|+=) the convolution of dy with weight (the data gradient). */
cudaError_t cu_launch_bilinear_dx(const cu_bilinear_geom *g, const float *dy, const float *weight,
                                  float *dx, int add, cudaStream_t stream);

/** dweight (=|+=) the correlation of dy with x, summed over the batch and positions. */
cudaError_t cu_launch_bilinear_dw(const cu_bilinear_geom *g, const float *dy, const float *x,
                                  float *dweight, int add, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MXK_CU_KERN_UPSAMPLE_H */
