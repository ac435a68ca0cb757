/*
 * Dependency tracking of the engine: note_engine.md's four-line example, reads in
 * parallel, writes in push order, waits, deletion, versions, deduplication and
 * priority order.
 */
#include "engine_test_util.h"

/* ---- the four-line example (upstream docs/static_site/src/pages/api/architecture/
 * note_engine.md) ---- */

/** A global logical clock ordering the start and end of every step. */
static atomic_int g_clock;

/** One line of the program: *out = *in * mul + add, with timestamps. */
typedef struct step {
    double *out;
    const double *in;
    double mul, add;
    int start, end;
} step;

static mxk_status step_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    step *s = arg;
    t_random_sleep(1500);
    s->start = atomic_fetch_add(&g_clock, 1);
    double v = *s->in * s->mul + s->add;
    t_random_sleep(1500);
    *s->out = v;
    s->end = atomic_fetch_add(&g_clock, 1);
    return MXK_OK;
}

static void test_four_line_example(void) {
    for (int iter = 0; iter < 12; iter++) {
        double A = 1, B = 0, C = 0, D = 0;
        mxk_engine_var *vA = mxki_engine_new_var(), *vB = mxki_engine_new_var();
        mxk_engine_var *vC = mxki_engine_new_var(), *vD = mxki_engine_new_var();
        step s1 = {&B, &A, 1, 1, -1, -1}; /* B = A + 1 */
        step s2 = {&C, &A, 1, 2, -1, -1}; /* C = A + 2 */
        step s3 = {&A, &C, 2, 0, -1, -1}; /* A = C * 2 */
        step s4 = {&D, &A, 1, 3, -1, -1}; /* D = A + 3 */
        CHECK_EQ_INT(t_push(step_fn, &s1, &vA, 1, &vB, 1), MXK_OK);
        CHECK_EQ_INT(t_push(step_fn, &s2, &vA, 1, &vC, 1), MXK_OK);
        CHECK_EQ_INT(t_push(step_fn, &s3, &vC, 1, &vA, 1), MXK_OK);
        CHECK_EQ_INT(t_push(step_fn, &s4, &vA, 1, &vD, 1), MXK_OK);
        CHECK_EQ_INT(mxki_engine_wait_var(vD), MXK_OK);
        CHECK_EQ_INT(mxki_engine_wait_var(vB), MXK_OK);
        /* The sequential result. */
        CHECK(A == 6 && B == 2 && C == 3 && D == 9);
        /* {op1, op2} < op3 < op4. */
        CHECK(s1.end >= 0 && s2.end >= 0 && s3.end >= 0 && s4.end >= 0);
        CHECK(s3.start > s1.end && s3.start > s2.end);
        CHECK(s4.start > s3.end);
        /* Every variable written once. */
        CHECK_EQ_INT(mxki_engine_var_version(vA), 1);
        CHECK_EQ_INT(mxki_engine_var_version(vB), 1);
        CHECK_EQ_INT(mxki_engine_var_version(vC), 1);
        CHECK_EQ_INT(mxki_engine_var_version(vD), 1);
        mxki_engine_delete_var(vA, NULL, NULL, MXK_DEV_CPU, 0);
        mxki_engine_delete_var(vB, NULL, NULL, MXK_DEV_CPU, 0);
        mxki_engine_delete_var(vC, NULL, NULL, MXK_DEV_CPU, 0);
        mxki_engine_delete_var(vD, NULL, NULL, MXK_DEV_CPU, 0);
    }
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/* ---- writers run in push order, one at a time ---- */

enum { N_WRITERS = 300 };

/** Shared state of the writer test; `log` is guarded only by the engine. */
static struct {
    atomic_int inflight;
    atomic_int overlaps;
    int log[N_WRITERS];
    int len;
} g_w;

static int g_writer_idx[N_WRITERS];

static mxk_status writer_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    int idx = *(int *)arg;
    if (atomic_fetch_add(&g_w.inflight, 1) != 0)
        atomic_fetch_add(&g_w.overlaps, 1);
    if (idx % 16 == 0)
        t_sleep_us(200);
    g_w.log[g_w.len++] = idx;
    atomic_fetch_sub(&g_w.inflight, 1);
    return MXK_OK;
}

