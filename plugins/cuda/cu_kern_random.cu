/*
 * cuda plugin: the random kernels (cu_kern_random.h): the samplers _random_uniform,
 * _random_normal, _random_exponential, _random_randint, _random_gamma and Dropout
 * (its mask, applied or broadcast, and its backward), on Philox-4x32-10 blocks
 * reserved from the operator's random stream.
 *
 * Semantics: MXNet src/operator/random/sample_op.h (the samplers) and
 * src/operator/nn/dropout-inl.h (the mask). Uniform, normal, exponential, randint
 * and the Dropout mask give the numbers of cpu-blas's kernels for the same stream
 * position: one thread computes the four floats of a block (two 64-bit integers)
 * through abi/mxk_philox.h and plugins/common/mxk_random.h, the mappings the host
 * draws use. The double-precision log / sin / cos / log1p of CUDA and of the host's
 * libm may differ in the last bit of a double, which changes the float result only
 * in rare ties. Gamma draws by rejection, a variable number of values per sample: on
 * the GPU sample i runs its own Philox stream (key and counter from block i of the
 * reservation), so it follows the same distribution with different numbers.
 */
#include <cuda_fp16.h>

#include "cu_kern_random.h"
#include "cu_launch.cuh"
#include "cu_req.cuh"

#define MXK_PHILOX_QUALIFIER static inline __host__ __device__
#include "mxk_random.h"

/** Block b of the reservation pos. */
static __device__ inline mxk_philox_block cu_block(cu_philox_pos pos, uint64_t b) {
    return mxk_philox4x32_10(mxk_philox_counter(pos.counter_lo, pos.counter_hi, b), pos.key);
}

/** Converts a float32 sample to the output type. */
template <typename T> static __device__ inline T cu_from_float(float v) {
    return (T)v;
}
/** float16: __float2half_rn, the rounding of the host's conversion. */
template <> __device__ inline __half cu_from_float<__half>(float v) {
    return __float2half_rn(v);
}

/** One thread per block of four samples: out[4 b + j] for the float samplers. */
template <typename T>
__global__ void cu_random_float_kernel(int32_t kind, T *out, uint64_t n, cu_philox_pos pos, float a,
                                       float b) {
    CU_KERNEL_LOOP(blk, (n + 3) / 4) {
        mxk_philox_block x = cu_block(pos, blk);
        float z[2] = {0.0f, 0.0f};
        for (uint32_t j = 0; j < 4 && blk * 4 + j < n; j++) {
            float v;
            if (kind == CU_RAND_NORMAL) {
                if ((j & 1u) == 0)
                    mxk_philox_normal2(x, j / 2, a, b, z);
                v = z[j & 1u];
            } else if (kind == CU_RAND_EXPONENTIAL) {
                v = mxk_random_exponential(mxk_philox_uniform(x.v[j], 0.0f, 1.0f), a);
            } else {
                v = mxk_philox_uniform(x.v[j], a, b);
            }
            out[blk * 4 + j] = cu_from_float<T>(v);
        }
    }
}

/**
 * One gamma(alpha, 1) sample (Marsaglia and Tsang, with the alpha + 1 boost below
 * 1) from the private stream (key, counter) of its sample: block 0 gives the boost's
 * uniform (word 3), each try t >= 1 a normal (words 0, 1) and a uniform (word 2).
 */
static __device__ double cu_gamma1(uint64_t key, uint64_t counter, double alpha) {
    double boost = 1.0;
    if (alpha < 1.0) {
        mxk_philox_block x = mxk_philox4x32_10(mxk_philox_counter(counter, 0, 0), key);
        float u = mxk_philox_uniform(x.v[3], 0.0f, 1.0f);
        boost = pow(1.0 - u, 1.0 / alpha);
        alpha += 1.0;
    }
    const double d = alpha - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (uint64_t t = 1;; t++) {
        mxk_philox_block x = mxk_philox4x32_10(mxk_philox_counter(counter, 0, t), key);
        float zz[2];
        mxk_philox_normal2(x, 0, 0.0f, 1.0f, zz);
        float z = zz[0];
        double v = 1.0 + c * z;
        if (v <= 0.0)
            continue;
        v = v * v * v;
        float u = mxk_philox_uniform(x.v[2], 0.0f, 1.0f);
        if (log(1.0 - u) < 0.5 * z * z + d - d * v + d * log(v))
            return d * v * boost;
    }
}

