/*
 * Tests of the resource manager (kernel/resource.c) and of Philox-4x32-10
 * (abi/mxk_philox.h), on the fake device backend (fake_device.h) with 4 CPUs and,
 * from test_gpu_* on, 2 GPUs. Registered with different environments:
 * - default: MXK_CPU_TEMP_COPY unset (4 copies);
 * - MXK_CPU_TEMP_COPY=2;
 * - MXK_CPU_TEMP_COPY=0 with MXK_TEST_EXPECT_CONFIG_ERROR=MXK_CPU_TEMP_COPY: temp
 *   requests fail naming the variable.
 * The order of the tests matters (the seed is global): see main().
 */
#include "engine.h"
#include "error.h"
#include "fake_device.h"
#include "mxk_philox.h"
#include "resource.h"
#include "storage.h"
#include "testing.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

static const mxk_context CPU0 = {MXK_DEV_CPU, 0};
static const mxk_context CPU1 = {MXK_DEV_CPU, 1};
static const mxk_context CPU2 = {MXK_DEV_CPU, 2};
static const mxk_context CPU3 = {MXK_DEV_CPU, 3};
static const mxk_context GPU0 = {MXK_DEV_GPU, 0};
static const mxk_context GPU1 = {MXK_DEV_GPU, 1};

/** Number of CPU temp copies expected in this run. */
static uint32_t g_cpu_copies = 4;

/** The stream of a random slot, read through mxki_resource_prepare. */
static mxk_random *slot_rng(mxk_resource_slot *slot) {
    const mxk_resource *view = NULL;
    mxk_error_sink err;
    mxki_error_sink_clear(&err);
    CHECK_EQ_INT(mxki_resource_prepare(slot, 0, &view, &err), MXK_OK);
    CHECK(view != NULL && view->random != NULL);
    return view != NULL ? view->random : NULL;
}

/** Checks one Philox known-answer vector. */
static void check_kat(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint64_t key, uint32_t r0,
                      uint32_t r1, uint32_t r2, uint32_t r3) {
    mxk_philox_block c = {{c0, c1, c2, c3}};
    mxk_philox_block r = mxk_philox4x32_10(c, key);
    CHECK_EQ_INT(r.v[0], r0);
    CHECK_EQ_INT(r.v[1], r1);
    CHECK_EQ_INT(r.v[2], r2);
    CHECK_EQ_INT(r.v[3], r3);
}

/** Random123's known-answer vectors for philox4x32_10 (kat_vectors). */
static void test_philox_kat(void) {
    check_kat(0, 0, 0, 0, 0, 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u);
    check_kat(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, UINT64_MAX, 0x408f276du,
              0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu);
    check_kat(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, UINT64_C(0x299f31d0a4093822),
              0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u);
    /* 128-bit counter arithmetic: carry from the low into the high word. */
    mxk_philox_block c = mxk_philox_counter(UINT64_MAX, 5, 1);
    CHECK(c.v[0] == 0 && c.v[1] == 0 && c.v[2] == 6 && c.v[3] == 0);
    c = mxk_philox_counter(UINT64_C(0x0123456789abcdef), UINT64_C(0xfedcba9876543210), 0);
    CHECK(c.v[0] == 0x89abcdefu && c.v[1] == 0x01234567u && c.v[2] == 0x76543210u &&
          c.v[3] == 0xfedcba98u);
    CHECK(mxk_philox_to_unit_float(0) == 0.0f);
    CHECK(mxk_philox_to_unit_float(UINT32_MAX) == 1.0f - 1.0f / 16777216.0f);
}

