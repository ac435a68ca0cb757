/*
 * A minimal test harness for plain ctest executables.
 *
 * Each test file defines test functions `static void test_x(void)` and a main()
 * that calls MXK_RUN(test_x) for each, then returns MXK_TEST_EXIT(). A failed
 * check prints file:line and the expression, marks the current test failed and
 * continues. The closing line is "N passed, N failed" (counted per test).
 * A test may call MXK_SKIP("why") to end itself as skipped (exit code 77, which
 * CMake's SKIP_RETURN_CODE maps to "skipped", when every test was skipped).
 */
#ifndef MXK_TESTING_H
#define MXK_TESTING_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int mxk_t_failed_checks;
static int mxk_t_passed, mxk_t_failed, mxk_t_skipped;
static int mxk_t_skip_flag;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            mxk_t_failed_checks++;                                                                 \
        }                                                                                          \
    } while (0)

/** Checks a status expression equals `expected`; prints the kernel's last error otherwise. */
#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long va_ = (long long)(a), vb_ = (long long)(b);                                      \
        if (va_ != vb_) {                                                                          \
            fprintf(stderr, "%s:%d: CHECK_EQ_INT failed: %s = %lld, %s = %lld\n", __FILE__,        \
                    __LINE__, #a, va_, #b, vb_);                                                   \
            mxk_t_failed_checks++;                                                                 \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double va_ = (double)(a), vb_ = (double)(b), t_ = (double)(tol);                           \
        if (!(fabs(va_ - vb_) <= t_ * (1.0 + fabs(vb_)))) {                                        \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.9g, %s = %.9g (tol %g)\n", __FILE__, \
                    __LINE__, #a, va_, #b, vb_, t_);                                               \
            mxk_t_failed_checks++;                                                                 \
        }                                                                                          \
    } while (0)

/** Checks that string `hay` contains `needle`. */
#define CHECK_CONTAINS(hay, needle)                                                                \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (h_ == NULL || strstr(h_, n_) == NULL) {                                                \
            fprintf(stderr, "%s:%d: CHECK_CONTAINS failed: \"%s\" does not contain \"%s\"\n",      \
                    __FILE__, __LINE__, h_ ? h_ : "(null)", n_);                                   \
            mxk_t_failed_checks++;                                                                 \
        }                                                                                          \
    } while (0)

/** Checks that string `a` equals `b` exactly. */
#define CHECK_STREQ(a, b)                                                                          \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (a_ == NULL || strcmp(a_, b_) != 0) {                                                   \
            fprintf(stderr, "%s:%d: CHECK_STREQ failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__,   \
                    a_ ? a_ : "(null)", b_);                                                       \
            mxk_t_failed_checks++;                                                                 \
        }                                                                                          \
    } while (0)

#define MXK_SKIP(why)                                                                              \
    do {                                                                                           \
        printf("SKIP: %s\n", why);                                                                 \
        mxk_t_skip_flag = 1;                                                                       \
        return;                                                                                    \
    } while (0)

#define MXK_RUN(fn)                                                                                \
    do {                                                                                           \
        int before_ = mxk_t_failed_checks;                                                         \
        mxk_t_skip_flag = 0;                                                                       \
        fn();                                                                                      \
        if (mxk_t_failed_checks != before_) {                                                      \
            mxk_t_failed++;                                                                        \
            printf("FAIL: %s\n", #fn);                                                             \
        } else if (mxk_t_skip_flag) {                                                              \
            mxk_t_skipped++;                                                                       \
        } else {                                                                                   \
            mxk_t_passed++;                                                                        \
            printf("ok: %s\n", #fn);                                                               \
        }                                                                                          \
        fflush(stdout);                                                                            \
    } while (0)

#define MXK_TEST_EXIT()                                                                            \
    (printf("%d passed, %d failed, %d skipped\n", mxk_t_passed, mxk_t_failed, mxk_t_skipped),      \
     mxk_t_failed ? 1 : (mxk_t_passed == 0 && mxk_t_skipped > 0 ? 77 : 0))

/** A capture of what the calls between begin and end write to stderr. */
typedef struct mxk_t_capture {
    FILE *file;   /**< temporary file standing in for stderr */
    int saved_fd; /**< the real stderr, restored at the end */
} mxk_t_capture;

/** Sends stderr (fd 2) to a temporary file until mxk_t_capture_end. Returns 0 on failure. */
static inline int mxk_t_capture_begin(mxk_t_capture *c) {
    fflush(stderr);
    c->file = tmpfile();
    c->saved_fd = c->file ? dup(STDERR_FILENO) : -1;
    if (c->saved_fd < 0) {
        if (c->file)
            fclose(c->file);
        c->file = NULL;
        return 0;
    }
    dup2(fileno(c->file), STDERR_FILENO);
    return 1;
}

/** Restores stderr and copies what was written into buf (NUL-terminated, at most size - 1). */
static inline void mxk_t_capture_end(mxk_t_capture *c, char *buf, size_t size) {
    buf[0] = '\0';
    if (c->file == NULL)
        return;
    fflush(stderr);
    dup2(c->saved_fd, STDERR_FILENO);
    close(c->saved_fd);
    rewind(c->file);
    buf[fread(buf, 1, size - 1, c->file)] = '\0';
    fclose(c->file);
    c->file = NULL;
}

/** The state of mxk_t_frand's xorshift64* stream (per test file; a test may reseed it). */
static inline uint64_t *mxk_t_rng(void) {
    static uint64_t state = 0x9E3779B97F4A7C15ull;
    return &state;
}

/** Uniform in [-1, 1) from the stream of mxk_t_rng (reproducible test data). */
static inline float mxk_t_frand(void) {
    uint64_t *s = mxk_t_rng();
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (float)((double)((*s * 0x2545F4914F6CDD1Dull) >> 11) / 4503599627370496.0 - 1.0);
}

#endif /* MXK_TESTING_H */
