/*
 * Tests of the kvstore-dist plugin's transports (plugins/kvstore-dist) through the
 * public KVStore API, run by mpirun with 2 or 3 processes (tests/dist/CMakeLists.txt).
 *
 * Usage: test_dist_kvstore MODE [NUM_WORKERS]
 *   sync N     the golden sequences of tests/kvstore/test_kvstore.c (MXNet's KVStore
 *              tutorial and kvstore.py docstrings) with N workers: what one worker pushes is
 *              summed over the workers (the value times N), every worker pulls the same; the
 *              updater runs once per key and round on the aggregate; rank, num_workers,
 *              barrier; integer keys pushed in a different order on every rank; init takes
 *              rank 0's value (upstream src/kvstore/kvstore_dist.h InitImpl); float16
 *              and int32 keys.
 *   mismatch   rank 1 inits a key with another shape: the same exact error on every rank;
 *              a bad MXK_KVSTORE_TIMEOUT.
 *   stop       2 workers; rank 1 stops after one round (frees its store): rank 0's next
 *              pull, then its barrier, fail after MXK_KVSTORE_TIMEOUT (3 s, set by ctest)
 *              and a liveness probe that rank 1 does not answer (2 s), with the exact
 *              messages naming rank 1.
 *   alive      2 workers push different keys: both time out, probe each other, get
 *              answers and say that both are alive but a worker has not pushed the key.
 *   sigstop    2 workers; rank 1 stops itself (SIGSTOP) after one round: rank 0's pull
 *              names rank 1 as not answering; rank 0 then prints its result and exits
 *              without MPI_Finalize, so that mpirun ends the job (ctest matches rank 0's
 *              result line; the command runs under `timeout`).
 *   compress N 2-bit gradient compression (set_gradient_compression "2bit", 0.5) with N
 *              workers: the pull gives the sum over the ranks of what each sends after
 *              quantising (the rule of upstream src/kvstore/gradient_compression-inl.h,
 *              written out here), with the residual fed back on the next push; float64
 *              keys are summed uncompressed; "none" clears the residuals; a bad type's
 *              exact message.
 *   nolaunch   without mpirun, create fails with the exact "needs an MPI launch" message.
 * Every process prints its own "N passed, N failed" line (tests/testing.h).
 */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mxk.h"
#include "testing.h"

static const mxk_context cpu0 = {MXK_DEV_CPU, 0};
static const mxk_shape shape23 = {.ndim = 2, .dims = {2, 3}};
/** The number of workers the test was launched with (argv[2]). */
static int expected_workers = 1;

/** A float32 array of `shape` filled with `v`. */
static mxk_ndarray *full_shape(const mxk_shape *shape, float v) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_full(shape, MXK_FLOAT32, cpu0, v, &a) != MXK_OK)
        fprintf(stderr, "full: %s\n", mxk_get_last_error());
    return a;
}

/** A float32 (2,3) array filled with `v`. */
static mxk_ndarray *full(float v) {
    return full_shape(&shape23, v);
}

/** True when every element of the (2,3) array `a` equals `v` (waits for the array). */
static int all_eq(mxk_ndarray *a, float v) {
    float h[6] = {0};
    if (mxk_ndarray_copy_to_host(a, h, sizeof h) != MXK_OK) {
        fprintf(stderr, "copy_to_host: %s\n", mxk_get_last_error());
        return 0;
    }
    for (int i = 0; i < 6; i++)
        if (h[i] != v) {
            fprintf(stderr, "element %d is %g, expected %g\n", i, h[i], v);
            return 0;
        }
    return 1;
}

/** A store of `type`, checked for rank and size; NULL (a failed check) on failure. */
static mxk_kvstore *create(const char *type) {
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create(type, &kv), MXK_OK);
    if (kv == NULL) {
        fprintf(stderr, "create %s: %s\n", type, mxk_get_last_error());
        return NULL;
    }
    CHECK_STREQ(mxk_kvstore_type(kv), type);
    CHECK_EQ_INT(mxk_kvstore_num_workers(kv), expected_workers);
    CHECK(mxk_kvstore_rank(kv) >= 0 && mxk_kvstore_rank(kv) < expected_workers);
    return kv;
}

