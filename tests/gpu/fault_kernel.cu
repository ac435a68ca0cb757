/*
 * The GPU side of the fault test plugin (fault_plugin.c): a kernel that stores
 * through an invalid device pointer, so the CUDA context faults asynchronously
 * (cudaErrorIllegalAddress at the next synchronisation of the stream).
 */
#include <stdint.h>

#include <cuda_runtime.h>

/** Stores 1 at an address inside the unmapped first page of the device's space. */
__global__ void gpu_fault_kernel(float *bad) {
    bad[threadIdx.x] = 1.0f;
}

/** Queues gpu_fault_kernel on `stream`; returns the launch status (not the fault). */
extern "C" cudaError_t gpu_fault_launch(cudaStream_t stream) {
    gpu_fault_kernel<<<1, 32, 0, stream>>>((float *)(uintptr_t)0x100);
    return cudaGetLastError();
}
