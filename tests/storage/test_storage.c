/*
 * Tests of the storage manager (kernel/storage.c) on the fake device backend
 * (fake_device.h). Registered several times by CMakeLists.txt with different
 * environments; the test reads the same variables to know what to expect:
 * - default: pooling with page 4096 and large rounding 2 MiB;
 * - MXK_STORAGE_POOL=0: no rounding, no reuse, every free is raw;
 * - MXK_MEM_POOL_PAGE_SIZE=1000, MXK_MEM_LARGE_ALLOC_ROUND_SIZE=10000: other rounding;
 * - MXK_TEST_EXPECT_CONFIG_ERROR=<VAR> with VAR set to an invalid value: every
 *   allocation fails naming VAR.
 */
#include "error.h"
#include "fake_device.h"
#include "storage.h"
#include "testing.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

/** 1 when pooling is on in this run (MXK_STORAGE_POOL is not "0"). */
static int g_pooled = 1;
/** Page size and large rounding of this run (bytes). */
static uint64_t g_page = 4096, g_large = 2097152;

static const mxk_context CPU0 = {MXK_DEV_CPU, 0};
static const mxk_context CPU1 = {MXK_DEV_CPU, 1};

/** The documented rounding (the oracle): page multiple, then large multiple above it. */
static uint64_t expected_round(uint64_t b) {
    if (!g_pooled)
        return b;
    uint64_t r = (b + g_page - 1) / g_page * g_page;
    if (r > g_large)
        r = (r + g_large - 1) / g_large * g_large;
    return r;
}

/** Reads the run's settings from the environment. */
static void read_env(void) {
    const char *s = getenv("MXK_STORAGE_POOL");
    g_pooled = !(s != NULL && strcmp(s, "0") == 0);
    s = getenv("MXK_MEM_POOL_PAGE_SIZE");
    if (s != NULL && s[0])
        g_page = strtoull(s, NULL, 10);
    s = getenv("MXK_MEM_LARGE_ALLOC_ROUND_SIZE");
    if (s != NULL && s[0])
        g_large = strtoull(s, NULL, 10);
}

/** Stats of ctx (asserting the call succeeds). */
static mxk_storage_stats stats_of(mxk_context ctx) {
    mxk_storage_stats s;
    CHECK_EQ_INT(mxk_storage_get_stats(ctx, &s), MXK_OK);
    return s;
}

/** The rounding examples of MXNet's Naive pool, checked on the raw allocation size. */
static void test_rounding(void) {
    static const uint64_t def_cases[][2] = {{1, 4096},          {4096, 4096},
                                            {4097, 8192},       {2097152, 2097152},
                                            {2097153, 4194304}, {3 * 1048576, 4194304}};
    static const uint64_t custom_cases[][2] = {
        {1, 1000}, {1001, 2000}, {9999, 10000}, {10000, 10000}, {10001, 20000}};
    const uint64_t(*cases)[2] = def_cases;
    size_t n = sizeof def_cases / sizeof def_cases[0];
    if (g_page == 1000) {
        cases = custom_cases;
        n = sizeof custom_cases / sizeof custom_cases[0];
    } else {
        CHECK(g_page == 4096 && g_large == 2097152);
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t want = g_pooled ? cases[i][1] : cases[i][0];
        CHECK_EQ_INT(expected_round(cases[i][0]), want);
        mxki_storage_release_pool(CPU0); /* force a raw allocation */
        mxk_storage_stats before = stats_of(CPU0);
        uint64_t calls = atomic_load(&fake.alloc_calls);
        void *p = NULL;
        CHECK_EQ_INT(mxki_storage_alloc(CPU0, cases[i][0], &p), MXK_OK);
        CHECK(p != NULL);
        CHECK_EQ_INT(atomic_load(&fake.alloc_calls), calls + 1);
        CHECK_EQ_INT(atomic_load(&fake.last_alloc_bytes), want);
        mxk_storage_stats after = stats_of(CPU0);
        CHECK_EQ_INT(after.bytes_in_use - before.bytes_in_use, want);
        CHECK_EQ_INT(after.raw_allocs - before.raw_allocs, 1);
        memset(p, 0xab, cases[i][0]); /* the requested bytes are usable */
        mxki_storage_free(CPU0, p);
        CHECK_EQ_INT(stats_of(CPU0).bytes_in_use, before.bytes_in_use);
    }
    mxki_storage_release_pool(CPU0);
}

