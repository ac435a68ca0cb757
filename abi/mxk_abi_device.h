/*
 * mxk plugin ABI 1.4: the device backend contract.
 *
 * A device backend owns one device type (CPU, GPU): it reports its devices,
 * allocates and frees raw memory (the kernel's pooled storage sits on top),
 * copies between host and device and between devices, and manages streams.
 * Semantics: MXNet's Storage / DeviceStorage and RunContext
 * (include/mxnet/storage.h, src/storage/cpu_device_storage.h and friends).
 *
 * Exactly one backend may be registered per device type; a second is rejected
 * naming both plugins. Threading: every function may be called from any thread,
 * concurrently. Ownership: memory returned by alloc is freed by the same backend's
 * free; the kernel never frees device memory itself.
 */
#ifndef MXK_ABI_DEVICE_H
#define MXK_ABI_DEVICE_H

#include "mxk_abi_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Properties of one device, filled by mxk_device_def.get_properties. */
typedef struct mxk_device_props {
    uint32_t struct_size;  /**< set by the kernel before the call */
    char name[128];        /**< human-readable device name, NUL-terminated */
    uint64_t total_memory; /**< bytes; 0 if unknown */
    uint64_t free_memory;  /**< bytes; 0 if unknown */
    uint32_t alignment;    /**< alignment of alloc() results in bytes (>= 16) */
    int32_t compute_major; /**< e.g. CUDA compute capability; 0 on CPU */
    int32_t compute_minor;
} mxk_device_props;

/** Direction of a copy (mxk_device_def.copy). */
typedef enum mxk_copy_kind {
    MXK_COPY_HOST_TO_DEVICE = 0,
    MXK_COPY_DEVICE_TO_HOST = 1,
    MXK_COPY_DEVICE_TO_DEVICE = 2 /**< within this backend, possibly across dev ids */
} mxk_copy_kind;

/** A device backend. */
typedef struct mxk_device_def {
    uint32_t struct_size;
    uint32_t abi_minor;
    int32_t dev_type; /**< mxk_dev_type served */
    const char *name; /**< "cpu", "gpu" */

    /** Number of devices of this type (0 when none is present: the backend stays registered). */
    int32_t (*device_count)(void);
    /** Fills props for device `dev_id` (struct_size preset by the kernel, the rest zero).
     *  Required; backs the public mxk_device_properties (kernel/include/mxk.h). */
    mxk_status (*get_properties)(int32_t dev_id, mxk_device_props *props, mxk_error_sink *err);
    /** Allocates `bytes` (> 0) on `dev_id`, aligned to props.alignment. */
    mxk_status (*alloc)(int32_t dev_id, uint64_t bytes, void **ptr, mxk_error_sink *err);
    /** Frees memory from alloc. NULL ptr: no-op. */
    void (*free)(int32_t dev_id, void *ptr);
    /**
     * Copies `bytes` from src to dst. For HOST_TO_DEVICE / DEVICE_TO_HOST the host
     * side is ordinary CPU memory; `dev_id` is the device side (DEVICE_TO_DEVICE:
     * dst on dst_dev_id, src on src_dev_id). `stream` (may be NULL) orders the copy;
     * the copy is complete when the function returns or, with a stream, when the
     * stream is synchronised.
     */
    mxk_status (*copy)(mxk_copy_kind kind, void *dst, int32_t dst_dev_id, const void *src,
                       int32_t src_dev_id, uint64_t bytes, void *stream, mxk_error_sink *err);
    /**
     * Fills `count` elements of `dtype` at ptr (on dev_id) with `value` (converted to
     * the dtype). Used by NDArray fill/zeros/ones.
     */
    mxk_status (*fill)(int32_t dev_id, void *ptr, int32_t dtype, uint64_t count, double value,
                       void *stream, mxk_error_sink *err);
    /**
     * Creates a stream on dev_id. The threaded engine calls it once per GPU worker
     * thread, on that thread, when the worker starts (a compute stream for the normal
     * and priority workers, a copy stream for the copy workers: MXNet's
     * ThreadedEnginePerDevice, src/engine/threaded_engine_perdevice.cc), and hands the
     * stream to every kernel and copy the worker runs (mxk_op_ctx.stream). A failure
     * (message in err) leaves that worker without a stream: every function given to it
     * then fails with the message. NULL slot: the backend has no streams (CPU).
     */
    mxk_status (*stream_create)(int32_t dev_id, void **stream, mxk_error_sink *err);
    /**
     * Destroys a stream from stream_create (threaded engine: on the thread that created
     * it) when the engine stops (nothing is queued on it then; at mxk_shutdown this
     * follows the plugins' mxk_plugin_shutdown).
     */
    void (*stream_destroy)(int32_t dev_id, void *stream);
    /**
     * Waits until all work queued on `stream` (NULL: the whole device) is done, and
     * reports a failure of that work (an asynchronous kernel error) as its status.
     * The threaded engine calls it on a GPU worker's stream, on the worker's thread,
     * after every function the worker runs synchronously, so the function's writes are
     * complete when the engine releases its variables (MXNet's RunContext / OnComplete
     * after Stream::Wait, src/engine/threaded_engine.h); a failure becomes the
     * function's error, with this message after the operator's name.
     */
    mxk_status (*synchronize)(int32_t dev_id, void *stream, mxk_error_sink *err);

    /* --- ABI 1.4 (read only when struct_size covers it) --- */
    /**
     * Allocates `bytes` (> 0) of page-locked host memory, which the backend's copies
     * read and write at full bus speed and asynchronously: the memory of the
     * cpu_pinned context (device type 3, MXNet's PinnedMemoryStorage,
     * src/storage/pinned_memory_storage.h: cudaHostAlloc). The kernel's storage
     * manager uses the GPU backend's (else the CPU backend's) when that backend reports
     * at least one device; cpu_pinned(N) then names its device N. Without one,
     * cpu_pinned arrays are ordinary host memory from the CPU backend. The memory is
     * pooled, and freed (host_free) when the pool is released or at mxk_shutdown.
     * MXK_ERR_OUT_OF_MEMORY naming the bytes when it fails. NULL: none.
     */
    mxk_status (*host_alloc)(uint64_t bytes, void **ptr, mxk_error_sink *err);
    /** Frees memory from host_alloc; NULL ptr: no-op. Required when host_alloc is set. */
    void (*host_free)(void *ptr);
    /**
     * Sums `n` (>= 2) arrays of `count` elements of `dtype`, src[i] on device
     * src_dev[i] of this type (the ids distinct), into dst on src_dev[0] (dst may be
     * src[0]); the sources are not modified. The "device" KVStore's reduce when the
     * values pushed to a key lie on several devices of this type (MXNet's
     * KVStoreNCCL Reduce, src/kvstore/kvstore_nccl.h: ncclReduce to a root). Called
     * from an engine function that reads the sources and writes dst; synchronous:
     * the sum is complete when it returns. Thread-safe. An error (MXK_ERR_BACKEND,
     * MXK_ERR_UNSUPPORTED for a dtype it cannot sum) fails that push, reported by a
     * wait on the arrays it writes. NULL: the kernel copies the values to src_dev[0]
     * and sums them there with the reduce contract's operator (abi/README.md).
     */
    mxk_status (*reduce)(uint32_t n, const void *const *src, const int32_t *src_dev, void *dst,
                         int32_t dtype, uint64_t count, mxk_error_sink *err);
} mxk_device_def;

#ifdef __cplusplus
}
#endif

#endif /* MXK_ABI_DEVICE_H */
