/*
 * MXK_ASSERT with checks off (as in Release builds): the condition compiles but is
 * not evaluated, and a false one does not abort. Used by test_assert.c.
 */
#undef MXK_ENABLE_ASSERTS
#define MXK_ENABLE_ASSERTS 0
#include "mxk_assert.h"

int assert_off_evaluations(void);

int assert_off_evaluations(void) {
    int evaluations = 0;
    MXK_ASSERT(++evaluations < 0, "never checked");
    return evaluations;
}
