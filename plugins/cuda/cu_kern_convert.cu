/*
 * cuda plugin: the kernels of every dtype: Cast, add-into copies, add_n, fills
 * by request and _arange. Loads go through double and stores convert as
 * cpu-blas's cbt_store (float32 and float64 plainly, float16 through float
 * rounded to nearest even, integers truncated and saturated, NaN 0); Cast's
 * integer targets wrap instead (mxk_math_cast.h).
 *
 * Semantics: MXNet src/operator/tensor/elemwise_unary_op.h (CastCompute),
 * elemwise_sum.h (ElementWiseSumCompute), init_op.h (FillCompute, RangeCompute)
 * and include/mxnet/op_attr_types.h (KERNEL_ASSIGN).
 */
#include <cuda_fp16.h>

#include <type_traits>

#include "cu_kern_math.h"
#include "cu_launch.cuh"
#include "mxk_math_cast.h"

/** Element v as double. */
template <typename T> static __device__ __forceinline__ double cu_load(T v) {
    if constexpr (std::is_same<T, __half>::value)
        return (double)__half2float(v);
    else
        return (double)v;
}

/** v converted to T as cbt_store does. */
template <typename T> static __device__ __forceinline__ T cu_convert(double v) {
    if constexpr (std::is_same<T, __half>::value)
        return __float2half_rn((float)v);
    else if constexpr (std::is_same<T, uint8_t>::value)
        return (T)mxk_cast_saturate(v, 0.0, 255.0);
    else if constexpr (std::is_same<T, int8_t>::value)
        return (T)mxk_cast_saturate(v, -128.0, 127.0);
    else if constexpr (std::is_same<T, int32_t>::value)
        return (T)mxk_cast_saturate(v, -2147483648.0, 2147483647.0);
    else if constexpr (std::is_same<T, int64_t>::value) /* the largest double below 2^63 */
        return (T)mxk_cast_saturate(v, -9223372036854775808.0, 9223372036854774784.0);
    else
        return (T)v;
}

/** *p = v, or *p + v when `add` (float32 adds in float, the others through double). */
template <typename T>
static __device__ __forceinline__ void cu_assign_value(T *p, double v, int add) {
    if constexpr (std::is_same<T, float>::value)
        *p = add ? *p + (float)v : (float)v;
    else
        *p = cu_convert<T>(add ? cu_load(*p) + v : v);
}

/** Calls BODY with T the element type of dtype `dt`; cudaErrorInvalidValue for others. */
#define CU_DTYPE_SWITCH(dt, T, BODY)                                                               \
    switch (dt) {                                                                                  \
    case MXK_FLOAT32: {                                                                            \
        typedef float T;                                                                           \
        BODY;                                                                                      \
    } break;                                                                                       \
    case MXK_FLOAT64: {                                                                            \
        typedef double T;                                                                          \
        BODY;                                                                                      \
    } break;                                                                                       \
    case MXK_FLOAT16: {                                                                            \
        typedef __half T;                                                                          \
        BODY;                                                                                      \
    } break;                                                                                       \
    case MXK_UINT8: {                                                                              \
        typedef uint8_t T;                                                                         \
        BODY;                                                                                      \
    } break;                                                                                       \
    case MXK_INT32: {                                                                              \
        typedef int32_t T;                                                                         \
        BODY;                                                                                      \
    } break;                                                                                       \
    case MXK_INT8: {                                                                               \
        typedef int8_t T;                                                                          \
        BODY;                                                                                      \
    } break;                                                                                       \
    case MXK_INT64: {                                                                              \
        typedef int64_t T;                                                                         \
        BODY;                                                                                      \
    } break;                                                                                       \
    default:                                                                                       \
        return cudaErrorInvalidValue;                                                              \
    }

/** Cast of one element: integer targets wrap modulo 2^bits, float targets through double. */
template <typename S, typename D>
static __device__ __forceinline__ void cu_cast_one(S x, D *y, int add) {
    if constexpr (std::is_integral<D>::value) {
        int64_t w;
        if constexpr (std::is_integral<S>::value)
            w = (int64_t)x;
        else
            w = mxk_cast_float_to_int(cu_load(x), sizeof(D) == 8 ? 64 : 32);
        uint64_t u = (uint64_t)w;
        if (add)
            u += (uint64_t)(int64_t)*y;
        *y = (D)u;
    } else if constexpr (std::is_same<S, float>::value && std::is_same<D, float>::value) {
        *y = add ? *y + x : x;
    } else {
        *y = cu_convert<D>(add ? cu_load(*y) + cu_load(x) : cu_load(x));
    }
}