/** bytes == 0 gives NULL without touching the backend; free(NULL) is a no-op. */
static void test_zero_bytes(void) {
    uint64_t calls = atomic_load(&fake.alloc_calls);
    void *p = (void *)&calls;
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 0, &p), MXK_OK);
    CHECK(p == NULL);
    CHECK_EQ_INT(atomic_load(&fake.alloc_calls), calls);
    uint64_t frees = atomic_load(&fake.frees);
    mxki_storage_free(CPU0, NULL);
    CHECK_EQ_INT(atomic_load(&fake.frees), frees);
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 16, NULL), MXK_ERR_INVALID_ARGUMENT);
}

/** Free then alloc of the same rounded size is a pool hit (pooled) or two raw calls (not). */
static void test_pool_reuse(void) {
    mxki_storage_release_pool(CPU0);
    uint64_t size = expected_round(5000);
    void *a = NULL, *b = NULL;
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 5000, &a), MXK_OK);
    mxk_storage_stats s0 = stats_of(CPU0);
    uint64_t calls = atomic_load(&fake.alloc_calls), frees = atomic_load(&fake.frees);
    mxki_storage_free(CPU0, a);
    mxk_storage_stats s1 = stats_of(CPU0);
    CHECK_EQ_INT(s1.bytes_in_use, s0.bytes_in_use - size);
    if (g_pooled) {
        CHECK_EQ_INT(atomic_load(&fake.frees), frees); /* kept, not freed */
        CHECK_EQ_INT(s1.bytes_pooled, s0.bytes_pooled + size);
        /* A different request with the same rounded size reuses the block. */
        uint64_t same = size - 1 > 4096 ? size - 1 : size;
        CHECK_EQ_INT(expected_round(same), size);
        CHECK_EQ_INT(mxki_storage_alloc(CPU0, same, &b), MXK_OK);
        CHECK(b == a);
        CHECK_EQ_INT(atomic_load(&fake.alloc_calls), calls); /* no raw alloc */
        mxk_storage_stats s2 = stats_of(CPU0);
        CHECK_EQ_INT(s2.pool_hits, s1.pool_hits + 1);
        CHECK_EQ_INT(s2.raw_allocs, s1.raw_allocs);
        CHECK_EQ_INT(s2.bytes_pooled, s0.bytes_pooled);
        /* A different rounded size is a miss. */
        void *c = NULL;
        CHECK_EQ_INT(mxki_storage_alloc(CPU0, size + 1, &c), MXK_OK);
        CHECK_EQ_INT(atomic_load(&fake.alloc_calls), calls + 1);
        CHECK_EQ_INT(stats_of(CPU0).pool_hits, s2.pool_hits);
        mxki_storage_free(CPU0, c);
    } else {
        CHECK_EQ_INT(atomic_load(&fake.frees), frees + 1); /* raw free */
        CHECK_EQ_INT(s1.bytes_pooled, 0);
        CHECK_EQ_INT(mxki_storage_alloc(CPU0, 5000, &b), MXK_OK);
        CHECK_EQ_INT(atomic_load(&fake.alloc_calls), calls + 1); /* raw again */
        CHECK_EQ_INT(stats_of(CPU0).pool_hits, 0);
    }
    mxki_storage_free(CPU0, b);
    /* LIFO: the most recently freed block of a size is handed out first. */
    if (g_pooled) {
        void *x = NULL, *y = NULL, *z = NULL;
        CHECK_EQ_INT(mxki_storage_alloc(CPU0, 100, &x), MXK_OK);
        CHECK_EQ_INT(mxki_storage_alloc(CPU0, 100, &y), MXK_OK);
        mxki_storage_free(CPU0, x);
        mxki_storage_free(CPU0, y);
        CHECK_EQ_INT(mxki_storage_alloc(CPU0, 100, &z), MXK_OK);
        CHECK(z == y);
        mxki_storage_free(CPU0, z);
    }
    mxki_storage_release_pool(CPU0);
    CHECK_EQ_INT(stats_of(CPU0).bytes_pooled, 0);
}

