/*
 * tkv-gpu: a test plugin whose GPU device backend (two devices over host memory)
 * has the ABI 1.4 `reduce` slot, so the "device" KVStore's reduce across devices
 * (kernel/kvstore/kvstore.c) is tested without a GPU. Its reduce sums float32
 * sources into dst and counts its calls; exported functions read the count and
 * make the next call fail. Copies are memmove, fill a float32 store, no streams.
 */
#include <stdatomic.h>
#include <string.h>

#include "testing_plugin.h"

MXK_TEST_PLUGIN_INFO("tkv-gpu", "fake GPU backend with a multi-device reduce", 3,
                     MXK_PROVIDES_DEVICES)

MXK_PLUGIN_EXPORT int tkv_gpu_reduce_calls(void);
MXK_PLUGIN_EXPORT int tkv_gpu_last_n(void);
MXK_PLUGIN_EXPORT void tkv_gpu_fail_next_reduce(void);

static atomic_int g_calls;
static atomic_int g_fail_next;
static atomic_int g_last_n;

/** Calls of the reduce slot so far. */
MXK_PLUGIN_EXPORT int tkv_gpu_reduce_calls(void) {
    return g_calls;
}

/** Number of sources of the last reduce call. */
MXK_PLUGIN_EXPORT int tkv_gpu_last_n(void) {
    return g_last_n;
}

/** Makes the next reduce call fail with MXK_ERR_BACKEND "tkv-gpu: injected reduce failure". */
MXK_PLUGIN_EXPORT void tkv_gpu_fail_next_reduce(void) {
    g_fail_next = 1;
}

/** Two devices. */
static int32_t fg_count(void) {
    return 2;
}

/** Name "fake gpu", 64-byte alignment. */
static mxk_status fg_props(int32_t dev_id, mxk_device_props *p, mxk_error_sink *err) {
    snprintf(p->name, sizeof p->name, "fake gpu");
    p->alignment = 64;
    return MXK_OK;
}

/** Host memory, 64-byte aligned. */
static mxk_status fg_alloc(int32_t dev_id, uint64_t bytes, void **ptr, mxk_error_sink *err) {
    if (posix_memalign(ptr, 64, (size_t)bytes) != 0)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "tkv-gpu: out of memory");
    return MXK_OK;
}

/** free(). */
static void fg_free(int32_t dev_id, void *ptr) {
    free(ptr);
}

/** memmove in every direction. */
static mxk_status fg_copy(mxk_copy_kind kind, void *dst, int32_t dst_dev, const void *src,
                          int32_t src_dev, uint64_t bytes, void *stream, mxk_error_sink *err) {
    memmove(dst, src, (size_t)bytes);
    return MXK_OK;
}

/** float32 fills only (the test's arrays). */
static mxk_status fg_fill(int32_t dev_id, void *ptr, int32_t dtype, uint64_t count, double value,
                          void *stream, mxk_error_sink *err) {
    if (dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED, "tkv-gpu: float32 fills only");
    for (uint64_t i = 0; i < count; i++)
        ((float *)ptr)[i] = (float)value;
    return MXK_OK;
}

/** Nothing is ever pending. */
static mxk_status fg_sync(int32_t dev_id, void *stream, mxk_error_sink *err) {
    return MXK_OK;
}

/** dst = sum of the float32 sources; counts the call; fails once when asked. */
static mxk_status fg_reduce(uint32_t n, const void *const *src, const int32_t *src_dev, void *dst,
                            int32_t dtype, uint64_t count, mxk_error_sink *err) {
    g_calls++;
    g_last_n = (int)n;
    if (atomic_exchange(&g_fail_next, 0))
        return mxk_sdk_error(err, MXK_ERR_BACKEND, "tkv-gpu: injected reduce failure");
    if (dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED, "tkv-gpu: float32 reduces only");
    float *d = dst;
    for (uint64_t i = 0; i < count; i++) {
        float s = 0;
        for (uint32_t k = 0; k < n; k++)
            s += ((const float *)src[k])[i];
        d[i] = s;
    }
    return MXK_OK;
}

/** Registers the backend. */
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_test_plugin_begin(args, MXK_SDK_HOST_SLOT_END(error), err));
    mxk_device_def d;
    mxk_sdk_device_def_init(&d);
    d.dev_type = MXK_DEV_GPU;
    d.name = "gpu";
    d.device_count = fg_count;
    d.get_properties = fg_props;
    d.alloc = fg_alloc;
    d.free = fg_free;
    d.copy = fg_copy;
    d.fill = fg_fill;
    d.synchronize = fg_sync;
    d.reduce = fg_reduce;
    return args->registrar->register_device(args->registrar, &d, err);
}
