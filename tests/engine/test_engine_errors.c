/*
 * Error propagation (upstream
 * docs/static_site/src/pages/api/architecture/exception_handling.md): errors
 * flow along the written variables, dependents are skipped, a wait reports an error
 * once, and the slot is shared by every variable the failing op wrote.
 */
#include "engine_test_util.h"

static atomic_int g_ok_calls, g_frees;

static mxk_status ok_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    (void)err;
    atomic_fetch_add(&g_ok_calls, 1);
    return MXK_OK;
}

/** Fails with MXK_ERR_INVALID_ARGUMENT and the message in arg. */
static mxk_status fail_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    return mxki_sink_set(err, MXK_ERR_INVALID_ARGUMENT, "%s", (const char *)arg);
}

static void count_free(void *arg) {
    (void)arg;
    atomic_fetch_add(&g_frees, 1);
}

/** Pushes fn on the CPU with props, counting arg frees. */
static mxk_status push(mxk_engine_sync_fn fn, void *arg, mxk_engine_var *const *r, uint32_t nr,
                       mxk_engine_var *const *w, uint32_t nw, uint32_t props) {
    return mxki_engine_push_sync(fn, arg, count_free, MXK_DEV_CPU, 0, r, nr, w, nw, props, 0,
                                 "errtest");
}

/** Checks that a wait returned `code` with exactly `msg` as the thread's last error. */
#define CHECK_REPORTED(call, code, msg)                                                            \
    do {                                                                                           \
        mxk_set_error(MXK_OK, "%s", "");                                                           \
        CHECK_EQ_INT((call), (code));                                                              \
        CHECK_EQ_INT(mxki_last_error_code(), (code));                                              \
        CHECK(strcmp(mxki_last_error_message(), (msg)) == 0);                                      \
    } while (0)

static void delete_vars(mxk_engine_var **v, int n) {
    for (int i = 0; i < n; i++)
        mxki_engine_delete_var(v[i], NULL, NULL, MXK_DEV_CPU, 0);
}

/* E2: a=N(0,1); b=N(0,2); c=dot(a,b); d=N(0,-1); e=dot(c,d); e.wait_to_read() raises. */
static void test_e2_error_flows_down_the_chain(void) {
    static const char msg[] = "normal: scale must be > 0, got -1 (d = N(0,-1))";
    mxk_engine_var *a = mxki_engine_new_var(), *b = mxki_engine_new_var();
    mxk_engine_var *c = mxki_engine_new_var(), *d = mxki_engine_new_var();
    mxk_engine_var *e = mxki_engine_new_var();
    mxk_engine_var *ab[2] = {a, b}, *cd[2] = {c, d};
    atomic_store(&g_ok_calls, 0);
    atomic_store(&g_frees, 0);
    CHECK_EQ_INT(push(ok_fn, NULL, NULL, 0, &a, 1, 0), MXK_OK);
    CHECK_EQ_INT(push(ok_fn, NULL, NULL, 0, &b, 1, 0), MXK_OK);
    CHECK_EQ_INT(push(ok_fn, NULL, ab, 2, &c, 1, 0), MXK_OK);
    CHECK_EQ_INT(push(fail_fn, (void *)msg, NULL, 0, &d, 1, 0), MXK_OK); /* no raise at push */
    CHECK_EQ_INT(push(ok_fn, NULL, cd, 2, &e, 1, 0), MXK_OK);
    CHECK_REPORTED(mxki_engine_wait_var(e), MXK_ERR_INVALID_ARGUMENT, msg);
    CHECK_EQ_INT(atomic_load(&g_ok_calls), 3); /* e = dot(c, d) was skipped */
    CHECK_EQ_INT(atomic_load(&g_frees), 5);    /* ...but its argument was freed */
    /* Failed arrays stay failed: every read reports the error again. */
    CHECK_REPORTED(mxki_engine_wait_var(e), MXK_ERR_INVALID_ARGUMENT, msg);
    CHECK_REPORTED(mxki_engine_wait_var(d), MXK_ERR_INVALID_ARGUMENT, msg); /* shared slot */
    CHECK_EQ_INT(mxki_engine_wait_var(c), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK); /* reported already */
    CHECK_EQ_INT(mxki_engine_var_version(e), 1);  /* the skipped write still completed */
    /* Reading the failed d fails again; writing d heals it, then e can be computed. */
    CHECK_EQ_INT(push(ok_fn, NULL, cd, 2, &e, 1, 0), MXK_OK);
    CHECK_REPORTED(mxki_engine_wait_var(e), MXK_ERR_INVALID_ARGUMENT, msg);
    CHECK_EQ_INT(atomic_load(&g_ok_calls), 3);
    CHECK_EQ_INT(push(ok_fn, NULL, NULL, 0, &d, 1, 0), MXK_OK);
    CHECK_EQ_INT(push(ok_fn, NULL, cd, 2, &e, 1, 0), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(e), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(d), MXK_OK);
    CHECK_EQ_INT(atomic_load(&g_ok_calls), 5);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxk_engine_var *all[5] = {a, b, c, d, e};
    delete_vars(all, 5);
}