/** Exact statistics after a known sequence on a fresh device (cpu(1)). */
static void test_stats_sequence(void) {
    mxk_storage_stats z = stats_of(CPU1);
    CHECK_EQ_INT(z.bytes_in_use + z.bytes_pooled + z.peak_in_use + z.raw_allocs + z.pool_hits, 0);
    const uint64_t big = 3 * 1048576;
    uint64_t ra = expected_round(100), rb = expected_round(5000), rc = expected_round(4000),
             rd = expected_round(big);
    void *a, *b, *c, *d;
    CHECK_EQ_INT(mxki_storage_alloc(CPU1, 100, &a), MXK_OK);
    CHECK_EQ_INT(mxki_storage_alloc(CPU1, 5000, &b), MXK_OK);
    mxki_storage_free(CPU1, a);
    CHECK_EQ_INT(mxki_storage_alloc(CPU1, 4000, &c), MXK_OK); /* same block as a when pooled */
    CHECK_EQ_INT(mxki_storage_alloc(CPU1, big, &d), MXK_OK);
    /* c reuses a's block when both round to the same size (default page: 4096). */
    int hit = g_pooled && ra == rc;
    uint64_t peak = ra + rb > rb + rc + rd ? ra + rb : rb + rc + rd;
    mxk_storage_stats s = stats_of(CPU1);
    CHECK_EQ_INT(s.bytes_in_use, rb + rc + rd);
    CHECK_EQ_INT(s.bytes_pooled, g_pooled && !hit ? ra : 0);
    CHECK_EQ_INT(s.peak_in_use, peak);
    CHECK_EQ_INT(s.raw_allocs, hit ? 3 : 4);
    CHECK_EQ_INT(s.pool_hits, hit ? 1 : 0);
    if (hit)
        CHECK(c == a);
    if (g_page == 4096 && g_large == 2097152 && g_pooled)
        CHECK_EQ_INT(s.bytes_in_use, 8192 + 4096 + 4194304);
    mxki_storage_free(CPU1, d);
    mxki_storage_free(CPU1, b);
    mxki_storage_free(CPU1, c);
    s = stats_of(CPU1);
    CHECK_EQ_INT(s.bytes_in_use, 0);
    uint64_t pooled = g_pooled ? rb + rc + rd + (hit ? 0 : ra) : 0;
    CHECK_EQ_INT(s.bytes_pooled, pooled);
    CHECK_EQ_INT(s.peak_in_use, peak);
    uint64_t frees = atomic_load(&fake.frees);
    mxki_storage_release_pool(CPU1);
    s = stats_of(CPU1);
    CHECK_EQ_INT(s.bytes_pooled, 0);
    CHECK_EQ_INT(s.peak_in_use, peak);
    CHECK_EQ_INT(atomic_load(&fake.frees), frees + (g_pooled ? (hit ? 3 : 4) : 0));
    /* Other devices are not affected. */
    CHECK_EQ_INT(stats_of(CPU0).bytes_in_use, 0);
}

