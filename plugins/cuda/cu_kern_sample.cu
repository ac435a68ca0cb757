/*
 * cuda plugin: the kernels of _sample_multinomial (forward and backward) and
 * _shuffle (cu_kern_random.h), on Philox-4x32-10 blocks reserved from the
 * operator's random stream, consumed as cpu-blas's kernels consume them.
 *
 * Semantics: MXNet src/operator/random/sample_multinomial_op.h (SampleMultinomialKernel,
 * SampleMultinomialBackwardKernel) and src/operator/random/shuffle_op.cu. Multinomial
 * sample s = i m + j takes its uniform from word 0 of block s, as the host's
 * one-number draws, and shuffling runs cpu-blas's Fisher-Yates steps in the same
 * order with the same 64-bit integers, so both give cpu-blas's results for the same
 * stream position (log probabilities up to the last bit of logf). The multinomial
 * backward accumulates with atomics, in an order that may differ from the CPU's.
 */
#include <cuda_fp16.h>

#include "cu_kern_random.h"
#include "cu_launch.cuh"

#define MXK_PHILOX_QUALIFIER static inline __host__ __device__
#include "mxk_random.h"

/** Block b of the reservation pos. */
static __device__ inline mxk_philox_block cu_sample_block(cu_philox_pos pos, uint64_t b) {
    return mxk_philox4x32_10(mxk_philox_counter(pos.counter_lo, pos.counter_hi, b), pos.key);
}

/** Stores class index c as element i of out (dtype uint8, int32, float16, float32, float64). */
static __device__ inline void cu_index_store(void *out, int32_t dtype, uint64_t i, uint64_t c) {
    switch (dtype) {
    case MXK_UINT8:
        ((uint8_t *)out)[i] = (uint8_t)c;
        break;
    case MXK_INT32:
        ((int32_t *)out)[i] = (int32_t)c;
        break;
    case MXK_FLOAT16:
        ((__half *)out)[i] = __float2half_rn((float)c);
        break;
    case MXK_FLOAT64:
        ((double *)out)[i] = (double)c;
        break;
    default:
        ((float *)out)[i] = (float)c;
        break;
    }
}

/** Element i of out as a class index (-1 when not an integer in range of the type). */
static __device__ inline double cu_index_load(const void *out, int32_t dtype, uint64_t i) {
    switch (dtype) {
    case MXK_UINT8:
        return ((const uint8_t *)out)[i];
    case MXK_INT32:
        return ((const int32_t *)out)[i];
    case MXK_FLOAT16:
        return __half2float(((const __half *)out)[i]);
    case MXK_FLOAT64:
        return ((const double *)out)[i];
    default:
        return ((const float *)out)[i];
    }
}

/** One thread per sample s = i m + j. */
__global__ void cu_multinomial_kernel(const float *dist, void *out, int32_t dtype, float *prob,
                                      uint64_t n, uint64_t k, uint64_t m, cu_philox_pos pos) {
    CU_KERNEL_LOOP(s, n * m) {
        const float *d = dist + (s / m) * k;
        float u = mxk_philox_uniform(cu_sample_block(pos, s).v[0], 0.0f, 1.0f);
        uint64_t c = mxk_random_multinomial(d, k, u);
        if (out != NULL)
            cu_index_store(out, dtype, s, c);
        if (prob != NULL)
            prob[s] = logf(d[c]);
    }
}

/** Checks the index dtype of _sample_multinomial. */
static bool cu_index_dtype_ok(int32_t dtype) {
    return dtype == MXK_UINT8 || dtype == MXK_INT32 || dtype == MXK_FLOAT16 ||
           dtype == MXK_FLOAT32 || dtype == MXK_FLOAT64;
}

extern "C" cudaError_t cu_launch_multinomial(const float *dist, void *out, int32_t dtype,
                                             float *prob, uint64_t n, uint64_t k, uint64_t m,
                                             cu_philox_pos pos, cudaStream_t stream) {
    if (!cu_index_dtype_ok(dtype))
        return cudaErrorInvalidValue;
    cu_multinomial_kernel<<<cu_blocks(n * m), CU_THREADS, 0, stream>>>(dist, out, dtype, prob, n, k,
                                                                       m, pos);
    return cu_launched();
}

/** One thread per sample: dx[class] += dprob / dist[class]. */
__global__ void cu_multinomial_backward_kernel(const float *dist, const void *out, int32_t dtype,
                                               const float *dprob, float *dx, uint64_t n,
                                               uint64_t k, uint64_t m) {
    CU_KERNEL_LOOP(s, n * m) {
        double c = cu_index_load(out, dtype, s);
        if (!(c >= 0.0 && c < (double)k))
            continue;
        uint64_t e = (s / m) * k + (uint64_t)c;
        atomicAdd(&dx[e], dprob[s] / dist[e]);
    }
}

extern "C" cudaError_t cu_launch_multinomial_backward(const float *dist, const void *out,
                                                      int32_t dtype, const float *dprob, float *dx,
                                                      uint64_t n, uint64_t k, uint64_t m,
                                                      cudaStream_t stream) {
    if (!cu_index_dtype_ok(dtype))
        return cudaErrorInvalidValue;
    cu_multinomial_backward_kernel<<<cu_blocks(n * m), CU_THREADS, 0, stream>>>(dist, out, dtype,
                                                                                dprob, dx, n, k, m);
    return cu_launched();
}

/** Fisher-Yates on one thread block: every thread derives step t's row, then swaps a share. */
__global__ void cu_shuffle_kernel(unsigned char *y, uint64_t rows, uint64_t row_bytes,
                                  cu_philox_pos pos) {
    for (uint64_t t = 0; t + 1 < rows; t++) {
        uint64_t i = rows - t; /* row i - 1 swaps with a row in [0, i) */
        uint64_t j = mxk_philox_bits64(cu_sample_block(pos, t / 2), (uint32_t)(t % 2)) % i;
        if (j != i - 1) {
            unsigned char *a = y + (i - 1) * row_bytes, *b = y + j * row_bytes;
            for (uint64_t e = threadIdx.x; e < row_bytes; e += blockDim.x) {
                unsigned char v = a[e];
                a[e] = b[e];
                b[e] = v;
            }
        }
        __syncthreads();
    }
}

extern "C" cudaError_t cu_launch_shuffle(void *y, uint64_t rows, uint64_t row_bytes,
                                         cu_philox_pos pos, cudaStream_t stream) {
    cu_shuffle_kernel<<<1, CU_THREADS, 0, stream>>>((unsigned char *)y, rows, row_bytes, pos);
    return cu_launched();
}
