/*
 * The engine watchdog (MXK_ENGINE_WATCHDOG, engine.h): a function that runs longer
 * than the limit is reported once, with its operator, node and backend names; quick
 * functions are not; a bad value of the variable fails the engine's start.
 *
 * The stuck function does not sleep for a fixed time: it blocks until a helper thread
 * has seen the report in the captured stderr (at most 10 s), so the test takes about
 * the watchdog's 1 s plus two scans, whatever the machine's speed.
 */
#include "engine_test_util.h"

#include <stdio.h>

/** The report expected for the stuck function (engine.h). */
static const char k_report[] =
    "[mxk ERROR] engine watchdog: operator 'stuck_op' (node 'fc1', backend 'test-backend') has "
    "been running for more than 1 s (MXK_ENGINE_WATCHDOG=1); it cannot be interrupted: waits "
    "on the variables it uses, mxki_engine_wait_all and mxki_engine_stop wait for it\n";

/** Shared by the stuck function, the helper thread and the test. */
static struct {
    mxk_t_capture cap; /**< stderr while the stuck function runs */
    t_flag release;    /**< set by the helper once the report is seen */
    atomic_int saw_report;
} S = {.release = T_FLAG_INIT};

/** Number of occurrences of `needle` in `hay`. */
static int count(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/** Blocks until released (at most 10 s, so a broken watchdog fails instead of hanging). */
static mxk_status stuck_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    (void)err;
    t_flag_wait(&S.release, 10000);
    return MXK_OK;
}

static mxk_status quick_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    (void)err;
    return MXK_OK;
}

/**
 * Reads the captured stderr until the report shows up (polling, at most 10 s), lets
 * the watchdog scan a few more times (so a second report would show), then releases.
 */
static void *helper_main(void *arg) {
    (void)arg;
    char buf[4096];
    for (int i = 0; i < 200 && !atomic_load(&S.saw_report); i++) {
        ssize_t n = pread(fileno(S.cap.file), buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        if (strstr(buf, "engine watchdog") != NULL)
            atomic_store(&S.saw_report, 1);
        else
            t_sleep_us(50000);
    }
    t_sleep_us(600000); /* two more scans of a 1 s watchdog (every 250 ms) */
    t_flag_set(&S.release);
    return NULL;
}

static void test_stuck_function_reported_once(void) {
    mxk_engine_var *v = mxki_engine_new_var(), *q = mxki_engine_new_var();
    mxk_engine_push_desc d = {.sync_fn = stuck_fn,
                              .dev_type = MXK_DEV_CPU,
                              .write_vars = &v,
                              .num_write = 1,
                              .name = "stuck_op",
                              .node = "fc1",
                              .backend = "test-backend"};
    CHECK(mxk_t_capture_begin(&S.cap));
    pthread_t helper;
    CHECK(pthread_create(&helper, NULL, helper_main, NULL) == 0);
    CHECK_EQ_INT(mxki_engine_push_sync(quick_fn, NULL, NULL, MXK_DEV_CPU, 0, NULL, 0, &q, 1, 0, 0,
                                       "quick_op"),
                 MXK_OK);
    CHECK_EQ_INT(mxki_engine_push(&d), MXK_OK); /* NaiveEngine: runs (blocks) here */
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    pthread_join(helper, NULL);
    char out[8192];
    mxk_t_capture_end(&S.cap, out, sizeof out);
    CHECK(atomic_load(&S.saw_report));
    CHECK_EQ_INT(count(out, k_report), 1);
    CHECK_EQ_INT(count(out, "engine watchdog"), 1); /* once, and not the quick op */
    if (count(out, k_report) != 1)
        fprintf(stderr, "captured stderr:\n%s", out);
    mxk_engine_var *all[2] = {v, q};
    for (int i = 0; i < 2; i++)
        mxki_engine_delete_var(all[i], NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/** A bad MXK_ENGINE_WATCHDOG fails the start naming the variable, its value and range. */
static void test_bad_value_fails_start(void) {
    static const char *const bad[] = {"-1", "abc", "86401", "1.5"};
    mxki_engine_stop();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("MXK_ENGINE_WATCHDOG", bad[i], 1);
        char want[160];
        snprintf(want, sizeof want,
                 "engine: MXK_ENGINE_WATCHDOG=\"%s\" is invalid: expected an integer in [0, "
                 "86400]",
                 bad[i]);
        CHECK_EQ_INT(mxki_engine_start(), MXK_ERR_INVALID_ARGUMENT);
        CHECK(strcmp(mxki_last_error_message(), want) == 0);
        CHECK(strcmp(mxki_engine_type_name(), "none") == 0);
    }
    setenv("MXK_ENGINE_WATCHDOG", "0", 1); /* off */
    CHECK_EQ_INT(mxki_engine_start(), MXK_OK);
    mxki_engine_stop();
    setenv("MXK_ENGINE_WATCHDOG", "1", 1);
    CHECK_EQ_INT(mxki_engine_start(), MXK_OK);
}

int main(void) {
    setenv("MXK_ENGINE_WATCHDOG", "1", 1);
    t_start_engine();
    MXK_RUN(test_stuck_function_reported_once);
    MXK_RUN(test_bad_value_fails_start);
    mxki_engine_stop();
    return MXK_TEST_EXIT();
}
