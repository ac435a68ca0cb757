/*
 * The test kit's fake device backends and registry (tests/kit/CMakeLists.txt).
 *
 * The storage, resource-manager, NDArray and engine-stream tests and the ndarray
 * fuzz target link the kit (the kernel sources they exercise, not libmxk), so the
 * definition of the kernel's mxki_registry_device() (kernel/registry.h) in
 * fake_device.c is the one the kernel code calls, without any plugin or loader. It
 * serves:
 * - MXK_DEV_CPU ("cpu"), `fake.cpu_count` devices (default 1): malloc'd host memory,
 *   memmove copies, host fill;
 * - MXK_DEV_GPU ("gpu"), `fake.gpu_count` devices (default 2), while
 *   `fake.gpu_enabled` is non-zero (default 1): also malloc'd, pre-filled with
 *   garbage, and every byte is stored XOR-scrambled (FAKE_GPU_SCRAMBLE), so code
 *   that touches "device" memory directly instead of through the backend's
 *   copy / fill reads or writes garbage and fails the test;
 * - nothing for any other device type (mxki_registry_device returns NULL).
 * Both report 64-byte alignment and share one allocator: blocks carry a hidden
 * size header, so the live blocks and bytes are counted.
 *
 * Streams (GPU): stream_create makes a fake stream recording the thread that created
 * it; a function may queue "work" on it (fake_gpu_stream_queue), which its
 * synchronize completes (counted per stream and in `gpu_stream_syncs`); synchronize
 * and stream_destroy count calls from another thread than the creator's in
 * `gpu_stream_wrong_thread`. While `fake.gpu_fail_stream_creates` > 0, each
 * stream_create decrements it and fails with MXK_ERR_BACKEND "fake gpu: no stream
 * left on ID"; while `fake.gpu_fail_syncs` > 0, each synchronize of a stream with
 * queued work decrements it and fails with MXK_ERR_BACKEND "fake gpu: asynchronous
 * fault on the stream" (the work is dropped).
 *
 * Pinned memory: while `fake.gpu_pinned` is non-zero (default 0) the GPU backend has
 * host_alloc / host_free (malloc'd host memory, counted in gpu_host_allocs /
 * gpu_host_frees and in the totals above).
 *
 * Failure injection: while `fake.fail_next` > 0, each alloc call decrements it and
 * fails with `fake.fail_code` (default MXK_ERR_OUT_OF_MEMORY) and the message
 * "fake: injected failure (CODE) of N bytes on ID"; requests of 0 bytes or above
 * 2^40 bytes fail with MXK_ERR_OUT_OF_MEMORY ("fake: N bytes is more than the
 * device has"); while `fake.gpu_fail_copies` > 0, each GPU copy decrements it and
 * fails with MXK_ERR_BACKEND "fake gpu copy failure".
 *
 * Every field is atomic, so the fake may be used from several threads at once.
 */
#ifndef MXK_TEST_FAKE_DEVICE_H
#define MXK_TEST_FAKE_DEVICE_H

#include <stdatomic.h>
#include <stdint.h>

#include "mxk_abi_device.h"

/** XOR applied to every byte stored in fake GPU memory. */
#define FAKE_GPU_SCRAMBLE 0xA5u

/** Settings and counters of the fake backends (one global instance, `fake`). */
typedef struct fake_device_state {
    /* Settings. */
    atomic_int cpu_count;               /**< CPU devices reported (default 1) */
    atomic_int gpu_enabled;             /**< non-zero: the GPU backend is registered (default 1) */
    atomic_int gpu_count;               /**< GPU devices reported (default 2) */
    atomic_int fail_next;               /**< number of upcoming alloc calls to fail */
    atomic_int fail_code;               /**< status of an injected alloc failure */
    atomic_int gpu_fail_copies;         /**< number of upcoming GPU copies to fail */
    atomic_int gpu_pinned;              /**< non-zero: the GPU backend has host_alloc (default 0) */
    atomic_int gpu_fail_stream_creates; /**< number of upcoming stream_create calls to fail */
    atomic_int gpu_fail_syncs;          /**< number of upcoming faulty stream synchronisations */
    /* Allocations, both backends. */
    atomic_uint_fast64_t alloc_calls;      /**< every call of alloc */
    atomic_uint_fast64_t allocs;           /**< successful allocs */
    atomic_uint_fast64_t frees;            /**< frees of non-NULL pointers */
    atomic_int_fast64_t live_blocks;       /**< allocs - frees */
    atomic_int_fast64_t live_bytes;        /**< bytes of the live blocks */
    atomic_uint_fast64_t last_alloc_bytes; /**< size of the last alloc call */
    atomic_uint_fast64_t syncs;            /**< calls of synchronize */
    /* Calls by backend and kind. */
    atomic_int cpu_allocs, cpu_frees, cpu_copy, cpu_fill;
    atomic_int gpu_allocs, gpu_frees, gpu_fill;
    atomic_int gpu_h2d, gpu_d2h, gpu_d2d;       /**< GPU copies by direction */
    atomic_int gpu_host_allocs, gpu_host_frees; /**< pinned memory (host_alloc) */
    /* GPU streams. */
    atomic_int gpu_stream_creates;      /**< successful stream_create calls */
    atomic_int gpu_stream_destroys;     /**< stream_destroy calls */
    atomic_int gpu_stream_syncs;        /**< synchronize calls with a stream */
    atomic_int gpu_stream_wrong_thread; /**< synchronize / destroy off the creator's thread */
} fake_device_state;

/** The fake backends' state; tests read and set its fields directly. */
extern fake_device_state fake;

/** Resets the settings to their defaults and the counters (not the live counts) to 0. */
void fake_device_reset(void);

/** Queues one unit of work on a fake GPU stream (a kernel launch, for the tests). */
void fake_gpu_stream_queue(void *stream);

/** Work queued on a fake GPU stream and not yet completed by synchronize. */
int fake_gpu_stream_pending(const void *stream);

/** Whether `stream` is a live fake GPU stream created by the calling thread. */
int fake_gpu_stream_is_callers(const void *stream);

#endif /* MXK_TEST_FAKE_DEVICE_H */
