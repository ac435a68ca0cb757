/*
 * cuda plugin: the GPU device backend (abi/mxk_abi_device.h), device type
 * MXK_DEV_GPU named "gpu".
 *
 * Devices are CUDA's (cudaGetDeviceCount; 0 when no GPU or driver is present: the
 * backend stays registered so `mxk plugins` shows it). Memory comes from cudaMalloc
 * with 256-byte alignment; the kernel's storage manager pools it (MXNet's
 * GPUDeviceStorage under the pooled storage manager,
 * src/storage/gpu_device_storage.h, pooled_storage_manager.h). Copies are
 * cudaMemcpyAsync on the caller's stream (peer copies between GPUs with
 * cudaMemcpyPeerAsync, direct peer access enabled once per pair where the devices
 * support it), or synchronous without one. Streams are non-blocking CUDA
 * streams. Pinned host memory (the cpu_pinned context) comes from cudaHostAlloc
 * (MXNet's PinnedMemoryStorage). Every function sets its device first and is
 * thread-safe.
 */
#include "cuda_plugin.h"
#include "cu_kernels.h"
#include "mxk_fill_value.h"

#include <stdatomic.h>
#include <stdio.h>

/** Alignment of cudaMalloc results that the backend promises (CUDA gives at least 256). */
#define CU_ALIGNMENT 256

/** Number of GPUs; 0 when CUDA reports none or no driver (the error is cleared). */
static int32_t cu_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n > CU_MAX_DEVICES ? CU_MAX_DEVICES : n;
}

/** Makes dev_id current; MXK_ERR_INVALID_ARGUMENT naming the range when it does not exist. */
static mxk_status cu_set_device(int32_t dev_id, mxk_error_sink *err) {
    int32_t n = cu_device_count();
    if (dev_id < 0 || dev_id >= n)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "gpu device %d does not exist (%d GPU(s) visible)", (int)dev_id,
                             (int)n);
    return cu_check(cudaSetDevice(dev_id), "cudaSetDevice", err);
}

/**
 * Fills the properties of gpu(dev_id): CUDA's device name, total and free memory
 * (cudaMemGetInfo), alignment 256 and the compute capability.
 */
static mxk_status cu_get_properties(int32_t dev_id, mxk_device_props *props, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_set_device(dev_id, err));
    if (props == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "props is NULL");
    struct cudaDeviceProp p;
    CU_CHECK(cudaGetDeviceProperties(&p, dev_id), "cudaGetDeviceProperties", err);
    size_t free_b = 0, total_b = 0;
    CU_CHECK(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo", err);
    if (MXK_SDK_HAS_FIELD(props, mxk_device_props, name))
        snprintf(props->name, sizeof props->name, "%s", p.name);
    if (MXK_SDK_HAS_FIELD(props, mxk_device_props, total_memory))
        props->total_memory = total_b;
    if (MXK_SDK_HAS_FIELD(props, mxk_device_props, free_memory))
        props->free_memory = free_b;
    if (MXK_SDK_HAS_FIELD(props, mxk_device_props, alignment))
        props->alignment = CU_ALIGNMENT;
    if (MXK_SDK_HAS_FIELD(props, mxk_device_props, compute_minor)) {
        props->compute_major = p.major;
        props->compute_minor = p.minor;
    }
    return MXK_OK;
}

/**
 * cudaMalloc of `bytes` (> 0) on dev_id. Out of memory: MXK_ERR_OUT_OF_MEMORY with
 * "gpu(D): out of memory allocating N bytes (F bytes free of T)".
 */
static mxk_status cu_alloc(int32_t dev_id, uint64_t bytes, void **ptr, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_set_device(dev_id, err));
    if (ptr == NULL || bytes == 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "gpu alloc: need bytes > 0 and an output pointer");
    *ptr = NULL;
    cudaError_t st = cudaMalloc(ptr, (size_t)bytes);
    if (st == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        size_t free_b = 0, total_b = 0;
        if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
            (void)cudaGetLastError();
        *ptr = NULL;
        return mxk_sdk_error(
            err, MXK_ERR_OUT_OF_MEMORY,
            "gpu(%d): out of memory allocating %llu bytes (%llu bytes free of %llu)", (int)dev_id,
            (unsigned long long)bytes, (unsigned long long)free_b, (unsigned long long)total_b);
    }
    if (st != cudaSuccess)
        *ptr = NULL;
    return cu_check(st, "cudaMalloc", err);
}

