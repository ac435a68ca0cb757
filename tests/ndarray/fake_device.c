/*
 * Test-local device registry: malloc-based CPU and scrambled "GPU" backends
 * (see fake_device.h). Defines mxk_registry_device() in place of kernel/registry.c.
 */
#include "fake_device.h"

#include <stdlib.h>
#include <string.h>

#include "dtype_convert.h"
#include "error.h"
#include "registry.h"
#include "shape.h"

fake_device_counters fake_counters;
atomic_int fake_gpu_fail_copies;

/** Allocation alignment of both fake backends. */
#define FAKE_ALIGN 64

/** Rounds n up to FAKE_ALIGN (aligned_alloc needs a multiple of the alignment). */
static size_t round_up(uint64_t n) {
    return (size_t)((n + FAKE_ALIGN - 1) / FAKE_ALIGN * FAKE_ALIGN);
}

/* ---- CPU ---------------------------------------------------------------- */

/** One CPU device. */
static int32_t cpu_count(void) {
    return 1;
}

/** Fills CPU device properties. */
static mxk_status cpu_props(int32_t dev_id, mxk_device_props *p, mxk_error_sink *err) {
    strcpy(p->name, "fake cpu");
    p->alignment = FAKE_ALIGN;
    return MXK_OK;
}

/** malloc-based allocation. */
static mxk_status cpu_alloc(int32_t dev_id, uint64_t bytes, void **ptr, mxk_error_sink *err) {
    *ptr = aligned_alloc(FAKE_ALIGN, round_up(bytes));
    if (*ptr == NULL)
        return mxk_sink_set(err, MXK_ERR_OUT_OF_MEMORY, "fake cpu: out of memory");
    atomic_fetch_add(&fake_counters.cpu_allocs, 1);
    return MXK_OK;
}

/** Frees CPU memory. */
static void cpu_free(int32_t dev_id, void *ptr) {
    if (ptr)
        atomic_fetch_add(&fake_counters.cpu_frees, 1);
    free(ptr);
}

/** All CPU copies are memmove. */
static mxk_status cpu_copy(mxk_copy_kind kind, void *dst, int32_t dst_dev_id, const void *src,
                           int32_t src_dev_id, uint64_t bytes, void *stream, mxk_error_sink *err) {
    atomic_fetch_add(&fake_counters.cpu_copy, 1);
    memmove(dst, src, (size_t)bytes);
    return MXK_OK;
}

/** Host fill through the kernel's conversion helper. */
static mxk_status cpu_fill(int32_t dev_id, void *ptr, int32_t dtype, uint64_t count, double value,
                           void *stream, mxk_error_sink *err) {
    atomic_fetch_add(&fake_counters.cpu_fill, 1);
    if (!mxk_dtype_fill_host(ptr, dtype, count, value))
        return mxk_sink_set(err, MXK_ERR_TYPE, "fake cpu fill: bad dtype %d", (int)dtype);
    return MXK_OK;
}

/** Synchronisation is a no-op: everything is synchronous. */
static mxk_status fake_sync(int32_t dev_id, void *stream, mxk_error_sink *err) {
    return MXK_OK;
}

static const mxk_device_def cpu_def = {
    .struct_size = sizeof(mxk_device_def),
    .abi_minor = MXK_ABI_MINOR,
    .dev_type = MXK_DEV_CPU,
    .name = "fake-cpu",
    .device_count = cpu_count,
    .get_properties = cpu_props,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy = cpu_copy,
    .fill = cpu_fill,
    .synchronize = fake_sync,
};

/* ---- GPU (scrambled host memory) ---------------------------------------- */

/** Two GPU devices. */
static int32_t gpu_count(void) {
    return 2;
}

/** Fills GPU device properties. */
static mxk_status gpu_props(int32_t dev_id, mxk_device_props *p, mxk_error_sink *err) {
    strcpy(p->name, "fake gpu");
    p->alignment = FAKE_ALIGN;
    return MXK_OK;
}

/** Allocates "device" memory, pre-filled with garbage. */
static mxk_status gpu_alloc(int32_t dev_id, uint64_t bytes, void **ptr, mxk_error_sink *err) {
    *ptr = aligned_alloc(FAKE_ALIGN, round_up(bytes));
    if (*ptr == NULL)
        return mxk_sink_set(err, MXK_ERR_OUT_OF_MEMORY, "fake gpu: out of memory");
    memset(*ptr, 0x5C, round_up(bytes));
    atomic_fetch_add(&fake_counters.gpu_allocs, 1);
    return MXK_OK;
}

/** Frees "device" memory. */
static void gpu_free(int32_t dev_id, void *ptr) {
    if (ptr)
        atomic_fetch_add(&fake_counters.gpu_frees, 1);
    free(ptr);
}

/** Copies n bytes XOR-ing each with FAKE_GPU_SCRAMBLE. */
static void xor_copy(uint8_t *dst, const uint8_t *src, uint64_t n) {
    for (uint64_t i = 0; i < n; i++)
        dst[i] = (uint8_t)(src[i] ^ FAKE_GPU_SCRAMBLE);
}

/** Copies with (un)scrambling by direction; may be told to fail. */
static mxk_status gpu_copy(mxk_copy_kind kind, void *dst, int32_t dst_dev_id, const void *src,
                           int32_t src_dev_id, uint64_t bytes, void *stream, mxk_error_sink *err) {
    int left = atomic_load(&fake_gpu_fail_copies);
    while (left > 0 && !atomic_compare_exchange_weak(&fake_gpu_fail_copies, &left, left - 1)) {
    }
    if (left > 0)
        return mxk_sink_set(err, MXK_ERR_BACKEND, "fake gpu copy failure");
    switch (kind) {
    case MXK_COPY_HOST_TO_DEVICE:
        atomic_fetch_add(&fake_counters.gpu_h2d, 1);
        xor_copy(dst, src, bytes);
        break;
    case MXK_COPY_DEVICE_TO_HOST:
        atomic_fetch_add(&fake_counters.gpu_d2h, 1);
        xor_copy(dst, src, bytes);
        break;
    default:
        atomic_fetch_add(&fake_counters.gpu_d2d, 1);
        memmove(dst, src, (size_t)bytes);
        break;
    }
    return MXK_OK;
}

/** Fills on the host, then scrambles. */
static mxk_status gpu_fill(int32_t dev_id, void *ptr, int32_t dtype, uint64_t count, double value,
                           void *stream, mxk_error_sink *err) {
    atomic_fetch_add(&fake_counters.gpu_fill, 1);
    if (!mxk_dtype_fill_host(ptr, dtype, count, value))
        return mxk_sink_set(err, MXK_ERR_TYPE, "fake gpu fill: bad dtype %d", (int)dtype);
    xor_copy(ptr, ptr, count * mxk_dtype_size(dtype));
    return MXK_OK;
}

static const mxk_device_def gpu_def = {
    .struct_size = sizeof(mxk_device_def),
    .abi_minor = MXK_ABI_MINOR,
    .dev_type = MXK_DEV_GPU,
    .name = "fake-gpu",
    .device_count = gpu_count,
    .get_properties = gpu_props,
    .alloc = gpu_alloc,
    .free = gpu_free,
    .copy = gpu_copy,
    .fill = gpu_fill,
    .synchronize = fake_sync,
};

const mxk_device_def *mxk_registry_device(int32_t dev_type) {
    switch (dev_type) {
    case MXK_DEV_CPU:
        return &cpu_def;
    case MXK_DEV_GPU:
        return &gpu_def;
    default:
        return NULL;
    }
}
