/*
 * Host<->device copy bandwidth on gpu(0): mxk's copies (mxk_ndarray_copy_to
 * between a host NDArray and a gpu(0) one, through the engine's copy workers)
 * from pageable memory (cpu context) and from pinned memory (cpu_pinned context,
 * the cuda plugin's cudaHostAlloc), beside the device's peak: cudaMemcpy between
 * cudaHostAlloc'd memory and cudaMalloc'd memory, called directly.
 *
 *   bench_gpu_copy [MIB] [REPS]
 *
 * Copies of MIB MiB (64), REPS times each way (10) after one warm-up, timed to
 * the last copy's completion. Prints one JSON line with GB/s (1e9 bytes/s) for
 * h2d and d2h of each kind and the pinned fractions of the peak. Upstream:
 * MXNet's PinnedMemoryStorage (src/storage/pinned_memory_storage.h) and the
 * cpu_pinned context, which exist for exactly this gap. Without a GPU prints
 * "SKIP: no GPU" and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "mxk.h"

/** Monotonic seconds. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/**
 * GB/s of `reps` copies src -> dst through mxk (one warm-up copy first); < 0 on
 * error (message on stderr).
 */
static double mxk_rate(mxk_ndarray *src, mxk_ndarray *dst, int reps, uint64_t bytes) {
    int ok = mxk_ndarray_copy_to(src, dst) == MXK_OK && mxk_wait_all() == MXK_OK;
    double t0 = now_s();
    for (int i = 0; i < reps && ok; i++)
        ok = mxk_ndarray_copy_to(src, dst) == MXK_OK;
    if (ok && mxk_wait_all() == MXK_OK)
        return (double)bytes * reps / (now_s() - t0) / 1e9;
    fprintf(stderr, "bench_gpu_copy: %s\n", mxk_get_last_error());
    return -1;
}

/** GB/s of `reps` cudaMemcpy calls of `kind` (one warm-up first); < 0 on error. */
static double cuda_rate(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                        int reps) {
    if (cudaMemcpy(dst, src, bytes, kind) != cudaSuccess)
        return -1;
    double t0 = now_s();
    for (int i = 0; i < reps; i++)
        if (cudaMemcpy(dst, src, bytes, kind) != cudaSuccess)
            return -1;
    return (double)bytes * reps / (now_s() - t0) / 1e9;
}

/** Entry point: see the file comment. */
int main(int argc, char **argv) {
    int mib = argc > 1 ? atoi(argv[1]) : 64, reps = argc > 2 ? atoi(argv[2]) : 10;
    if (mib < 1 || reps < 1) {
        fprintf(stderr, "usage: bench_gpu_copy [MIB] [REPS]\n");
        return 2;
    }
    mxk_init_options o = {.struct_size = sizeof o};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "bench_gpu_copy: mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    mxk_context gpu = {MXK_DEV_GPU, 0}, cpu = {MXK_DEV_CPU, 0}, pin = {MXK_DEV_CPU_PINNED, 0};
    mxk_device_props props = {.struct_size = sizeof props};
    if (mxk_device_count(MXK_DEV_GPU) == 0 || mxk_device_properties(gpu, &props) != MXK_OK) {
        printf("SKIP: no GPU (mxk_device_count(gpu) == 0)\n");
        mxk_shutdown();
        return 0;
    }
    uint64_t bytes = (uint64_t)mib << 20;
    mxk_shape s = {.ndim = 1, .dims = {(int64_t)(bytes / 4)}};
    mxk_ndarray *h = NULL, *p = NULL, *g = NULL;
    if (mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 1.0, &h) != MXK_OK ||
        mxk_ndarray_full(&s, MXK_FLOAT32, pin, 1.0, &p) != MXK_OK ||
        mxk_ndarray_full(&s, MXK_FLOAT32, gpu, 1.0, &g) != MXK_OK) {
        fprintf(stderr, "bench_gpu_copy: %s\n", mxk_get_last_error());
        mxk_shutdown();
        return 1;
    }
    double page_h2d = mxk_rate(h, g, reps, bytes), page_d2h = mxk_rate(g, h, reps, bytes);
    double pin_h2d = mxk_rate(p, g, reps, bytes), pin_d2h = mxk_rate(g, p, reps, bytes);
    mxk_ndarray_free(h);
    mxk_ndarray_free(p);
    mxk_ndarray_free(g);
    void *hp = NULL, *dp = NULL;
    double peak_h2d = -1, peak_d2h = -1;
    if (cudaSetDevice(0) == cudaSuccess &&
        cudaHostAlloc(&hp, bytes, cudaHostAllocDefault) == cudaSuccess &&
        cudaMalloc(&dp, bytes) == cudaSuccess) {
        peak_h2d = cuda_rate(dp, hp, bytes, cudaMemcpyHostToDevice, reps);
        peak_d2h = cuda_rate(hp, dp, bytes, cudaMemcpyDeviceToHost, reps);
    }
    cudaFree(dp);
    cudaFreeHost(hp);
    printf("{\"bench\": \"gpu_copy\", \"device\": \"%s\", \"mib\": %d, \"reps\": %d, "
           "\"pageable_h2d_gbs\": %.2f, \"pageable_d2h_gbs\": %.2f, \"pinned_h2d_gbs\": %.2f, "
           "\"pinned_d2h_gbs\": %.2f, \"peak_h2d_gbs\": %.2f, \"peak_d2h_gbs\": %.2f, "
           "\"pinned_h2d_of_peak\": %.3f, \"pinned_d2h_of_peak\": %.3f}\n",
           props.name, mib, reps, page_h2d, page_d2h, pin_h2d, pin_d2h, peak_h2d, peak_d2h,
           peak_h2d > 0 ? pin_h2d / peak_h2d : 0, peak_d2h > 0 ? pin_d2h / peak_d2h : 0);
    mxk_shutdown();
    return page_h2d < 0 || pin_h2d < 0 || peak_h2d < 0 ? 1 : 0;
}
