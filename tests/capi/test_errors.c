/*
 * The one error channel (mxk.h conventions): mxk_set_error and mxk_error_add_context
 * exported for libraries and applications above libmxk; mxk_train and mxk_opcheck
 * record their messages there, so their last error is never a stale message of an
 * earlier failure once a later call has failed.
 */
#include <stdio.h>
#include <string.h>

#include "mxk.h"
#include "mxk_opcheck.h"
#include "mxk_train.h"
#include "testing.h"

/** mxk_set_error sets code and message; a message may wrap the current one. */
static void test_set_and_context(void) {
    CHECK_EQ_INT(mxk_set_error(MXK_ERR_SHAPE, "bad %s %d", "shape", 3), MXK_ERR_SHAPE);
    CHECK(strcmp(mxk_get_last_error(), "bad shape 3") == 0);
    CHECK_EQ_INT(mxk_error_add_context("layer '%s'", "fc1"), MXK_ERR_SHAPE);
    CHECK(strcmp(mxk_get_last_error(), "layer 'fc1': bad shape 3") == 0);
    /* The current message as an argument of the next one. */
    CHECK_EQ_INT(mxk_set_error(MXK_ERR_IO, "model.json: %s", mxk_get_last_error()), MXK_ERR_IO);
    CHECK(strcmp(mxk_get_last_error(), "model.json: layer 'fc1': bad shape 3") == 0);
    /* A kernel failure wrapped by the caller keeps the kernel's code. */
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_from_json("{", &s), MXK_ERR_FORMAT);
    CHECK_EQ_INT(mxk_error_add_context("loading 'x-symbol.json'"), MXK_ERR_FORMAT);
    CHECK(strncmp(mxk_get_last_error(), "loading 'x-symbol.json': ", 25) == 0);
}

/**
 * mxk_train's last error after a later kernel failure is the later message (it
 * was the earlier mxk_train message when mxk_train kept a buffer of its own).
 */
static void test_train_not_stale(void) {
    mxkt_initializer init;
    CHECK_EQ_INT(mxkt_initializer_parse("bogus", 1, &init), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(), "unknown initializer 'bogus'");
    CHECK(strcmp(mxkt_last_error(), mxk_get_last_error()) == 0);
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_variable("", &s), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "mxk_symbol_variable: a variable needs a non-empty name") == 0);
}

/** mxk_opcheck's last error likewise. */
static void test_opcheck_not_stale(void) {
    mxk_opcheck_report rep;
    CHECK_EQ_INT(mxk_opcheck_run(NULL, &rep), MXK_ERR_INVALID_ARGUMENT);
    const char *first = mxk_opcheck_last_error();
    CHECK(first[0] != '\0');
    CHECK(strcmp(first, mxk_get_last_error()) == 0);
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_variable("", &s), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxk_opcheck_last_error(),
                 "mxk_symbol_variable: a variable needs a non-empty name") == 0);
}

/** A growable record: struct_size is checked before anything else. */
static void test_growable_record(void) {
    mxk_plugin_record r = {.struct_size = 4};
    CHECK_EQ_INT(mxk_plugin_get(0, &r), MXK_ERR_INVALID_ARGUMENT);
    char want[200];
    snprintf(want, sizeof want,
             "mxk_plugin_get: out->struct_size is 4, less than %zu (set it to "
             "sizeof(mxk_plugin_record))",
             sizeof r);
    CHECK(strcmp(mxk_get_last_error(), want) == 0);
    r.struct_size = sizeof r;
    CHECK_EQ_INT(mxk_plugin_get(0, &r), MXK_ERR_NOT_FOUND);
    CHECK(strcmp(mxk_get_last_error(), "plugin index 0 out of range (0 loaded)") == 0);
    CHECK_EQ_INT(mxk_plugin_get(0, NULL), MXK_ERR_INVALID_ARGUMENT);
}

int main(void) {
    mxk_init_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.no_plugins = 1;
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_set_and_context);
    MXK_RUN(test_train_not_stale);
    MXK_RUN(test_opcheck_not_stale);
    MXK_RUN(test_growable_record);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
