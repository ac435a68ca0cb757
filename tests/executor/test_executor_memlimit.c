/*
 * The memory limit of bind (kernel/graph/executor_memory.c, MXK_MEM_LIMIT; default
 * the physical memory): simple_bind refuses arguments, gradients and aux states
 * over it before allocating any (FullyConnected num_hidden=5000000 on wide data:
 * terabytes, refused with the default limit without touching memory); bind refuses
 * a memory plan over it, naming the bytes, the limit and the largest array with
 * its operator and node; reshape is checked the same way; a limit equal to the
 * need binds; a bad value is warned about once and ignored. Byte counts are
 * computed here from the shapes.
 */
#include <unistd.h>

#include "exec_test_util.h"

/** data -> FullyConnected 'fc1' (num_hidden h, no bias). */
static mxk_symbol *fc_net(const char *num_hidden) {
    char attrs[64];
    snprintf(attrs, sizeof attrs, "num_hidden=%s;no_bias=true", num_hidden);
    mxk_symbol *data = et_var("data");
    mxk_symbol *fc = et_op("FullyConnected", "fc1", attrs, 1, data);
    mxk_symbol_free(data);
    return fc;
}

/** The physical memory as sysconf gives it. */
static unsigned long long phys_bytes(void) {
    return (unsigned long long)sysconf(_SC_PHYS_PAGES) * (unsigned long long)sysconf(_SC_PAGE_SIZE);
}

/** num_hidden=5000000 on (64, 2^20) data, default limit: 20 TB refused before allocating. */
static void test_fc_default_limit(void) {
    unsetenv("MXK_MEM_LIMIT");
    mxk_symbol *fc = fc_net("5000000");
    const char *names[] = {"data"};
    mxk_shape s = {.ndim = 2, .dims = {64, 1 << 20}};
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(
        mxk_executor_simple_bind(fc, et_cpu, 1, names, &s, "write", 0, NULL, NULL, NULL, &ex),
        MXK_ERR_OUT_OF_MEMORY);
    /* data and weight, each with its gradient: 2 * 4 * (64 + 5000000) * 2^20 */
    unsigned long long want = 2ull * 4 * (64 + 5000000ull) * (1ull << 20);
    char msg[512];
    snprintf(msg, sizeof msg,
             "simple_bind: the arguments, gradients and auxiliary states needs %llu bytes, more "
             "than the memory limit of %llu bytes (MXK_MEM_LIMIT); the largest array is argument "
             "'fc1_weight' of FullyConnected 'fc1' (%llu bytes)",
             want, phys_bytes(), 4ull * 5000000 * (1ull << 20));
    CHECK_CONTAINS(mxk_get_last_error(), msg);
    CHECK(ex == NULL);
    mxk_symbol_free(fc);
}

/** Binds fc_net(h) on (n, k) data with given arrays, forward only. */
static mxk_status bind_fc(mxk_symbol *fc, int64_t n, int64_t k, int64_t h, mxk_executor **ex) {
    mxk_shape ds = {.ndim = 2, .dims = {n, k}}, ws = {.ndim = 2, .dims = {h, k}};
    mxk_ndarray *args[2] = {NULL, NULL};
    mxk_status rc = mxk_ndarray_full(&ds, MXK_FLOAT32, et_cpu, 1.0, &args[0]);
    if (rc == MXK_OK)
        rc = mxk_ndarray_full(&ws, MXK_FLOAT32, et_cpu, 0.5, &args[1]);
    if (rc == MXK_OK)
        rc = mxk_executor_bind(fc, et_cpu, 2, args, NULL, NULL, 0, NULL, NULL, ex);
    mxk_ndarray_free(args[0]);
    mxk_ndarray_free(args[1]);
    return rc;
}