/** One thread per gamma sample i, on the private stream of block i of pos. */
template <typename T>
__global__ void cu_random_gamma_kernel(T *out, uint64_t n, cu_philox_pos pos, float alpha,
                                       float beta) {
    CU_KERNEL_LOOP(i, n) {
        mxk_philox_block x = cu_block(pos, i);
        float g =
            (float)(cu_gamma1(mxk_philox_bits64(x, 0), mxk_philox_bits64(x, 1), alpha) * beta);
        out[i] = cu_from_float<T>(g);
    }
}

/** One thread per block of two integers: out[2 b + h] = low + bits mod range. */
template <typename T>
__global__ void cu_random_randint_kernel(T *out, uint64_t n, cu_philox_pos pos, int64_t low,
                                         uint64_t range) {
    CU_KERNEL_LOOP(blk, (n + 1) / 2) {
        mxk_philox_block x = cu_block(pos, blk);
        for (uint32_t h = 0; h < 2 && blk * 2 + h < n; h++)
            out[blk * 2 + h] = (T)mxk_random_randint(mxk_philox_bits64(x, h), low, range);
    }
}

/**
 * Calls launch(T()) with T the element type of float dtype `dtype` (float32,
 * float64, float16), then returns the launch status; cudaErrorInvalidValue for
 * another dtype.
 */
template <typename F> static cudaError_t cu_float_dtype(int32_t dtype, F launch) {
    if (dtype == MXK_FLOAT32)
        launch(float());
    else if (dtype == MXK_FLOAT64)
        launch(double());
    else if (dtype == MXK_FLOAT16)
        launch(__half());
    else
        return cudaErrorInvalidValue;
    return cu_launched();
}

extern "C" cudaError_t cu_launch_random_float(int32_t kind, void *out, int32_t dtype, uint64_t n,
                                              cu_philox_pos pos, float a, float b,
                                              cudaStream_t stream) {
    return cu_float_dtype(dtype, [&](auto tag) {
        using T = decltype(tag);
        cu_random_float_kernel<T>
            <<<cu_blocks((n + 3) / 4), CU_THREADS, 0, stream>>>(kind, (T *)out, n, pos, a, b);
    });
}

extern "C" cudaError_t cu_launch_random_gamma(void *out, int32_t dtype, uint64_t n,
                                              cu_philox_pos pos, float alpha, float beta,
                                              cudaStream_t stream) {
    return cu_float_dtype(dtype, [&](auto tag) {
        using T = decltype(tag);
        cu_random_gamma_kernel<T>
            <<<cu_blocks(n), CU_THREADS, 0, stream>>>((T *)out, n, pos, alpha, beta);
    });
}

extern "C" cudaError_t cu_launch_random_randint(void *out, int32_t dtype, uint64_t n,
                                                cu_philox_pos pos, int64_t low, uint64_t range,
                                                cudaStream_t stream) {
    unsigned grid = cu_blocks((n + 1) / 2);
    if (dtype == MXK_INT32)
        cu_random_randint_kernel<int32_t>
            <<<grid, CU_THREADS, 0, stream>>>((int32_t *)out, n, pos, low, range);
    else if (dtype == MXK_INT64)
        cu_random_randint_kernel<int64_t>
            <<<grid, CU_THREADS, 0, stream>>>((int64_t *)out, n, pos, low, range);
    else
        return cudaErrorInvalidValue;
    return cu_launched();
}

/** One thread per block of four elements: the mask (or 1 when inactive) and y = x m. */
__global__ void cu_dropout_forward_kernel(const float *x, float *y, int32_t y_req, float *m,
                                          int32_t m_req, uint64_t n, cu_philox_pos pos, float keep,
                                          float scale, int32_t active) {
    CU_KERNEL_LOOP(blk, (n + 3) / 4) {
        mxk_philox_block r = {{0u, 0u, 0u, 0u}};
        if (active)
            r = cu_block(pos, blk);
        for (uint32_t j = 0; j < 4 && blk * 4 + j < n; j++) {
            uint64_t i = blk * 4 + j;
            float mk = active ? mxk_random_dropout_mask(mxk_philox_uniform(r.v[j], 0.0f, 1.0f),
                                                        keep, scale)
                              : 1.0f;
            float xv = x[i];
            if (m != NULL)
                cu_store(&m[i], mk, m_req);
            if (y != NULL)
                cu_store(&y[i], xv * mk, y_req);
        }
    }
}

