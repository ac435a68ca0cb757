/*
 * The "device" KVStore's reduce across devices through a device backend's `reduce`
 * slot (ABI 1.4; kernel/kvstore/kvstore.c, MXNet's KVStoreNCCL in
 * src/kvstore/kvstore_nccl.h). The tkv-gpu test plugin (reduce_plugin.c) provides a
 * GPU backend of two devices over host memory whose reduce counts its calls; the
 * cpu-blas plugin provides the CPU. Checks: values pushed from gpu(0) and gpu(1)
 * are summed by one reduce call and pulled onto both devices; a key pushed twice
 * from one device does not use it; a reduce failure reaches the wait on the pulled
 * arrays with its message.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "mxk.h"
#include "testing.h"

typedef int (*count_fn)(void);
typedef void (*fail_fn)(void);
static count_fn reduce_calls, last_n;
static fail_fn fail_next;

/** An (2,3) float32 array on ctx filled with v. */
static mxk_ndarray *filled(mxk_context ctx, float v) {
    mxk_shape s = {.ndim = 2, .dims = {2, 3}};
    mxk_ndarray *a = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, ctx, &a), MXK_OK);
    float h[6];
    for (int i = 0; i < 6; i++)
        h[i] = v + (float)i;
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(a, h, sizeof h), MXK_OK);
    return a;
}

/** Checks that a holds k * (v + i) at element i. */
static void expect(mxk_ndarray *a, float v, float k) {
    float h[6];
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(a, h, sizeof h), MXK_OK);
    for (int i = 0; i < 6; i++)
        CHECK_NEAR(h[i], k * (v + (float)i), 1e-6);
}

static const mxk_context GPU0 = {MXK_DEV_GPU, 0}, GPU1 = {MXK_DEV_GPU, 1};

/** Two devices: one reduce call per push, the sum pulled onto both devices. */
static void test_two_devices(void) {
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("device", &kv), MXK_OK);
    const char *key[2] = {"w", "w"};
    mxk_ndarray *init = filled(GPU0, 0), *a = filled(GPU0, 1), *b = filled(GPU1, 1);
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, key, &init), MXK_OK);
    int before = reduce_calls();
    mxk_ndarray *vals[2] = {a, b};
    CHECK_EQ_INT(mxk_kvstore_push(kv, 2, key, vals, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 2, key, vals, 0), MXK_OK);
    expect(a, 1, 2);
    expect(b, 1, 2);
    CHECK_EQ_INT(reduce_calls() - before, 1);
    CHECK_EQ_INT(last_n(), 2);
    /* Both values on gpu(0): the copy-and-sum path (ElementWiseSum, an alias of add_n),
     * not the slot; tkv-gpu registers no kernels, so the push names the missing one. */
    vals[1] = filled(GPU0, 3);
    before = reduce_calls();
    CHECK(mxk_kvstore_push(kv, 2, key, vals, 0) != MXK_OK);
    CHECK_CONTAINS(mxk_get_last_error(), "operator 'add_n' has no kernel for device type gpu");
    CHECK_EQ_INT(reduce_calls(), before);
    mxk_ndarray_free(vals[1]);
    mxk_ndarray_free(init);
    mxk_ndarray_free(a);
    mxk_ndarray_free(b);
    mxk_kvstore_free(kv);
}

/** A failed reduce fails the push's arrays: the wait on a pulled one reports it. */
static void test_reduce_failure(void) {
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("device", &kv), MXK_OK);
    const char *key[2] = {"f", "f"};
    mxk_ndarray *a = filled(GPU0, 1), *b = filled(GPU1, 2);
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, key, &a), MXK_OK);
    fail_next();
    mxk_ndarray *vals[2] = {a, b};
    CHECK_EQ_INT(mxk_kvstore_push(kv, 2, key, vals, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 2, key, vals, 0), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(a), MXK_ERR_BACKEND);
    CHECK_CONTAINS(mxk_get_last_error(), "tkv-gpu: injected reduce failure");
    (void)mxk_ndarray_wait_to_read(b);
    mxk_ndarray_free(a);
    mxk_ndarray_free(b);
    mxk_kvstore_free(kv);
}

int main(void) {
    mxk_init_options o = {.struct_size = sizeof o, .no_plugins = 1};
    if (mxk_init(&o) != MXK_OK || mxk_load_plugin(CPU_BLAS_PLUGIN, NULL) != MXK_OK ||
        mxk_load_plugin(TKV_GPU_PLUGIN, NULL) != MXK_OK) {
        fprintf(stderr, "setup: %s\n", mxk_get_last_error());
        return 1;
    }
    void *dl = dlopen(TKV_GPU_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
    if (dl == NULL)
        return 1;
    reduce_calls = (count_fn)(uintptr_t)dlsym(dl, "tkv_gpu_reduce_calls");
    last_n = (count_fn)(uintptr_t)dlsym(dl, "tkv_gpu_last_n");
    fail_next = (fail_fn)(uintptr_t)dlsym(dl, "tkv_gpu_fail_next_reduce");
    dlclose(dl);
    if (!reduce_calls || !last_n || !fail_next)
        return 1;
    MXK_RUN(test_two_devices);
    MXK_RUN(test_reduce_failure);
    int rc = MXK_TEST_EXIT();
    mxk_shutdown();
    return rc;
}
