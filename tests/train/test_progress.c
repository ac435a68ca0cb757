/*
 * Tests of what the trainer writes as text without running anything
 * (train/include/mxk_train.h): the progress line of fit / score / predict
 * (mxkt_progress_format) field by field, and the shortest exact numbers of the
 * metrics log (mxkt_format_shortest) against values whose shortest decimal form is
 * known (Python's repr of the same double / numpy.float32 gives the same digits).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_train.h"
#include "testing.h"

/** Checks that formatting `p` gives exactly `want` and returns its length. */
#define CHECK_LINE(p, want)                                                                        \
    do {                                                                                           \
        char buf_[256];                                                                            \
        size_t n_ = mxkt_progress_format(&(p), buf_, sizeof buf_);                                 \
        CHECK(strcmp(buf_, want) == 0);                                                            \
        if (strcmp(buf_, want) != 0)                                                               \
            fprintf(stderr, "  got  '%s'\n  want '%s'\n", buf_, want);                             \
        CHECK_EQ_INT((int64_t)n_, (int64_t)strlen(want));                                          \
    } while (0)

/** A training pass: bar, count, percent, speed, ETA, metric; then the last batch. */
static void test_progress_train(void) {
    mxkt_progress p = {.phase = "train",
                       .epoch = 0,
                       .batch = 300,
                       .num_batches = 600,
                       .samples = 30000,
                       .seconds = 0.75,
                       .metric = "accuracy",
                       .value = 0.81234};
    /* 30000 rows in 0.75 s: 40000/s; 300 batches left at 2.5 ms: 0.75 s -> 0:01 */
    CHECK_LINE(p, "Epoch[0] train [=====>    ] 300/600 50% 40000 samples/s ETA 0:01 "
                  "accuracy=0.8123");
    p.batch = 600;
    p.samples = 60000;
    p.seconds = 1.5;
    CHECK_LINE(p, "Epoch[0] train [==========] 600/600 100% 40000 samples/s accuracy=0.8123");
    /* an hour and more: H:MM:SS; 1 of 100 batches done in 40 s: 99 x 40 s = 1:06:00 */
    p.batch = 1;
    p.num_batches = 100;
    p.samples = 100;
    p.seconds = 40.0;
    p.value = NAN; /* nothing counted yet: no metric */
    CHECK_LINE(p, "Epoch[0] train [>         ] 1/100 1% 2 samples/s ETA 1:06:00");
}

/** Score and predict: no epoch, an unknown total, no metric, no time yet. */
static void test_progress_other_passes(void) {
    mxkt_progress p = {.phase = "score",
                       .epoch = -1,
                       .batch = 7,
                       .samples = 700,
                       .seconds = 0.5,
                       .metric = "accuracy",
                       .value = 0.5};
    CHECK_LINE(p, "score batch 7 1400 samples/s accuracy=0.5000");
    mxkt_progress q = {.phase = "predict", .epoch = -1, .batch = 0, .num_batches = 4};
    CHECK_LINE(q, "predict [>         ] 0/4 0%");
    /* a buffer too small: cut, terminated, the length written returned */
    char small[8];
    CHECK_EQ_INT((int64_t)mxkt_progress_format(&q, small, sizeof small), 7);
    CHECK(strcmp(small, "predict") == 0);
}

/** Checks the shortest form of v. */
#define CHECK_SHORTEST(v, is_float, want)                                                          \
    do {                                                                                           \
        char buf_[40];                                                                             \
        mxkt_format_shortest((v), (is_float), buf_, sizeof buf_);                                  \
        CHECK(strcmp(buf_, want) == 0);                                                            \
        if (strcmp(buf_, want) != 0)                                                               \
            fprintf(stderr, "  got '%s', want '%s'\n", buf_, want);                                \
    } while (0)

/** The metrics log's numbers: repr(float) for doubles, repr(numpy.float32) for floats. */
static void test_shortest(void) {
    CHECK_SHORTEST(8775.0 / 10000.0, 0, "0.8775"); /* an accuracy: not 0.87750000000000006 */
    CHECK_SHORTEST(1.0 / 3.0, 0, "0.3333333333333333");
    CHECK_SHORTEST(0.1 * 0.1, 0, "0.010000000000000002"); /* a double keeps its last digit */
    CHECK_SHORTEST(0.1 * 0.1, 1, "0.01");                 /* as float32: 0.01 */
    CHECK_SHORTEST((double)0.1f, 1, "0.1");
    CHECK_SHORTEST((double)0.1f, 0, "0.10000000149011612");
    CHECK_SHORTEST(1e-5, 0, "1e-05");
    CHECK_SHORTEST(123456789.0, 0, "123456789");
    CHECK_SHORTEST(0.0, 0, "0");
    CHECK_SHORTEST(NAN, 0, "null");
    CHECK_SHORTEST(-INFINITY, 1, "null");
    /* every double read back from its form is the same double */
    double v = 0.7;
    for (int i = 0; i < 1000; i++, v = v * 1.37 + 1e-3) {
        char buf[40];
        mxkt_format_shortest(v, 0, buf, sizeof buf);
        CHECK(strtod(buf, NULL) == v);
    }
}

int main(void) {
    MXK_RUN(test_progress_train);
    MXK_RUN(test_progress_other_passes);
    MXK_RUN(test_shortest);
    return MXK_TEST_EXIT();
}