/** Updater "stored += recv * 2" on host copies, counting its calls (kvstore.py docstring). */
static void upd_plus2_host(const char *key, mxk_ndarray *recv, mxk_ndarray *stored, void *user) {
    (void)key;
    ++*(int *)user;
    float r[6], s[6];
    if (mxk_ndarray_copy_to_host(recv, r, sizeof r) != MXK_OK ||
        mxk_ndarray_copy_to_host(stored, s, sizeof s) != MXK_OK) {
        fprintf(stderr, "updater: %s\n", mxk_get_last_error());
        return;
    }
    for (int i = 0; i < 6; i++)
        s[i] += 2 * r[i];
    mxk_ndarray_copy_from_host(stored, s, sizeof s);
}

/**
 * Updater "stored += recv" through the engine (cpu-blas _plus, in place), counting its
 * calls: it does not wait for the allreduce, so pushes of other keys go on meanwhile.
 */
static void upd_plus_engine(const char *key, mxk_ndarray *recv, mxk_ndarray *stored, void *user) {
    (void)key;
    ++*(int *)user;
    mxk_ndarray *in[2] = {stored, recv}, *out[MXK_MAX_OUTPUTS] = {stored};
    uint32_t nout = 1;
    if (mxk_imperative_invoke("_plus", 2, in, &nout, out, 0, NULL, NULL) != MXK_OK)
        fprintf(stderr, "_plus: %s\n", mxk_get_last_error());
}

/**
 * The tutorial sequence of tests/kvstore/test_kvstore.c on a dist store of N workers:
 * 2; 8 pushed -> 8N; three ones in one call -> 3N; pulled into two arrays; keys
 * 5, 7, 9 -> N; then the updater "stored += 2 * recv": ones pushed -> 3N + 2N, once.
 */
static void seed_sequence(const char *type) {
    mxk_kvstore *kv = create(type);
    if (kv == NULL)
        return;
    const float n = (float)expected_workers;
    const char *k3[] = {"3"};
    mxk_ndarray *two = full(2), *out = full(0), *eight = full(8);
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, k3, &two), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k3, &out, 0), MXK_OK);
    CHECK(all_eq(out, 2));
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, k3, &eight, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k3, &out, 0), MXK_OK);
    CHECK(all_eq(out, 8 * n));
    mxk_ndarray *ones[3] = {full(1), full(1), full(1)};
    CHECK_EQ_INT(mxk_kvstore_push(kv, 3, (const char *const[]){"3", "3", "3"}, ones, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k3, &out, 0), MXK_OK);
    CHECK(all_eq(out, 3 * n));
    mxk_ndarray *outs2[2] = {full(0), full(0)};
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 2, (const char *const[]){"3", "3"}, outs2, 0), MXK_OK);
    CHECK(all_eq(outs2[0], 3 * n));
    CHECK(all_eq(outs2[1], 3 * n));
    const char *k579[] = {"5", "7", "9"};
    mxk_ndarray *o579[3] = {full(0), full(0), full(0)};
    CHECK_EQ_INT(mxk_kvstore_init(kv, 3, k579, ones), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 3, k579, ones, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 3, k579, o579, 0), MXK_OK);
    for (int i = 0; i < 3; i++)
        CHECK(all_eq(o579[i], n));
    int calls = 0;
    CHECK_EQ_INT(mxk_kvstore_set_updater(kv, upd_plus2_host, &calls), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, k3, ones, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k3, &out, 0), MXK_OK);
    CHECK(all_eq(out, 3 * n + 2 * n));
    CHECK_EQ_INT(calls, 1);
    CHECK_EQ_INT(mxk_kvstore_barrier(kv), MXK_OK);
    mxk_kvstore_free(kv);
    mxk_ndarray *all[] = {two,      eight,    out,     ones[0], ones[1], ones[2],
                          outs2[0], outs2[1], o579[0], o579[1], o579[2]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mxk_ndarray_free(all[i]);
}

/** The tutorial sequence on dist_sync. */
static void test_seed_sequence_dist_sync(void) {
    seed_sequence("dist_sync");
}

/** dist_device_sync: the same host allreduce. */
static void test_seed_sequence_dist_device_sync(void) {
    seed_sequence("dist_device_sync");
}

enum { NKEYS = 80, ROUNDS = 5 };