/*
 * E3: c, d written by one failing op: c.asnumpy() raises; unlike upstream (where
 * d.asnumpy() then returns undefined contents) d raises the same error too.
 */
static void test_e3_outputs_share_the_slot(void) {
    static const char msg[] = "dot: b holds an error";
    for (int order = 0; order < 2; order++) {
        mxk_engine_var *c = mxki_engine_new_var(), *d = mxki_engine_new_var();
        mxk_engine_var *cd[2] = {c, d};
        CHECK_EQ_INT(push(fail_fn, (void *)msg, NULL, 0, cd, 2, 0), MXK_OK);
        CHECK_REPORTED(mxki_engine_wait_var(order ? d : c), MXK_ERR_INVALID_ARGUMENT, msg);
        CHECK_REPORTED(mxki_engine_wait_var(order ? c : d), MXK_ERR_INVALID_ARGUMENT, msg);
        CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
        delete_vars(cd, 2);
    }
}

/* E4: two separate failures, each followed by a wait: both raise. */
static void test_e4_two_failures_both_raise(void) {
    static const char m1[] = "first failure", m2[] = "second failure";
    mxk_engine_var *x = mxki_engine_new_var(), *y = mxki_engine_new_var();
    CHECK_EQ_INT(push(fail_fn, (void *)m1, NULL, 0, &x, 1, 0), MXK_OK);
    CHECK_REPORTED(mxki_engine_wait_var(x), MXK_ERR_INVALID_ARGUMENT, m1);
    CHECK_EQ_INT(push(fail_fn, (void *)m2, NULL, 0, &y, 1, 0), MXK_OK);
    CHECK_REPORTED(mxki_engine_wait_var(y), MXK_ERR_INVALID_ARGUMENT, m2);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxk_engine_var *all[2] = {x, y};
    delete_vars(all, 2);
}

/*
 * E4: waitall twice: only the first raises, with the first error recorded. The second
 * failure is a NO_SKIP op that inherited the first error and failed on its own.
 */
static void test_e4_wait_all_reports_first_once(void) {
    static const char m1[] = "first failure", m2[] = "second failure";
    mxk_engine_var *x = mxki_engine_new_var(), *y = mxki_engine_new_var();
    mxk_engine_var *z = mxki_engine_new_var();
    mxk_engine_var *xz[2] = {x, z}, *zy[2] = {z, y};
    CHECK_EQ_INT(push(fail_fn, (void *)m1, NULL, 0, xz, 2, 0), MXK_OK);
    CHECK_EQ_INT(push(fail_fn, (void *)m2, NULL, 0, zy, 2, MXK_ENGINE_PROP_NO_SKIP), MXK_OK);
    CHECK_REPORTED(mxki_engine_wait_all(), MXK_ERR_INVALID_ARGUMENT, m1);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    /* wait_all marked every error reported; the variables stay failed with their own. */
    CHECK_REPORTED(mxki_engine_wait_var(y), MXK_ERR_INVALID_ARGUMENT, m2);
    CHECK_REPORTED(mxki_engine_wait_var(x), MXK_ERR_INVALID_ARGUMENT, m1);
    CHECK_REPORTED(mxki_engine_wait_var(z), MXK_ERR_INVALID_ARGUMENT, m2);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxk_engine_var *all[3] = {x, y, z};
    delete_vars(all, 3);
}