/** y[i] (=|+=) (D) x[i]. */
template <typename S, typename D>
__global__ void cu_cast_kernel(const S *x, D *y, uint64_t n, int add) {
    CU_KERNEL_LOOP(i, n) {
        cu_cast_one(x[i], &y[i], add);
    }
}

extern "C" cudaError_t cu_launch_cast(const void *x, int32_t st, void *y, int32_t dt, uint64_t n,
                                      int add, cudaStream_t stream) {
    CU_DTYPE_SWITCH(st, S,
                    CU_DTYPE_SWITCH(dt, D,
                                    (cu_cast_kernel<S, D><<<cu_blocks(n), CU_THREADS, 0, stream>>>(
                                        (const S *)x, (D *)y, n, add))))
    return cu_launched();
}

/** y[i] += x[i]. */
template <typename T> __global__ void cu_copy_add_kernel(const T *x, T *y, uint64_t n) {
    CU_KERNEL_LOOP(i, n) {
        cu_assign_value(&y[i], cu_load(x[i]), 1);
    }
}

extern "C" cudaError_t cu_launch_copy_add(const void *x, void *y, int32_t dtype, uint64_t n,
                                          cudaStream_t stream) {
    CU_DTYPE_SWITCH(
        dtype, T,
        (cu_copy_add_kernel<T><<<cu_blocks(n), CU_THREADS, 0, stream>>>((const T *)x, (T *)y, n)))
    return cu_launched();
}

/** The inputs of add_n (one kernel argument). */
struct cu_add_n_args {
    const void *x[CU_ADD_N_MAX];
};

/** y[i] (=|+=) the sum of the inputs' element i, in input order. */
template <typename T>
__global__ void cu_add_n_kernel(cu_add_n_args a, uint32_t num, T *y, uint64_t n, int add) {
    CU_KERNEL_LOOP(i, n) {
        if constexpr (std::is_same<T, float>::value) {
            float s = 0.0f;
            for (uint32_t k = 0; k < num; k++)
                s += ((const float *)a.x[k])[i];
            y[i] = add ? y[i] + s : s;
        } else {
            double s = 0.0;
            for (uint32_t k = 0; k < num; k++)
                s += cu_load(((const T *)a.x[k])[i]);
            cu_assign_value(&y[i], s, add);
        }
    }
}

extern "C" cudaError_t cu_launch_add_n(const void *const *x, uint32_t num, void *y, int32_t dtype,
                                       uint64_t n, int add, cudaStream_t stream) {
    if (num > CU_ADD_N_MAX)
        return cudaErrorInvalidValue;
    cu_add_n_args a = {};
    for (uint32_t k = 0; k < num; k++)
        a.x[k] = x[k];
    CU_DTYPE_SWITCH(
        dtype, T,
        (cu_add_n_kernel<T><<<cu_blocks(n), CU_THREADS, 0, stream>>>(a, num, (T *)y, n, add)))
    return cu_launched();
}

/** y[i] (=|+=) v. */
template <typename T> __global__ void cu_fill_value_kernel(T *y, double v, uint64_t n, int add) {
    CU_KERNEL_LOOP(i, n) {
        cu_assign_value(&y[i], v, add);
    }
}

extern "C" cudaError_t cu_launch_fill_value(void *y, int32_t dtype, double value, uint64_t n,
                                            int add, cudaStream_t stream) {
    CU_DTYPE_SWITCH(
        dtype, T,
        (cu_fill_value_kernel<T><<<cu_blocks(n), CU_THREADS, 0, stream>>>((T *)y, value, n, add)))
    return cu_launched();
}

/** y[i] (=|+=) start + (i / repeat) step (float32 in float, the others in double). */
template <typename T>
__global__ void cu_arange_kernel(T *y, double start, double step, uint64_t repeat, uint64_t n,
                                 int add) {
    CU_KERNEL_LOOP(i, n) {
        if constexpr (std::is_same<T, float>::value)
            cu_assign_value(&y[i], (double)((float)start + (float)(i / repeat) * (float)step), add);
        else
            cu_assign_value(&y[i], start + (double)(i / repeat) * step, add);
    }
}

extern "C" cudaError_t cu_launch_arange(void *y, int32_t dtype, double start, double step,
                                        uint64_t repeat, uint64_t n, int add, cudaStream_t stream) {
    if (dtype != MXK_FLOAT32 && dtype != MXK_FLOAT64 && dtype != MXK_FLOAT16) {
        start = trunc(start); /* integer dtypes: DType start, step */
        step = trunc(step);
    }
    CU_DTYPE_SWITCH(dtype, T,
                    (cu_arange_kernel<T><<<cu_blocks(n), CU_THREADS, 0, stream>>>(
                        (T *)y, start, step, repeat, n, add)))
    return cu_launched();
}
