/*
 * The fake device backends and registry described in fake_device.h. Blocks are
 * aligned_alloc'ed with a 64-byte header in front holding the requested size (host
 * memory private to the fake; the kernel never looks in front of a block).
 */
#include "fake_device.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_convert.h"
#include "error.h"
#include "registry.h"
#include "shape.h"

/** Alignment of every block, and the bytes of the size header in front of it. */
#define FAKE_ALIGN 64u
/** Largest request the fake satisfies. */
#define FAKE_MAX_BYTES ((uint64_t)1 << 40)

fake_device_state fake = {
    .cpu_count = 1,
    .gpu_enabled = 1,
    .gpu_count = 2,
    .fail_code = MXK_ERR_OUT_OF_MEMORY,
};

/** Resets settings to the defaults and counters to 0 (fake_device.h). */
void fake_device_reset(void) {
    atomic_store(&fake.cpu_count, 1);
    atomic_store(&fake.gpu_enabled, 1);
    atomic_store(&fake.gpu_count, 2);
    atomic_store(&fake.fail_next, 0);
    atomic_store(&fake.fail_code, MXK_ERR_OUT_OF_MEMORY);
    atomic_store(&fake.gpu_fail_copies, 0);
    atomic_store(&fake.gpu_pinned, 0);
    atomic_store(&fake.gpu_fail_stream_creates, 0);
    atomic_store(&fake.gpu_fail_syncs, 0);
    atomic_store(&fake.alloc_calls, 0);
    atomic_store(&fake.allocs, 0);
    atomic_store(&fake.frees, 0);
    atomic_store(&fake.last_alloc_bytes, 0);
    atomic_store(&fake.syncs, 0);
    atomic_int *per_kind[] = {&fake.cpu_allocs,
                              &fake.cpu_frees,
                              &fake.cpu_copy,
                              &fake.cpu_fill,
                              &fake.gpu_allocs,
                              &fake.gpu_frees,
                              &fake.gpu_fill,
                              &fake.gpu_h2d,
                              &fake.gpu_d2h,
                              &fake.gpu_d2d,
                              &fake.gpu_host_allocs,
                              &fake.gpu_host_frees,
                              &fake.gpu_stream_creates,
                              &fake.gpu_stream_destroys,
                              &fake.gpu_stream_syncs,
                              &fake.gpu_stream_wrong_thread};
    for (size_t i = 0; i < sizeof per_kind / sizeof per_kind[0]; i++)
        atomic_store(per_kind[i], 0);
}

/** Rounds n up to FAKE_ALIGN (aligned_alloc needs a multiple of the alignment). */
static size_t round_up(uint64_t n) {
    return (size_t)((n + FAKE_ALIGN - 1) / FAKE_ALIGN * FAKE_ALIGN);
}

/** Takes one from the counter *left when it is positive. Returns true when it did. */
static bool take_one(atomic_int *left) {
    int n = atomic_load(left);
    while (n > 0 && !atomic_compare_exchange_weak(left, &n, n - 1)) {
    }
    return n > 0;
}

/**
 * The allocator of both backends: counts the call, applies failure injection and
 * the size limit, then allocates a block with its size header and counts it, in
 * *kind_allocs too. Returns MXK_OK with *ptr set, or the failure (described in err).
 */
