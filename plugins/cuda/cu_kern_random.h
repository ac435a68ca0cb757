/*
 * cuda plugin: launchers of the random kernels (cu_kern_random.cu, cu_kern_sample.cu)
 * for the samplers (cu_ops_random.c), _sample_multinomial and _shuffle
 * (cu_ops_sample.c) and Dropout (cu_ops_dropout.c). Every launcher computes its
 * numbers from a reservation of Philox-4x32-10 blocks of the operator's random
 * stream (host->random_reserve), block b being philox(key, counter + b), with the
 * value mappings of abi/mxk_philox.h and plugins/common/mxk_random.h: element i of
 * a float draw comes from block i / 4, word i % 4, and a 64-bit integer i from block
 * i / 2, half i % 2, as the host's draws. Sizes are element counts; pointers are
 * device memory; the work is queued on `stream`.
 */
#ifndef MXK_CU_KERN_RANDOM_H
#define MXK_CU_KERN_RANDOM_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "mxk_abi_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The first block of a reservation: the stream's key and 128-bit counter. */
typedef struct cu_philox_pos {
    uint64_t key, counter_lo, counter_hi;
} cu_philox_pos;

/** The float samplers (cu_launch_random_float). */
enum cu_rand_kind { CU_RAND_UNIFORM, CU_RAND_NORMAL, CU_RAND_EXPONENTIAL };

/**
 * Writes n samples of kind `kind` into out (dtype float32, float64 or float16, the
 * float32 sample converted): uniform in [a, b), normal(a, b) or exponential of
 * rate a. Uses ceil(n / 4) blocks from pos.
 */
cudaError_t cu_launch_random_float(int32_t kind, void *out, int32_t dtype, uint64_t n,
                                   cu_philox_pos pos, float a, float b, cudaStream_t stream);

/**
 * Writes n gamma(alpha, scale beta) samples into out (float32, float64 or float16)
 * by Marsaglia and Tsang's rejection, sample i drawing from its own Philox stream
 * keyed by block i of pos (n blocks): the distribution of the host's sampler, not
 * its numbers.
 */
cudaError_t cu_launch_random_gamma(void *out, int32_t dtype, uint64_t n, cu_philox_pos pos,
                                   float alpha, float beta, cudaStream_t stream);

/** Writes n integers low + bits mod range into out (int32 or int64); ceil(n / 2) blocks. */
cudaError_t cu_launch_random_randint(void *out, int32_t dtype, uint64_t n, cu_philox_pos pos,
                                     int64_t low, uint64_t range, cudaStream_t stream);

/**
 * Dropout forward over n elements: mask m = (u_i < keep) * scale with u_i the
 * uniform [0, 1) draw i (ceil(n / 4) blocks) when `active`, else 1; y = x m. y
 * (NULL: not written) may be x; m may be NULL. y_req and m_req are the requests.
 */
cudaError_t cu_launch_dropout_forward(const float *x, float *y, int32_t y_req, float *m,
                                      int32_t m_req, uint64_t n, cu_philox_pos pos, float keep,
                                      float scale, int32_t active, cudaStream_t stream);

/** Writes the mask values of the shared draw: u[j] = (draw j < keep) * scale, j < ns. */
cudaError_t cu_launch_dropout_draw(float *u, uint64_t ns, cu_philox_pos pos, float keep,
                                   float scale, cudaStream_t stream);

/**
 * Variational Dropout: element i of shape `data` (n elements) takes the mask u[j],
 * j its index in shape `draw` (data's shape with the shared axes 1, broadcast).
 * y = x u[j] (y may be x; NULL: not written), m = u[j] (NULL: not written).
 */
cudaError_t cu_launch_dropout_broadcast(const float *x, float *y, int32_t y_req, float *m,
                                        int32_t m_req, const float *u, uint64_t n, mxk_shape data,
                                        mxk_shape draw, cudaStream_t stream);

/** dx = dy * mask by req over n elements (dx may be dy). */
cudaError_t cu_launch_dropout_backward(const float *dy, const float *mask, float *dx, uint64_t n,
                                       int32_t req, cudaStream_t stream);

/**
 * _sample_multinomial: for distribution i < n (k probabilities at dist + i k) and
 * sample j < m, draws u uniform in [0, 1) from word 0 of block i m + j (n m blocks,
 * as the host's one-number draws) and writes the first class c whose cumulative
 * probability (summed in double, compared in float32) reaches u (k - 1 when none)
 * to out[i m + j] (dtype uint8, int32, float16, float32 or float64; NULL: not
 * written) and, when prob
 * is not NULL, log(dist[c]) to prob[i m + j].
 */
cudaError_t cu_launch_multinomial(const float *dist, void *out, int32_t dtype, float *prob,
                                  uint64_t n, uint64_t k, uint64_t m, cu_philox_pos pos,
                                  cudaStream_t stream);

/**
 * _sample_multinomial's backward: dx[i k + c] += dprob[i m + j] / dist[i k + c] with
 * c = out[i m + j] (dx zeroed first by the caller unless adding; indices outside [0,
 * k) are skipped).
 */
cudaError_t cu_launch_multinomial_backward(const float *dist, const void *out, int32_t dtype,
                                           const float *dprob, float *dx, uint64_t n, uint64_t k,
                                           uint64_t m, cudaStream_t stream);

/**
 * _shuffle in place on y (rows rows of row_bytes bytes): Fisher-Yates as the host,
 * step t = 0 .. rows - 2 swapping row rows - 1 - t with row bits_t mod (rows - t),
 * bits_t the 64-bit integer t of the reservation (ceil((rows - 1) / 2) blocks). One
 * thread block runs the steps in order.
 */
cudaError_t cu_launch_shuffle(void *y, uint64_t rows, uint64_t row_bytes, cu_philox_pos pos,
                              cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MXK_CU_KERN_RANDOM_H */
