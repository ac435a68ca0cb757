/*
 * A fake device backend and registry for the storage / resource-manager tests.
 *
 * The tests compile kernel/storage.c and kernel/resource.c directly (not libmxk), so
 * the test-local definition of mxk_registry_device() in fake_device.c is the one the
 * kernel code calls. It serves:
 * - MXK_DEV_CPU with `fake.cpu_count` devices (default 1): host memory from malloc;
 * - MXK_DEV_GPU with `fake.gpu_count` devices (default 2), only while
 *   `fake.gpu_enabled` is non-zero (the memory is host memory too);
 * - nothing for any other device type (mxk_registry_device returns NULL).
 *
 * Every counter is atomic, so the fake may be used from several threads at once.
 * Failure injection: while `fake.fail_next` > 0, each alloc call decrements it and fails
 * with `fake.fail_code` (default MXK_ERR_OUT_OF_MEMORY). Requests above 2^40 bytes fail
 * with MXK_ERR_OUT_OF_MEMORY ("fake: N bytes is more than the device has").
 */
#ifndef MXK_TEST_FAKE_DEVICE_H
#define MXK_TEST_FAKE_DEVICE_H

#include "mxk_abi_device.h"

#include <stdatomic.h>

/** State and counters of the fake backend (one global instance, `fake`). */
typedef struct fake_device_state {
    atomic_int cpu_count;                  /**< CPU devices reported (default 1) */
    atomic_int gpu_enabled;                /**< non-zero: a GPU backend is registered */
    atomic_int gpu_count;                  /**< GPU devices reported (default 2) */
    atomic_int fail_next;                  /**< number of upcoming alloc calls to fail */
    atomic_int fail_code;                  /**< status of an injected failure */
    atomic_uint_fast64_t alloc_calls;      /**< every call of alloc */
    atomic_uint_fast64_t allocs;           /**< successful allocs */
    atomic_uint_fast64_t frees;            /**< frees of non-NULL pointers */
    atomic_int_fast64_t live_blocks;       /**< allocs - frees */
    atomic_int_fast64_t live_bytes;        /**< bytes of the live blocks */
    atomic_uint_fast64_t last_alloc_bytes; /**< size of the last alloc call */
    atomic_uint_fast64_t syncs;            /**< calls of synchronize */
} fake_device_state;

/** The fake backend's state; tests read and set its fields directly. */
extern fake_device_state fake;

/** Resets the counters and settings to their defaults (not the live counts). */
void fake_device_reset(void);

#endif /* MXK_TEST_FAKE_DEVICE_H */