static mxk_status block_alloc(int32_t dev_id, uint64_t bytes, void **ptr, mxk_error_sink *err,
                              atomic_int *kind_allocs) {
    atomic_fetch_add(&fake.alloc_calls, 1);
    atomic_store(&fake.last_alloc_bytes, bytes);
    if (take_one(&fake.fail_next)) {
        mxk_status code = (mxk_status)atomic_load(&fake.fail_code);
        return mxki_sink_set(err, code, "fake: injected failure (%s) of %" PRIu64 " bytes on %d",
                             mxk_status_name(code), bytes, (int)dev_id);
    }
    if (bytes == 0 || bytes > FAKE_MAX_BYTES)
        return mxki_sink_set(err, MXK_ERR_OUT_OF_MEMORY,
                             "fake: %" PRIu64 " bytes is more than the device has", bytes);
    unsigned char *p = aligned_alloc(FAKE_ALIGN, FAKE_ALIGN + round_up(bytes));
    if (p == NULL)
        return mxki_sink_set(err, MXK_ERR_OUT_OF_MEMORY, "fake: malloc failed");
    memcpy(p, &bytes, sizeof bytes);
    atomic_fetch_add(&fake.allocs, 1);
    atomic_fetch_add(kind_allocs, 1);
    atomic_fetch_add(&fake.live_blocks, 1);
    atomic_fetch_add(&fake.live_bytes, (int64_t)bytes);
    *ptr = p + FAKE_ALIGN;
    return MXK_OK;
}

/** Frees a block of block_alloc (NULL: nothing) and counts it, in *kind_frees too. */
static void block_free(void *ptr, atomic_int *kind_frees) {
    if (ptr == NULL)
        return;
    unsigned char *p = (unsigned char *)ptr - FAKE_ALIGN;
    uint64_t bytes;
    memcpy(&bytes, p, sizeof bytes);
    atomic_fetch_add(&fake.frees, 1);
    atomic_fetch_add(kind_frees, 1);
    atomic_fetch_sub(&fake.live_blocks, 1);
    atomic_fetch_sub(&fake.live_bytes, (int64_t)bytes);
    free(p);
}

/** Fills count elements of dtype at host address ptr with value; counts in *kind_fills. */
static mxk_status host_fill(const char *who, void *ptr, int32_t dtype, uint64_t count, double value,
                            mxk_error_sink *err, atomic_int *kind_fills) {
    atomic_fetch_add(kind_fills, 1);
    if (!mxki_dtype_fill_host(ptr, dtype, count, value))
        return mxki_sink_set(err, MXK_ERR_TYPE, "%s fill: bad dtype %d", who, (int)dtype);
    return MXK_OK;
}

/**
 * get_properties of both backends: the name "fake device" and 64-byte alignment;
 * device 1 fails with MXK_ERR_BACKEND "fake device 1 has no properties" (for the
 * error path of mxk_device_properties).
 */
static mxk_status fake_props(int32_t dev_id, mxk_device_props *p, mxk_error_sink *err) {
    if (dev_id == 1)
        return mxki_sink_set(err, MXK_ERR_BACKEND, "fake device 1 has no properties");
    strcpy(p->name, "fake device");
    p->alignment = FAKE_ALIGN;
    return MXK_OK;
}

/** synchronize of both backends: counts calls (everything is synchronous). */
static mxk_status fake_sync(int32_t dev_id, void *stream, mxk_error_sink *err) {
    atomic_fetch_add(&fake.syncs, 1);
    return MXK_OK;
}

/* ---- CPU ---------------------------------------------------------------- */

/** device_count of the CPU backend. */
static int32_t cpu_count(void) {
    return atomic_load(&fake.cpu_count);
}

/** alloc of the CPU backend. */
static mxk_status cpu_alloc(int32_t dev_id, uint64_t bytes, void **ptr, mxk_error_sink *err) {
    return block_alloc(dev_id, bytes, ptr, err, &fake.cpu_allocs);
}

/** free of the CPU backend. */
static void cpu_free(int32_t dev_id, void *ptr) {
    block_free(ptr, &fake.cpu_frees);
}

/** All CPU copies are memmove. */
static mxk_status cpu_copy(mxk_copy_kind kind, void *dst, int32_t dst_dev_id, const void *src,
                           int32_t src_dev_id, uint64_t bytes, void *stream, mxk_error_sink *err) {
    atomic_fetch_add(&fake.cpu_copy, 1);
    memmove(dst, src, (size_t)bytes);
    return MXK_OK;
}

