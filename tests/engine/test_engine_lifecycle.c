/*
 * Bad input and the engine's life cycle: malformed pushes, pushes after stop,
 * restarts, bad worker settings, stop waiting for work.
 */
#include "engine_test_util.h"

static atomic_int g_frees, g_runs;

static void count_free(void *arg) {
    (void)arg;
    atomic_fetch_add(&g_frees, 1);
}

static mxk_status run_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    (void)err;
    atomic_fetch_add(&g_runs, 1);
    return MXK_OK;
}

static void dummy_async(void *arg, const mxk_run_ctx *rctx, mxk_async_handle *done) {
    (void)arg;
    (void)rctx;
    mxki_engine_complete(done, MXK_OK, NULL);
}

/** Pushes `d` expecting `code`, a message containing `needle`, and one arg_free call. */
static void expect_push_fails(const mxk_engine_push_desc *d, mxk_status code, const char *needle) {
    int frees = atomic_load(&g_frees);
    CHECK_EQ_INT(mxki_engine_push(d), code);
    CHECK_EQ_INT(mxki_last_error_code(), code);
    CHECK_CONTAINS(mxki_last_error_message(), needle);
    CHECK_EQ_INT(atomic_load(&g_frees), frees + 1);
}

static void test_bad_push_descriptors(void) {
    mxk_engine_var *v = mxki_engine_new_var();
    mxk_engine_var *with_null[3] = {v, NULL, v};
    mxk_engine_push_desc good = {.sync_fn = run_fn,
                                 .arg_free = count_free,
                                 .dev_type = MXK_DEV_CPU,
                                 .write_vars = &v,
                                 .num_write = 1,
                                 .name = "bad_input_op"};
    mxk_engine_push_desc d;

    CHECK_EQ_INT(mxki_engine_push(NULL), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxki_last_error_message(), "desc is NULL");

    d = good;
    d.async_fn = dummy_async;
    expect_push_fails(&d, MXK_ERR_INVALID_ARGUMENT, "exactly one of sync_fn and async_fn");
    CHECK_CONTAINS(mxki_last_error_message(), "got both");
    CHECK_CONTAINS(mxki_last_error_message(), "bad_input_op");

    d = good;
    d.sync_fn = NULL;
    expect_push_fails(&d, MXK_ERR_INVALID_ARGUMENT, "got neither");

    d = good;
    d.read_vars = with_null;
    d.num_read = 3;
    expect_push_fails(&d, MXK_ERR_INVALID_ARGUMENT, "read_vars[1] is NULL");

    d = good;
    d.write_vars = with_null + 1;
    d.num_write = 2;
    expect_push_fails(&d, MXK_ERR_INVALID_ARGUMENT, "write_vars[0] is NULL");

    d = good;
    d.read_vars = NULL;
    d.num_read = 2;
    expect_push_fails(&d, MXK_ERR_INVALID_ARGUMENT, "read_vars is NULL but its count is 2");

    d = good;
    d.dev_type = 7;
    expect_push_fails(&d, MXK_ERR_INVALID_ARGUMENT, "invalid dev_type 7");

    d = good;
    d.dev_type = MXK_DEV_GPU;
    d.dev_id = 64;
    expect_push_fails(&d, MXK_ERR_INVALID_ARGUMENT, "invalid dev_id 64");

    d = good;
    d.dev_id = -1;
    expect_push_fails(&d, MXK_ERR_INVALID_ARGUMENT, "invalid dev_id -1");

    d = good;
    d.props = 0x80;
    expect_push_fails(&d, MXK_ERR_INVALID_ARGUMENT, "unknown props bits 0x80");

    int frees = atomic_load(&g_frees);
    CHECK_EQ_INT(
        mxki_engine_push_sync(NULL, NULL, count_free, MXK_DEV_CPU, 0, NULL, 0, &v, 1, 0, 0, "nofn"),
        MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxki_last_error_message(), "fn is NULL");
    CHECK_EQ_INT(atomic_load(&g_frees), frees + 1);

    CHECK_EQ_INT(mxki_engine_wait_var(NULL), MXK_ERR_INVALID_ARGUMENT);

    /* Nothing ran, nothing was recorded, and the engine still works. */
    CHECK_EQ_INT(atomic_load(&g_runs), 0);
    CHECK_EQ_INT(mxki_engine_var_version(v), 0);
    CHECK_EQ_INT(mxki_engine_push(&good), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(atomic_load(&g_runs), 1);
    CHECK_EQ_INT(mxki_engine_var_version(v), 1);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
}

static atomic_int g_deleted;

static void deleter(void *arg) {
    (void)arg;
    atomic_fetch_add(&g_deleted, 1);
}

static mxk_status fail_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    return mxki_sink_set(err, MXK_ERR_IO, "disk on fire");
}

