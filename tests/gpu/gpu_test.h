/*
 * Helpers shared by the GPU tests (tests/gpu, label "gpu"): library start-up from
 * the build tree's config dir with the skip rule (exit 77 with a printed reason
 * when no GPU is visible, so ctest shows the test as skipped), and conversions
 * between float64 host values and NDArrays of any dtype on any device.
 * Header-only; the programs link libmxk (or mxk_whitebox).
 */
#ifndef MXK_GPU_TEST_H
#define MXK_GPU_TEST_H

#include <stdio.h>
#include <stdlib.h>

#include "mxk.h"

/** The exit status ctest reads as "skipped" (SKIP_RETURN_CODE of tests/gpu). */
#define GPU_TEST_SKIP 77

/** The host context cpu(0). */
static const mxk_context gpu_test_cpu = {MXK_DEV_CPU, 0};
/** The device under test, gpu(0). */
static const mxk_context gpu_test_gpu = {MXK_DEV_GPU, 0};

/**
 * mxk_init with config dir `confdir` (NULL: the default search), then exits 77
 * with "SKIP: no GPU visible (mxk_device_count(gpu) == 0)" when no GPU is, and 1
 * when init fails. Returns the number of visible GPUs.
 */
static inline int32_t gpu_test_init(const char *confdir) {
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = confdir};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        exit(1);
    }
    int32_t n = mxk_device_count(MXK_DEV_GPU);
    if (n == 0) {
        printf("SKIP: no GPU visible (mxk_device_count(gpu) == 0)\n");
        mxk_shutdown();
        exit(GPU_TEST_SKIP);
    }
    mxk_device_props p = {.struct_size = sizeof p};
    if (mxk_device_properties(gpu_test_gpu, &p) == MXK_OK)
        printf("device: gpu(0) %s, %d GPU(s) visible\n", p.name, (int)n);
    return n;
}

/**
 * A new array of `shape` and `dtype` on `ctx` holding vals (float64, converted to
 * dtype on the host, then copied to the device). Waits for the copies.
 */
static inline mxk_status gpu_test_array(const mxk_shape *shape, int32_t dtype, mxk_context ctx,
                                        const double *vals, mxk_ndarray **out) {
    mxk_ndarray *f64 = NULL, *host = NULL;
    uint64_t n = 1;
    for (int32_t d = 0; d < shape->ndim; d++)
        n *= (uint64_t)shape->dims[d];
    *out = NULL;
    mxk_status rc = mxk_ndarray_create(shape, MXK_FLOAT64, gpu_test_cpu, &f64);
    if (rc == MXK_OK)
        rc = mxk_ndarray_copy_from_host(f64, vals, n * sizeof(double));
    if (rc == MXK_OK)
        rc = mxk_ndarray_create(shape, dtype, gpu_test_cpu, &host);
    if (rc == MXK_OK)
        rc = mxk_ndarray_copy_to(f64, host);
    if (rc == MXK_OK && ctx.dev_type != MXK_DEV_CPU) {
        rc = mxk_ndarray_create(shape, dtype, ctx, out);
        if (rc == MXK_OK)
            rc = mxk_ndarray_copy_to(host, *out);
        mxk_ndarray_free(host);
        host = NULL;
    } else if (rc == MXK_OK) {
        *out = host;
        host = NULL;
    }
    if (rc == MXK_OK)
        rc = mxk_ndarray_wait_to_read(*out);
    mxk_ndarray_free(host);
    mxk_ndarray_free(f64);
    if (rc != MXK_OK) {
        mxk_ndarray_free(*out);
        *out = NULL;
    }
    return rc;
}

/**
 * The values of `arr` (any dtype and device) as a malloc'd float64 buffer of
 * mxk_ndarray_size elements: copied to the host, then converted. Waits for the
 * array's writes and returns their errors. The caller frees *vals.
 */
static inline mxk_status gpu_test_values(mxk_ndarray *arr, double **vals) {
    mxk_shape s = mxk_ndarray_shape(arr);
    uint64_t n = mxk_ndarray_size(arr);
    mxk_ndarray *host = NULL, *f64 = NULL;
    *vals = malloc((n ? n : 1) * sizeof(double));
    if (*vals == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    mxk_status rc = mxk_ndarray_create(&s, mxk_ndarray_dtype(arr), gpu_test_cpu, &host);
    if (rc == MXK_OK)
        rc = mxk_ndarray_copy_to(arr, host);
    if (rc == MXK_OK)
        rc = mxk_ndarray_create(&s, MXK_FLOAT64, gpu_test_cpu, &f64);
    if (rc == MXK_OK)
        rc = mxk_ndarray_copy_to(host, f64);
    if (rc == MXK_OK)
        rc = mxk_ndarray_copy_to_host(f64, *vals, n * sizeof(double));
    mxk_ndarray_free(f64);
    mxk_ndarray_free(host);
    if (rc != MXK_OK) {
        free(*vals);
        *vals = NULL;
    }
    return rc;
}

#endif /* MXK_GPU_TEST_H */