/** fill of the CPU backend: on the host, through the kernel's conversion helper. */
static mxk_status cpu_fill(int32_t dev_id, void *ptr, int32_t dtype, uint64_t count, double value,
                           void *stream, mxk_error_sink *err) {
    return host_fill("fake cpu", ptr, dtype, count, value, err, &fake.cpu_fill);
}

static const mxk_device_def cpu_def = {
    .struct_size = sizeof(mxk_device_def),
    .abi_minor = MXK_ABI_MINOR,
    .dev_type = MXK_DEV_CPU,
    .name = "cpu",
    .device_count = cpu_count,
    .get_properties = fake_props,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy = cpu_copy,
    .fill = cpu_fill,
    .synchronize = fake_sync,
};

/* ---- GPU (scrambled host memory) ---------------------------------------- */

/** device_count of the GPU backend. */
static int32_t gpu_count(void) {
    return atomic_load(&fake.gpu_count);
}

/** alloc of the GPU backend: "device" memory, pre-filled with garbage. */
static mxk_status gpu_alloc(int32_t dev_id, uint64_t bytes, void **ptr, mxk_error_sink *err) {
    mxk_status st = block_alloc(dev_id, bytes, ptr, err, &fake.gpu_allocs);
    if (st == MXK_OK)
        memset(*ptr, 0x5C, round_up(bytes));
    return st;
}

/** free of the GPU backend. */
static void gpu_free(int32_t dev_id, void *ptr) {
    block_free(ptr, &fake.gpu_frees);
}

/** Copies n bytes XOR-ing each with FAKE_GPU_SCRAMBLE. */
static void xor_copy(uint8_t *dst, const uint8_t *src, uint64_t n) {
    for (uint64_t i = 0; i < n; i++)
        dst[i] = (uint8_t)(src[i] ^ FAKE_GPU_SCRAMBLE);
}

/** Copies with (un)scrambling by direction; may be told to fail (gpu_fail_copies). */
static mxk_status gpu_copy(mxk_copy_kind kind, void *dst, int32_t dst_dev_id, const void *src,
                           int32_t src_dev_id, uint64_t bytes, void *stream, mxk_error_sink *err) {
    if (take_one(&fake.gpu_fail_copies))
        return mxki_sink_set(err, MXK_ERR_BACKEND, "fake gpu copy failure");
    switch (kind) {
    case MXK_COPY_HOST_TO_DEVICE:
        atomic_fetch_add(&fake.gpu_h2d, 1);
        xor_copy(dst, src, bytes);
        break;
    case MXK_COPY_DEVICE_TO_HOST:
        atomic_fetch_add(&fake.gpu_d2h, 1);
        xor_copy(dst, src, bytes);
        break;
    default:
        atomic_fetch_add(&fake.gpu_d2d, 1);
        memmove(dst, src, (size_t)bytes);
        break;
    }
    return MXK_OK;
}

/** Fills on the host, then scrambles. */
static mxk_status gpu_fill(int32_t dev_id, void *ptr, int32_t dtype, uint64_t count, double value,
                           void *stream, mxk_error_sink *err) {
    mxk_status st = host_fill("fake gpu", ptr, dtype, count, value, err, &fake.gpu_fill);
    if (st == MXK_OK)
        xor_copy(ptr, ptr, count * mxk_dtype_size(dtype));
    return st;
}

/* ---- GPU streams ---------------------------------------------------------- */

/** A fake stream: its creator and the work queued on it. */
typedef struct fake_stream {
    pthread_t creator;
    int32_t dev_id;
    atomic_int pending; /**< queued work not yet synchronised */
} fake_stream;

/** Counts a call on `s` from another thread than its creator's. */
static void check_creator(const fake_stream *s) {
    if (!pthread_equal(s->creator, pthread_self()))
        atomic_fetch_add(&fake.gpu_stream_wrong_thread, 1);
}

