/*
 * The stream contract the GPU random kernels (plugins/cuda/cu_kern_random.cu,
 * cu_kern_sample.cu) rely on, checked on cpu-blas's kernels: after
 * mxk_random_seed(s) the cpu(0) stream has key s * 127 and counter 0, and each
 * sampler consumes its Philox-4x32-10 blocks with the element mapping the device
 * kernels compute (abi/mxk_philox.h, plugins/common/mxk_random.h):
 *   _random_uniform / _random_normal / _random_exponential, Dropout's mask:
 *     ceil(n / 4) blocks, element i from block i / 4, word i % 4 (normal: pairs);
 *   _random_randint: ceil(n / 2) blocks, element i from block i / 2, half i % 2;
 *   _sample_multinomial: one block per sample, word 0;
 *   _shuffle: floor(rows / 2) blocks, Fisher-Yates step t from block t / 2, half t % 2.
 * Every value here is recomputed from the stream position and compared exactly,
 * so a cpu-blas change that breaks the lockstep with the GPU fails this test.
 * Semantics: MXNet src/operator/random/sample_op.h, sample_multinomial_op.h,
 * shuffle_op.cc and src/operator/nn/dropout-inl.h.
 */
#include <math.h>
#include <string.h>

#include "mxk.h"
#include "mxk_random.h"
#include "testing.h"

static const mxk_context cpu = {MXK_DEV_CPU, 0};

/** The cpu(0) stream: key, and the next block (counters stay below 2^64 here). */
static uint64_t g_key, g_next;

/** Re-seeds and resets the expected stream position. */
static void reseed(uint64_t seed) {
    mxk_random_seed(seed);
    g_key = seed * 127u;
    g_next = 0;
}

/** Block b of the current reservation (relative to g_next). */
static mxk_philox_block block(uint64_t b) {
    return mxk_philox4x32_10(mxk_philox_counter(g_next + b, 0, 0), g_key);
}

/**
 * Runs op (attributes k/v) on nin float32 inputs of shapes in_shapes with data
 * in_data; output 0 (dtype `dtype`, `bytes` bytes) goes to out, output 1 (when
 * out1) to out1 (float32). Returns 0 on failure.
 */
static int run(const char *op, uint32_t na, const char *const *k, const char *const *v,
               uint32_t nin, const mxk_shape *in_shapes, const float *const *in_data, int train,
               void *out, uint64_t bytes, float *out1) {
    mxk_op_instance *inst = NULL;
    CHECK_EQ_INT(mxk_op_instance_create(op, na, k, v, cpu, nin, in_shapes, NULL, &inst), MXK_OK);
    if (inst == NULL)
        return 0;
    uint32_t ni = 0, no = 0, nv = 0, nx = 0;
    mxk_op_instance_counts(inst, &ni, &no, &nv, &nx);
    mxk_ndarray *in[2] = {NULL, NULL}, *outs[2] = {NULL, NULL};
    for (uint32_t i = 0; i < nin; i++) {
        mxk_ndarray_create(&in_shapes[i], MXK_FLOAT32, cpu, &in[i]);
        mxk_ndarray_copy_from_host(in[i], in_data[i], mxk_ndarray_size(in[i]) * sizeof(float));
    }
    for (uint32_t i = 0; i < no && i < 2; i++) {
        mxk_shape s;
        int32_t dt = MXK_FLOAT32;
        mxk_op_instance_shape(inst, MXK_SLOT_OUTPUT, i, &s, &dt);
        mxk_ndarray_create(&s, dt, cpu, &outs[i]);
    }
    int ok = mxk_op_instance_forward(inst, train, in, outs, NULL, NULL) == MXK_OK;
    CHECK(ok);
    if (ok)
        ok = mxk_ndarray_copy_to_host(outs[0], out, bytes) == MXK_OK;
    if (ok && out1 != NULL)
        ok = mxk_ndarray_copy_to_host(outs[1], out1, mxk_ndarray_size(outs[1]) * 4) == MXK_OK;
    for (uint32_t i = 0; i < 2; i++) {
        mxk_ndarray_free(in[i]);
        mxk_ndarray_free(outs[i]);
    }
    mxk_op_instance_free(inst);
    return ok;
}