/** A small MXK_MEM_LIMIT: bind's memory plan (the (1000, 1000) output) refused. */
static void test_bind_plan_over_limit(void) {
    mxk_symbol *fc = fc_net("1000");
    setenv("MXK_MEM_LIMIT", "3999999", 1);
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(bind_fc(fc, 1000, 10, 1000, &ex), MXK_ERR_OUT_OF_MEMORY);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "bind: the memory plan needs 4000000 bytes, more than the memory limit of "
                   "3999999 bytes (MXK_MEM_LIMIT); the largest array is the output of "
                   "FullyConnected 'fc1' (4000000 bytes)");
    CHECK(ex == NULL);
    /* exactly the need binds and runs */
    setenv("MXK_MEM_LIMIT", "4000000", 1);
    CHECK_EQ_INT(bind_fc(fc, 1000, 10, 1000, &ex), MXK_OK);
    if (ex != NULL) {
        CHECK_EQ_INT(mxk_executor_forward(ex, 0), MXK_OK);
        float *y = calloc(1000 * 1000, sizeof *y);
        CHECK(y != NULL);
        if (y != NULL) {
            CHECK_EQ_INT(
                mxk_ndarray_copy_to_host(mxk_executor_output(ex, 0), y, 1000 * 1000 * sizeof *y),
                MXK_OK);
            CHECK_NEAR(y[0], 5.0, 1e-6); /* ten products 1 * 0.5 */
            CHECK_NEAR(y[999999], 5.0, 1e-6);
        }
        free(y);
        /* reshape to twice the batch: an 8 MB plan over the limit */
        const char *names[] = {"data"};
        mxk_shape s = {.ndim = 2, .dims = {2000, 10}};
        mxk_executor *big = NULL;
        CHECK_EQ_INT(mxk_executor_reshape(ex, 0, 1, 1, names, &s, &big), MXK_ERR_OUT_OF_MEMORY);
        CHECK_CONTAINS(mxk_get_last_error(),
                       "bind: the memory plan needs 8000000 bytes, more than the memory limit "
                       "of 4000000 bytes (MXK_MEM_LIMIT)");
        CHECK(big == NULL);
        mxk_executor_free(ex);
    }
    unsetenv("MXK_MEM_LIMIT");
    mxk_symbol_free(fc);
}

/** simple_bind with a small limit names the largest argument and its gradient's share. */
static void test_simple_bind_small_limit(void) {
    mxk_symbol *fc = fc_net("100");
    setenv("MXK_MEM_LIMIT", "1024", 1);
    const char *names[] = {"data"};
    mxk_shape s = {.ndim = 2, .dims = {8, 50}};
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(
        mxk_executor_simple_bind(fc, et_cpu, 1, names, &s, "null", 0, NULL, NULL, NULL, &ex),
        MXK_ERR_OUT_OF_MEMORY);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "simple_bind: the arguments, gradients and auxiliary states needs 21600 bytes, "
                   "more than the memory limit of 1024 bytes (MXK_MEM_LIMIT); the largest array "
                   "is argument 'fc1_weight' of FullyConnected 'fc1' (20000 bytes)");
    CHECK(ex == NULL);
    unsetenv("MXK_MEM_LIMIT");
    mxk_symbol_free(fc);
}

/**
 * Element-wise data whose element count overflows 64 bits, (2^32 + 1)^2 and
 * (2^40, 2^40) (a product that wraps to exactly 0, once taken for an unknown
 * shape): refused as too large.
 */
static void test_overflowing_size(void) {
    mxk_symbol *data = et_var("data");
    mxk_symbol *act = et_op("Activation", "act", "act_type=relu", 1, data);
    const char *names[] = {"data"};
    const int64_t sides[] = {INT64_C(4294967297), INT64_C(1) << 40};
    for (int i = 0; i < 2; i++) {
        mxk_shape s = {.ndim = 2, .dims = {sides[i], sides[i]}};
        mxk_executor *ex = NULL;
        CHECK_EQ_INT(
            mxk_executor_simple_bind(act, et_cpu, 1, names, &s, "null", 0, NULL, NULL, NULL, &ex),
            MXK_ERR_OUT_OF_MEMORY);
        CHECK_CONTAINS(mxk_get_last_error(),
                       "simple_bind: the arguments, gradients and auxiliary states needs over "
                       "18446744073709551615 bytes, more than the memory limit of ");
        CHECK_CONTAINS(mxk_get_last_error(),
                       "the largest array is argument 'data' of Activation 'act' (over "
                       "18446744073709551615 bytes)");
        CHECK(ex == NULL);
    }
    mxk_symbol_free(act);
    mxk_symbol_free(data);
}

/** A bad value: warned about once, ignored (the physical memory applies). */
static void test_bad_value_ignored(void) {
    mxk_symbol *fc = fc_net("4");
    setenv("MXK_MEM_LIMIT", "lots", 1);
    char log[1024];
    mxk_t_capture cap;
    CHECK(mxk_t_capture_begin(&cap));
    for (int i = 0; i < 2; i++) {
        mxk_executor *ex = NULL;
        CHECK_EQ_INT(bind_fc(fc, 2, 3, 4, &ex), MXK_OK);
        mxk_executor_free(ex);
    }
    mxk_t_capture_end(&cap, log, sizeof log);
    const char *w = "MXK_MEM_LIMIT=\"lots\" is invalid";
    const char *first = strstr(log, w);
    CHECK(first != NULL);
    CHECK(first == NULL || strstr(first + 1, w) == NULL);
    unsetenv("MXK_MEM_LIMIT");
    mxk_symbol_free(fc);
}

int main(void) {
    if (et_init() != 0)
        return 1;
    MXK_RUN(test_fc_default_limit);
    MXK_RUN(test_bind_plan_over_limit);
    MXK_RUN(test_simple_bind_small_limit);
    MXK_RUN(test_overflowing_size);
    MXK_RUN(test_bad_value_ignored);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
