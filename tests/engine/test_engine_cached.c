/*
 * Cached operators (engine.h "Cached operators"): creation errors, repeated pushes
 * with and without waits in between, ordering with ordinary pushes, pushes from
 * several threads, read-only ops, async functions, errors, deletion while in flight,
 * and the instance counter that shows that pushes reuse their op objects.
 */
#include "engine_test_util.h"

/** State of a counting cached op: a log of run numbers on a shared variable. */
typedef struct counter {
    int runs;          /**< written only by the op (serialised by its write var) */
    atomic_int active; /**< runs in progress (to detect concurrent runs) */
    atomic_int overlap;
    atomic_int frees;
    int64_t sleep_us;
    int *log; /**< optional: appends `tag` at log[*log_len] */
    int *log_len;
    int tag;
} counter;

/** Sync function: counts a run, optionally sleeps, and logs its tag. */
static mxk_status count_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    counter *c = arg;
    if (atomic_fetch_add(&c->active, 1) != 0)
        atomic_fetch_add(&c->overlap, 1);
    if (c->sleep_us)
        t_sleep_us(c->sleep_us);
    c->runs++;
    if (c->log)
        c->log[(*c->log_len)++] = c->tag;
    atomic_fetch_sub(&c->active, 1);
    return MXK_OK;
}

/** arg_free of a counter: counts calls. */
static void counter_free(void *arg) {
    atomic_fetch_add(&((counter *)arg)->frees, 1);
}

/** A cached op writing `v` that runs count_fn on `c`. */
static mxk_engine_cached_op *new_writer(counter *c, mxk_engine_var *v, uint32_t props) {
    mxk_engine_push_desc d = {.sync_fn = count_fn,
                              .arg = c,
                              .arg_free = counter_free,
                              .dev_type = MXK_DEV_CPU,
                              .write_vars = &v,
                              .num_write = 1,
                              .props = props,
                              .name = "cached_writer"};
    mxk_engine_cached_op *op = NULL;
    mxk_status st = mxki_engine_cached_op_new(&d, &op);
    CHECK_EQ_INT(st, MXK_OK);
    return op;
}

