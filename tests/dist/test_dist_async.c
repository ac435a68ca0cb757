/*
 * Tests of the dist_async KVStore (plugins/kvstore-dist/async.c, kernel
 * kvstore_server.c) through the public API, run by mpirun (tests/dist/CMakeLists.txt):
 * the last MXK_KVSTORE_NUM_SERVERS ranks are servers, the others workers.
 *
 * Usage: test_dist_async MODE NUM_WORKERS
 *   async    upstream's async semantics (src/kvstore/kvstore_dist_server.h with
 *            sync_mode_ false): init takes rank 0's value; a push before the optimizer
 *            fails at the next pull with the server's exact message; a command the
 *            controller rejects fails on every worker; then the "optimizer" (command 0,
 *            body "plus2": stored += 2 * recv) is applied once per push of every
 *            worker, as it arrives; a key over MXK_KVSTORE_BIGARRAY_BOUND is split
 *            over the servers (each sees its 1-D part); 2-bit compression with error
 *            feedback; integer keys. The servers count their updates and check them.
 *   mismatch rank 1 inits a key with another shape: one worker gets the server's
 *            message naming both shapes, the other "failed on another worker".
 *   noserver the server never serves: the workers' init fails after
 *            MXK_KVSTORE_TIMEOUT (3 s) with a message naming the server's rank.
 *   toofew   (mpirun -np 1) create fails: a server and a worker need 2 processes;
 *            then MXK_KVSTORE_NUM_SERVERS=abc and MXK_KVSTORE_BIGARRAY_BOUND=0 fail
 *            with their own messages.
 * Every process prints its own "N passed, N failed" line (tests/testing.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mxk.h"
#include "testing.h"

static const mxk_context cpu0 = {MXK_DEV_CPU, 0};
static const mxk_shape shape23 = {.ndim = 2, .dims = {2, 3}};
/** Number of workers the test was launched with (argv[2]). */
static int expected_workers = 2;
/** Pushes of key "3" by every worker in the async test. */
#define PUSHES 5

/** A float32 array of `shape` filled with `v`. */
static mxk_ndarray *full_shape(const mxk_shape *shape, float v) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_full(shape, MXK_FLOAT32, cpu0, v, &a) != MXK_OK)
        fprintf(stderr, "full: %s\n", mxk_get_last_error());
    return a;
}

/** True when the n elements of `a` equal want[i] (or want0 + i * step when want is NULL). */
static int values_eq(mxk_ndarray *a, uint64_t n, float want0, float step) {
    float *h = calloc(n, sizeof *h);
    int ok = h && mxk_ndarray_copy_to_host(a, h, n * sizeof *h) == MXK_OK;
    if (!ok)
        fprintf(stderr, "copy_to_host: %s\n", mxk_get_last_error());
    for (uint64_t i = 0; ok && i < n; i++)
        if (h[i] != want0 + step * (float)i) {
            fprintf(stderr, "element %llu is %g, expected %g\n", (unsigned long long)i, h[i],
                    want0 + step * (float)i);
            ok = 0;
        }
    free(h);
    return ok;
}

/* ------------------------------------------------------------------------- */
/* The server side                                                           */
/* ------------------------------------------------------------------------- */

/** What a server saw. */
typedef struct server_log {
    mxk_kvstore *kv;
    int updates_key3, updates_big, updates_c;
    int64_t big_part; /**< elements of the part of "big" the updater saw (-1: not 1-D) */
} server_log;

/** The "optimizer": stored += 2 * recv through the engine (cpu-blas _plus, twice). */
static void upd_plus2(const char *key, mxk_ndarray *recv, mxk_ndarray *stored, void *user) {
    server_log *log = user;
    if (strcmp(key, "3") == 0)
        log->updates_key3++;
    if (strcmp(key, "c") == 0)
        log->updates_c++;
    if (strcmp(key, "big") == 0) {
        log->updates_big++;
        mxk_shape s = mxk_ndarray_shape(stored);
        log->big_part = s.ndim == 1 ? s.dims[0] : s.ndim == 2 ? -s.dims[0] * s.dims[1] : 0;
    }
    for (int i = 0; i < 2; i++) {
        mxk_ndarray *in[2] = {stored, recv}, *out[MXK_MAX_OUTPUTS] = {stored};
        uint32_t nout = 1;
        if (mxk_imperative_invoke("_plus", 2, in, &nout, out, 0, NULL, NULL) != MXK_OK)
            fprintf(stderr, "_plus: %s\n", mxk_get_last_error());
    }
}