/** Out of memory: the pool is released and the allocation retried once. */
static void test_oom_retry(void) {
    /* Put one block in the pool. */
    void *p = NULL, *q = NULL;
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 8000, &p), MXK_OK);
    mxki_storage_free(CPU0, p);
    mxk_storage_stats s0 = stats_of(CPU0);
    CHECK_EQ_INT(s0.bytes_pooled, g_pooled ? expected_round(8000) : 0);
    int64_t live0 = atomic_load(&fake.live_blocks);
    uint64_t calls0 = atomic_load(&fake.alloc_calls);

    /* First call fails, the retry succeeds. */
    atomic_store(&fake.fail_next, 1);
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 100000, &q), MXK_OK);
    CHECK(q != NULL);
    CHECK_EQ_INT(atomic_load(&fake.fail_next), 0);
    CHECK_EQ_INT(atomic_load(&fake.alloc_calls), calls0 + 2);
    mxk_storage_stats s1 = stats_of(CPU0);
    CHECK_EQ_INT(s1.bytes_pooled, 0); /* the pool was released before the retry */
    CHECK_EQ_INT(s1.raw_allocs, s0.raw_allocs + 2);
    CHECK_EQ_INT(s1.bytes_in_use, s0.bytes_in_use + expected_round(100000));
    CHECK_EQ_INT(atomic_load(&fake.live_blocks), live0 + 1 - (g_pooled ? 1 : 0));
    mxki_storage_free(CPU0, q);

    /* Both calls fail: MXK_ERR_OUT_OF_MEMORY naming the device and the size. */
    mxk_storage_stats s2 = stats_of(CPU0);
    calls0 = atomic_load(&fake.alloc_calls);
    atomic_store(&fake.fail_next, 2);
    q = (void *)&s2;
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 123457, &q), MXK_ERR_OUT_OF_MEMORY);
    CHECK(q == NULL);
    CHECK_EQ_INT(mxki_last_error_code(), MXK_ERR_OUT_OF_MEMORY);
    CHECK_CONTAINS(mxki_last_error_message(), "out of memory on cpu(0)");
    CHECK_CONTAINS(mxki_last_error_message(), "123457 bytes");
    CHECK_CONTAINS(mxki_last_error_message(), "after releasing the pool");
    CHECK_CONTAINS(mxki_last_error_message(), "fake: injected failure");
    CHECK_EQ_INT(atomic_load(&fake.alloc_calls), calls0 + 2);
    mxk_storage_stats s3 = stats_of(CPU0);
    CHECK_EQ_INT(s3.bytes_in_use, s2.bytes_in_use);
    CHECK_EQ_INT(s3.bytes_pooled, 0);
    CHECK_EQ_INT(s3.raw_allocs, s2.raw_allocs + 2);

    /* Another backend error is not retried and keeps its code. */
    calls0 = atomic_load(&fake.alloc_calls);
    atomic_store(&fake.fail_code, MXK_ERR_BACKEND);
    atomic_store(&fake.fail_next, 1);
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 64, &q), MXK_ERR_BACKEND);
    CHECK_EQ_INT(atomic_load(&fake.alloc_calls), calls0 + 1);
    CHECK_CONTAINS(mxki_last_error_message(), "storage: allocation failed on cpu(0)");
    CHECK_CONTAINS(mxki_last_error_message(), "64 bytes");
    CHECK_CONTAINS(mxki_last_error_message(), "MXK_ERR_BACKEND");
    atomic_store(&fake.fail_code, MXK_ERR_OUT_OF_MEMORY);

    /* A request too large for 64-bit rounding fails cleanly. */
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, UINT64_MAX, &q), MXK_ERR_OUT_OF_MEMORY);
    CHECK(q == NULL);
    CHECK_CONTAINS(mxki_last_error_message(), "18446744073709551615 bytes");
    CHECK_CONTAINS(mxki_last_error_message(), "cpu(0)");
    mxki_storage_release_pool(CPU0);
}

