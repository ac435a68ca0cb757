/*
 * cuda plugin: element access by mxk dtype shared by the CUDA C kernels: index
 * and condition tensors of any dtype read as double (as cpu-blas's cbt_load), small
 * integer results (positions, masks) stored into any dtype, and a dispatch of a
 * template over the element type of a dtype.
 */
#ifndef MXK_CU_DTYPE_CUH
#define MXK_CU_DTYPE_CUH

#include <stdint.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "mxk_sdk.h"

/** Element i of a tensor of element type T as a double. */
template <typename T> __device__ static inline double cu_load(const void *p, uint64_t i) {
    return (double)((const T *)p)[i];
}
/** float16 element as a double. */
template <> __device__ inline double cu_load<__half>(const void *p, uint64_t i) {
    return (double)__half2float(((const __half *)p)[i]);
}

/**
 * Stores v (an integer-valued position or 0/1, exact in every dtype that can
 * hold it) into element i of dtype `dtype` at p, or adds it (add = 1).
 */
__device__ static inline void cu_store_small(void *p, int32_t dtype, uint64_t i, double v,
                                             int add) {
    switch (dtype) {
    case MXK_FLOAT32: {
        float *q = (float *)p + i;
        *q = add ? *q + (float)v : (float)v;
        break;
    }
    case MXK_FLOAT64: {
        double *q = (double *)p + i;
        *q = add ? *q + v : v;
        break;
    }
    case MXK_FLOAT16: {
        __half *q = (__half *)p + i;
        *q = __float2half_rn(add ? __half2float(*q) + (float)v : (float)v);
        break;
    }
    case MXK_UINT8: {
        uint8_t *q = (uint8_t *)p + i;
        *q = (uint8_t)(add ? *q + v : v);
        break;
    }
    case MXK_INT8: {
        int8_t *q = (int8_t *)p + i;
        *q = (int8_t)(add ? *q + v : v);
        break;
    }
    case MXK_INT32: {
        int32_t *q = (int32_t *)p + i;
        *q = (int32_t)(add ? *q + v : v);
        break;
    }
    default: { /* MXK_INT64 */
        int64_t *q = (int64_t *)p + i;
        *q = (int64_t)(add ? (double)*q + v : v);
        break;
    }
    }
}

/** return F<T>(args...) for the element type T of mxk dtype `dtype` (else an error). */
#define CU_DTYPE_DISPATCH(dtype, F, ...)                                                           \
    switch (dtype) {                                                                               \
    case MXK_FLOAT32:                                                                              \
        return F<float>(__VA_ARGS__);                                                              \
    case MXK_FLOAT64:                                                                              \
        return F<double>(__VA_ARGS__);                                                             \
    case MXK_FLOAT16:                                                                              \
        return F<__half>(__VA_ARGS__);                                                             \
    case MXK_UINT8:                                                                                \
        return F<uint8_t>(__VA_ARGS__);                                                            \
    case MXK_INT8:                                                                                 \
        return F<int8_t>(__VA_ARGS__);                                                             \
    case MXK_INT32:                                                                                \
        return F<int32_t>(__VA_ARGS__);                                                            \
    case MXK_INT64:                                                                                \
        return F<int64_t>(__VA_ARGS__);                                                            \
    default:                                                                                       \
        return cudaErrorInvalidValue;                                                              \
    }

#endif /* MXK_CU_DTYPE_CUH */