/** stream_create of the GPU backend: a fake stream, or an injected failure. */
static mxk_status gpu_stream_create(int32_t dev_id, void **stream, mxk_error_sink *err) {
    if (take_one(&fake.gpu_fail_stream_creates))
        return mxki_sink_set(err, MXK_ERR_BACKEND, "fake gpu: no stream left on %d", (int)dev_id);
    fake_stream *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxki_sink_set(err, MXK_ERR_OUT_OF_MEMORY, "fake gpu: malloc failed");
    s->creator = pthread_self();
    s->dev_id = dev_id;
    atomic_fetch_add(&fake.gpu_stream_creates, 1);
    *stream = s;
    return MXK_OK;
}

/** stream_destroy of the GPU backend. */
static void gpu_stream_destroy(int32_t dev_id, void *stream) {
    fake_stream *s = stream;
    check_creator(s);
    atomic_fetch_add(&fake.gpu_stream_destroys, 1);
    free(s);
}

/**
 * synchronize of the GPU backend: with a stream, completes its queued work (or fails
 * it: gpu_fail_syncs); without one, counts a device synchronisation (fake_sync).
 */
static mxk_status gpu_sync(int32_t dev_id, void *stream, mxk_error_sink *err) {
    fake_stream *s = stream;
    if (s == NULL)
        return fake_sync(dev_id, stream, err);
    check_creator(s);
    atomic_fetch_add(&fake.gpu_stream_syncs, 1);
    int pending = atomic_exchange(&s->pending, 0);
    if (pending > 0 && take_one(&fake.gpu_fail_syncs))
        return mxki_sink_set(err, MXK_ERR_BACKEND, "fake gpu: asynchronous fault on the stream");
    return MXK_OK;
}

void fake_gpu_stream_queue(void *stream) {
    atomic_fetch_add(&((fake_stream *)stream)->pending, 1);
}

int fake_gpu_stream_pending(const void *stream) {
    return atomic_load(&((fake_stream *)stream)->pending);
}

int fake_gpu_stream_is_callers(const void *stream) {
    return stream != NULL && pthread_equal(((const fake_stream *)stream)->creator, pthread_self());
}

/* ---- GPU pinned host memory ---------------------------------------------- */

/** host_alloc of the GPU backend (while fake.gpu_pinned): unscrambled host memory. */
static mxk_status gpu_host_alloc(uint64_t bytes, void **ptr, mxk_error_sink *err) {
    return block_alloc(0, bytes, ptr, err, &fake.gpu_host_allocs);
}

/** host_free of the GPU backend. */
static void gpu_host_free(void *ptr) {
    block_free(ptr, &fake.gpu_host_frees);
}

/** The GPU backend; gpu_pinned_def adds host_alloc / host_free (fake.gpu_pinned). */
#define FAKE_GPU_DEF                                                                               \
    .struct_size = sizeof(mxk_device_def), .abi_minor = MXK_ABI_MINOR, .dev_type = MXK_DEV_GPU,    \
    .name = "gpu", .device_count = gpu_count, .get_properties = fake_props, .alloc = gpu_alloc,    \
    .free = gpu_free, .copy = gpu_copy, .fill = gpu_fill, .stream_create = gpu_stream_create,      \
    .stream_destroy = gpu_stream_destroy, .synchronize = gpu_sync

static const mxk_device_def gpu_def = {FAKE_GPU_DEF};
static const mxk_device_def gpu_pinned_def = {FAKE_GPU_DEF, .host_alloc = gpu_host_alloc,
                                              .host_free = gpu_host_free};

/** Test-local registry: the fake CPU backend, and the fake GPU one while enabled. */
const mxk_device_def *mxki_registry_device(int32_t dev_type) {
    if (dev_type == MXK_DEV_CPU)
        return &cpu_def;
    if (dev_type == MXK_DEV_GPU && atomic_load(&fake.gpu_enabled))
        return atomic_load(&fake.gpu_pinned) ? &gpu_pinned_def : &gpu_def;
    return NULL;
}
