/*
 * MXK_ASSERT (kernel/runtime/mxk_assert.h) with checks on: a true condition does
 * nothing; a false one prints "FILE:LINE: mxk invariant violated: MSG (COND)" on
 * stderr and aborts (checked in a forked child through a pipe). With checks off
 * (test_assert_off.c) the condition is not evaluated.
 */
#undef MXK_ENABLE_ASSERTS
#define MXK_ENABLE_ASSERTS 1
#include "mxk_assert.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing.h"

/** test_assert_off.c: runs a false MXK_ASSERT with checks off; returns how often
 *  its condition was evaluated. */
int assert_off_evaluations(void);

/** The line of the failing MXK_ASSERT in run_failing (set there). */
static int failing_line;

/** The child's body: one failing invariant. */
static void run_failing(int answer) {
    failing_line = __LINE__ + 1;
    MXK_ASSERT(answer == 42, "the answer is 42");
}

static void test_true_condition_is_silent(void) {
    int evaluations = 0;
    MXK_ASSERT(++evaluations == 1, "evaluated once");
    CHECK(evaluations == 1);
}

static void test_false_condition_aborts_with_file_line_message(void) {
    int fds[2];
    CHECK(pipe(fds) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        run_failing(41);
        _exit(0); /* not reached when the check works */
    }
    close(fds[1]);
    char out[512] = {0};
    size_t len = 0;
    ssize_t r;
    while (len < sizeof out - 1 && (r = read(fds[0], out + len, sizeof out - 1 - len)) > 0)
        len += (size_t)r;
    close(fds[0]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    run_failing(42); /* a true condition: sets failing_line here too, no abort */
    char expected[512];
    snprintf(expected, sizeof expected,
             "%s:%d: mxk invariant violated: the answer is 42 (answer == 42)\n", __FILE__,
             failing_line);
    if (strcmp(out, expected) != 0)
        fprintf(stderr, "got '%s', expected '%s'\n", out, expected);
    CHECK(strcmp(out, expected) == 0);
}

static void test_checks_off_do_not_evaluate(void) {
    CHECK(assert_off_evaluations() == 0);
}

int main(void) {
    MXK_RUN(test_true_condition_is_silent);
    MXK_RUN(test_false_condition_aborts_with_file_line_message);
    MXK_RUN(test_checks_off_do_not_evaluate);
    return MXK_TEST_EXIT();
}
