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
#include "mxk_fill_value.h"

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

/**
 * Fills `count` elements of `dtype` at ptr with `value` converted as
 * plugins/common/mxk_fill_value.h says (float16 rounded to nearest even, integers
 * truncated toward zero and saturated, NaN giving 0).
 * MXK_ERR_INVALID_ARGUMENT for an unknown dtype.
 */
static mxk_status cpu_fill(int32_t dev_id, void *ptr, int32_t dtype, uint64_t count, double value,
                           void *stream, mxk_error_sink *err) {
    MXK_SDK_CHECK(cpu_check_dev(dev_id, err));
    uint64_t bits = 0;
    uint32_t size = mxk_fill_pattern(dtype, value, &bits);
    if (size == 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "cpu fill: invalid dtype %d",
                             (int)dtype);
    if (count == 0)
        return MXK_OK;
    if (ptr == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "cpu fill: NULL pointer");
    unsigned char *q = ptr;
    if (bits == 0 || size == 1) {
        memset(q, (int)(bits & 0xff), (size_t)(count * size));
        return MXK_OK;
    }
    if (size == 2) {
        uint16_t v;
        memcpy(&v, &bits, sizeof v);
        for (uint64_t i = 0; i < count; i++)
            ((uint16_t *)ptr)[i] = v;
    } else if (size == 4) {
        uint32_t v;
        memcpy(&v, &bits, sizeof v);
        for (uint64_t i = 0; i < count; i++)
            ((uint32_t *)ptr)[i] = v;
    } else {
        for (uint64_t i = 0; i < count; i++)
            ((uint64_t *)ptr)[i] = bits;
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
