/*
 * Test-local device backends for the NDArray tests and the ndarray fuzz target.
 *
 * Until the plugin loader and the cpu-blas plugin exist, these tests compile the
 * kernel sources they need together with fake_device.c, which defines the kernel's
 * `mxk_registry_device()` (kernel/registry.h) and serves:
 * - MXK_DEV_CPU: 1 device, malloc'd memory, memcpy copies, host fill.
 * - MXK_DEV_GPU: 2 devices, also malloc'd, but every byte is stored XOR-scrambled
 *   (FAKE_GPU_SCRAMBLE), so any code that touches "device" memory directly instead
 *   of through the backend's copy/fill reads or writes garbage and fails the test.
 * Counters let tests check which backend paths ran. Thread-safe.
 */
#ifndef MXK_TESTS_FAKE_DEVICE_H
#define MXK_TESTS_FAKE_DEVICE_H

#include <stdatomic.h>
#include <stdint.h>

#include "mxk_abi_device.h"

/** XOR applied to every byte stored in fake GPU memory. */
#define FAKE_GPU_SCRAMBLE 0xA5u

/** Calls of the fake backends, by kind. */
typedef struct fake_device_counters {
    atomic_int gpu_h2d, gpu_d2h, gpu_d2d, gpu_fill;
    atomic_int cpu_copy, cpu_fill;
    atomic_int gpu_allocs, gpu_frees, cpu_allocs, cpu_frees;
} fake_device_counters;

/** The counters (zero at start; tests may reset fields). */
extern fake_device_counters fake_counters;

/** When > 0, the next that many GPU copies fail with MXK_ERR_BACKEND "fake gpu copy failure". */
extern atomic_int fake_gpu_fail_copies;

#endif /* MXK_TESTS_FAKE_DEVICE_H */