/** Bad types and devices: NULL with exact messages. Runs before any GPU is enabled. */
static void test_errors(void) {
    CHECK(mxki_resource_get(CPU0, 7) == NULL);
    CHECK_EQ_INT(mxki_last_error_code(), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxki_last_error_message(),
                 "resource: unknown resource type 7 (expected 1 = temp space or 2 = random)") == 0);
    CHECK(mxki_resource_get(GPU0, MXK_RESOURCE_RANDOM) == NULL);
    CHECK_EQ_INT(mxki_last_error_code(), MXK_ERR_NOT_FOUND);
    CHECK(strcmp(mxki_last_error_message(),
                 "resource: no device backend is registered for device type 2 (gpu)") == 0);
    mxk_context pinned = {MXK_DEV_CPU_PINNED, 0};
    CHECK(mxki_resource_get(pinned, MXK_RESOURCE_TEMP_SPACE) == NULL);
    CHECK(strcmp(mxki_last_error_message(),
                 "resource: no device backend is registered for device type 3 (cpu_pinned)") == 0);
    mxk_context cpu9 = {MXK_DEV_CPU, 9};
    CHECK(mxki_resource_get(cpu9, MXK_RESOURCE_TEMP_SPACE) == NULL);
    CHECK_EQ_INT(mxki_last_error_code(), MXK_ERR_NOT_FOUND);
    CHECK(strcmp(mxki_last_error_message(),
                 "resource: device cpu(9) does not exist: the cpu backend has 4 device(s)") == 0);
    CHECK(mxki_resource_var(NULL) == NULL);
    const mxk_resource *view = NULL;
    mxk_error_sink err;
    mxki_error_sink_clear(&err);
    CHECK_EQ_INT(mxki_resource_prepare(NULL, 10, &view, &err), MXK_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(err.code, MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.msg, "must not be NULL");
    /* NULL streams and empty draws do nothing. */
    float f = 7.0f;
    mxki_random_uniform(NULL, &f, 1, 0, 1);
    mxki_random_normal(NULL, &f, 1, 0, 1);
    mxki_random_reserve(NULL, 1, NULL, NULL, NULL);
    CHECK(f == 7.0f);
}

/** Before any seed call the seed is 0: key = dev_id, counter 0. */
static void test_default_seed(void) {
    mxk_resource_slot *r0 = mxki_resource_get(CPU0, MXK_RESOURCE_RANDOM);
    mxk_resource_slot *r2 = mxki_resource_get(CPU2, MXK_RESOURCE_RANDOM);
    CHECK(r0 != NULL && r2 != NULL && r0 != r2);
    if (r0 == NULL || r2 == NULL)
        return;
    CHECK(mxki_resource_get(CPU0, MXK_RESOURCE_RANDOM) == r0); /* one per device */
    CHECK(mxki_resource_var(r0) != NULL && mxki_resource_var(r0) != mxki_resource_var(r2));
    mxk_random *g0 = slot_rng(r0), *g2 = slot_rng(r2);
    CHECK_EQ_INT(g0->key, 0);
    CHECK_EQ_INT(g2->key, 2);
    CHECK(g0->counter_lo == 0 && g0->counter_hi == 0);
    const mxk_resource *view = NULL;
    mxk_error_sink err;
    mxki_error_sink_clear(&err);
    CHECK_EQ_INT(mxki_resource_prepare(r0, 4096, &view, &err), MXK_OK); /* bytes ignored */
    CHECK(view->type == MXK_RESOURCE_RANDOM && view->ptr == NULL && view->bytes == 0);
    CHECK_EQ_INT(view->struct_size, sizeof(mxk_resource));
}

/** Temp slots are handed out round-robin, counter incremented before use. */
static void test_temp_round_robin(void) {
    uint32_t n = g_cpu_copies;
    mxk_resource_slot *s[64];
    for (uint32_t i = 0; i < 2 * n; i++) {
        s[i] = mxki_resource_get(CPU1, MXK_RESOURCE_TEMP_SPACE);
        CHECK(s[i] != NULL);
    }
    for (uint32_t i = 0; i < n; i++) {
        CHECK(s[i] == s[i + n]); /* period n */
        for (uint32_t j = 0; j < i; j++) {
            CHECK(s[i] != s[j]);
            CHECK(mxki_resource_var(s[i]) != mxki_resource_var(s[j]));
        }
    }
    /* The copies are stored in order, so their addresses give their indices: requests
     * 1..n get copies 1, 2, ..., n-1, 0 (MXNet: the first request gets copy 1). */
    if (n > 1) {
        for (uint32_t i = 0; i + 2 < n; i++)
            CHECK(s[i] < s[i + 1]);
        CHECK(s[n - 1] < s[0]);
    }
    /* Temp and random slots of one device are distinct. */
    mxk_resource_slot *r = mxki_resource_get(CPU1, MXK_RESOURCE_RANDOM);
    for (uint32_t i = 0; i < n; i++)
        CHECK(r != s[i] && mxki_resource_var(r) != mxki_resource_var(s[i]));
}