/** The controller: command 0 "plus2" sets the updater; anything else is refused. */
static mxk_status controller(int32_t head, const char *body, void *user) {
    server_log *log = user;
    if (head != 0 || strcmp(body, "plus2") != 0)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "unknown optimizer '%s' (command %d)", body,
                             (int)head);
    return mxk_kvstore_set_updater(log->kv, upd_plus2, log);
}

/** A server: serves until the workers stop, then checks what it saw. */
static void serve(mxk_kvstore *kv, const char *mode) {
    server_log log = {.kv = kv};
    CHECK_EQ_INT(mxk_kvstore_num_workers(kv), expected_workers);
    CHECK_EQ_INT(mxk_kvstore_run_server(kv, controller, &log), MXK_OK);
    if (strcmp(mode, "async") != 0)
        return;
    /* Key "3" lives on one server (hash); "big" on all, in 1-D parts of 50 with 2 servers,
     * whole (10,10) with one. */
    const int w = expected_workers;
    const char *ns = getenv("MXK_KVSTORE_NUM_SERVERS");
    const int two = ns && strcmp(ns, "2") == 0;
    /* One server holds every key: it must have seen every push (with two, either all
     * or none of a small key's, by its hash). */
    CHECK(log.updates_key3 == PUSHES * w || (two && log.updates_key3 == 0));
    CHECK_EQ_INT(log.updates_big, w);
    CHECK_EQ_INT((int)log.big_part, two ? 50 : -100);
    CHECK(log.updates_c == 4 * w || (two && log.updates_c == 0));
}

/* ------------------------------------------------------------------------- */
/* The worker side                                                           */
/* ------------------------------------------------------------------------- */

