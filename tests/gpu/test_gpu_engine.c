/*
 * The dependency engine on gpu(0): its ordering guarantee across GPU workers and
 * their streams, CPU<->GPU copies interleaved with kernels, and waiting on GPU
 * arrays (public API only: fills and copies are the device backend's own work,
 * so these run whatever operator kernels the cuda plugin has).
 *
 *   test_gpu_engine CONFDIR
 *
 * The ordering example of MXNet's engine note (docs/static_site/src/pages/api/
 * architecture/note_engine.md, "the result per variable equals running its
 * functions in push order"): writes on one GPU worker's stream followed by reads
 * on another's (MXK_GPU_WORKER_NTHREADS workers and MXK_GPU_COPY_NTHREADS copy
 * workers, each with its own CUDA stream) must see the write; many interleaved
 * reads and writes give the sequential result. Upstream's GPU engine tests:
 * tests/python/gpu/test_operator_gpu.py (test_bulking, the engine-ordering
 * checks of test_kvstore_gpu.py). Exits 77 (skipped) when no GPU is visible.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"
#include "testing.h"

/** A 1-D float32 shape of n elements. */
static mxk_shape vec(int64_t n) {
    mxk_shape s = {.ndim = 1};
    s.dims[0] = n;
    return s;
}

/** Whether every one of n float32 values of arr equals v (reads back to the host). */
static int all_equal(mxk_ndarray *arr, float v) {
    uint64_t n = mxk_ndarray_size(arr);
    float *h = malloc(n * sizeof *h);
    int ok = h != NULL && mxk_ndarray_copy_to_host(arr, h, n * sizeof *h) == MXK_OK;
    for (uint64_t i = 0; ok && i < n; i++)
        ok = h[i] == v;
    if (!ok)
        fprintf(stderr, "all_equal(%g): first value %g (%s)\n", v, h ? h[0] : -1.0,
                mxk_get_last_error());
    free(h);
    return ok;
}

/**
 * Fill A with i on a GPU worker, copy A -> B[i % K] on a copy worker, N times:
 * every B[k] holds the last i with i % K == k (a write seen by a read on another
 * stream, and no later write overtaking an earlier read).
 */
static void test_write_then_read_across_streams(void) {
    enum { K = 4, N = 400 };
    mxk_shape s = vec((1 << 18) + 3);
    mxk_ndarray *a = NULL, *b[K] = {0};
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, gpu_test_gpu, &a), MXK_OK);
    for (int k = 0; k < K; k++)
        CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, gpu_test_gpu, &b[k]), MXK_OK);
    for (int i = 0; i < N; i++) {
        CHECK_EQ_INT(mxk_ndarray_fill(a, (double)i), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_copy_to(a, b[i % K]), MXK_OK);
    }
    for (int k = 0; k < K; k++) {
        CHECK_EQ_INT(mxk_ndarray_wait_to_read(b[k]), MXK_OK);
        CHECK(all_equal(b[k], (float)(N - K + k)));
        mxk_ndarray_free(b[k]);
    }
    CHECK(all_equal(a, (float)(N - 1)));
    mxk_ndarray_free(a);
}

/** Whether `op` has a kernel on gpu. */
static int gpu_has(const char *op) {
    const char *b = NULL;
    return mxk_resolve_backend(op, MXK_DEV_GPU, &b) == MXK_OK;
}

/**
 * The engine note's example, x = x + 1 pushed many times in place on gpu(0) with
 * snapshots copied to the host arrays between the increments: each snapshot holds
 * the count at its push, x the total (needs a GPU kernel of _plus_scalar).
 */
static void test_sequential_increments(void) {
    if (!gpu_has("_plus_scalar"))
        MXK_SKIP("_plus_scalar has no gpu kernel");
    enum { N = 300, EVERY = 30 };
    mxk_shape s = vec(4097);
    mxk_ndarray *x = NULL, *snap[N / EVERY] = {0};
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT32, gpu_test_gpu, 0.0, &x), MXK_OK);
    const char *keys[] = {"scalar"}, *vals[] = {"1"};
    for (int i = 0; i < N; i++) {
        uint32_t nout = 1;
        CHECK_EQ_INT(mxk_imperative_invoke("_plus_scalar", 1, &x, &nout, &x, 1, keys, vals),
                     MXK_OK);
        if ((i + 1) % EVERY == 0) {
            mxk_ndarray **h = &snap[(i + 1) / EVERY - 1];
            CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, gpu_test_cpu, h), MXK_OK);
            CHECK_EQ_INT(mxk_ndarray_copy_to(x, *h), MXK_OK);
        }
    }
    for (int j = 0; j < N / EVERY; j++) {
        CHECK(all_equal(snap[j], (float)((j + 1) * EVERY)));
        mxk_ndarray_free(snap[j]);
    }
    CHECK(all_equal(x, (float)N));
    mxk_ndarray_free(x);
}