static void test_writers_in_push_order(void) {
    mxk_engine_var *v = mxki_engine_new_var();
    uint64_t rng = 12345;
    for (int i = 0; i < N_WRITERS; i++) {
        g_writer_idx[i] = i;
        /* Mix in prioritised pushes: they run on another pool but must keep the order. */
        int prio = (int)(t_rand(&rng) % 3) == 0;
        CHECK_EQ_INT(mxki_engine_push_sync(writer_fn, &g_writer_idx[i], NULL, MXK_DEV_CPU, 0, NULL,
                                           0, &v, 1, prio ? MXK_ENGINE_PROP_PRIORITIZED : 0,
                                           (int32_t)(t_rand(&rng) % 100), "writer"),
                     MXK_OK);
    }
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(g_w.len, N_WRITERS);
    int in_order = 1;
    for (int i = 0; i < g_w.len; i++)
        if (g_w.log[i] != i)
            in_order = 0;
    CHECK(in_order);
    CHECK_EQ_INT(atomic_load(&g_w.overlaps), 0);
    CHECK_EQ_INT(mxki_engine_var_version(v), N_WRITERS);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
}

/* ---- two readers of one variable run at the same time ---- */

/** A reader that announces itself and waits (bounded) for its partner. */
typedef struct reader {
    t_flag *mine, *other;
    int saw_other;
} reader;

static mxk_status reader_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    reader *r = arg;
    t_flag_set(r->mine);
    r->saw_other = t_flag_wait(r->other, 3000);
    return MXK_OK;
}