extern "C" cudaError_t cu_launch_dropout_forward(const float *x, float *y, int32_t y_req, float *m,
                                                 int32_t m_req, uint64_t n, cu_philox_pos pos,
                                                 float keep, float scale, int32_t active,
                                                 cudaStream_t stream) {
    cu_dropout_forward_kernel<<<cu_blocks((n + 3) / 4), CU_THREADS, 0, stream>>>(
        x, y, y_req, m, m_req, n, pos, keep, scale, active);
    return cu_launched();
}

/** One thread per block of four draws: u[j] = mask of draw j. */
__global__ void cu_dropout_draw_kernel(float *u, uint64_t ns, cu_philox_pos pos, float keep,
                                       float scale) {
    CU_KERNEL_LOOP(blk, (ns + 3) / 4) {
        mxk_philox_block r = cu_block(pos, blk);
        for (uint32_t j = 0; j < 4 && blk * 4 + j < ns; j++)
            u[blk * 4 + j] =
                mxk_random_dropout_mask(mxk_philox_uniform(r.v[j], 0.0f, 1.0f), keep, scale);
    }
}

extern "C" cudaError_t cu_launch_dropout_draw(float *u, uint64_t ns, cu_philox_pos pos, float keep,
                                              float scale, cudaStream_t stream) {
    cu_dropout_draw_kernel<<<cu_blocks((ns + 3) / 4), CU_THREADS, 0, stream>>>(u, ns, pos, keep,
                                                                               scale);
    return cu_launched();
}

/** Index of element i of shape d in the draw shape s (broadcast along its 1-sized axes). */
static __device__ inline uint64_t cu_draw_index(const mxk_shape &d, const mxk_shape &s,
                                                uint64_t i) {
    uint64_t idx = 0, mul = 1;
    for (int32_t a = d.ndim - 1; a >= 0; a--) {
        uint64_t c = i % (uint64_t)d.dims[a];
        i /= (uint64_t)d.dims[a];
        if (s.dims[a] != 1)
            idx += c * mul;
        mul *= (uint64_t)s.dims[a];
    }
    return idx;
}

/** y = x u[j], m = u[j] with j the draw index of element i. */
__global__ void cu_dropout_broadcast_kernel(const float *x, float *y, int32_t y_req, float *m,
                                            int32_t m_req, const float *u, uint64_t n,
                                            mxk_shape data, mxk_shape draw) {
    CU_KERNEL_LOOP(i, n) {
        float mk = u[cu_draw_index(data, draw, i)];
        float xv = x[i];
        if (m != NULL)
            cu_store(&m[i], mk, m_req);
        if (y != NULL)
            cu_store(&y[i], xv * mk, y_req);
    }
}

extern "C" cudaError_t cu_launch_dropout_broadcast(const float *x, float *y, int32_t y_req,
                                                   float *m, int32_t m_req, const float *u,
                                                   uint64_t n, mxk_shape data, mxk_shape draw,
                                                   cudaStream_t stream) {
    cu_dropout_broadcast_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(x, y, y_req, m, m_req, u,
                                                                         n, data, draw);
    return cu_launched();
}

/** dx = dy * mask by the request. */
__global__ void cu_dropout_backward_kernel(const float *dy, const float *mask, float *dx,
                                           uint64_t n, int32_t req) {
    CU_KERNEL_LOOP(i, n) {
        cu_store(&dx[i], dy[i] * mask[i], req);
    }
}

extern "C" cudaError_t cu_launch_dropout_backward(const float *dy, const float *mask, float *dx,
                                                  uint64_t n, int32_t req, cudaStream_t stream) {
    cu_dropout_backward_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(dy, mask, dx, n, req);
    return cu_launched();
}