/** Unknown device type and bad dev_id: exact messages. */
static void test_bad_device(void) {
    void *p = (void *)&p;
    mxk_context gpu = {MXK_DEV_GPU, 0};
    CHECK_EQ_INT(mxki_storage_alloc(gpu, 16, &p), MXK_ERR_NOT_FOUND);
    CHECK(p == NULL);
    CHECK(strcmp(mxki_last_error_message(),
                 "storage: no device backend is registered for device type 2 (gpu)") == 0);
    mxk_context weird = {9, 0};
    CHECK_EQ_INT(mxki_storage_alloc(weird, 16, &p), MXK_ERR_NOT_FOUND);
    CHECK(strcmp(mxki_last_error_message(), "storage: no device backend is registered for "
                                            "device type 9 (unknown device type)") == 0);
    mxk_context cpu5 = {MXK_DEV_CPU, 5};
    CHECK_EQ_INT(mxki_storage_alloc(cpu5, 16, &p), MXK_ERR_NOT_FOUND);
    CHECK(strcmp(mxki_last_error_message(),
                 "storage: device cpu(5) does not exist: the cpu backend has 2 device(s)") == 0);
    mxk_context cpum1 = {MXK_DEV_CPU, -1};
    CHECK_EQ_INT(mxki_storage_alloc(cpum1, 16, &p), MXK_ERR_NOT_FOUND);
    CHECK(strcmp(mxki_last_error_message(),
                 "storage: device cpu(-1) does not exist: the cpu backend has 2 device(s)") == 0);
    /* Stats of a device never used are zeros; NULL out is an error. */
    mxk_storage_stats s = stats_of(cpu5);
    CHECK_EQ_INT(s.bytes_in_use + s.raw_allocs + s.peak_in_use, 0);
    CHECK_EQ_INT(mxk_storage_get_stats(CPU0, NULL), MXK_ERR_INVALID_ARGUMENT);
    /* Releasing the pool of an unknown device is a no-op. */
    mxki_storage_release_pool(weird);
}

/** mxk_device_properties: the backend's get_properties, and its errors. */
static void test_device_properties(void) {
    mxk_device_props p;
    memset(&p, 0x5a, sizeof p);
    CHECK_EQ_INT(mxk_device_properties(CPU0, &p), MXK_OK);
    CHECK(p.struct_size == sizeof p && strcmp(p.name, "fake device") == 0 && p.alignment == 64 &&
          p.total_memory == 0 && p.compute_major == 0);
    mxk_context cpu1 = {MXK_DEV_CPU, 1}, cpu5 = {MXK_DEV_CPU, 5};
    CHECK_EQ_INT(mxk_device_properties(cpu1, &p), MXK_ERR_BACKEND);
    CHECK(strcmp(mxki_last_error_message(),
                 "mxk_device_properties: cpu(1): fake device 1 has no properties") == 0);
    CHECK(p.name[0] == '\0' && p.alignment == 0);
    CHECK_EQ_INT(mxk_device_properties(cpu5, &p), MXK_ERR_NOT_FOUND);
    CHECK(strcmp(mxki_last_error_message(), "mxk_device_properties: device cpu(5) does not exist: "
                                            "the cpu backend has 2 device(s)") == 0);
    CHECK_EQ_INT(mxk_device_properties(CPU0, NULL), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxki_last_error_message(), "mxk_device_properties: out is NULL") == 0);
}

/** Freeing memory that is not a live block of the device is reported and ignored. */
static void test_bad_free(void) {
    uint64_t frees = atomic_load(&fake.frees);
    int local = 0;
    mxki_storage_free(CPU0, &local);
    CHECK_EQ_INT(mxki_last_error_code(), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxki_last_error_message(), "storage: free of ");
    CHECK_CONTAINS(mxki_last_error_message(), "on cpu(0): not a block allocated on this device");
    void *p = NULL;
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 10, &p), MXK_OK);
    mxki_storage_free(CPU1, p); /* wrong device: ignored */
    CHECK_CONTAINS(mxki_last_error_message(), "on cpu(1): not a block");
    mxk_context weird = {9, 0};
    mxki_storage_free(weird, p); /* unknown device: ignored */
    CHECK_CONTAINS(mxki_last_error_message(), "on device type 9(0)");
    mxki_storage_free(CPU0, p);
    mxki_storage_free(CPU0, p); /* double free: ignored */
    CHECK_CONTAINS(mxki_last_error_message(), "double free");
    CHECK_EQ_INT(atomic_load(&fake.frees), frees + (g_pooled ? 0 : 1));
    CHECK_EQ_INT(stats_of(CPU0).bytes_in_use, 0);
    mxki_storage_release_pool(CPU0);
}