/** Temp space grows only: a smaller request keeps the buffer, a larger one replaces it. */
static void test_temp_grow_only(void) {
    mxk_resource_slot *slot = mxki_resource_get(CPU3, MXK_RESOURCE_TEMP_SPACE);
    CHECK(slot != NULL);
    if (slot == NULL)
        return;
    const mxk_resource *v = NULL;
    mxk_error_sink err;
    mxki_error_sink_clear(&err);
    CHECK_EQ_INT(mxki_resource_prepare(slot, 0, &v, &err), MXK_OK);
    CHECK(v->type == MXK_RESOURCE_TEMP_SPACE && v->ptr == NULL && v->bytes == 0 &&
          v->random == NULL);
    CHECK_EQ_INT(mxki_resource_prepare(slot, 100, &v, &err), MXK_OK);
    void *p1 = v->ptr;
    CHECK(p1 != NULL);
    CHECK_EQ_INT(v->bytes, 100);
    memset(p1, 1, 100);
    mxk_storage_stats st;
    mxk_storage_get_stats(CPU3, &st);
    CHECK_EQ_INT(st.bytes_in_use, 4096);
    uint64_t calls = atomic_load(&fake.alloc_calls);
    CHECK_EQ_INT(mxki_resource_prepare(slot, 50, &v, &err), MXK_OK);
    CHECK(v->ptr == p1);
    CHECK_EQ_INT(v->bytes, 100);
    CHECK_EQ_INT(mxki_resource_prepare(slot, 100, &v, &err), MXK_OK);
    CHECK(v->ptr == p1 && v->bytes == 100);
    CHECK_EQ_INT(atomic_load(&fake.alloc_calls), calls);
    /* Larger: exactly the requested size, the old buffer goes back to the pool. */
    CHECK_EQ_INT(mxki_resource_prepare(slot, 5000, &v, &err), MXK_OK);
    CHECK_EQ_INT(v->bytes, 5000);
    CHECK(v->ptr != NULL);
    memset(v->ptr, 2, 5000);
    void *p2 = v->ptr;
    mxk_storage_get_stats(CPU3, &st);
    CHECK_EQ_INT(st.bytes_in_use, 8192);
    CHECK_EQ_INT(st.bytes_pooled, 4096);
    CHECK_EQ_INT(mxki_resource_prepare(slot, 4000, &v, &err), MXK_OK);
    CHECK(v->ptr == p2 && v->bytes == 5000);
    CHECK_EQ_INT(atomic_load(&fake.syncs), 0); /* CPU: no device synchronisation */

    /* Out of memory: reported into the sink, naming the device and the size; the slot is
     * left empty and usable. */
    atomic_store(&fake.fail_next, 2);
    mxki_error_sink_clear(&err);
    CHECK_EQ_INT(mxki_resource_prepare(slot, 1048576, &v, &err), MXK_ERR_OUT_OF_MEMORY);
    CHECK_EQ_INT(err.code, MXK_ERR_OUT_OF_MEMORY);
    CHECK_CONTAINS(err.msg, "temp space: storage: out of memory on cpu(3)");
    CHECK_CONTAINS(err.msg, "1048576 bytes");
    mxki_error_sink_clear(&err);
    CHECK_EQ_INT(mxki_resource_prepare(slot, 0, &v, &err), MXK_OK);
    CHECK(v->ptr == NULL && v->bytes == 0);
    mxk_storage_get_stats(CPU3, &st);
    CHECK_EQ_INT(st.bytes_in_use, 0);
    CHECK_EQ_INT(mxki_resource_prepare(slot, 10, &v, &err), MXK_OK);
    CHECK(v->ptr != NULL && v->bytes == 10);
}

/** An engine function that fails (stands for an operator that failed). */
static mxk_status failing_op(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    return mxki_sink_set(err, MXK_ERR_INTERNAL, "failing op");
}

