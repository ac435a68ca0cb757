/*
 * The fake device backend and registry described in fake_device.h.
 * Blocks are malloc'ed with a 64-byte header holding the size (this is host memory
 * private to the fake; the kernel's storage manager never looks into blocks).
 */
#include "fake_device.h"

#include "error.h"
#include "registry.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Bytes in front of each block holding its size; keeps 64-byte alignment. */
#define FAKE_HEADER 64u
/** Largest request the fake satisfies. */
#define FAKE_MAX_BYTES ((uint64_t)1 << 40)

fake_device_state fake;

void fake_device_reset(void) {
    atomic_store(&fake.cpu_count, 1);
    atomic_store(&fake.gpu_enabled, 0);
    atomic_store(&fake.gpu_count, 2);
    atomic_store(&fake.fail_next, 0);
    atomic_store(&fake.fail_code, MXK_ERR_OUT_OF_MEMORY);
    atomic_store(&fake.alloc_calls, 0);
    atomic_store(&fake.allocs, 0);
    atomic_store(&fake.frees, 0);
    atomic_store(&fake.last_alloc_bytes, 0);
    atomic_store(&fake.syncs, 0);
}

/** device_count of the CPU backend. */
static int32_t fake_cpu_count(void) {
    return atomic_load(&fake.cpu_count);
}

/** device_count of the GPU backend. */
static int32_t fake_gpu_count(void) {
    return atomic_load(&fake.gpu_count);
}

/** alloc: malloc with a size header, or an injected failure. */
static mxk_status fake_alloc(int32_t dev_id, uint64_t bytes, void **ptr, mxk_error_sink *err) {
    atomic_fetch_add(&fake.alloc_calls, 1);
    atomic_store(&fake.last_alloc_bytes, bytes);
    int left = atomic_load(&fake.fail_next);
    while (left > 0 && !atomic_compare_exchange_weak(&fake.fail_next, &left, left - 1)) {
    }
    if (left > 0) {
        mxk_status code = (mxk_status)atomic_load(&fake.fail_code);
        return mxk_sink_set(err, code, "fake: injected failure (%s) of %" PRIu64 " bytes on %d",
                            mxk_status_name(code), bytes, (int)dev_id);
    }
    if (bytes == 0 || bytes > FAKE_MAX_BYTES)
        return mxk_sink_set(err, MXK_ERR_OUT_OF_MEMORY,
                            "fake: %" PRIu64 " bytes is more than the device has", bytes);
    unsigned char *p = aligned_alloc(FAKE_HEADER, FAKE_HEADER + (bytes + 63) / 64 * 64);
    if (p == NULL)
        return mxk_sink_set(err, MXK_ERR_OUT_OF_MEMORY, "fake: malloc failed");
    memcpy(p, &bytes, sizeof bytes);
    atomic_fetch_add(&fake.allocs, 1);
    atomic_fetch_add(&fake.live_blocks, 1);
    atomic_fetch_add(&fake.live_bytes, (int64_t)bytes);
    *ptr = p + FAKE_HEADER;
    return MXK_OK;
}

/** free: counts and frees a block of fake_alloc. */
static void fake_free(int32_t dev_id, void *ptr) {
    (void)dev_id;
    if (ptr == NULL)
        return;
    unsigned char *p = (unsigned char *)ptr - FAKE_HEADER;
    uint64_t bytes;
    memcpy(&bytes, p, sizeof bytes);
    atomic_fetch_add(&fake.frees, 1);
    atomic_fetch_sub(&fake.live_blocks, 1);
    atomic_fetch_sub(&fake.live_bytes, (int64_t)bytes);
    free(p);
}

/** synchronize: counts calls. */
static mxk_status fake_sync(int32_t dev_id, void *stream, mxk_error_sink *err) {
    (void)dev_id;
    (void)stream;
    (void)err;
    atomic_fetch_add(&fake.syncs, 1);
    return MXK_OK;
}

static const mxk_device_def fake_cpu = {
    .struct_size = sizeof(mxk_device_def),
    .abi_minor = MXK_ABI_MINOR,
    .dev_type = MXK_DEV_CPU,
    .name = "cpu",
    .device_count = fake_cpu_count,
    .alloc = fake_alloc,
    .free = fake_free,
    .synchronize = fake_sync,
};

static const mxk_device_def fake_gpu = {
    .struct_size = sizeof(mxk_device_def),
    .abi_minor = MXK_ABI_MINOR,
    .dev_type = MXK_DEV_GPU,
    .name = "gpu",
    .device_count = fake_gpu_count,
    .alloc = fake_alloc,
    .free = fake_free,
    .synchronize = fake_sync,
};

/** Test-local registry: the fake CPU backend, and the fake GPU one while enabled. */
const mxk_device_def *mxk_registry_device(int32_t dev_type) {
    if (dev_type == MXK_DEV_CPU)
        return &fake_cpu;
    if (dev_type == MXK_DEV_GPU && atomic_load(&fake.gpu_enabled))
        return &fake_gpu;
    return NULL;
}
