/*
 * cpu-blas plugin: the CPU device backend (abi/mxk_abi_device.h).
 *
 * One device (id 0) of type MXK_DEV_CPU named "cpu". Memory comes from
 * posix_memalign with 64-byte alignment (a cache line, and enough for AVX-512
 * loads); copies in every direction are memcpy; there are no streams, so work
 * is complete when a call returns and synchronize is a no-op. Semantics:
 * MXNet's CPUDeviceStorage (src/storage/cpu_device_storage.h). Thread-safe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_blas.h"

/** Alignment of every allocation, in bytes. */
#define CB_ALIGNMENT 64

/**
 * Number of CPU devices: one per online CPU, all aliases of host memory (as in
 * MXNet, where cpu(i) names the same memory and only selects an engine worker
 * pool), so data parallelism over cpu(0), cpu(1), ... works.
 */
static int32_t cpu_device_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int32_t)n : 1;
}

/** MXK_ERR_INVALID_ARGUMENT unless 0 <= dev_id < cpu_device_count(). */
static mxk_status cpu_check_dev(int32_t dev_id, mxk_error_sink *err) {
    if (dev_id < 0 || dev_id >= cpu_device_count())
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "cpu device %d does not exist (cpu(0) to cpu(%d))", (int)dev_id,
                             (int)cpu_device_count() - 1);
    return MXK_OK;
}

/** Copies the "model name" of /proc/cpuinfo into name (len bytes); "cpu" when unavailable. */
static void cpu_model_name(char *name, size_t len) {
    snprintf(name, len, "cpu");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *colon = strchr(line, ':');
        if (colon == NULL)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        size_t n = strcspn(colon, "\r\n");
        if (n > 0)
            snprintf(name, len, "%.*s", (int)n, colon);
        break;
    }
    fclose(f);
}

/**
 * Fills the properties of cpu(0): name from /proc/cpuinfo, total and available
 * physical memory from sysconf (0 when unknown), alignment 64. Writes only the
 * fields that fit in props->struct_size (set by the kernel).
 */
static mxk_status cpu_get_properties(int32_t dev_id, mxk_device_props *props, mxk_error_sink *err) {
    MXK_SDK_CHECK(cpu_check_dev(dev_id, err));
    if (props == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "props is NULL");
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES);
    long page = sysconf(_SC_PAGESIZE);
    if (MXK_SDK_HAS_FIELD(props, mxk_device_props, name))
        cpu_model_name(props->name, sizeof props->name);
    if (MXK_SDK_HAS_FIELD(props, mxk_device_props, total_memory))
        props->total_memory = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    if (MXK_SDK_HAS_FIELD(props, mxk_device_props, free_memory))
        props->free_memory = avail > 0 && page > 0 ? (uint64_t)avail * (uint64_t)page : 0;
    if (MXK_SDK_HAS_FIELD(props, mxk_device_props, alignment))
        props->alignment = CB_ALIGNMENT;
    if (MXK_SDK_HAS_FIELD(props, mxk_device_props, compute_minor)) {
        props->compute_major = 0;
        props->compute_minor = 0;
    }
    return MXK_OK;
}

/** Allocates `bytes` (> 0) aligned to 64 bytes; MXK_ERR_OUT_OF_MEMORY on failure. */
static mxk_status cpu_alloc(int32_t dev_id, uint64_t bytes, void **ptr, mxk_error_sink *err) {
    MXK_SDK_CHECK(cpu_check_dev(dev_id, err));
    if (ptr == NULL || bytes == 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "cpu alloc: need bytes > 0 and an output pointer");
    *ptr = NULL;
    if (bytes > (uint64_t)SIZE_MAX - CB_ALIGNMENT ||
        posix_memalign(ptr, CB_ALIGNMENT, (size_t)bytes) != 0) {
        *ptr = NULL;
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "cpu alloc of %llu bytes failed",
                             (unsigned long long)bytes);
    }
    return MXK_OK;
}

/** Frees memory from cpu_alloc; NULL is a no-op. */
static void cpu_free(int32_t dev_id, void *ptr) {
    free(ptr);
}

/**
 * Copies `bytes` with memcpy in every direction (host and device memory are the
 * same). Both device ids must be 0 where they name a device; overlapping ranges
 * are allowed (memmove).
 */
