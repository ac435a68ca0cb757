/*
 * cuda plugin: the device backend's fill (cu_device.c), a grid-stride store of one
 * element's bit pattern.
 */
#include "cu_kernels.h"
#include "cu_launch.cuh"

/** Stores `v` into p[0 .. n). */
template <typename T> __global__ void cu_fill_kernel(T *p, T v, uint64_t n) {
    CU_KERNEL_LOOP(i, n) {
        p[i] = v;
    }
}

/** Launches cu_fill_kernel for element type T with the low bytes of `bits`. */
template <typename T>
static cudaError_t cu_fill_as(void *ptr, uint64_t bits, uint64_t count, cudaStream_t stream) {
    T v;
    memcpy(&v, &bits, sizeof v);
    cu_fill_kernel<T><<<cu_blocks(count), CU_THREADS, 0, stream>>>((T *)ptr, v, count);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_fill_pattern(void *ptr, uint32_t elem_size, uint64_t bits,
                                              uint64_t count, cudaStream_t stream) {
    switch (elem_size) {
    case 1:
        return cu_fill_as<uint8_t>(ptr, bits, count, stream);
    case 2:
        return cu_fill_as<uint16_t>(ptr, bits, count, stream);
    case 4:
        return cu_fill_as<uint32_t>(ptr, bits, count, stream);
    case 8:
        return cu_fill_as<uint64_t>(ptr, bits, count, stream);
    default:
        return cudaErrorInvalidValue;
    }
}