/* E4: a = fail(); a = dot(a, a); a.asnumpy() raises: the error passes through the write. */
static void test_e4_error_passes_through_write(void) {
    static const char msg[] = "copyto: failed";
    mxk_engine_var *a = mxki_engine_new_var();
    atomic_store(&g_ok_calls, 0);
    CHECK_EQ_INT(push(fail_fn, (void *)msg, NULL, 0, &a, 1, 0), MXK_OK);
    CHECK_EQ_INT(push(ok_fn, NULL, &a, 1, &a, 1, 0), MXK_OK);
    CHECK_REPORTED(mxki_engine_wait_var(a), MXK_ERR_INVALID_ARGUMENT, msg);
    CHECK_EQ_INT(atomic_load(&g_ok_calls), 0);
    CHECK_REPORTED(mxki_engine_wait_var(a), MXK_ERR_INVALID_ARGUMENT, msg); /* still failed */
    CHECK_EQ_INT(mxki_engine_var_version(a), 2);
    /* Read and written: still fails; written only, after the report: healed. */
    CHECK_EQ_INT(push(ok_fn, NULL, &a, 1, &a, 1, 0), MXK_OK);
    CHECK_REPORTED(mxki_engine_wait_var(a), MXK_ERR_INVALID_ARGUMENT, msg);
    CHECK_EQ_INT(push(ok_fn, NULL, NULL, 0, &a, 1, 0), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(a), MXK_OK);
    CHECK_EQ_INT(atomic_load(&g_ok_calls), 1);
    mxki_engine_delete_var(a, NULL, NULL, MXK_DEV_CPU, 0);
}

/* A NO_SKIP op runs despite an inherited error and passes it on; reads are not marked. */
static void test_no_skip_runs_and_propagates(void) {
    static const char msg[] = "upstream failed";
    mxk_engine_var *r = mxki_engine_new_var(), *x = mxki_engine_new_var();
    mxk_engine_var *y = mxki_engine_new_var(), *u = mxki_engine_new_var();
    atomic_store(&g_ok_calls, 0);
    CHECK_EQ_INT(push(fail_fn, (void *)msg, &r, 1, &x, 1, 0), MXK_OK);
    CHECK_EQ_INT(push(ok_fn, NULL, &x, 1, &y, 1, MXK_ENGINE_PROP_NO_SKIP), MXK_OK);
    CHECK_EQ_INT(push(ok_fn, NULL, NULL, 0, &u, 1, 0), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(u), MXK_OK); /* unrelated variable */
    CHECK_EQ_INT(mxki_engine_wait_var(r), MXK_OK); /* read by the failing op: not marked */
    CHECK_REPORTED(mxki_engine_wait_var(y), MXK_ERR_INVALID_ARGUMENT, msg);
    CHECK_EQ_INT(atomic_load(&g_ok_calls), 2); /* the NO_SKIP op ran */
    CHECK_REPORTED(mxki_engine_wait_var(x), MXK_ERR_INVALID_ARGUMENT, msg);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxk_engine_var *all[4] = {r, x, y, u};
    delete_vars(all, 4);
}

/* An error never waited on is reported once by wait_all; the variables stay failed. */
static void test_wait_all_reports_once_vars_stay_failed(void) {
    static const char msg[] = "never waited on";
    mxk_engine_var *x = mxki_engine_new_var(), *y = mxki_engine_new_var();
    CHECK_EQ_INT(push(fail_fn, (void *)msg, NULL, 0, &x, 1, 0), MXK_OK);
    CHECK_EQ_INT(push(ok_fn, NULL, &x, 1, &y, 1, 0), MXK_OK);
    CHECK_REPORTED(mxki_engine_wait_all(), MXK_ERR_INVALID_ARGUMENT, msg);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_REPORTED(mxki_engine_wait_var(y), MXK_ERR_INVALID_ARGUMENT, msg);
    CHECK_REPORTED(mxki_engine_wait_var(x), MXK_ERR_INVALID_ARGUMENT, msg);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxk_engine_var *all[2] = {x, y};
    delete_vars(all, 2);
}

/* A failing op that writes nothing marks no variable, but wait_all reports it. */
static void test_read_only_failure_reported_by_wait_all(void) {
    static const char msg[] = "asnumpy: host copy failed";
    mxk_engine_var *r = mxki_engine_new_var();
    CHECK_EQ_INT(push(fail_fn, (void *)msg, &r, 1, NULL, 0, 0), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(r), MXK_OK);
    CHECK_REPORTED(mxki_engine_wait_all(), MXK_ERR_INVALID_ARGUMENT, msg);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxki_engine_delete_var(r, NULL, NULL, MXK_DEV_CPU, 0);
}

/* A failing function that gives no message still produces a descriptive one. */
static mxk_status silent_fail_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    (void)err;
    return MXK_ERR_SHAPE;
}