/** Re-seeding resets key and counter through the engine; equal seeds give equal streams. */
static void test_reseed(void) {
    mxk_resource_slot *slot = mxki_resource_get(CPU0, MXK_RESOURCE_RANDOM);
    CHECK(slot != NULL);
    if (slot == NULL)
        return;
    mxk_random *rng = slot_rng(slot);
    float a[10], b[10], c[10], d[10];
    mxki_random_uniform(rng, a, 10, 0, 1); /* seed 0 */
    CHECK_EQ_INT(rng->counter_lo, 3);
    uint64_t v0 = mxki_engine_var_version(mxki_resource_var(slot));
    CHECK_EQ_INT(mxki_resource_seed(42), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_EQ_INT(mxki_engine_var_version(mxki_resource_var(slot)), v0 + 1); /* one write */
    CHECK_EQ_INT(rng->key, 42 * 127);
    CHECK(rng->counter_lo == 0 && rng->counter_hi == 0);
    mxki_random_uniform(rng, b, 10, 0, 1);
    mxki_random_uniform(rng, d, 10, 0, 1); /* the stream continues */
    CHECK(memcmp(b, d, sizeof b) != 0);
    CHECK_EQ_INT(mxki_resource_seed(42), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxki_random_uniform(rng, c, 10, 0, 1);
    CHECK(memcmp(b, c, sizeof b) == 0);
    CHECK(memcmp(a, b, sizeof a) != 0);
    CHECK_EQ_INT(mxki_resource_seed(0), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxki_random_uniform(rng, c, 10, 0, 1);
    CHECK(memcmp(a, c, sizeof a) == 0);
    /* The other existing random slot (cpu(2)) was re-seeded too. */
    CHECK_EQ_INT(slot_rng(mxki_resource_get(CPU2, MXK_RESOURCE_RANDOM))->key, 2);
    /* An operator that failed while writing the slot cannot cancel a later re-seed. */
    mxk_engine_var *var = mxki_resource_var(slot);
    CHECK_EQ_INT(mxki_engine_push_sync(failing_op, NULL, NULL, MXK_DEV_CPU, 0, NULL, 0, &var, 1, 0,
                                       0, "FailingOp"),
                 MXK_OK);
    CHECK_EQ_INT(mxki_resource_seed(11), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_ERR_INTERNAL); /* the op's error, once */
    CHECK_CONTAINS(mxki_last_error_message(), "failing op");
    CHECK_EQ_INT(rng->key, 11 * 127);
    CHECK(rng->counter_lo == 0 && rng->counter_hi == 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/** Seeding while the engine is stopped resets the streams directly. */
static void test_seed_engine_stopped(void) {
    mxki_engine_stop();
    CHECK_EQ_INT(mxki_resource_seed(3), MXK_OK);
    mxk_random *rng = slot_rng(mxki_resource_get(CPU0, MXK_RESOURCE_RANDOM));
    CHECK_EQ_INT(rng->key, 3 * 127);
    CHECK(rng->counter_lo == 0 && rng->counter_hi == 0);
    CHECK_EQ_INT(slot_rng(mxki_resource_get(CPU2, MXK_RESOURCE_RANDOM))->key, 3 * 127 + 2);
    CHECK_EQ_INT(mxki_engine_start(), MXK_OK);
    CHECK_EQ_INT(mxki_resource_seed(4), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_EQ_INT(rng->key, 4 * 127);
}

/** GPU: the CPU's key rule (gpu(d) and cpu(d) share keys), one temp copy by default,
 *  device synchronised before regrowth. */
static void test_gpu(void) {
    atomic_store(&fake.gpu_enabled, 1);
    CHECK_EQ_INT(mxki_resource_seed(5), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxk_resource_slot *r = mxki_resource_get(GPU1, MXK_RESOURCE_RANDOM);
    CHECK(r != NULL);
    if (r == NULL)
        return;
    CHECK_EQ_INT(slot_rng(r)->key, 5 * 127 + 1);
    CHECK_EQ_INT(slot_rng(mxki_resource_get(CPU0, MXK_RESOURCE_RANDOM))->key, 5 * 127);
    CHECK_EQ_INT(slot_rng(mxki_resource_get(GPU0, MXK_RESOURCE_RANDOM))->key, 5 * 127);
    mxk_resource_slot *t = mxki_resource_get(GPU0, MXK_RESOURCE_TEMP_SPACE);
    CHECK(t != NULL && mxki_resource_get(GPU0, MXK_RESOURCE_TEMP_SPACE) == t);
    const mxk_resource *v = NULL;
    mxk_error_sink err;
    mxki_error_sink_clear(&err);
    uint64_t syncs = atomic_load(&fake.syncs);
    CHECK_EQ_INT(mxki_resource_prepare(t, 10, &v, &err), MXK_OK);
    CHECK_EQ_INT(atomic_load(&fake.syncs), syncs); /* nothing to replace */
    CHECK_EQ_INT(mxki_resource_prepare(t, 20000, &v, &err), MXK_OK);
    CHECK_EQ_INT(atomic_load(&fake.syncs), syncs + 1);
    CHECK_EQ_INT(mxki_resource_prepare(t, 5, &v, &err), MXK_OK);
    CHECK_EQ_INT(atomic_load(&fake.syncs), syncs + 1);
    CHECK(v->bytes == 20000 && v->ptr != NULL);
    /* Slots created after a seed call use that seed. */
    CHECK_EQ_INT(mxki_resource_seed(7), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxk_resource_slot *r3 = mxki_resource_get(CPU3, MXK_RESOURCE_RANDOM);
    CHECK_EQ_INT(slot_rng(r3)->key, 7 * 127 + 3);
    CHECK_EQ_INT(slot_rng(r)->key, 7 * 127 + 1);
    CHECK_EQ_INT(slot_rng(mxki_resource_get(CPU2, MXK_RESOURCE_RANDOM))->key, 7 * 127 + 2);
    /* Seeds wrap modulo 2^64. */
    CHECK_EQ_INT(mxki_resource_seed(UINT64_MAX), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK(slot_rng(r3)->key == UINT64_MAX * 127u + 3u);
}

/** The documented uniform mapping (the oracle). */
static float uniform_oracle(const mxk_random *s, uint64_t i, float lo, float hi) {
    mxk_philox_block x =
        mxk_philox4x32_10(mxk_philox_counter(s->counter_lo, s->counter_hi, i / 4), s->key);
    double u = mxk_philox_to_unit_float(x.v[i % 4]);
    float v = (float)((double)lo + ((double)hi - (double)lo) * u);
    return v >= hi ? nextafterf(hi, -INFINITY) : v;
}

/** Uniform: exact mapping, range, moments, counter advance. */
static void test_uniform(void) {
    enum { N = 100000 };
    float *out = malloc(N * sizeof *out);
    CHECK(out != NULL);
    if (out == NULL)
        return;
    mxk_random s0 = {1234, 10, 0}, s = s0;
    const float lo = -2.0f, hi = 3.0f;
    mxki_random_uniform(&s, out, N, lo, hi);
    CHECK_EQ_INT(s.counter_lo, 10 + N / 4);
    CHECK_EQ_INT(s.key, 1234);
    double sum = 0, sum2 = 0;
    int bins[10] = {0}, bad = 0, mismatch = 0;
    for (int i = 0; i < N; i++) {
        if (!(out[i] >= lo && out[i] < hi))
            bad++;
        if (out[i] != uniform_oracle(&s0, (uint64_t)i, lo, hi))
            mismatch++;
        sum += out[i];
        sum2 += (double)out[i] * out[i];
        int b = (int)((out[i] - lo) / (hi - lo) * 10);
        bins[b < 0 ? 0 : b > 9 ? 9 : b]++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(mismatch, 0);
    double mean = sum / N, var = sum2 / N - mean * mean;
    CHECK(fabs(mean - 0.5) < 5 * (5.0 / sqrt(12.0)) / sqrt(N)); /* 5 sigma */
    CHECK(fabs(var - 25.0 / 12.0) < 0.05);
    for (int b = 0; b < 10; b++)
        CHECK(fabs(bins[b] / (double)N - 0.1) < 5 * sqrt(0.09 / N));
    /* n not a multiple of 4: the counter still advances by whole blocks. */
    mxki_random_uniform(&s, out, 5, 0, 1);
    CHECK_EQ_INT(s.counter_lo, 10 + N / 4 + 2);
    mxki_random_uniform(&s, out, 0, 0, 1);
    CHECK_EQ_INT(s.counter_lo, 10 + N / 4 + 2);
    /* Rounding can never produce hi: near 1e8 floats are 8 apart, so half the draws
     * would round up to hi without the clamp. */
    const float big = 100000000.0f, bighi = big + 8.0f;
    mxki_random_uniform(&s, out, 1000, big, bighi);
    bad = 0;
    for (int i = 0; i < 1000; i++)
        if (!(out[i] >= big && out[i] < bighi))
            bad++;
    CHECK_EQ_INT(bad, 0);
    /* Empty range: every value is lo, the stream advances. */
    uint64_t before = s.counter_lo;
    mxki_random_uniform(&s, out, 9, 2.5f, 2.5f);
    for (int i = 0; i < 9; i++)
        CHECK(out[i] == 2.5f);
    CHECK_EQ_INT(s.counter_lo, before + 3);
    free(out);
}

/** The documented Box-Muller mapping (the oracle). */
static float normal_oracle(const mxk_random *s, uint64_t i, float mean, float std) {
    mxk_philox_block x =
        mxk_philox4x32_10(mxk_philox_counter(s->counter_lo, s->counter_hi, i / 4), s->key);
    double u[4];
    for (int k = 0; k < 4; k++)
        u[k] = ((double)x.v[k] + 0.5) / 4294967296.0;
    const double two_pi = 6.283185307179586476925286766559;
    int pair = (int)(i % 4) / 2;
    double r = sqrt(-2.0 * log(u[2 * pair])), t = two_pi * u[2 * pair + 1];
    double z = (i % 2 == 0) ? r * cos(t) : r * sin(t);
    return (float)((double)mean + (double)std * z);
}

/** Normal: exact mapping, moments of 1e5 samples, finiteness, counter advance. */
static void test_normal(void) {
    enum { N = 100000 };
    float *out = malloc(N * sizeof *out);
    CHECK(out != NULL);
    if (out == NULL)
        return;
    mxk_random s0 = {98765, 0, 3}, s = s0;
    const float mu = 1.5f, sigma = 2.0f;
    mxki_random_normal(&s, out, N, mu, sigma);
    CHECK_EQ_INT(s.counter_lo, N / 4);
    CHECK_EQ_INT(s.counter_hi, 3);
    double sum = 0, sum2 = 0, sum3 = 0, cross = 0;
    int within1 = 0, nonfinite = 0, mismatch = 0;
    for (int i = 0; i < N; i++) {
        double x = out[i];
        if (!isfinite(x))
            nonfinite++;
        if (out[i] != normal_oracle(&s0, (uint64_t)i, mu, sigma))
            mismatch++;
        sum += x;
        sum2 += x * x;
        double z = (x - mu) / sigma;
        sum3 += z * z * z;
        if (fabs(z) < 1.0)
            within1++;
        if (i % 2 == 0)
            cross += z * ((out[i + 1] - mu) / sigma);
    }
    CHECK_EQ_INT(nonfinite, 0);
    CHECK_EQ_INT(mismatch, 0);
    double mean = sum / N, sd = sqrt(sum2 / N - mean * mean);
    CHECK(fabs(mean - mu) < 5 * sigma / sqrt(N));
    CHECK(fabs(sd - sigma) < 5 * sigma / sqrt(2.0 * N));
    CHECK(fabs(within1 / (double)N - 0.682689) < 5 * sqrt(0.6827 * 0.3173 / N));
    CHECK(fabs(sum3 / N) < 5 * sqrt(15.0 / N));       /* skewness ~ 0 */
    CHECK(fabs(cross / (N / 2)) < 5 / sqrt(N / 2.0)); /* cos/sin partners uncorrelated */
    /* std 0 gives the mean exactly. */
    mxki_random_normal(&s, out, 6, 4.0f, 0.0f);
    for (int i = 0; i < 6; i++)
        CHECK(out[i] == 4.0f);
    CHECK_EQ_INT(s.counter_lo, N / 4 + 2);
    free(out);
}

/**
 * The draw contract: each draw starts on a fresh block, so drawing n then m equals
 * drawing n + m at once exactly when n is a multiple of 4.
 */
static void test_draw_split(void) {
    for (int kind = 0; kind < 2; kind++) {
        mxk_random s0 = {99, 5, 0};
        float all[16], part[16], all16[16];
        mxk_random a = s0, b = s0, c = s0, d = s0;
#define DRAW(rng, ptr, n)                                                                          \
    (kind == 0 ? mxki_random_uniform(rng, ptr, n, 0, 1) : mxki_random_normal(rng, ptr, n, 0, 1))
        DRAW(&a, all, 13);
        DRAW(&b, part, 8);
        DRAW(&b, part + 8, 5);
        CHECK(memcmp(all, part, 13 * sizeof(float)) == 0); /* 8 % 4 == 0 */
        CHECK(a.counter_lo == b.counter_lo && a.counter_lo == 5 + 4);
        DRAW(&c, part, 5);
        DRAW(&c, part + 5, 8);
        DRAW(&d, all16, 16);
        CHECK(memcmp(all, part, 5 * sizeof(float)) == 0);
        /* 5 % 4 != 0: words 5..7 of block 1 are skipped, the second draw starts at block 2 */
        CHECK(memcmp(part + 5, all16 + 8, 8 * sizeof(float)) == 0);
        CHECK(memcmp(part + 5, all + 5, 8 * sizeof(float)) != 0);
        CHECK_EQ_INT(c.counter_lo, 5 + 2 + 2);
#undef DRAW
    }
}

/** Reserve returns the counter the next host draw would have used, then skips the blocks. */
static void test_reserve(void) {
    mxk_random s = {77, 10, 0}, peek = s;
    uint64_t key = 0, lo = 0, hi = 0;
    mxki_random_reserve(&s, 3, &key, &lo, &hi);
    CHECK(key == 77 && lo == 10 && hi == 0);
    CHECK_EQ_INT(s.counter_lo, 13);
    float host[4], dev[4];
    mxki_random_uniform(&peek, host, 4, 0, 1); /* what the host would have drawn */
    mxk_philox_block x = mxk_philox4x32_10(mxk_philox_counter(lo, hi, 0), key);
    for (int j = 0; j < 4; j++)
        dev[j] = mxk_philox_to_unit_float(x.v[j]);
    CHECK(memcmp(host, dev, sizeof host) == 0);
    /* The next host draw comes after the reservation. */
    mxki_random_uniform(&s, host, 4, 0, 1);
    x = mxk_philox4x32_10(mxk_philox_counter(lo, hi, 3), key);
    for (int j = 0; j < 4; j++)
        CHECK(host[j] == mxk_philox_to_unit_float(x.v[j]));
    /* 128-bit carry, in reserve and in draws. */
    mxk_random w = {1, UINT64_MAX - 1, 7};
    mxki_random_reserve(&w, 5, NULL, NULL, NULL);
    CHECK(w.counter_lo == 3 && w.counter_hi == 8);
    mxk_random e = {1, UINT64_MAX, 7};
    float v[8];
    mxki_random_uniform(&e, v, 8, 0, 1);
    CHECK(e.counter_lo == 1 && e.counter_hi == 8);
    mxk_philox_block c = {{0, 0, 8, 0}};
    x = mxk_philox4x32_10(c, 1);
    CHECK(v[4] == mxk_philox_to_unit_float(x.v[0]));
}

/** State of one test_threads worker. */
typedef struct rr_worker {
    mxk_resource_slot *const *slots; /**< the copies of cpu(2), in index order */
    uint32_t n;                      /**< number of copies */
    uint32_t counts[64];             /**< requests served by each copy */
    int errors;
} rr_worker;

/** Thread body: 1000 temp requests on cpu(2) counted per copy, random requests. */
static void *rr_thread(void *arg) {
    rr_worker *w = arg;
    for (int i = 0; i < 1000; i++) {
        mxk_resource_slot *s = mxki_resource_get(CPU2, MXK_RESOURCE_TEMP_SPACE);
        uint32_t k = 0;
        while (k < w->n && w->slots[k] != s)
            k++;
        if (k == w->n)
            w->errors++;
        else
            w->counts[k]++;
        if (mxki_resource_get(i % 2 ? CPU1 : CPU3, MXK_RESOURCE_RANDOM) == NULL)
            w->errors++;
    }
    return NULL;
}

/** Thread body: seeds 0..199 while the workers request slots. */
static void *seed_thread(void *arg) {
    (void)arg;
    for (uint64_t i = 0; i < 200; i++)
        if (mxki_resource_seed(i) != MXK_OK)
            return (void *)1;
    return NULL;
}

/** Concurrent requests and seeds: every copy serves exactly its share (run under TSan). */
static void test_threads(void) {
    enum { T = 8 };
    uint32_t n = g_cpu_copies;
    mxk_resource_slot *slots[64];
    for (uint32_t i = 0; i < n; i++)
        slots[(i + 1) % n] = mxki_resource_get(CPU2, MXK_RESOURCE_TEMP_SPACE);
    static rr_worker w[T];
    pthread_t th[T], seeder;
    for (int i = 0; i < T; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].slots = slots;
        w[i].n = n;
        CHECK_EQ_INT(pthread_create(&th[i], NULL, rr_thread, &w[i]), 0);
    }
    CHECK_EQ_INT(pthread_create(&seeder, NULL, seed_thread, NULL), 0);
    uint32_t total[64] = {0};
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_INT(w[i].errors, 0);
        for (uint32_t k = 0; k < n; k++)
            total[k] += w[i].counts[k];
    }
    void *ret = NULL;
    pthread_join(seeder, &ret);
    CHECK(ret == NULL);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    for (uint32_t k = 0; k < n; k++)
        CHECK_EQ_INT(total[k], T * 1000 / n);
    CHECK_EQ_INT(slot_rng(mxki_resource_get(CPU3, MXK_RESOURCE_RANDOM))->key, 199 * 127 + 3);
}

/** Shutdown frees every buffer and variable; afterwards the seed is 0 again. */
static void test_shutdown(void) {
    mxki_resource_shutdown();
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxki_storage_shutdown();
    CHECK_EQ_INT(atomic_load(&fake.live_blocks), 0);
    mxk_resource_slot *r = mxki_resource_get(CPU1, MXK_RESOURCE_RANDOM);
    CHECK(r != NULL);
    if (r != NULL)
        CHECK_EQ_INT(slot_rng(r)->key, 1);
    mxki_resource_shutdown();
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/** An invalid MXK_CPU_TEMP_COPY fails temp requests naming it; random still works. */
static void test_config_error(void) {
    const char *var = getenv("MXK_TEST_EXPECT_CONFIG_ERROR");
    CHECK(mxki_resource_get(CPU0, MXK_RESOURCE_TEMP_SPACE) == NULL);
    CHECK_EQ_INT(mxki_last_error_code(), MXK_ERR_INVALID_ARGUMENT);
    char want[128];
    snprintf(want, sizeof want, "resource: %s=\"%s\" is invalid", var, getenv(var));
    CHECK_CONTAINS(mxki_last_error_message(), want);
    CHECK(mxki_resource_get(CPU0, MXK_RESOURCE_RANDOM) != NULL);
    mxki_resource_shutdown();
}

int main(void) {
    fake_device_reset();
    atomic_store(&fake.gpu_enabled, 0); /* no GPU backend until a test enables it */
    atomic_store(&fake.cpu_count, 4);
    if (mxki_engine_start() != MXK_OK) {
        fprintf(stderr, "engine start failed: %s\n", mxki_last_error_message());
        return 1;
    }
    int rc;
    if (getenv("MXK_TEST_EXPECT_CONFIG_ERROR") != NULL) {
        MXK_RUN(test_config_error);
    } else {
        const char *s = getenv("MXK_CPU_TEMP_COPY");
        if (s != NULL && s[0])
            g_cpu_copies = (uint32_t)strtoul(s, NULL, 10);
        printf("cpu temp copies: %u\n", g_cpu_copies);
        MXK_RUN(test_philox_kat);
        MXK_RUN(test_errors);
        MXK_RUN(test_default_seed); /* before any seed call */
        MXK_RUN(test_temp_round_robin);
        MXK_RUN(test_temp_grow_only);
        MXK_RUN(test_reseed);
        MXK_RUN(test_seed_engine_stopped);
        MXK_RUN(test_gpu);
        MXK_RUN(test_uniform);
        MXK_RUN(test_normal);
        MXK_RUN(test_draw_split);
        MXK_RUN(test_reserve);
        MXK_RUN(test_threads);
        MXK_RUN(test_shutdown);
    }
    rc = MXK_TEST_EXIT();
    mxki_engine_stop();
    mxki_storage_shutdown();
    return rc;
}
