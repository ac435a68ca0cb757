/*
 * cuda plugin: the C declarations of the launchers of its CUDA C kernels
 * (cu_kern_*.cu), callable from the C11 host sources. Every launcher queues its
 * kernel on `stream` and returns the launch status (cudaGetLastError after the
 * launch; execution errors surface when the engine synchronises the stream).
 * Sizes are element counts unless stated; pointers are device memory.
 */
#ifndef MXK_CU_KERNELS_H
#define MXK_CU_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Writes the `elem_size`-byte (1, 2, 4 or 8) pattern `bits` (its low bytes, in
 * memory order) into `count` consecutive elements at ptr (cu_kern_fill.cu).
 */
cudaError_t cu_launch_fill_pattern(void *ptr, uint32_t elem_size, uint64_t bits, uint64_t count,
                                   cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MXK_CU_KERNELS_H */