/** The async sequence on a worker. */
static void work_async(mxk_kvstore *kv) {
    const int rank = mxk_kvstore_rank(kv), w = expected_workers;
    CHECK(rank >= 0 && rank < w);
    CHECK_EQ_INT(mxk_kvstore_num_workers(kv), w);
    CHECK_EQ_INT(mxk_kvstore_is_server(kv), 0);
    const char *k3[] = {"3"};
    mxk_ndarray *init = full_shape(&shape23, rank == 0 ? 2.0f : 7.0f);
    mxk_ndarray *out = full_shape(&shape23, 0), *one = full_shape(&shape23, 1);
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, k3, &init), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k3, &out, 0), MXK_OK);
    CHECK(values_eq(out, 6, 2, 0)); /* rank 0's value on every worker */
    /* Workers update on the servers: a local updater is refused. */
    CHECK_EQ_INT(mxk_kvstore_set_updater(kv, upd_plus2, NULL), MXK_ERR_STATE);
    CHECK_STREQ(mxk_get_last_error(),
                "KVStore dist_async: the updater runs on the servers: send the optimizer to them "
                "(set_optimizer, mxk_kvstore_send_command_to_servers)");
    /* A push before the optimizer: the server's error at the next pull. */
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, k3, &one, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k3, &out, 0), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(out), MXK_ERR_STATE);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "KVStore server: push of key 3: no updater: the workers must send the "
                   "optimizer (set_optimizer) before they push");
    CHECK_EQ_INT(mxk_kvstore_barrier(kv), MXK_OK);
    /* A command the servers refuse fails on every worker, with the controller's message. */
    CHECK_EQ_INT(mxk_kvstore_send_command_to_servers(kv, 0, "bad"), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(), "KVStore dist_async: command 0: KVStore server: command: "
                                      "unknown optimizer 'bad' (command 0)");
    CHECK_EQ_INT(mxk_kvstore_send_command_to_servers(kv, 0, "plus2"), MXK_OK);
    /* Every push is applied once, as it arrives: 2 + 2 * PUSHES * w after everyone pulled. */
    for (int i = 0; i < PUSHES; i++)
        CHECK_EQ_INT(mxk_kvstore_push(kv, 1, k3, &one, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k3, &out, 0), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(out), MXK_OK); /* own pushes applied before */
    CHECK_EQ_INT(mxk_kvstore_barrier(kv), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k3, &out, 0), MXK_OK);
    CHECK(values_eq(out, 6, 2.0f + 2.0f * PUSHES * (float)w, 0));
    /* A key of 100 elements over MXK_KVSTORE_BIGARRAY_BOUND (10): split over the servers. */
    const mxk_shape s100 = {.ndim = 2, .dims = {10, 10}};
    float ramp[100];
    for (int i = 0; i < 100; i++)
        ramp[i] = (float)i;
    mxk_ndarray *big = full_shape(&s100, 0), *bigout = full_shape(&s100, 0);
    mxk_ndarray *bigone = full_shape(&s100, 1);
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(big, ramp, sizeof ramp), MXK_OK);
    const char *kb[] = {"big"};
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, kb, &big), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, kb, &bigout, 0), MXK_OK);
    CHECK(values_eq(bigout, 100, 0, 1));
    CHECK_EQ_INT(mxk_kvstore_barrier(kv), MXK_OK); /* before anyone pushes "big" */
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, kb, &bigone, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, kb, &bigout, 0), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(bigout), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_barrier(kv), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, kb, &bigout, 0), MXK_OK);
    CHECK(values_eq(bigout, 100, 2.0f * (float)w, 1));
    /* 2-bit compression, threshold 0.5, pushes of 0.3: the residual sends 0, 0.5, 0, 0.5. */
    CHECK_EQ_INT(mxk_kvstore_set_gradient_compression(kv, "3bit", 0.5), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(),
                "Unknown type for gradient compression 3bit (known: 2bit, none)");
    CHECK_EQ_INT(mxk_kvstore_set_gradient_compression(kv, "2bit", 0.5), MXK_OK);
    const char *kc[] = {"c"};
    mxk_ndarray *zero = full_shape(&shape23, 0), *point3 = full_shape(&shape23, 0.3f);
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, kc, &zero), MXK_OK);
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(mxk_kvstore_push(kv, 1, kc, &point3, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, kc, &out, 0), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(out), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_barrier(kv), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, kc, &out, 0), MXK_OK);
    CHECK(values_eq(out, 6, 2.0f * (float)w, 0)); /* 2 * (0.5 + 0.5) per worker */
    mxk_ndarray *all[] = {init, out, one, big, bigout, bigone, zero, point3};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mxk_ndarray_free(all[i]);
}

/** Rank 1 inits key "m" as (2,4), rank 0 as (2,3): whichever reaches the server second fails. */
static void work_mismatch(mxk_kvstore *kv) {
    const int rank = mxk_kvstore_rank(kv);
    const mxk_shape s24 = {.ndim = 2, .dims = {2, 4}};
    mxk_ndarray *v = full_shape(rank == 1 ? &s24 : &shape23, 1);
    const char *km[] = {"m"};
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, km, &v) != MXK_OK, 1);
    const char *msg = mxk_get_last_error();
    char mine[300];
    snprintf(mine, sizeof mine,
             "KVStore init of key m: KVStore dist_async: key m has %s float32 on worker %d but %s "
             "float32 on worker %d",
             rank == 1 ? "(2,3)" : "(2,4)", 1 - rank, rank == 1 ? "(2,4)" : "(2,3)", rank);
    const char *other = "KVStore init of key m: KVStore dist_async: the init of key m failed on "
                        "another worker (see its error)";
    if (strcmp(msg, mine) != 0 && strcmp(msg, other) != 0) {
        fprintf(stderr, "unexpected message: %s\n", msg);
        mxk_t_failed_checks++;
    }
    mxk_ndarray_free(v);
}

