/*
 * Environment settings read with kernel/env.c (registered with MXK_NUM_THREADS=abc,
 * MXK_LOG_LEVEL=loud and MXK_TEST_BAD=12x): a bad value is warned about once per
 * variable, with the exact message, and the default applies; the strict reader
 * fails naming the variable, its value and the range.
 */
#include "env.h"
#include "error.h"
#include "testing.h"

#include <stdlib.h>
#include <unistd.h>

/** Number of occurrences of `needle` in `hay`. */
static int count(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/** MXK_NUM_THREADS=abc: ignored (the CPU count applies), warned about once. */
static void test_bad_num_threads_warns_once(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    mxk_t_capture c;
    CHECK(mxk_t_capture_begin(&c));
    int32_t a = mxk_get_num_threads(), b = mxk_get_num_threads();
    char out[4096];
    mxk_t_capture_end(&c, out, sizeof out);
    CHECK_EQ_INT(a, cpus > 0 ? cpus : 1);
    CHECK_EQ_INT(b, a);
    CHECK_EQ_INT(count(out, "[mxk WARNING] runtime: MXK_NUM_THREADS=\"abc\" is invalid: expected "
                            "an integer in [1, 4096]; it is ignored\n"),
                 1);
    CHECK_EQ_INT(count(out, "MXK_NUM_THREADS"), 1);
}

/** MXK_LOG_LEVEL=loud: info applies (info logged, debug not), warned about once. */
static void test_bad_log_level_warns_once(void) {
    mxk_t_capture c;
    CHECK(mxk_t_capture_begin(&c));
    mxki_log(MXK_LOG_INFO, "first %d", 1);
    mxki_log(MXK_LOG_DEBUG, "hidden");
    mxki_log(MXK_LOG_INFO, "second");
    char out[4096];
    mxk_t_capture_end(&c, out, sizeof out);
    CHECK(strcmp(out, "[mxk WARNING] log: MXK_LOG_LEVEL=\"loud\" is invalid: expected debug, "
                      "info, warning or error; it is ignored\n[mxk INFO] first 1\n[mxk INFO] "
                      "second\n") == 0);
    setenv("MXK_LOG_LEVEL", "error", 1); /* read at every call */
    CHECK(mxk_t_capture_begin(&c));
    mxki_log(MXK_LOG_WARNING, "hidden");
    mxki_log(MXK_LOG_ERROR, "shown");
    mxk_t_capture_end(&c, out, sizeof out);
    CHECK(strcmp(out, "[mxk ERROR] shown\n") == 0);
    setenv("MXK_LOG_LEVEL", "loud", 1);
}

/** The two readers on one bad value: the strict one fails, the lenient one warns once. */
static void test_readers(void) {
    uint64_t v = 7;
    CHECK_EQ_INT(mxki_env_uint64("test", "MXK_TEST_BAD", 3, 0, 100, &v), MXK_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(v, 3);
    CHECK(strcmp(mxki_last_error_message(),
                 "test: MXK_TEST_BAD=\"12x\" is invalid: expected an integer in [0, 100]") == 0);
    mxk_t_capture c;
    CHECK(mxk_t_capture_begin(&c));
    CHECK_EQ_INT(mxki_env_uint64_or_warn("test", "MXK_TEST_BAD", 5, 0, 100), 5);
    CHECK_EQ_INT(mxki_env_uint64_or_warn("test", "MXK_TEST_BAD", 5, 0, 100), 5);
    char out[4096];
    mxk_t_capture_end(&c, out, sizeof out);
    CHECK(strcmp(out, "[mxk WARNING] test: MXK_TEST_BAD=\"12x\" is invalid: expected an integer "
                      "in [0, 100]; it is ignored\n") == 0);
    setenv("MXK_TEST_GOOD", " 42 ", 1);
    CHECK_EQ_INT(mxki_env_uint64_or_warn("test", "MXK_TEST_GOOD", 5, 0, 100), 42);
    setenv("MXK_TEST_GOOD", "101", 1); /* out of range: a bad value too */
    CHECK(mxk_t_capture_begin(&c));
    CHECK_EQ_INT(mxki_env_uint64_or_warn("test", "MXK_TEST_GOOD", 5, 0, 100), 5);
    mxk_t_capture_end(&c, out, sizeof out);
    CHECK_EQ_INT(count(out, "MXK_TEST_GOOD=\"101\" is invalid"), 1);
}

int main(void) {
    MXK_RUN(test_bad_log_level_warns_once); /* first: any log line warns about it */
    MXK_RUN(test_bad_num_threads_warns_once);
    MXK_RUN(test_readers);
    return MXK_TEST_EXIT();
}