/** Uniform, normal, exponential and randint values from the stream position. */
static void test_samplers(void) {
    reseed(11);
    const char *ku[] = {"low", "high", "shape"}, *vu[] = {"-1", "3", "(10,)"};
    float u[10];
    if (run("_random_uniform", 3, ku, vu, 0, NULL, NULL, 0, u, sizeof u, NULL))
        for (uint64_t i = 0; i < 10; i++)
            CHECK(u[i] == mxk_philox_uniform(block(i / 4).v[i % 4], -1.0f, 3.0f));
    g_next += 3;

    const char *kn[] = {"loc", "scale", "shape"}, *vn[] = {"0.5", "2", "(7,)"};
    float z[7];
    if (run("_random_normal", 3, kn, vn, 0, NULL, NULL, 0, z, sizeof z, NULL))
        for (uint64_t i = 0; i < 7; i++) {
            float pair[2];
            mxk_philox_normal2(block(i / 4), (uint32_t)(i % 4) / 2, 0.5f, 2.0f, pair);
            CHECK(z[i] == pair[i % 2]);
        }
    g_next += 2;

    const char *ke[] = {"lam", "shape"}, *ve[] = {"2", "(6,)"};
    float e[6];
    if (run("_random_exponential", 2, ke, ve, 0, NULL, NULL, 0, e, sizeof e, NULL))
        for (uint64_t i = 0; i < 6; i++) {
            float ui = mxk_philox_uniform(block(i / 4).v[i % 4], 0.0f, 1.0f);
            CHECK(e[i] == mxk_random_exponential(ui, 2.0f));
        }
    g_next += 2;

    const char *kr[] = {"low", "high", "shape", "dtype"}, *vr[] = {"-5", "1000", "(5,)", "int64"};
    int64_t r[5];
    if (run("_random_randint", 4, kr, vr, 0, NULL, NULL, 0, r, sizeof r, NULL))
        for (uint64_t i = 0; i < 5; i++)
            CHECK(r[i] ==
                  mxk_random_randint(mxk_philox_bits64(block(i / 2), (uint32_t)(i % 2)), -5, 1005));
    g_next += 3;

    /* the stream went on where the device kernels would have left it */
    float u2[4];
    if (run("_random_uniform", 3, ku, (const char *[]){"-1", "3", "(4,)"}, 0, NULL, NULL, 0, u2,
            sizeof u2, NULL))
        for (uint64_t i = 0; i < 4; i++)
            CHECK(u2[i] == mxk_philox_uniform(block(0).v[i], -1.0f, 3.0f));
}

/** Dropout's mask: (u_i < 1 - p) / (1 - p) with u_i draw i of ceil(n / 4) blocks. */
static void test_dropout_mask(void) {
    reseed(5);
    enum { N = 2051 }; /* more than one of cpu-blas's 1024-value chunks, not a multiple of 4 */
    static float x[N], y[N], m[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)(i % 13) - 6.0f;
    const char *k[] = {"p"}, *v[] = {"0.3"};
    mxk_shape s = {.ndim = 1, .dims = {N}};
    const float *in[] = {x};
    if (!run("Dropout", 1, k, v, 1, &s, in, 1, y, sizeof y, m))
        return;
    const float keep = (float)(1.0 - 0.3), scale = 1.0f / keep;
    for (uint64_t i = 0; i < N; i++) {
        float mk = mxk_random_dropout_mask(mxk_philox_uniform(block(i / 4).v[i % 4], 0.0f, 1.0f),
                                           keep, scale);
        CHECK(m[i] == mk && y[i] == x[i] * mk);
    }
}

/** _sample_multinomial (a block per sample) and _shuffle (a block per two steps). */
static void test_multinomial_shuffle(void) {
    reseed(9);
    const float p[6] = {0.2f, 0.5f, 0.3f, 0.6f, 0.1f, 0.3f};
    mxk_shape ps = {.ndim = 2, .dims = {2, 3}};
    const float *in[] = {p};
    const char *k[] = {"shape"}, *v[] = {"(4,)"};
    int32_t idx[8];
    if (run("_sample_multinomial", 1, k, v, 1, &ps, in, 0, idx, sizeof idx, NULL))
        for (uint64_t s = 0; s < 8; s++) {
            const float *d = p + (s / 4) * 3;
            float u = mxk_philox_uniform(block(s).v[0], 0.0f, 1.0f);
            double acc = 0.0;
            int32_t c = 0;
            for (; c < 3; c++) {
                acc += d[c];
                if (!((float)acc < u))
                    break;
            }
            CHECK(idx[s] == (c == 3 ? 2 : c));
        }
    g_next += 8;

    enum { ROWS = 7 };
    float rows[ROWS * 2], got[ROWS * 2];
    for (int i = 0; i < ROWS * 2; i++)
        rows[i] = (float)i;
    mxk_shape rs = {.ndim = 2, .dims = {ROWS, 2}};
    const float *rin[] = {rows};
    if (!run("_shuffle", 0, NULL, NULL, 1, &rs, rin, 0, got, sizeof got, NULL))
        return;
    for (uint64_t t = 0; t + 1 < ROWS; t++) {
        uint64_t i = ROWS - t;
        uint64_t j = mxk_philox_bits64(block(t / 2), (uint32_t)(t % 2)) % i;
        for (int e = 0; e < 2; e++) {
            float tmp = rows[(i - 1) * 2 + e];
            rows[(i - 1) * 2 + e] = rows[j * 2 + e];
            rows[j * 2 + e] = tmp;
        }
    }
    CHECK(memcmp(rows, got, sizeof got) == 0);
}

int main(void) {
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = BUILD_CONFDIR};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_samplers);
    MXK_RUN(test_dropout_mask);
    MXK_RUN(test_multinomial_shuffle);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