/** Without a serving server, init fails after the timeout, naming the server. */
static void work_noserver(mxk_kvstore *kv) {
    mxk_ndarray *v = full_shape(&shape23, 1);
    const char *k3[] = {"3"};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, k3, &v), MXK_ERR_BACKEND);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double waited = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    char want[300];
    snprintf(want, sizeof want,
             "KVStore init of key 3: KVStore dist_async: server rank %d (server 0 of 1) did not "
             "answer the init of key 3 within 3 s: it may have died or hang",
             expected_workers);
    CHECK_STREQ(mxk_get_last_error(), want);
    CHECK(waited >= 3.0 && waited < 10.0);
    mxk_ndarray_free(v);
}

/** The store and the mode of this run. */
static mxk_kvstore *store;
static const char *mode = "";

/** This process's role: a server serves, a worker runs the mode's sequence. */
static void test_role(void) {
    if (mxk_kvstore_is_server(store) && strcmp(mode, "noserver") == 0)
        sleep(8); /* alive, not serving: the workers' init times out (3 s) */
    else if (mxk_kvstore_is_server(store))
        serve(store, mode);
    else if (strcmp(mode, "async") == 0)
        work_async(store);
    else if (strcmp(mode, "mismatch") == 0)
        work_mismatch(store);
    else if (strcmp(mode, "noserver") == 0)
        work_noserver(store);
}

/** Creating the store fails on a job too small for its servers, and on a bad server count. */
static void test_too_few_processes(void) {
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("dist_async", &kv), MXK_ERR_INVALID_ARGUMENT);
    CHECK(kv == NULL);
    CHECK_STREQ(mxk_get_last_error(),
                "KVStore 'dist_async': transport 'dist_async' create: KVStore dist_async: 1 "
                "server (MXK_KVSTORE_NUM_SERVERS) and at least one worker need 2 MPI processes, "
                "this job has 1: mpirun -np 2 ... (the last ranks serve)");
    setenv("MXK_KVSTORE_NUM_SERVERS", "abc", 1);
    CHECK_EQ_INT(mxk_kvstore_create("dist_async", &kv), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(),
                "KVStore 'dist_async': transport 'dist_async' create: KVStore dist_async: "
                "MXK_KVSTORE_NUM_SERVERS must be a number of server processes from 1 to 64, got "
                "'abc'");
    unsetenv("MXK_KVSTORE_NUM_SERVERS");
    setenv("MXK_KVSTORE_BIGARRAY_BOUND", "0", 1);
    CHECK_EQ_INT(mxk_kvstore_create("dist_async", &kv), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(),
                "KVStore 'dist_async': transport 'dist_async' create: KVStore dist_async: "
                "MXK_KVSTORE_BIGARRAY_BOUND must be a positive number of elements, got '0'");
    unsetenv("MXK_KVSTORE_BIGARRAY_BOUND");
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s async|mismatch|noserver|toofew NUM_WORKERS\n", argv[0]);
        return 2;
    }
    expected_workers = atoi(argv[2]);
    mode = argv[1];
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = BUILD_CONFDIR, .no_plugins = 1};
    if (mxk_init(&o) != MXK_OK || mxk_load_plugin(CPU_BLAS_PLUGIN, NULL) != MXK_OK ||
        mxk_load_plugin(DIST_PLUGIN, NULL) != MXK_OK ||
        (strcmp(mode, "toofew") != 0 && mxk_kvstore_create("dist_async", &store) != MXK_OK)) {
        fprintf(stderr, "setup: %s\n", mxk_get_last_error());
        return 1;
    }
    if (strcmp(mode, "toofew") == 0)
        MXK_RUN(test_too_few_processes);
    else
        MXK_RUN(test_role);
    mxk_kvstore_free(store);
    int rc = MXK_TEST_EXIT();
    mxk_shutdown();
    return rc;
}