/** Many live blocks: exercises the pointer map's growth and deletion. */
static void test_many_blocks(void) {
    enum { N = 5000 };
    void **ps = calloc(N, sizeof *ps);
    CHECK(ps != NULL);
    if (ps == NULL)
        return;
    uint64_t total = 0;
    for (int i = 0; i < N; i++) {
        uint64_t b = 1 + (uint64_t)(i * 37 % 20000);
        CHECK_EQ_INT(mxki_storage_alloc(CPU0, b, &ps[i]), MXK_OK);
        total += expected_round(b);
    }
    CHECK_EQ_INT(stats_of(CPU0).bytes_in_use, total);
    /* Free in an interleaved order, then everything again from the pool. */
    for (int i = 0; i < N; i += 2)
        mxki_storage_free(CPU0, ps[i]);
    for (int i = 1; i < N; i += 2)
        mxki_storage_free(CPU0, ps[i]);
    mxk_storage_stats s = stats_of(CPU0);
    CHECK_EQ_INT(s.bytes_in_use, 0);
    CHECK_EQ_INT(s.bytes_pooled, g_pooled ? total : 0);
    uint64_t calls = atomic_load(&fake.alloc_calls);
    for (int i = 0; i < N; i++) {
        uint64_t b = 1 + (uint64_t)(i * 37 % 20000);
        CHECK_EQ_INT(mxki_storage_alloc(CPU0, b, &ps[i]), MXK_OK);
    }
    if (g_pooled)
        CHECK_EQ_INT(atomic_load(&fake.alloc_calls), calls); /* all from the pool */
    for (int i = 0; i < N; i++)
        mxki_storage_free(CPU0, ps[i]);
    free(ps);
    mxki_storage_release_pool(CPU0);
    CHECK_EQ_INT(stats_of(CPU0).bytes_pooled, 0);
}

/** Worker of test_threads: allocates and frees blocks of varying sizes on two devices. */
static void *thread_worker(void *arg) {
    unsigned seed = (unsigned)(uintptr_t)arg;
    void *held[8] = {0};
    mxk_context held_ctx[8];
    int fails = 0;
    for (int it = 0; it < 3000; it++) {
        seed = seed * 1103515245u + 12345u;
        int slot = (int)((seed >> 16) % 8);
        if (held[slot] != NULL) {
            mxki_storage_free(held_ctx[slot], held[slot]);
            held[slot] = NULL;
        } else {
            held_ctx[slot] = (seed >> 8) & 1 ? CPU0 : CPU1;
            uint64_t b = 1 + (seed >> 4) % 50000;
            if (mxki_storage_alloc(held_ctx[slot], b, &held[slot]) != MXK_OK)
                fails++;
            else
                memset(held[slot], 1, 16);
        }
    }
    for (int i = 0; i < 8; i++)
        if (held[i] != NULL)
            mxki_storage_free(held_ctx[i], held[i]);
    return (void *)(intptr_t)fails;
}