/**
 * Integer keys 0..79 (many collectives in flight at once) pushed one call
 * each, in ascending order on even ranks and descending on odd ones, without waits, for several
 * rounds; worker r pushes key + r + round, so the aggregate is N * (key + round) + N(N-1)/2, and
 * with the updater "stored += recv" the stored value grows by that per round, with one updater call
 * per key and round. One communicator for every key would deadlock or mix keys here; a communicator
 * per key does not. (An updater that waits for its key's aggregate in the pushing thread, as
 * upd_plus2_host, would deadlock with any transport here: rank 0 would wait for key 0 while rank 1
 * waits for key 79.)
 */
static void test_int_keys_in_different_orders(void) {
    mxk_kvstore *kv = create("dist_sync");
    if (kv == NULL)
        return;
    const int n = expected_workers, rank = mxk_kvstore_rank(kv);
    int32_t keys[NKEYS];
    mxk_ndarray *zeros[NKEYS], *outs[NKEYS];
    for (int i = 0; i < NKEYS; i++) {
        keys[i] = i;
        zeros[i] = full(0);
        outs[i] = full(-1);
    }
    CHECK_EQ_INT(mxk_kvstore_init_int(kv, NKEYS, keys, zeros), MXK_OK);
    int calls = 0;
    CHECK_EQ_INT(mxk_kvstore_set_updater(kv, upd_plus_engine, &calls), MXK_OK);
    float expect[NKEYS] = {0};
    for (int round = 0; round < ROUNDS; round++) {
        for (int j = 0; j < NKEYS; j++) {
            int key = rank % 2 ? NKEYS - 1 - j : j;
            mxk_ndarray *v = full((float)(key + rank + round));
            CHECK_EQ_INT(mxk_kvstore_push_int(kv, 1, &keys[key], &v, 0), MXK_OK);
            mxk_ndarray_free(v);
        }
        for (int key = 0; key < NKEYS; key++)
            expect[key] += (float)(n * (key + round) + n * (n - 1) / 2);
    }
    CHECK_EQ_INT(mxk_kvstore_pull_int(kv, NKEYS, keys, outs, 0), MXK_OK);
    for (int key = 0; key < NKEYS; key++)
        CHECK(all_eq(outs[key], expect[key]));
    CHECK_EQ_INT(calls, NKEYS * ROUNDS);
    CHECK_EQ_INT(mxk_kvstore_barrier(kv), MXK_OK);
    mxk_kvstore_free(kv);
    for (int i = 0; i < NKEYS; i++) {
        mxk_ndarray_free(zeros[i]);
        mxk_ndarray_free(outs[i]);
    }
}

/** Every rank inits with 10 + rank; every rank pulls rank 0's 10 (and pushes from there). */
static void test_init_broadcasts_rank0(void) {
    mxk_kvstore *kv = create("dist_sync");
    if (kv == NULL)
        return;
    const int rank = mxk_kvstore_rank(kv);
    const char *k[] = {"w"};
    mxk_ndarray *mine = full((float)(10 + rank)), *out = full(0), *one = full(1);
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, k, &mine), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k, &out, 0), MXK_OK);
    CHECK(all_eq(out, 10));
    CHECK(all_eq(mine, (float)(10 + rank))); /* the caller's array is not touched */
    int calls = 0;
    CHECK_EQ_INT(mxk_kvstore_set_updater(kv, upd_plus2_host, &calls), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, k, &one, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k, &out, 0), MXK_OK);
    CHECK(all_eq(out, 10 + 2.0f * (float)expected_workers));
    mxk_kvstore_free(kv);
    mxk_ndarray_free(mine);
    mxk_ndarray_free(out);
    mxk_ndarray_free(one);
}

/**
 * float16 (summed by the plugin's MPI operator, in float32) and int32 keys: worker r
 * pushes 0.5 + r and 3 + r; pulled into float32 arrays (pull converts), every worker
 * reads 0.5N + N(N-1)/2 and 3N + N(N-1)/2 (exact in float16 for N <= 3).
 */
