/*
 * Errors on the GPU reach the caller with clear messages (each mode is its own
 * test process: a device fault kills the CUDA context for the rest of the process).
 *
 *   test_gpu_errors fault CONFDIR PLUGIN
 *       the asynchronous fault of GpuFault's kernel (fault_plugin.c: a store
 *       through an invalid device pointer) surfaces at wait_to_read of its output
 *       as an error naming the operator and CUDA's reason, not as a crash or a
 *       silent wrong result.
 *   test_gpu_errors oom CONFDIR
 *       a 1 PiB NDArray on gpu(0) fails with MXK_ERR_OUT_OF_MEMORY and a message
 *       with the bytes wanted; afterwards gpu(0) still allocates and computes.
 *   test_gpu_errors nodevice CONFDIR
 *       gpu(N), N the number of visible GPUs, gives MXK_ERR_NOT_FOUND and the exact
 *       message "mxk_ndarray_create: device gpu(N) does not exist: the gpu backend
 *       has N device(s)".
 *
 * Upstream: MXNet's exception handling on GPU
 * (docs/static_site/src/pages/api/architecture/exception_handling.md; the CUDA
 * error checks of src/common/cuda/utils.h, CUDA_CALL and the "cudaErrorMemoryAllocation"
 * path of src/storage/gpu_device_storage.h). Exits 77 (skipped) when no GPU is visible.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"
#include "testing.h"

/** The path of the fault plugin (mode fault). */
static const char *g_plugin;

/** 1-D shape of n elements. */
static mxk_shape vec(int64_t n) {
    mxk_shape s = {.ndim = 1};
    s.dims[0] = n;
    return s;
}

/** GpuFault's fault surfaces at wait_to_read naming the operator and the CUDA error. */
static void test_async_fault_names_op(void) {
    CHECK_EQ_INT(mxk_load_plugin(g_plugin, NULL), MXK_OK);
    mxk_shape s = vec(1024);
    mxk_ndarray *x = NULL, *y = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT32, gpu_test_gpu, 1.0, &x), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, gpu_test_gpu, &y), MXK_OK);
    uint32_t nout = 1;
    /* The push succeeds: the kernel launches fine and faults later on the device. */
    CHECK_EQ_INT(mxk_imperative_invoke("GpuFault", 1, &x, &nout, &y, 0, NULL, NULL), MXK_OK);
    mxk_status rc = mxk_ndarray_wait_to_read(y);
    const char *msg = mxk_get_last_error();
    printf("wait_to_read: %s: %s\n", mxk_status_name(rc), msg);
    CHECK(rc != MXK_OK);
    CHECK_CONTAINS(msg, "GpuFault");
    CHECK_CONTAINS(msg, "illegal");
    /* The error stays with the array: every later read reports it. */
    CHECK(mxk_ndarray_wait_to_read(y) != MXK_OK);
    mxk_ndarray_free(y);
    mxk_ndarray_free(x);
}

/** 1 PiB on gpu(0): MXK_ERR_OUT_OF_MEMORY naming the bytes; the device still works. */
static void test_out_of_memory(void) {
    mxk_shape s = vec((int64_t)1 << 48); /* float32: 2^50 bytes */
    char bytes[32];
    snprintf(bytes, sizeof bytes, "%" PRIu64, (uint64_t)1 << 50);
    mxk_ndarray *a = NULL;
    mxk_status rc = mxk_ndarray_create(&s, MXK_FLOAT32, gpu_test_gpu, &a);
    if (rc == MXK_OK) { /* allocation deferred to the first write */
        rc = mxk_ndarray_fill(a, 0.0);
        if (rc == MXK_OK)
            rc = mxk_ndarray_wait_to_read(a);
    }
    const char *msg = mxk_get_last_error();
    printf("1 PiB on gpu(0): %s: %s\n", mxk_status_name(rc), msg);
    CHECK_EQ_INT(rc, MXK_ERR_OUT_OF_MEMORY);
    CHECK_CONTAINS(msg, bytes);
    mxk_ndarray_free(a);
    mxk_ndarray *ok = NULL;
    mxk_shape small = vec(1 << 20);
    CHECK_EQ_INT(mxk_ndarray_full(&small, MXK_FLOAT32, gpu_test_gpu, 2.0, &ok), MXK_OK);
    float v = 0;
    mxk_ndarray *one = NULL;
    CHECK_EQ_INT(mxk_ndarray_slice(ok, 5, 6, &one), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(one, &v, sizeof v), MXK_OK);
    CHECK(v == 2.0f);
    mxk_ndarray_free(one);
    mxk_ndarray_free(ok);
}

/** gpu(N) past the last GPU: MXK_ERR_NOT_FOUND with the exact message. */
static void test_missing_device(void) {
    int32_t n = mxk_device_count(MXK_DEV_GPU);
    mxk_context c = {MXK_DEV_GPU, n};
    mxk_shape s = vec(4);
    mxk_ndarray *a = NULL;
    char want[160];
    snprintf(want, sizeof want,
             "mxk_ndarray_create: device gpu(%d) does not exist: the gpu backend has %d device(s)",
             (int)n, (int)n);
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, c, &a), MXK_ERR_NOT_FOUND);
    printf("gpu(%d): %s\n", (int)n, mxk_get_last_error());
    CHECK(strcmp(mxk_get_last_error(), want) == 0);
    CHECK(a == NULL);
}

/** Entry point: test_gpu_errors fault CONFDIR PLUGIN | oom CONFDIR | nodevice CONFDIR. */
int main(int argc, char **argv) {
    if (argc < 3 || (strcmp(argv[1], "fault") == 0 && argc < 4)) {
        fprintf(stderr, "usage: test_gpu_errors fault CONFDIR PLUGIN | oom CONFDIR | "
                        "nodevice CONFDIR\n");
        return 2;
    }
    gpu_test_init(argv[2]);
    if (strcmp(argv[1], "fault") == 0) {
        g_plugin = argv[3];
        MXK_RUN(test_async_fault_names_op);
    } else if (strcmp(argv[1], "oom") == 0) {
        MXK_RUN(test_out_of_memory);
    } else {
        MXK_RUN(test_missing_device);
    }
    int rc = MXK_TEST_EXIT();
    /* After a device fault the CUDA context is gone: leave without tearing down. */
    if (strcmp(argv[1], "fault") == 0)
        _Exit(rc);
    mxk_shutdown();
    return rc;
}