static void test_push_after_stop(void) {
    char type[64];
    snprintf(type, sizeof type, "%s", mxki_engine_type_name());
    mxk_engine_var *v = mxki_engine_new_var(), *x = mxki_engine_new_var();
    CHECK_EQ_INT(
        mxki_engine_push_sync(fail_fn, NULL, NULL, MXK_DEV_CPU, 0, NULL, 0, &x, 1, 0, 0, "f"),
        MXK_OK);
    mxki_engine_stop();
    mxki_engine_stop(); /* idempotent */
    CHECK(strcmp(mxki_engine_type_name(), "none") == 0);
    mxk_engine_push_desc d = {.sync_fn = run_fn,
                              .arg_free = count_free,
                              .dev_type = MXK_DEV_CPU,
                              .write_vars = &v,
                              .num_write = 1,
                              .name = "late_op"};
    expect_push_fails(&d, MXK_ERR_STATE, "not running");
    CHECK_CONTAINS(mxki_last_error_message(), "late_op");
    /* Waits still work (nothing is in flight); the error recorded before stop is kept. */
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(x), MXK_ERR_IO);
    CHECK(strcmp(mxki_last_error_message(), "disk on fire") == 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    /* A deletion while stopped runs at once. */
    int deleted = atomic_load(&g_deleted);
    mxki_engine_delete_var(x, deleter, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(atomic_load(&g_deleted), deleted + 1);
    /* Restart. */
    CHECK_EQ_INT(mxki_engine_start(), MXK_OK);
    CHECK_EQ_INT(mxki_engine_start(), MXK_OK); /* idempotent */
    CHECK(strcmp(mxki_engine_type_name(), type) == 0);
    CHECK_EQ_INT(mxki_engine_push(&d), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(mxki_engine_var_version(v), 1);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
}

static mxk_status slow_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    (void)err;
    t_sleep_us(3000);
    atomic_fetch_add(&g_runs, 1);
    return MXK_OK;
}

static void test_restart_many_times(void) {
    for (int round = 0; round < 15; round++) {
        mxk_engine_var *v = mxki_engine_new_var();
        atomic_store(&g_runs, 0);
        int deleted = atomic_load(&g_deleted);
        /* Use every kind of pool so each restart creates and destroys them. */
        uint32_t props[4] = {0, MXK_ENGINE_PROP_PRIORITIZED, MXK_ENGINE_PROP_COPY, 0};
        int32_t dev[4] = {MXK_DEV_CPU, MXK_DEV_CPU, MXK_DEV_GPU, MXK_DEV_GPU};
        for (int i = 0; i < 4; i++)
            CHECK_EQ_INT(mxki_engine_push_sync(slow_fn, NULL, NULL, dev[i], 0, NULL, 0, &v, 1,
                                               props[i], 0, "slow"),
                         MXK_OK);
        mxki_engine_delete_var(v, deleter, NULL, MXK_DEV_GPU, 0);
        mxki_engine_stop(); /* waits for all of it */
        CHECK_EQ_INT(atomic_load(&g_runs), 4);
        CHECK_EQ_INT(atomic_load(&g_deleted), deleted + 1);
        CHECK_EQ_INT(mxki_engine_start(), MXK_OK);
    }
}

static void test_bad_worker_setting(void) {
    if (t_is_naive())
        MXK_SKIP("the naive engine has no workers");
    const char *old = getenv("MXK_CPU_WORKER_NTHREADS");
    char saved[32] = "";
    if (old)
        snprintf(saved, sizeof saved, "%s", old);
    mxki_engine_stop();
    const char *bad[3] = {"abc", "0", "4x"};
    for (int i = 0; i < 3; i++) {
        setenv("MXK_CPU_WORKER_NTHREADS", bad[i], 1);
        CHECK_EQ_INT(mxki_engine_start(), MXK_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(mxki_last_error_message(), "MXK_CPU_WORKER_NTHREADS");
        CHECK_CONTAINS(mxki_last_error_message(), bad[i]);
        CHECK_EQ_INT(
            mxki_engine_push_sync(run_fn, NULL, NULL, MXK_DEV_CPU, 0, NULL, 0, NULL, 0, 0, 0, "x"),
            MXK_ERR_STATE);
    }
    if (old)
        setenv("MXK_CPU_WORKER_NTHREADS", saved, 1);
    else
        unsetenv("MXK_CPU_WORKER_NTHREADS");
    CHECK_EQ_INT(mxki_engine_start(), MXK_OK);
}

int main(void) {
    t_start_engine();
    MXK_RUN(test_bad_push_descriptors);
    MXK_RUN(test_push_after_stop);
    MXK_RUN(test_restart_many_times);
    MXK_RUN(test_bad_worker_setting);
    mxki_engine_stop();
    return MXK_TEST_EXIT();
}