static void test_bad_descriptors(void) {
    counter c = {0};
    mxk_engine_cached_op *op = (mxk_engine_cached_op *)&c;
    mxk_engine_push_desc d = {.arg = &c, .arg_free = counter_free, .dev_type = MXK_DEV_CPU};
    CHECK_EQ_INT(mxki_engine_cached_op_new(&d, &op), MXK_ERR_INVALID_ARGUMENT);
    CHECK(op == NULL);
    CHECK_CONTAINS(mxki_last_error_message(), "exactly one of sync_fn and async_fn");
    d.sync_fn = count_fn;
    d.dev_type = 9;
    CHECK_EQ_INT(mxki_engine_cached_op_new(&d, &op), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxki_last_error_message(), "invalid dev_type 9");
    CHECK_EQ_INT(mxki_engine_cached_op_new(NULL, &op), MXK_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(mxki_engine_cached_op_push(NULL), MXK_ERR_INVALID_ARGUMENT);
    /* The caller keeps the argument when creation fails. */
    CHECK_EQ_INT(atomic_load(&c.frees), 0);
    mxki_engine_cached_op_delete(NULL);
}

/** Pushes separated by waits reuse one instance; the argument is freed once, at delete. */
static void test_push_wait_reuses_one_instance(void) {
    counter c = {0};
    mxk_engine_var *v = mxki_engine_new_var();
    mxk_engine_cached_op *op = new_writer(&c, v, 0);
    for (int i = 0; i < 1000; i++) {
        CHECK_EQ_INT(mxki_engine_cached_op_push(op), MXK_OK);
        CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
        CHECK_EQ_INT(c.runs, i + 1);
    }
    CHECK_EQ_INT(mxki_engine_cached_op_instances(op), 1);
    CHECK_EQ_INT(mxki_engine_var_version(v), 1000);
    CHECK_EQ_INT(atomic_load(&c.frees), 0);
    /* After wait_all nothing is in flight: delete frees the argument at once. */
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxki_engine_cached_op_delete(op);
    CHECK_EQ_INT(atomic_load(&c.frees), 1);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/**
 * Back-to-back pushes of a slow op queue correctly (every push runs, one at a time)
 * and allocate at most one instance per push in flight; after warm-up, rounds of
 * k pushes then a wait allocate nothing more.
 */
static void test_pipelined_pushes(void) {
    counter c = {.sleep_us = 200};
    mxk_engine_var *v = mxki_engine_new_var();
    mxk_engine_cached_op *op = new_writer(&c, v, 0);
    for (int i = 0; i < 50; i++)
        CHECK_EQ_INT(mxki_engine_cached_op_push(op), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(c.runs, 50);
    CHECK_EQ_INT(atomic_load(&c.overlap), 0);
    uint32_t n = mxki_engine_cached_op_instances(op);
    CHECK(n >= 1 && n <= 50);
    if (t_is_naive())
        CHECK_EQ_INT(n, 1);

    /* Rounds of 4 pushes: at most 4 instances are ever in flight. */
    c.sleep_us = 0;
    mxk_engine_cached_op *op4 = new_writer(&c, v, 0);
    for (int r = 0; r < 200; r++) {
        for (int k = 0; k < 4; k++)
            CHECK_EQ_INT(mxki_engine_cached_op_push(op4), MXK_OK);
        CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    }
    CHECK(mxki_engine_cached_op_instances(op4) <= 4);
    CHECK_EQ_INT(c.runs, 50 + 800);
    mxki_engine_cached_op_delete(op4);
    mxki_engine_cached_op_delete(op);
    CHECK_EQ_INT(atomic_load(&c.frees), 2);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/** Cached and ordinary pushes on one variable run in push order. */
static void test_order_with_ordinary_pushes(void) {
    enum { N = 300 };
    int log[2 * N], len = 0;
    counter a = {.log = log, .log_len = &len, .tag = 1};
    counter b = {.log = log, .log_len = &len, .tag = 2};
    counter plain = {.log = log, .log_len = &len, .tag = 3};
    mxk_engine_var *v = mxki_engine_new_var();
    mxk_engine_cached_op *oa = new_writer(&a, v, 0);
    mxk_engine_cached_op *ob = new_writer(&b, v, MXK_ENGINE_PROP_PRIORITIZED);
    int expect[2 * N];
    uint64_t rng = 12345;
    for (int i = 0; i < 2 * N; i++) {
        int which = (int)(t_rand(&rng) % 3);
        expect[i] = which + 1;
        if (which == 0)
            CHECK_EQ_INT(mxki_engine_cached_op_push(oa), MXK_OK);
        else if (which == 1)
            CHECK_EQ_INT(mxki_engine_cached_op_push(ob), MXK_OK);
        else
            CHECK_EQ_INT(t_push(count_fn, &plain, NULL, 0, &v, 1), MXK_OK);
    }
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(len, 2 * N);
    CHECK(memcmp(log, expect, sizeof log) == 0);
    mxki_engine_cached_op_delete(oa);
    mxki_engine_cached_op_delete(ob);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/** A reader pushed as a cached op sees each write before it and none after it. */
typedef struct snap {
    const int *src;
    int seen[64];
    int n;
} snap;

static mxk_status snap_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    snap *s = arg;
    s->seen[s->n++] = *s->src;
    return MXK_OK;
}

static void test_reader_between_writers(void) {
    counter w = {0};
    mxk_engine_var *v = mxki_engine_new_var();
    mxk_engine_var *sv = mxki_engine_new_var();
    mxk_engine_cached_op *wop = new_writer(&w, v, 0);
    snap s = {.src = &w.runs};
    /* The reader reads v and writes its own log variable sv (so reads are serialised). */
    mxk_engine_push_desc d = {.sync_fn = snap_fn,
                              .arg = &s,
                              .dev_type = MXK_DEV_CPU,
                              .read_vars = &v,
                              .num_read = 1,
                              .write_vars = &sv,
                              .num_write = 1,
                              .name = "cached_reader"};
    mxk_engine_cached_op *rop = NULL;
    CHECK_EQ_INT(mxki_engine_cached_op_new(&d, &rop), MXK_OK);
    for (int i = 0; i < 32; i++) {
        CHECK_EQ_INT(mxki_engine_cached_op_push(wop), MXK_OK);
        CHECK_EQ_INT(mxki_engine_cached_op_push(rop), MXK_OK);
    }
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_EQ_INT(s.n, 32);
    for (int i = 0; i < 32; i++)
        CHECK_EQ_INT(s.seen[i], i + 1);
    mxki_engine_cached_op_delete(wop);
    mxki_engine_cached_op_delete(rop);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    mxki_engine_delete_var(sv, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/** Read-only cached op pushed many times: every push runs (concurrently is allowed). */
static atomic_int g_read_runs;

static mxk_status read_only_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    (void)err;
    atomic_fetch_add(&g_read_runs, 1);
    return MXK_OK;
}

static void test_read_only_op(void) {
    mxk_engine_var *v = mxki_engine_new_var();
    mxk_engine_push_desc d = {.sync_fn = read_only_fn,
                              .dev_type = MXK_DEV_CPU,
                              .read_vars = &v,
                              .num_read = 1,
                              .props = MXK_ENGINE_PROP_PRIORITIZED,
                              .name = "cached_read_only"};
    mxk_engine_cached_op *op = NULL;
    CHECK_EQ_INT(mxki_engine_cached_op_new(&d, &op), MXK_OK);
    atomic_store(&g_read_runs, 0);
    for (int i = 0; i < 200; i++)
        CHECK_EQ_INT(mxki_engine_cached_op_push(op), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_EQ_INT(atomic_load(&g_read_runs), 200);
    mxki_engine_cached_op_delete(op);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/** Several threads push one cached op; the writes are serialised by its variable. */
typedef struct pusher {
    mxk_engine_cached_op *op;
    int count;
    int failures;
} pusher;

static void *pusher_main(void *arg) {
    pusher *p = arg;
    for (int i = 0; i < p->count; i++)
        if (mxki_engine_cached_op_push(p->op) != MXK_OK)
            p->failures++;
    return NULL;
}

static void test_threads_push_one_op(void) {
    counter c = {0};
    mxk_engine_var *v = mxki_engine_new_var();
    mxk_engine_cached_op *op = new_writer(&c, v, 0);
    enum { T = 4, N = 500 };
    pthread_t th[T];
    pusher ps[T];
    for (int i = 0; i < T; i++) {
        ps[i] = (pusher){op, N, 0};
        pthread_create(&th[i], NULL, pusher_main, &ps[i]);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_INT(ps[i].failures, 0);
    }
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(c.runs, T * N);
    CHECK_EQ_INT(atomic_load(&c.overlap), 0);
    CHECK_EQ_INT(mxki_engine_var_version(v), T * N);
    mxki_engine_cached_op_delete(op);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_EQ_INT(atomic_load(&c.frees), 1);
}

/** Async cached op: completes from a helper thread or inline; each push is one completion. */
typedef struct async_state {
    atomic_int completions;
    int inline_complete;
} async_state;

static void *complete_later(void *arg) {
    t_sleep_us(100);
    mxki_engine_complete(arg, MXK_OK, NULL);
    return NULL;
}

static void async_fn(void *arg, const mxk_run_ctx *rctx, mxk_async_handle *done) {
    (void)rctx;
    async_state *s = arg;
    atomic_fetch_add(&s->completions, 1);
    if (s->inline_complete) {
        mxki_engine_complete(done, MXK_OK, NULL);
        return;
    }
    pthread_t t;
    pthread_create(&t, NULL, complete_later, done);
    pthread_detach(t);
}

static void test_async_cached_op(void) {
    for (int mode = 0; mode < 2; mode++) {
        async_state s = {.inline_complete = mode};
        mxk_engine_var *v = mxki_engine_new_var();
        mxk_engine_push_desc d = {.async_fn = async_fn,
                                  .arg = &s,
                                  .dev_type = MXK_DEV_CPU,
                                  .write_vars = &v,
                                  .num_write = 1,
                                  .name = "cached_async"};
        mxk_engine_cached_op *op = NULL;
        CHECK_EQ_INT(mxki_engine_cached_op_new(&d, &op), MXK_OK);
        for (int i = 0; i < 20; i++)
            CHECK_EQ_INT(mxki_engine_cached_op_push(op), MXK_OK);
        CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
        CHECK_EQ_INT(atomic_load(&s.completions), 20);
        CHECK_EQ_INT(mxki_engine_var_version(v), 20);
        mxki_engine_cached_op_delete(op);
        mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
        CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    }
}

/** Errors of a cached op follow the engine's rules: recorded, reported once, then gone. */
typedef struct failing {
    int runs;
    int fail_on; /**< run number that fails */
} failing;

static mxk_status failing_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    failing *f = arg;
    f->runs++;
    if (f->runs == f->fail_on)
        return mxki_sink_set(err, MXK_ERR_INTERNAL, "cached op failed on run %d", f->runs);
    return MXK_OK;
}

static void test_errors(void) {
    failing f = {.fail_on = 2};
    mxk_engine_var *v = mxki_engine_new_var();
    mxk_engine_var *w = mxki_engine_new_var();
    mxk_engine_push_desc d = {.sync_fn = failing_fn,
                              .arg = &f,
                              .dev_type = MXK_DEV_CPU,
                              .write_vars = &v,
                              .num_write = 1,
                              .name = "cached_failing"};
    mxk_engine_cached_op *op = NULL;
    CHECK_EQ_INT(mxki_engine_cached_op_new(&d, &op), MXK_OK);
    CHECK_EQ_INT(mxki_engine_cached_op_push(op), MXK_OK);
    CHECK_EQ_INT(mxki_engine_cached_op_push(op), MXK_OK); /* fails */
    /* A dependent ordinary op inherits the error and is skipped. */
    counter c = {0};
    CHECK_EQ_INT(t_push(count_fn, &c, &v, 1, &w, 1), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_ERR_INTERNAL);
    CHECK_CONTAINS(mxki_last_error_message(), "cached op failed on run 2");
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_ERR_INTERNAL); /* stays failed */
    CHECK_EQ_INT(mxki_engine_wait_var(w), MXK_ERR_INTERNAL); /* shared slot */
    CHECK_EQ_INT(c.runs, 0);
    /* The op runs again normally afterwards (its write heals v). */
    CHECK_EQ_INT(mxki_engine_cached_op_push(op), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(f.runs, 3);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    /* An error recorded on v by another op makes the cached op skip (it writes v). */
    failing g = {.fail_on = 1};
    CHECK_EQ_INT(t_push(failing_fn, &g, NULL, 0, &v, 1), MXK_OK);
    CHECK_EQ_INT(mxki_engine_cached_op_push(op), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_ERR_INTERNAL);
    CHECK_EQ_INT(f.runs, 3);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxki_engine_cached_op_delete(op);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    mxki_engine_delete_var(w, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/** Deleting an op with pushes in flight frees it after the last one, exactly once. */
static void test_delete_in_flight(void) {
    counter c = {.sleep_us = 2000};
    mxk_engine_var *v = mxki_engine_new_var();
    mxk_engine_cached_op *op = new_writer(&c, v, 0);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(mxki_engine_cached_op_push(op), MXK_OK);
    mxki_engine_cached_op_delete(op);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_EQ_INT(c.runs, 5);
    CHECK_EQ_INT(atomic_load(&c.frees), 1);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/** After the engine stops, pushes fail with MXK_ERR_STATE; delete still frees the argument. */
static void test_push_after_stop(void) {
    counter c = {0};
    mxk_engine_var *v = mxki_engine_new_var();
    mxk_engine_cached_op *op = new_writer(&c, v, 0);
    CHECK_EQ_INT(mxki_engine_cached_op_push(op), MXK_OK);
    mxki_engine_stop();
    CHECK_EQ_INT(c.runs, 1);
    CHECK_EQ_INT(mxki_engine_cached_op_push(op), MXK_ERR_STATE);
    CHECK_CONTAINS(mxki_last_error_message(), "not running");
    CHECK_EQ_INT(mxki_engine_start(), MXK_OK);
    CHECK_EQ_INT(mxki_engine_cached_op_push(op), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(c.runs, 2);
    mxki_engine_cached_op_delete(op);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_EQ_INT(atomic_load(&c.frees), 1);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

int main(void) {
    t_start_engine();
    MXK_RUN(test_bad_descriptors);
    MXK_RUN(test_push_wait_reuses_one_instance);
    MXK_RUN(test_pipelined_pushes);
    MXK_RUN(test_order_with_ordinary_pushes);
    MXK_RUN(test_reader_between_writers);
    MXK_RUN(test_read_only_op);
    MXK_RUN(test_threads_push_one_op);
    MXK_RUN(test_async_cached_op);
    MXK_RUN(test_errors);
    MXK_RUN(test_delete_in_flight);
    MXK_RUN(test_push_after_stop);
    mxki_engine_stop();
    return MXK_TEST_EXIT();
}
