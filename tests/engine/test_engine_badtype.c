/*
 * Choice of the engine type by MXK_ENGINE_TYPE: an unknown name is refused with a
 * message listing the valid ones; unset or empty selects ThreadedEnginePerDevice.
 * ctest runs this with MXK_ENGINE_TYPE=Bogus.
 */
#include "engine_test_util.h"

static mxk_status noop_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    (void)err;
    return MXK_OK;
}

static void test_unknown_type_is_refused(void) {
    const char *env = getenv("MXK_ENGINE_TYPE");
    if (env == NULL || strcmp(env, "Bogus") != 0)
        setenv("MXK_ENGINE_TYPE", "Bogus", 1);
    CHECK_EQ_INT(mxki_engine_start(), MXK_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(mxki_last_error_code(), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxki_last_error_message(), "MXK_ENGINE_TYPE");
    CHECK_CONTAINS(mxki_last_error_message(), "'Bogus'");
    CHECK_CONTAINS(mxki_last_error_message(), "ThreadedEnginePerDevice");
    CHECK_CONTAINS(mxki_last_error_message(), "NaiveEngine");
    CHECK(strcmp(mxki_engine_type_name(), "none") == 0);
    CHECK_EQ_INT(mxki_engine_push_sync(noop_fn, NULL, NULL, MXK_DEV_CPU, 0, NULL, 0, NULL, 0, 0, 0,
                                       "after_bad_start"),
                 MXK_ERR_STATE);
    mxki_engine_stop(); /* harmless */
}

static void test_valid_types(void) {
    static const struct {
        const char *env; /* NULL: unset */
        const char *name;
    } cases[] = {{"NaiveEngine", "NaiveEngine"},
                 {"ThreadedEnginePerDevice", "ThreadedEnginePerDevice"},
                 {NULL, "ThreadedEnginePerDevice"},
                 {"", "ThreadedEnginePerDevice"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].env)
            setenv("MXK_ENGINE_TYPE", cases[i].env, 1);
        else
            unsetenv("MXK_ENGINE_TYPE");
        CHECK_EQ_INT(mxki_engine_start(), MXK_OK);
        CHECK(strcmp(mxki_engine_type_name(), cases[i].name) == 0);
        mxk_engine_var *v = mxki_engine_new_var();
        CHECK_EQ_INT(mxki_engine_push_sync(noop_fn, NULL, NULL, MXK_DEV_CPU, 0, NULL, 0, &v, 1, 0,
                                           0, "noop"),
                     MXK_OK);
        CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
        CHECK_EQ_INT(mxki_engine_var_version(v), 1);
        mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
        mxki_engine_stop();
    }
}

int main(void) {
    MXK_RUN(test_unknown_type_is_refused);
    MXK_RUN(test_valid_types);
    return MXK_TEST_EXIT();
}
