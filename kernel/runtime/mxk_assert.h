/*
 * MXK_ASSERT: the kernel's invariants, checked where they are stated.
 *
 * MXK_ASSERT(cond, msg) evaluates `cond` when the build enables invariant checks
 * (MXK_ENABLE_ASSERTS defined non-zero: the CMake option MXK_ASSERTS, on by
 * default in Debug builds and whenever MXK_SANITIZE is set, so CI's ASan and TSan
 * builds check them; off in Release and RelWithDebInfo). A false condition is a
 * bug in mxk, never bad input: it prints one line to stderr,
 *   "FILE:LINE: mxk invariant violated: MSG (COND)"
 * and aborts (SIGABRT, so sanitizers and debuggers stop there). With checks off
 * the condition is not evaluated (it must have no side effects) but is still
 * compiled, so it cannot rot. Bad input is reported with an mxk_status instead.
 * Thread-safe (one fprintf, then abort).
 */
#ifndef MXK_KERNEL_ASSERT_H
#define MXK_KERNEL_ASSERT_H

#include <stdio.h>
#include <stdlib.h>

#if defined(MXK_ENABLE_ASSERTS) && MXK_ENABLE_ASSERTS
#define MXK_ASSERT(cond, msg)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: mxk invariant violated: %s (%s)\n", __FILE__, __LINE__, msg,   \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)
#else
#define MXK_ASSERT(cond, msg) ((void)sizeof(!(cond)), (void)sizeof(msg))
#endif

#endif /* MXK_KERNEL_ASSERT_H */