static void test_other_dtypes(void) {
    mxk_kvstore *kv = create("dist_sync");
    if (kv == NULL)
        return;
    const int n = expected_workers, rank = mxk_kvstore_rank(kv);
    const int32_t dtypes[2] = {MXK_FLOAT16, MXK_INT32};
    const float mine[2] = {0.5f + (float)rank, 3.0f + (float)rank};
    const float sums[2] = {0.5f * (float)n + (float)(n * (n - 1) / 2),
                           3.0f * (float)n + (float)(n * (n - 1) / 2)};
    const char *keys[2] = {"half", "int"};
    for (int i = 0; i < 2; i++) {
        mxk_ndarray *v = NULL, *out = full(0);
        CHECK_EQ_INT(mxk_ndarray_full(&shape23, dtypes[i], cpu0, mine[i], &v), MXK_OK);
        CHECK_EQ_INT(mxk_kvstore_init(kv, 1, &keys[i], &v), MXK_OK);
        CHECK_EQ_INT(mxk_kvstore_push(kv, 1, &keys[i], &v, 0), MXK_OK);
        CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, &keys[i], &out, 0), MXK_OK);
        CHECK(all_eq(out, sums[i]));
        mxk_ndarray_free(v);
        mxk_ndarray_free(out);
    }
    mxk_kvstore_free(kv);
}

/** A bad MXK_KVSTORE_TIMEOUT fails create on every worker, naming the value. */
static void test_bad_timeout(void) {
    setenv("MXK_KVSTORE_TIMEOUT", "abc", 1);
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("dist_sync", &kv), MXK_ERR_INVALID_ARGUMENT);
    CHECK(kv == NULL);
    CHECK_STREQ(mxk_get_last_error(),
                "KVStore 'dist_sync': transport 'dist_sync' create: KVStore dist_sync: "
                "MXK_KVSTORE_TIMEOUT must be a positive number of seconds, got 'abc'");
    unsetenv("MXK_KVSTORE_TIMEOUT");
}

/**
 * Rank 1 inits key 3 with shape (10,21), the others with (10,20): every rank gets
 * the same error; the store stays usable (a later matching init and push work).
 */
static void test_shape_mismatch(void) {
    mxk_kvstore *kv = create("dist_sync");
    if (kv == NULL)
        return;
    const int rank = mxk_kvstore_rank(kv);
    const mxk_shape s = {.ndim = 2, .dims = {10, rank == 1 ? 21 : 20}};
    mxk_ndarray *v = full_shape(&s, 1);
    const int32_t k3 = 3, k4 = 4;
    CHECK_EQ_INT(mxk_kvstore_init_int(kv, 1, &k3, &v), MXK_ERR_SHAPE);
    CHECK_STREQ(mxk_get_last_error(), "KVStore init of key 3: KVStore dist_sync: key 3 has shape "
                                      "(10,20) on rank 0 but (10,21) on rank 1");
    mxk_ndarray *w = full(1), *out = full(0);
    CHECK_EQ_INT(mxk_kvstore_init_int(kv, 1, &k4, &w), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push_int(kv, 1, &k4, &w, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull_int(kv, 1, &k4, &out, 0), MXK_OK);
    CHECK(all_eq(out, (float)expected_workers));
    mxk_kvstore_free(kv);
    mxk_ndarray_free(v);
    mxk_ndarray_free(w);
    mxk_ndarray_free(out);
}

enum { GC_N = 20 }; /* elements of the compressed key: not a multiple of 16 */

/** What rank `r` pushes to the compressed key: 0.3 at element 0, a ramp elsewhere. */
static float gc_value(int r, int i) {
    return i == 0 ? 0.3f : 0.07f * (float)(i - 10) + 0.11f * (float)r;
}

/** The 2-bit rule for one element: residual += g, returns what is sent. */
static float gc_send(float *residual, float g, float thr) {
    float r = *residual + g, sent = 0;
    if (r >= thr) {
        sent = thr;
        r -= thr;
    } else if (r <= -thr) {
        sent = -thr;
        r += thr;
    }
    *residual = r;
    return sent;
}

/**
 * One push of gc_value by every rank to key `key` (float32, GC_N elements); checks the
 * pull against the sum over the ranks (in rank order) of what each sends, with the
 * residuals `res` (res[r][i], kept by the caller across pushes), or with none when
 * thr is 0 (uncompressed: the plain sum). Writes the pulled values into got.
 */
static void gc_round(mxk_kvstore *kv, const char *key, float thr, float res[][GC_N],
                     float got[GC_N]) {
    const int n = expected_workers, rank = mxk_kvstore_rank(kv);
    const mxk_shape s = {.ndim = 1, .dims = {GC_N}};
    float mine[GC_N], expect[GC_N] = {0};
    for (int i = 0; i < GC_N; i++)
        mine[i] = gc_value(rank, i);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < GC_N; i++)
            expect[i] += thr > 0 ? gc_send(&res[r][i], gc_value(r, i), thr) : gc_value(r, i);
    mxk_ndarray *v = full_shape(&s, 0), *out = full_shape(&s, -1);
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(v, mine, sizeof mine), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, &key, &v, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, &key, &out, 0), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(out, got, GC_N * sizeof(float)), MXK_OK);
    int bad = 0;
    for (int i = 0; i < GC_N; i++)
        if (thr > 0 ? got[i] != expect[i] : fabsf(got[i] - expect[i]) > 1e-5f) {
            if (bad++ < 4)
                fprintf(stderr, "key %s element %d: got %.9g, expected %.9g\n", key, i,
                        (double)got[i], (double)expect[i]);
        }
    CHECK_EQ_INT(bad, 0);
    mxk_ndarray_free(v);
    mxk_ndarray_free(out);
}