/** cudaFree; NULL is a no-op. Errors (a sticky device fault) are cleared and ignored. */
static void cu_free(int32_t dev_id, void *ptr) {
    if (ptr == NULL)
        return;
    if (cudaSetDevice(dev_id) != cudaSuccess || cudaFree(ptr) != cudaSuccess)
        (void)cudaGetLastError();
}

/** Pairs (dst, src) whose peer access has been tried, bit src of g_peer_tried[dst]. */
static _Atomic uint64_t g_peer_tried[CU_MAX_DEVICES];

/**
 * Enables direct access from `dst` to `src`'s memory once per pair
 * (cudaDeviceEnablePeerAccess, when cudaDeviceCanAccessPeer says the link exists), so
 * peer copies go over NVLink/PCIe directly instead of staging through the host.
 * Failures are ignored: cudaMemcpyPeerAsync works either way. Leaves `dst` current.
 */
static void cu_enable_peer(int32_t dst, int32_t src) {
    uint64_t bit = (uint64_t)1 << src;
    if (atomic_fetch_or(&g_peer_tried[dst], bit) & bit)
        return;
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, dst, src) == cudaSuccess && can &&
        cudaSetDevice(dst) == cudaSuccess)
        (void)cudaDeviceEnablePeerAccess(src, 0);
    (void)cudaGetLastError();
}

/**
 * Copies `bytes`: host<->device on the device side's GPU, device->device within one
 * GPU or between two (peer copy). With a stream the copy is queued on it (complete
 * when the stream is synchronised); without one it is complete on return.
 */
static mxk_status cu_copy(mxk_copy_kind kind, void *dst, int32_t dst_dev_id, const void *src,
                          int32_t src_dev_id, uint64_t bytes, void *stream, mxk_error_sink *err) {
    int32_t dev = kind == MXK_COPY_DEVICE_TO_HOST ? src_dev_id : dst_dev_id;
    if (kind == MXK_COPY_DEVICE_TO_DEVICE && src_dev_id != dst_dev_id) {
        MXK_SDK_CHECK(cu_set_device(src_dev_id, err));
        cu_enable_peer(dst_dev_id, src_dev_id);
    }
    MXK_SDK_CHECK(cu_set_device(dev, err));
    if (bytes == 0)
        return MXK_OK;
    if (dst == NULL || src == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "gpu copy: NULL pointer");
    enum cudaMemcpyKind k;
    switch (kind) {
    case MXK_COPY_HOST_TO_DEVICE:
        k = cudaMemcpyHostToDevice;
        break;
    case MXK_COPY_DEVICE_TO_HOST:
        k = cudaMemcpyDeviceToHost;
        break;
    case MXK_COPY_DEVICE_TO_DEVICE:
        k = cudaMemcpyDeviceToDevice;
        break;
    default:
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "gpu copy: invalid kind %d", (int)kind);
    }
    cudaStream_t s = (cudaStream_t)stream;
    if (kind == MXK_COPY_DEVICE_TO_DEVICE && src_dev_id != dst_dev_id) {
        if (s == NULL)
            return cu_check(cudaMemcpyPeer(dst, dst_dev_id, src, src_dev_id, (size_t)bytes),
                            "cudaMemcpyPeer", err);
        return cu_check(cudaMemcpyPeerAsync(dst, dst_dev_id, src, src_dev_id, (size_t)bytes, s),
                        "cudaMemcpyPeerAsync", err);
    }
    if (s == NULL)
        return cu_check(cudaMemcpy(dst, src, (size_t)bytes, k), "cudaMemcpy", err);
    return cu_check(cudaMemcpyAsync(dst, src, (size_t)bytes, k, s), "cudaMemcpyAsync", err);
}