/** Concurrent allocations and frees (run under TSan in CI). */
static void test_threads(void) {
    enum { T = 8 };
    pthread_t th[T];
    for (int i = 0; i < T; i++)
        CHECK_EQ_INT(pthread_create(&th[i], NULL, thread_worker, (void *)(uintptr_t)(i + 1)), 0);
    for (int i = 0; i < T; i++) {
        void *ret = NULL;
        pthread_join(th[i], &ret);
        CHECK_EQ_INT((intptr_t)ret, 0);
    }
    mxk_storage_stats s0 = stats_of(CPU0), s1 = stats_of(CPU1);
    CHECK_EQ_INT(s0.bytes_in_use, 0);
    CHECK_EQ_INT(s1.bytes_in_use, 0);
    if (g_pooled)
        CHECK(s0.pool_hits + s1.pool_hits > 0);
    mxki_storage_release_pool(CPU0);
    mxki_storage_release_pool(CPU1);
}

/** Shutdown releases the pools, keeps blocks in use (and their device), forgets the rest. */
static void test_shutdown(void) {
    void *a = NULL, *b = NULL;
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 100, &a), MXK_OK);
    CHECK_EQ_INT(mxki_storage_alloc(CPU1, 100, &b), MXK_OK);
    mxki_storage_free(CPU1, b);
    mxki_storage_shutdown();
    CHECK_EQ_INT(atomic_load(&fake.live_blocks), 1); /* only a */
    CHECK_EQ_INT(stats_of(CPU0).bytes_in_use, expected_round(100));
    mxk_storage_stats s1 = stats_of(CPU1);
    CHECK_EQ_INT(s1.raw_allocs + s1.peak_in_use, 0); /* forgotten */
    mxki_storage_free(CPU0, a);                      /* still a known block */
    CHECK_EQ_INT(stats_of(CPU0).bytes_in_use, 0);
    mxki_storage_shutdown();
    CHECK_EQ_INT(atomic_load(&fake.live_blocks), 0);
    CHECK_EQ_INT(atomic_load(&fake.live_bytes), 0);
    CHECK_EQ_INT(stats_of(CPU0).raw_allocs, 0);
    /* Usable again afterwards. */
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 1, &a), MXK_OK);
    mxki_storage_free(CPU0, a);
    mxki_storage_shutdown();
    CHECK_EQ_INT(atomic_load(&fake.live_blocks), 0);
}

/**
 * cpu_pinned memory comes from the GPU backend's host_alloc / host_free when it has
 * them (ABI 1.4), else from the CPU backend; pooled and counted on its own.
 */