/**
 * 2-bit compression with threshold 0.5 on N workers: two pushes match the rule with
 * the residual carried (element 0: every rank pushes 0.3, sends 0 then 0.5, so the
 * pull reads 0, then 0.5 N); a float64 key pushed 0.25 + r sums exactly; "none"
 * sends the plain sum and drops the residuals; the bad type's exact message.
 */
static void test_gradient_compression(void) {
    mxk_kvstore *kv = create("dist_sync");
    if (kv == NULL)
        return;
    const int n = expected_workers, rank = mxk_kvstore_rank(kv);
    CHECK_EQ_INT(mxk_kvstore_set_gradient_compression(kv, "1bit", 0.5), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(),
                "Unknown type for gradient compression 1bit (known: 2bit, none)");
    CHECK_EQ_INT(mxk_kvstore_set_gradient_compression(kv, "2bit", 0.5), MXK_OK);
    const mxk_shape s = {.ndim = 1, .dims = {GC_N}};
    const char *g = "g", *d = "d";
    mxk_ndarray *zeros = full_shape(&s, 0), *dv = NULL, *dout = full_shape(&s, 0);
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, &g, &zeros), MXK_OK);
    float res[3][GC_N] = {{0}}, got[GC_N];
    gc_round(kv, g, 0.5f, res, got);
    CHECK(got[0] == 0.0f); /* 0.3 < 0.5 on every rank: nothing sent */
    gc_round(kv, g, 0.5f, res, got);
    CHECK(got[0] == 0.5f * (float)n); /* 0.3 + 0.3 residual: 0.5 sent by every rank */
    /* float64: pushed uncompressed (0.25 + r would be sent as 0 or 0.5) */
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT64, cpu0, 0.25 + rank, &dv), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, &d, &dv), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, &d, &dv, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, &d, &dout, 0), MXK_OK);
    float dgot[GC_N];
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(dout, dgot, sizeof dgot), MXK_OK);
    CHECK(dgot[0] == 0.25f * (float)n + (float)(n * (n - 1) / 2) && dgot[GC_N - 1] == dgot[0]);
    /* none: the plain sum; then 2bit again starts from zero residuals */
    CHECK_EQ_INT(mxk_kvstore_set_gradient_compression(kv, "none", 0), MXK_OK);
    gc_round(kv, g, 0, res, got);
    CHECK_EQ_INT(mxk_kvstore_set_gradient_compression(kv, "2bit", 0.5), MXK_OK);
    int differs = 0; /* kept residuals would send other values: the check below tells */
    for (int r = 0; r < n; r++)
        for (int i = 0; i < GC_N; i++) {
            float kept = res[r][i], zero = 0;
            differs |= gc_send(&kept, gc_value(r, i), 0.5f) != gc_send(&zero, gc_value(r, i), 0.5f);
        }
    CHECK(differs);
    memset(res, 0, sizeof res);
    gc_round(kv, g, 0.5f, res, got);
    CHECK(got[0] == 0.0f);
    gc_round(kv, g, 0.5f, res, got);
    CHECK(got[0] == 0.5f * (float)n);
    CHECK_EQ_INT(mxk_kvstore_barrier(kv), MXK_OK);
    mxk_kvstore_free(kv);
    mxk_ndarray_free(zeros);
    mxk_ndarray_free(dv);
    mxk_ndarray_free(dout);
}