/** Pushes two readers of one var with `props` and checks that each saw the other running. */
static void check_readers_overlap(uint32_t props) {
    t_flag f1 = T_FLAG_INIT, f2 = T_FLAG_INIT;
    reader r1 = {&f1, &f2, 0}, r2 = {&f2, &f1, 0};
    mxk_engine_var *v = mxki_engine_new_var();
    mxk_engine_var *o1 = mxki_engine_new_var(), *o2 = mxki_engine_new_var();
    CHECK_EQ_INT(mxki_engine_push_sync(reader_fn, &r1, NULL, MXK_DEV_CPU, 0, &v, 1, &o1, 1, props,
                                       0, "reader1"),
                 MXK_OK);
    CHECK_EQ_INT(mxki_engine_push_sync(reader_fn, &r2, NULL, MXK_DEV_CPU, 0, &v, 1, &o2, 1, props,
                                       0, "reader2"),
                 MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK(r1.saw_other);
    CHECK(r2.saw_other);
    CHECK_EQ_INT(mxki_engine_var_version(v), 0);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    mxki_engine_delete_var(o1, NULL, NULL, MXK_DEV_CPU, 0);
    mxki_engine_delete_var(o2, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

static void test_readers_overlap(void) {
    if (t_cpu_workers() < 2)
        MXK_SKIP("readers_overlap needs >= 2 CPU workers");
    check_readers_overlap(MXK_ENGINE_PROP_NORMAL);
}

static void test_prioritized_readers_overlap(void) {
    if (t_cpu_priority_workers() < 2)
        MXK_SKIP("prioritized_readers_overlap needs >= 2 CPU priority workers");
    check_readers_overlap(MXK_ENGINE_PROP_PRIORITIZED);
}

/* ---- wait_var waits for every earlier reader and writer ---- */

static atomic_int g_wait_writes, g_wait_reads;

static mxk_status slow_write_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    t_sleep_us(20000);
    *(int *)arg = 7;
    atomic_fetch_add(&g_wait_writes, 1);
    return MXK_OK;
}

static mxk_status slow_read_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    int seen = *(const int *)arg;
    t_sleep_us(30000);
    if (seen == 7)
        atomic_fetch_add(&g_wait_reads, 1);
    return MXK_OK;
}

static void test_wait_var_waits_for_readers_and_writers(void) {
    int value = 0;
    mxk_engine_var *v = mxki_engine_new_var();
    CHECK_EQ_INT(t_push(slow_write_fn, &value, NULL, 0, &v, 1), MXK_OK);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(mxki_engine_push_sync(slow_read_fn, &value, NULL, MXK_DEV_CPU, 0, &v, 1, NULL,
                                           0, i == 1 ? MXK_ENGINE_PROP_PRIORITIZED : 0, 0, "r"),
                     MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(atomic_load(&g_wait_writes), 1);
    CHECK_EQ_INT(atomic_load(&g_wait_reads), 3); /* all readers done, each saw the write */
    CHECK_EQ_INT(mxki_engine_var_version(v), 1); /* the wait itself is not a write */
    /* A write after the wait still sees a consistent variable. */
    CHECK_EQ_INT(t_push(slow_write_fn, &value, NULL, 0, &v, 1), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(atomic_load(&g_wait_writes), 2);
    CHECK_EQ_INT(mxki_engine_var_version(v), 2);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
}

/* ---- delete_var runs after the variable's earlier users ---- */

static atomic_int g_del_users_done, g_del_calls, g_del_seen;

static mxk_status del_user_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    (void)err;
    t_sleep_us(10000);
    atomic_fetch_add(&g_del_users_done, 1);
    return MXK_OK;
}

static void deleter(void *arg) {
    atomic_store(&g_del_seen, atomic_load(&g_del_users_done));
    atomic_fetch_add(&g_del_calls, 1);
    free(arg);
}

static void test_delete_var_after_users(void) {
    mxk_engine_var *v = mxki_engine_new_var(), *w = mxki_engine_new_var();
    void *memory = malloc(64); /* what the variable guards; freed by the deleter */
    CHECK_EQ_INT(t_push(del_user_fn, NULL, NULL, 0, &v, 1), MXK_OK);
    CHECK_EQ_INT(t_push(del_user_fn, NULL, &v, 1, NULL, 0), MXK_OK);
    CHECK_EQ_INT(mxki_engine_push_sync(del_user_fn, NULL, NULL, MXK_DEV_CPU, 0, &v, 1, NULL, 0,
                                       MXK_ENGINE_PROP_PRIORITIZED, 0, "r"),
                 MXK_OK);
    CHECK_EQ_INT(t_push(del_user_fn, NULL, &v, 1, &w, 1), MXK_OK);
    mxki_engine_delete_var(v, deleter, memory, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_EQ_INT(atomic_load(&g_del_calls), 1);
    CHECK_EQ_INT(atomic_load(&g_del_seen), 4);
    CHECK_EQ_INT(mxki_engine_var_version(w), 1);
    mxki_engine_delete_var(w, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/* ---- versions (upstream threaded_engine_test.cc) ---- */

static mxk_status noop_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    (void)err;
    return MXK_OK;
}

static void test_versions(void) {
    mxk_engine_var *v = mxki_engine_new_var();
    CHECK_EQ_INT(mxki_engine_var_version(v), 0);
    for (int i = 0; i < 10; i++)
        CHECK_EQ_INT(t_push(noop_fn, NULL, &v, 1, NULL, 0), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(mxki_engine_var_version(v), 0);
    for (int i = 0; i < 10; i++)
        CHECK_EQ_INT(t_push(noop_fn, NULL, NULL, 0, &v, 1), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(mxki_engine_var_version(v), 10);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(mxki_engine_var_version(v), 10);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
}

/* ---- a variable listed twice, or read and written, is one write ---- */

static atomic_int g_dup_inflight, g_dup_overlaps, g_dup_runs;

static mxk_status dup_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    (void)err;
    if (atomic_fetch_add(&g_dup_inflight, 1) != 0)
        atomic_fetch_add(&g_dup_overlaps, 1);
    t_sleep_us(2000);
    atomic_fetch_sub(&g_dup_inflight, 1);
    atomic_fetch_add(&g_dup_runs, 1);
    return MXK_OK;
}

static void test_duplicates_and_read_write(void) {
    mxk_engine_var *v = mxki_engine_new_var(), *w = mxki_engine_new_var();
    mxk_engine_var *reads[3] = {v, w, v};
    mxk_engine_var *writes[2] = {v, v};
    for (int i = 0; i < 6; i++) {
        /* Both ops read and write v: as writes they must not overlap, even with readers' pools. */
        CHECK_EQ_INT(mxki_engine_push_sync(dup_fn, NULL, NULL, MXK_DEV_CPU, 0, reads, 3, writes,
                                           i % 2 ? 2 : 1, i % 3 ? MXK_ENGINE_PROP_PRIORITIZED : 0,
                                           0, "dup"),
                     MXK_OK);
    }
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_EQ_INT(atomic_load(&g_dup_runs), 6);
    CHECK_EQ_INT(atomic_load(&g_dup_overlaps), 0);
    CHECK_EQ_INT(mxki_engine_var_version(v), 6);
    CHECK_EQ_INT(mxki_engine_var_version(w), 0);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    mxki_engine_delete_var(w, NULL, NULL, MXK_DEV_CPU, 0);
}

/* ---- priority queue order (one priority worker) ---- */

static int g_prio_log[8];
static atomic_int g_prio_len;

typedef struct prio_arg {
    int tag;
    t_flag *gate; /* the blocker waits for it */
} prio_arg;

static mxk_status prio_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    prio_arg *a = arg;
    if (a->gate != NULL)
        t_flag_wait(a->gate, 3000);
    g_prio_log[atomic_fetch_add(&g_prio_len, 1)] = a->tag;
    return MXK_OK;
}

static void test_priority_order(void) {
    if (t_is_naive() || t_cpu_priority_workers() != 1)
        MXK_SKIP("priority_order needs the threaded engine with 1 priority worker");
    t_flag gate = T_FLAG_INIT;
    prio_arg blocker = {100, &gate};
    prio_arg a[5] = {{1, NULL}, {5, NULL}, {3, NULL}, {10, NULL}, {4, NULL}};
    int prio[5] = {1, 5, 3, 10, 3};
    CHECK_EQ_INT(mxki_engine_push_sync(prio_fn, &blocker, NULL, MXK_DEV_CPU, 0, NULL, 0, NULL, 0,
                                       MXK_ENGINE_PROP_PRIORITIZED, 1000, "blocker"),
                 MXK_OK);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(mxki_engine_push_sync(prio_fn, &a[i], NULL, MXK_DEV_CPU, 0, NULL, 0, NULL, 0,
                                           MXK_ENGINE_PROP_PRIORITIZED, prio[i], "p"),
                     MXK_OK);
    t_flag_set(&gate);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_EQ_INT(atomic_load(&g_prio_len), 6);
    /* Highest first; equal priorities (3, 3) in push order. */
    int expect[6] = {100, 10, 5, 3, 4, 1};
    for (int i = 0; i < 6; i++)
        CHECK_EQ_INT(g_prio_log[i], expect[i]);
}

int main(void) {
    t_start_engine();
    MXK_RUN(test_four_line_example);
    MXK_RUN(test_writers_in_push_order);
    MXK_RUN(test_readers_overlap);
    MXK_RUN(test_prioritized_readers_overlap);
    MXK_RUN(test_wait_var_waits_for_readers_and_writers);
    MXK_RUN(test_delete_var_after_users);
    MXK_RUN(test_versions);
    MXK_RUN(test_duplicates_and_read_write);
    MXK_RUN(test_priority_order);
    mxki_engine_stop();
    return MXK_TEST_EXIT();
}