static void test_pinned(void) {
    const mxk_context pinned = {MXK_DEV_CPU_PINNED, 0}, pinned1 = {MXK_DEV_CPU_PINNED, 1};
    mxki_storage_shutdown(); /* every device forgotten: the backend is chosen again */
    atomic_store(&fake.gpu_enabled, 1);
    atomic_store(&fake.gpu_pinned, 1);
    int gpu_allocs = atomic_load(&fake.gpu_allocs), cpu_allocs = atomic_load(&fake.cpu_allocs);
    void *p = NULL;
    CHECK_EQ_INT(mxki_storage_alloc(pinned, 100, &p), MXK_OK);
    CHECK(p != NULL);
    memset(p, 7, 100); /* host memory, unscrambled */
    CHECK_EQ_INT(atomic_load(&fake.gpu_host_allocs), 1);
    CHECK_EQ_INT(atomic_load(&fake.gpu_allocs), gpu_allocs);
    CHECK_EQ_INT(atomic_load(&fake.cpu_allocs), cpu_allocs);
    CHECK_EQ_INT(stats_of(pinned).bytes_in_use, expected_round(100));
    /* cpu_pinned(1): GPU 1 of the fake's 2. */
    void *q = NULL;
    CHECK_EQ_INT(mxki_storage_alloc(pinned1, 10, &q), MXK_OK);
    CHECK_EQ_INT(atomic_load(&fake.gpu_host_allocs), 2);
    mxki_storage_free(pinned, p);
    mxki_storage_free(pinned1, q);
    mxki_storage_release_pool(pinned);
    mxki_storage_release_pool(pinned1);
    CHECK_EQ_INT(atomic_load(&fake.gpu_host_frees), 2);
    mxk_context pinned5 = {MXK_DEV_CPU_PINNED, 5};
    CHECK_EQ_INT(mxki_storage_alloc(pinned5, 16, &p), MXK_ERR_NOT_FOUND);
    CHECK(strcmp(mxki_last_error_message(), "storage: device cpu_pinned(5) does not exist: "
                                            "pinned memory comes from the gpu backend, which "
                                            "has 2 device(s)") == 0);

    /* Without host_alloc (or without a GPU): the CPU backend's memory. */
    mxki_storage_shutdown();
    atomic_store(&fake.gpu_pinned, 0);
    CHECK_EQ_INT(mxki_storage_alloc(pinned, 100, &p), MXK_OK);
    CHECK_EQ_INT(atomic_load(&fake.gpu_host_allocs), 2);
    CHECK_EQ_INT(atomic_load(&fake.cpu_allocs), cpu_allocs + 1);
    mxki_storage_free(pinned, p);
    mxki_storage_shutdown();
    atomic_store(&fake.gpu_pinned, 1);
    atomic_store(&fake.gpu_count, 0);
    CHECK_EQ_INT(mxki_storage_alloc(pinned, 100, &p), MXK_OK);
    CHECK_EQ_INT(atomic_load(&fake.gpu_host_allocs), 2);
    CHECK_EQ_INT(atomic_load(&fake.cpu_allocs), cpu_allocs + 2);
    mxki_storage_free(pinned, p);
    CHECK_EQ_INT(mxki_storage_alloc(pinned5, 16, &p), MXK_ERR_NOT_FOUND);
    CHECK(strcmp(mxki_last_error_message(), "storage: device cpu_pinned(5) does not exist: "
                                            "pinned memory comes from the cpu backend, which "
                                            "has 2 device(s)") == 0);
    mxki_storage_shutdown();
    atomic_store(&fake.gpu_count, 2);
    atomic_store(&fake.gpu_pinned, 0);
    atomic_store(&fake.gpu_enabled, 0);
    CHECK_EQ_INT(atomic_load(&fake.live_blocks), 0);
}

/** An invalid configuration variable makes allocations fail, naming it. */
static void test_config_error(void) {
    const char *var = getenv("MXK_TEST_EXPECT_CONFIG_ERROR");
    void *p = (void *)&p;
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 16, &p), MXK_ERR_INVALID_ARGUMENT);
    CHECK(p == NULL);
    char want[128];
    snprintf(want, sizeof want, "storage: %s=\"%s\" is invalid", var, getenv(var));
    CHECK_CONTAINS(mxki_last_error_message(), want);
    CHECK_EQ_INT(atomic_load(&fake.alloc_calls), 0);
    /* bytes == 0 still succeeds (nothing is allocated). */
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 0, &p), MXK_OK);
}

int main(void) {
    fake_device_reset();
    atomic_store(&fake.gpu_enabled, 0); /* no GPU backend until a test enables it */
    read_env();
    if (getenv("MXK_TEST_EXPECT_CONFIG_ERROR") != NULL) {
        MXK_RUN(test_config_error);
        return MXK_TEST_EXIT();
    }
    printf("pooling %s, page %" PRIu64 ", large rounding %" PRIu64 "\n", g_pooled ? "on" : "off",
           g_page, g_large);
    atomic_store(&fake.cpu_count, 2);
    MXK_RUN(test_rounding);
    MXK_RUN(test_zero_bytes);
    MXK_RUN(test_pool_reuse);
    MXK_RUN(test_stats_sequence);
    MXK_RUN(test_oom_retry);
    MXK_RUN(test_bad_device);
    MXK_RUN(test_device_properties);
    MXK_RUN(test_bad_free);
    MXK_RUN(test_many_blocks);
    MXK_RUN(test_threads);
    MXK_RUN(test_shutdown);
    MXK_RUN(test_pinned);
    return MXK_TEST_EXIT();
}