/** Without an MPI launcher, create fails and says how to launch. */
static void test_no_launch(void) {
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("dist_sync", &kv), MXK_ERR_STATE);
    CHECK(kv == NULL);
    CHECK_STREQ(mxk_get_last_error(),
                "KVStore 'dist_sync': transport 'dist_sync' create: KVStore 'dist_sync' needs an "
                "MPI launch: mpirun -np N mxk train --kv-store dist_sync ... (see "
                "docs/distributed.md)");
}

/** Seconds of the monotonic clock. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** Rank 0's timeout message on key 3 when rank 1 does not answer the probe. */
#define NO_ANSWER_KEY3                                                                             \
    "KVStore dist_sync: no progress on key 3 for 3 s (rank 0 of 2 here): rank 1 did not answer "   \
    "a liveness probe within 2 s: it died, hangs, is stopped or has freed its store"

/** A dist_sync store with keys 3 and 4 (ones) after one push and pull of key 3 on every rank. */
static mxk_kvstore *one_round(mxk_ndarray *v, mxk_ndarray *out) {
    mxk_kvstore *kv = create("dist_sync");
    if (kv == NULL)
        return NULL;
    const int32_t keys[2] = {3, 4};
    mxk_ndarray *vals[2] = {v, v};
    CHECK_EQ_INT(mxk_kvstore_init_int(kv, 2, keys, vals), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push_int(kv, 1, &keys[0], &v, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull_int(kv, 1, &keys[0], &out, 0), MXK_OK);
    CHECK(all_eq(out, 2));
    return kv;
}

/**
 * Rank 0 pushes key 3, rank 1 key 4: each times out after 3 s, probes the other (which
 * answers, itself probing) and says that ranks 0-1 are alive but a worker has not
 * pushed its key, within the timeout plus a little.
 */
static void test_workers_alive(void) {
    mxk_ndarray *v = full(1), *out = full(0);
    mxk_kvstore *kv = one_round(v, out);
    if (kv != NULL) {
        const int rank = mxk_kvstore_rank(kv);
        const int32_t key = rank == 0 ? 3 : 4;
        char expect[300];
        snprintf(expect, sizeof expect,
                 "KVStore dist_sync: no progress on key %d for 3 s (rank %d of 2 here): ranks "
                 "0-1 are alive: a worker has not pushed key %d (do all workers push the same "
                 "keys?)",
                 key, rank, key);
        double t0 = now_s();
        CHECK_EQ_INT(mxk_kvstore_push_int(kv, 1, &key, &v, 0), MXK_OK);
        CHECK_EQ_INT(mxk_kvstore_pull_int(kv, 1, &key, &out, 0), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_wait_to_read(out), MXK_ERR_BACKEND);
        CHECK_STREQ(mxk_get_last_error(), expect);
        double waited = now_s() - t0;
        CHECK(waited >= 3.0 && waited < 4.9); /* answered well before the probe's 2 s */
        /* the store answers probes until freed: free it once the other rank has its answer */
        CHECK_EQ_INT(mxk_kvstore_barrier(kv), MXK_OK);
        mxk_kvstore_free(kv);
    }
    mxk_ndarray_free(v);
    mxk_ndarray_free(out);
}

/**
 * Rank 1 stops itself (SIGSTOP: no thread of it runs) after one round: rank 0's next
 * pull fails after the timeout and the probe's 2 s, naming rank 1. Rank 1 never
 * returns from raise; mpirun ends it when rank 0 exits (main).
 */
static void test_worker_sigstop(void) {
    mxk_ndarray *v = full(1), *out = full(0);
    mxk_kvstore *kv = one_round(v, out);
    if (kv != NULL && mxk_kvstore_rank(kv) == 1)
        raise(SIGSTOP);
    if (kv != NULL) {
        const int32_t k3 = 3;
        double t0 = now_s();
        CHECK_EQ_INT(mxk_kvstore_push_int(kv, 1, &k3, &v, 0), MXK_OK);
        CHECK_EQ_INT(mxk_kvstore_pull_int(kv, 1, &k3, &out, 0), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_wait_to_read(out), MXK_ERR_BACKEND);
        CHECK_STREQ(mxk_get_last_error(), NO_ANSWER_KEY3);
        double waited = now_s() - t0;
        CHECK(waited >= 3.0 + 2.0 && waited < 12.0);
    }
}

/**
 * One round on both ranks, then rank 1 stops (frees its store and ends): rank 0's
 * next push and pull fail after MXK_KVSTORE_TIMEOUT (3 s) with the exact message,
 * well before the ctest timeout.
 */
static void test_worker_stops(void) {
    mxk_kvstore *kv = create("dist_sync");
    if (kv == NULL)
        return;
    const int rank = mxk_kvstore_rank(kv);
    const int32_t k3 = 3;
    mxk_ndarray *v = full(1), *out = full(0);
    CHECK_EQ_INT(mxk_kvstore_init_int(kv, 1, &k3, &v), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push_int(kv, 1, &k3, &v, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull_int(kv, 1, &k3, &out, 0), MXK_OK);
    CHECK(all_eq(out, 2));
    if (rank == 0) {
        double t0 = now_s();
        CHECK_EQ_INT(mxk_kvstore_push_int(kv, 1, &k3, &v, 0), MXK_OK);
        CHECK_EQ_INT(mxk_kvstore_pull_int(kv, 1, &k3, &out, 0), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_wait_to_read(out), MXK_ERR_BACKEND);
        CHECK_STREQ(mxk_get_last_error(), NO_ANSWER_KEY3);
        double waited = now_s() - t0;
        CHECK(waited >= 3.0 + 2.0 && waited < 12.0); /* the timeout, then the probe's wait */
        /* The key stays failed: the next round fails at once, with the same message. */
        CHECK_EQ_INT(mxk_kvstore_push_int(kv, 1, &k3, &v, 0), MXK_OK);
        CHECK_EQ_INT(mxk_kvstore_pull_int(kv, 1, &k3, &out, 0), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_wait_to_read(out), MXK_ERR_BACKEND);
        CHECK(now_s() - t0 < waited + 1.0);
        /* The barrier times out alike. */
        CHECK_EQ_INT(mxk_kvstore_barrier(kv), MXK_ERR_BACKEND);
        CHECK_STREQ(mxk_get_last_error(), "KVStore barrier: KVStore dist_sync: no progress on "
                                          "the barrier for 3 s (rank 0 of 2 here): rank 1 did not "
                                          "answer a liveness probe within 2 s: it died, hangs, is "
                                          "stopped or has freed its store");
    }
    mxk_kvstore_free(kv);
    mxk_ndarray_free(v);
    mxk_ndarray_free(out);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s sync N | mismatch N | nolaunch | stop\n", argv[0]);
        return 2;
    }
    expected_workers = argc > 2 ? atoi(argv[2]) : 2;
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = BUILD_CONFDIR, .no_plugins = 1};
    if (mxk_init(&o) != MXK_OK || mxk_load_plugin(CPU_BLAS_PLUGIN, NULL) != MXK_OK ||
        mxk_load_plugin(DIST_PLUGIN, NULL) != MXK_OK) {
        fprintf(stderr, "setup: %s\n", mxk_get_last_error());
        return 1;
    }
    const char *mode = argv[1];
    if (strcmp(mode, "sync") == 0) {
        MXK_RUN(test_seed_sequence_dist_sync);
        MXK_RUN(test_seed_sequence_dist_device_sync);
        MXK_RUN(test_int_keys_in_different_orders);
        MXK_RUN(test_init_broadcasts_rank0);
        MXK_RUN(test_other_dtypes);
    } else if (strcmp(mode, "mismatch") == 0) {
        MXK_RUN(test_shape_mismatch);
        MXK_RUN(test_bad_timeout);
    } else if (strcmp(mode, "compress") == 0) {
        MXK_RUN(test_gradient_compression);
    } else if (strcmp(mode, "nolaunch") == 0) {
        MXK_RUN(test_no_launch);
    } else if (strcmp(mode, "stop") == 0) {
        MXK_RUN(test_worker_stops);
    } else if (strcmp(mode, "alive") == 0) {
        MXK_RUN(test_workers_alive);
    } else if (strcmp(mode, "sigstop") == 0) {
        MXK_RUN(test_worker_sigstop);
        /* rank 1 is stopped: MPI_Finalize would wait for it. Exit at once instead; mpirun
         * then ends rank 1 and the job (its exit status is not this test's). */
        int rc = MXK_TEST_EXIT();
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    int rc = MXK_TEST_EXIT();
    mxk_shutdown();
    return rc;
}