static void test_error_without_message(void) {
    mxk_engine_var *x = mxki_engine_new_var();
    CHECK_EQ_INT(mxki_engine_push_sync(silent_fail_fn, NULL, NULL, MXK_DEV_CPU, 0, NULL, 0, &x, 1,
                                       0, 0, "my_silent_op"),
                 MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(x), MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxki_last_error_message(), "my_silent_op");
    CHECK_CONTAINS(mxki_last_error_message(), "MXK_ERR_SHAPE");
    mxki_engine_delete_var(x, NULL, NULL, MXK_DEV_CPU, 0);
}

/* ---- async errors ---- */

typedef struct async_fail {
    mxk_async_handle *done;
    const char *msg;
    pthread_t thread;
} async_fail;

static void *async_fail_main(void *arg) {
    async_fail *f = arg;
    t_sleep_us(20000);
    mxki_engine_complete(f->done, MXK_ERR_BACKEND, f->msg);
    return NULL;
}

static void async_fail_fn(void *arg, const mxk_run_ctx *rctx, mxk_async_handle *done) {
    (void)rctx;
    async_fail *f = arg;
    f->done = done;
    pthread_create(&f->thread, NULL, async_fail_main, f);
}

static void test_async_error_propagates(void) {
    static const char msg[] = "cuda: device lost (async)";
    for (int with_msg = 1; with_msg >= 0; with_msg--) {
        async_fail f = {NULL, with_msg ? msg : NULL, 0};
        mxk_engine_var *v = mxki_engine_new_var(), *w = mxki_engine_new_var();
        mxk_engine_push_desc d = {.async_fn = async_fail_fn,
                                  .arg = &f,
                                  .dev_type = MXK_DEV_CPU,
                                  .write_vars = &v,
                                  .num_write = 1,
                                  .name = "async_copy"};
        atomic_store(&g_ok_calls, 0);
        CHECK_EQ_INT(mxki_engine_push(&d), MXK_OK);
        CHECK_EQ_INT(push(ok_fn, NULL, &v, 1, &w, 1, 0), MXK_OK);
        if (with_msg) {
            CHECK_REPORTED(mxki_engine_wait_var(w), MXK_ERR_BACKEND, msg);
        } else {
            CHECK_EQ_INT(mxki_engine_wait_var(w), MXK_ERR_BACKEND);
            CHECK_CONTAINS(mxki_last_error_message(), "async_copy");
        }
        CHECK_EQ_INT(atomic_load(&g_ok_calls), 0);
        CHECK_EQ_INT(mxki_engine_wait_var(w), MXK_ERR_BACKEND); /* stays failed */
        CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_ERR_BACKEND);
        CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
        pthread_join(f.thread, NULL);
        mxk_engine_var *all[2] = {v, w};
        delete_vars(all, 2);
    }
}

/* A deletion still runs its deleter when the variable holds an error. */
static atomic_int g_deleted;

static void deleter(void *arg) {
    (void)arg;
    atomic_fetch_add(&g_deleted, 1);
}

static void test_delete_errored_var(void) {
    mxk_engine_var *x = mxki_engine_new_var();
    CHECK_EQ_INT(push(fail_fn, (void *)"gone", NULL, 0, &x, 1, 0), MXK_OK);
    mxki_engine_delete_var(x, deleter, NULL, MXK_DEV_CPU, 0);
    CHECK_REPORTED(mxki_engine_wait_all(), MXK_ERR_INVALID_ARGUMENT, "gone");
    CHECK_EQ_INT(atomic_load(&g_deleted), 1);
}

int main(void) {
    t_start_engine();
    MXK_RUN(test_e2_error_flows_down_the_chain);
    MXK_RUN(test_e3_outputs_share_the_slot);
    MXK_RUN(test_e4_two_failures_both_raise);
    MXK_RUN(test_e4_wait_all_reports_first_once);
    MXK_RUN(test_e4_error_passes_through_write);
    MXK_RUN(test_no_skip_runs_and_propagates);
    MXK_RUN(test_wait_all_reports_once_vars_stay_failed);
    MXK_RUN(test_read_only_failure_reported_by_wait_all);
    MXK_RUN(test_error_without_message);
    MXK_RUN(test_async_error_propagates);
    MXK_RUN(test_delete_errored_var);
    mxki_engine_stop();
    return MXK_TEST_EXIT();
}
