/*
 * Helpers shared by the NDArray tests: contexts, shapes, start/stop of the
 * engine, arrays from host data, and a pushed write that fails.
 */
#ifndef MXK_ND_TEST_UTIL_H
#define MXK_ND_TEST_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "error.h"
#include "fake_device.h"
#include "mxk.h"
#include "ndarray.h"
#include "ndarray_io.h"
#include "shape.h"
#include "storage.h"
#include "testing.h"

/** cpu(0). */
static inline mxk_context nd_cpu(void) {
    return (mxk_context){MXK_DEV_CPU, 0};
}

/** gpu(id) of the fake GPU backend. */
static inline mxk_context nd_gpu(int32_t id) {
    return (mxk_context){MXK_DEV_GPU, id};
}

/** A shape from up to 4 dims (unused ones ignored). */
static inline mxk_shape nd_shape(int32_t ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    int64_t d[4] = {d0, d1, d2, d3};
    return mxki_shape_make(ndim, d);
}

/** Sleeps `ms` milliseconds. */
static inline void nd_sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/** Starts the engine or exits with a message (the tests cannot run without it). */
static inline void nd_start(void) {
    if (mxki_engine_start() != MXK_OK) {
        fprintf(stderr, "cannot start the engine: %s\n", mxki_last_error_message());
        exit(1);
    }
    printf("engine: %s\n", mxki_engine_type_name());
}

/** Waits for all work, stops the engine and releases the pools. */
static inline void nd_stop(void) {
    mxki_engine_wait_all();
    mxki_engine_stop();
    mxki_storage_shutdown();
}

/** Creates an array from host data (CHECKs success); returns NULL on failure. */
static inline mxk_ndarray *nd_from(const mxk_shape *s, int32_t dtype, mxk_context ctx,
                                   const void *data) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_create(s, dtype, ctx, &a) != MXK_OK) {
        fprintf(stderr, "create failed: %s\n", mxki_last_error_message());
        return NULL;
    }
    if (mxk_ndarray_copy_from_host(a, data, mxki_ndarray_bytes(a)) != MXK_OK) {
        fprintf(stderr, "copy_from_host failed: %s\n", mxki_last_error_message());
        mxk_ndarray_free(a);
        return NULL;
    }
    return a;
}

/** An engine function that fails with MXK_ERR_BACKEND and the message `arg` (a string). */
static inline mxk_status nd_failing_write(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    return mxki_sink_set(err, MXK_ERR_BACKEND, "%s", (const char *)arg);
}

/**
 * Pushes nd_failing_write with message `msg` (not copied: a string literal) writing
 * arr's engine variable, on the CPU. Returns the push's status.
 */
static inline mxk_status nd_push_failing_write(mxk_ndarray *arr, const char *msg) {
    mxk_engine_var *v = mxk_ndarray_var(arr);
    return mxki_engine_push_sync(nd_failing_write, (void *)msg, NULL, MXK_DEV_CPU, 0, NULL, 0, &v,
                                 1, 0, 0, "failing_write");
}

#endif /* MXK_ND_TEST_UTIL_H */