/**
 * Host data -> gpu -> gpu -> host for several sizes (1 element to 4M + 1), with
 * fills of the intermediate arrays pushed between the copies: the bytes come back
 * unchanged and the fills land where their push order puts them.
 */
static void test_copies_interleaved_with_kernels(void) {
    const int64_t sizes[] = {1, 255, 4096, (1 << 22) + 1};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        mxk_shape s = vec(sizes[t]);
        uint64_t n = (uint64_t)sizes[t];
        float *src = malloc(n * sizeof *src), *back = malloc(n * sizeof *back);
        CHECK(src != NULL && back != NULL);
        if (src == NULL || back == NULL) {
            free(src);
            free(back);
            return;
        }
        for (uint64_t i = 0; i < n; i++)
            src[i] = (float)(i % 1000) * 0.25f - 7.0f;
        mxk_ndarray *h = NULL, *g1 = NULL, *g2 = NULL, *h2 = NULL;
        CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, gpu_test_cpu, &h), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, gpu_test_cpu, &h2), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, gpu_test_gpu, &g1), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, gpu_test_gpu, &g2), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_copy_from_host(h, src, n * sizeof *src), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_fill(g1, 1.0), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_copy_to(h, g1), MXK_OK); /* overwrites the fill */
        CHECK_EQ_INT(mxk_ndarray_fill(g2, 2.0), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_copy_to(g1, g2), MXK_OK); /* overwrites the fill */
        CHECK_EQ_INT(mxk_ndarray_fill(g1, 3.0), MXK_OK);   /* after the read of g1 */
        CHECK_EQ_INT(mxk_ndarray_copy_to(g2, h2), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_copy_to_host(h2, back, n * sizeof *back), MXK_OK);
        CHECK(memcmp(src, back, n * sizeof *src) == 0);
        CHECK(all_equal(g1, 3.0f));
        mxk_ndarray_free(h);
        mxk_ndarray_free(h2);
        mxk_ndarray_free(g1);
        mxk_ndarray_free(g2);
        free(src);
        free(back);
    }
}

/**
 * wait_to_read on a GPU array returns once its pending writes (a fill of 64 MiB
 * queued behind others) are done: a direct device-to-host copy then sees the
 * last value; wait_to_write and mxk_wait_all return MXK_OK.
 */
static void test_wait_to_read(void) {
    mxk_shape s = vec(16 << 20);
    mxk_ndarray *a = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, gpu_test_gpu, &a), MXK_OK);
    for (int i = 1; i <= 8; i++)
        CHECK_EQ_INT(mxk_ndarray_fill(a, (double)i), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(a), MXK_OK);
    float first = 0;
    mxk_ndarray *one = NULL;
    CHECK_EQ_INT(mxk_ndarray_slice(a, 0, 1, &one), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(one, &first, sizeof first), MXK_OK);
    CHECK(first == 8.0f);
    CHECK(all_equal(a, 8.0f));
    CHECK_EQ_INT(mxk_ndarray_wait_to_write(a), MXK_OK);
    CHECK_EQ_INT(mxk_wait_all(), MXK_OK);
    mxk_ndarray_free(one);
    mxk_ndarray_free(a);
}

/** With two GPUs: gpu(0) -> gpu(1) -> gpu(0) peer copies keep the values. */
static void test_peer_copies(void) {
    if (mxk_device_count(MXK_DEV_GPU) < 2)
        MXK_SKIP("peer copies need 2 GPUs");
    mxk_shape s = vec(1 << 20);
    mxk_context g1 = {MXK_DEV_GPU, 1};
    mxk_ndarray *a = NULL, *b = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT32, gpu_test_gpu, 4.5, &a), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, g1, &b), MXK_OK);
    for (int i = 0; i < 20; i++) {
        CHECK_EQ_INT(mxk_ndarray_copy_to(a, b), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_fill(a, 0.0), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_copy_to(b, a), MXK_OK);
    }
    CHECK(all_equal(a, 4.5f));
    CHECK(all_equal(b, 4.5f));
    mxk_ndarray_free(a);
    mxk_ndarray_free(b);
}

/** Entry point: test_gpu_engine CONFDIR. */
int main(int argc, char **argv) {
    gpu_test_init(argc > 1 ? argv[1] : NULL);
    MXK_RUN(test_write_then_read_across_streams);
    MXK_RUN(test_sequential_increments);
    MXK_RUN(test_copies_interleaved_with_kernels);
    MXK_RUN(test_wait_to_read);
    MXK_RUN(test_peer_copies);
    int rc = MXK_TEST_EXIT();
    mxk_shutdown();
    return rc;
}