static mxk_status cpu_copy(mxk_copy_kind kind, void *dst, int32_t dst_dev_id, const void *src,
                           int32_t src_dev_id, uint64_t bytes, void *stream, mxk_error_sink *err) {
    if (kind != MXK_COPY_DEVICE_TO_HOST)
        MXK_SDK_CHECK(cpu_check_dev(dst_dev_id, err));
    if (kind != MXK_COPY_HOST_TO_DEVICE)
        MXK_SDK_CHECK(cpu_check_dev(src_dev_id, err));
    if (kind != MXK_COPY_HOST_TO_DEVICE && kind != MXK_COPY_DEVICE_TO_HOST &&
        kind != MXK_COPY_DEVICE_TO_DEVICE)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "cpu copy: invalid kind %d", (int)kind);
    if (bytes == 0)
        return MXK_OK;
    if (dst == NULL || src == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "cpu copy: NULL pointer");
    if (dst != src)
        memmove(dst, src, (size_t)bytes);
    return MXK_OK;
}

/* Fills n elements of type T at p with v (already converted). */
#define CB_FILL(T, p, n, v)                                                                        \
    do {                                                                                           \
        T *restrict q_ = (T *)(p);                                                                 \
        const T v_ = (v);                                                                          \
        for (uint64_t i_ = 0; i_ < (n); i_++)                                                      \
            q_[i_] = v_;                                                                           \
    } while (0)

/** Converts a double to an integer type's range, saturating (NaN gives 0), as int64. */
static int64_t cpu_saturate(double v, double lo, double hi) {
    if (v != v)
        return 0;
    if (v <= lo)
        return (int64_t)lo;
    if (v >= hi)
        return (int64_t)hi;
    return (int64_t)v;
}

/**
 * Fills `count` elements of `dtype` at ptr with `value`: float types by
 * conversion (float16 rounded to nearest even), integer types truncated toward
 * zero and saturated to their range (NaN gives 0).
 * MXK_ERR_INVALID_ARGUMENT for an unknown dtype.
 */
static mxk_status cpu_fill(int32_t dev_id, void *ptr, int32_t dtype, uint64_t count, double value,
                           void *stream, mxk_error_sink *err) {
    MXK_SDK_CHECK(cpu_check_dev(dev_id, err));
    if (mxk_sdk_dtype_size(dtype) == 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "cpu fill: invalid dtype %d",
                             (int)dtype);
    if (count == 0)
        return MXK_OK;
    if (ptr == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "cpu fill: NULL pointer");
    switch (dtype) {
    case MXK_FLOAT32:
        CB_FILL(float, ptr, count, (float)value);
        break;
    case MXK_FLOAT64:
        CB_FILL(double, ptr, count, value);
        break;
    case MXK_FLOAT16:
        CB_FILL(uint16_t, ptr, count, mxk_sdk_f32_to_f16((float)value));
        break;
    case MXK_UINT8:
        CB_FILL(uint8_t, ptr, count, (uint8_t)cpu_saturate(value, 0.0, 255.0));
        break;
    case MXK_INT8:
        CB_FILL(int8_t, ptr, count, (int8_t)cpu_saturate(value, -128.0, 127.0));
        break;
    case MXK_INT32:
        CB_FILL(int32_t, ptr, count, (int32_t)cpu_saturate(value, -2147483648.0, 2147483647.0));
        break;
    case MXK_INT64:
        /* 2^63 is not representable: values at or above it saturate to INT64_MAX */
        if (value >= 9223372036854775808.0)
            CB_FILL(int64_t, ptr, count, INT64_MAX);
        else
            CB_FILL(int64_t, ptr, count, cpu_saturate(value, -9223372036854775808.0, 0x1p63));
        break;
    default:
        break;
    }
    return MXK_OK;
}

/** No streams: everything is complete when it returns. */
static mxk_status cpu_synchronize(int32_t dev_id, void *stream, mxk_error_sink *err) {
    return cpu_check_dev(dev_id, err);
}

/** Registers the CPU device backend. */
mxk_status cb_register_device(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_device_def def;
    mxk_sdk_device_def_init(&def);
    def.dev_type = MXK_DEV_CPU;
    def.name = "cpu";
    def.device_count = cpu_device_count;
    def.get_properties = cpu_get_properties;
    def.alloc = cpu_alloc;
    def.free = cpu_free;
    def.copy = cpu_copy;
    def.fill = cpu_fill;
    def.stream_create = NULL;
    def.stream_destroy = NULL;
    def.synchronize = cpu_synchronize;
    return reg->register_device(reg, &def, err);
}