/**
 * Fills `count` elements of `dtype` with `value` converted as the CPU backend does
 * (plugins/common/mxk_fill_value.h), by a kernel on `stream` (NULL: the legacy
 * default stream, then waits for it).
 */
static mxk_status cu_fill(int32_t dev_id, void *ptr, int32_t dtype, uint64_t count, double value,
                          void *stream, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_set_device(dev_id, err));
    uint64_t bits = 0;
    uint32_t size = mxk_fill_pattern(dtype, value, &bits);
    if (size == 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "gpu fill: invalid dtype %d",
                             (int)dtype);
    if (count == 0)
        return MXK_OK;
    if (ptr == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "gpu fill: NULL pointer");
    cudaStream_t s = (cudaStream_t)stream;
    CU_CHECK(cu_launch_fill_pattern(ptr, size, bits, count, s), "gpu fill kernel", err);
    if (s == NULL)
        CU_CHECK(cudaStreamSynchronize(NULL), "gpu fill: cudaStreamSynchronize", err);
    return MXK_OK;
}

/** A non-blocking stream on dev_id (cudaStreamCreateWithFlags). */
static mxk_status cu_stream_create(int32_t dev_id, void **stream, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_set_device(dev_id, err));
    cudaStream_t s = NULL;
    CU_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags",
             err);
    *stream = s;
    return MXK_OK;
}

/** cudaStreamDestroy; errors are cleared and ignored. */
static void cu_stream_destroy(int32_t dev_id, void *stream) {
    if (cudaSetDevice(dev_id) != cudaSuccess ||
        cudaStreamDestroy((cudaStream_t)stream) != cudaSuccess)
        (void)cudaGetLastError();
}

/**
 * Waits for `stream` (NULL: the whole device) and returns the first error of the
 * work queued on it: a failed kernel surfaces here as MXK_ERR_BACKEND with CUDA's
 * message ("an illegal memory access was encountered").
 */
static mxk_status cu_synchronize(int32_t dev_id, void *stream, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_set_device(dev_id, err));
    if (stream == NULL)
        return cu_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", err);
    return cu_check(cudaStreamSynchronize((cudaStream_t)stream), "cudaStreamSynchronize", err);
}

/** cudaHostAlloc (portable) of `bytes`; MXK_ERR_OUT_OF_MEMORY naming them. */
static mxk_status cu_host_alloc(uint64_t bytes, void **ptr, mxk_error_sink *err) {
    if (ptr == NULL || bytes == 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "pinned alloc: need bytes > 0 and an output pointer");
    *ptr = NULL;
    if (cu_device_count() == 0)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                             "pinned alloc of %llu bytes: no GPU is visible",
                             (unsigned long long)bytes);
    cudaError_t st = cudaHostAlloc(ptr, (size_t)bytes, cudaHostAllocPortable);
    if (st != cudaSuccess) {
        (void)cudaGetLastError();
        *ptr = NULL;
        return mxk_sdk_error(
            err, MXK_ERR_OUT_OF_MEMORY, "pinned alloc of %llu bytes failed: CUDA error %s: %s",
            (unsigned long long)bytes, cudaGetErrorName(st), cudaGetErrorString(st));
    }
    return MXK_OK;
}

/** cudaFreeHost; NULL is a no-op. */
static void cu_host_free(void *ptr) {
    if (ptr != NULL && cudaFreeHost(ptr) != cudaSuccess)
        (void)cudaGetLastError();
}

mxk_status cu_register_device(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_device_def def;
    mxk_sdk_device_def_init(&def);
    def.dev_type = MXK_DEV_GPU;
    def.name = "gpu";
    def.device_count = cu_device_count;
    def.get_properties = cu_get_properties;
    def.alloc = cu_alloc;
    def.free = cu_free;
    def.copy = cu_copy;
    def.fill = cu_fill;
    def.stream_create = cu_stream_create;
    def.stream_destroy = cu_stream_destroy;
    def.synchronize = cu_synchronize;
    def.host_alloc = cu_host_alloc;
    def.host_free = cu_host_free;
    cu_nccl_install(&def);
    return reg->register_device(reg, &def, err);
}
