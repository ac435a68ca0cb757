/*
 * mxkt_optimizer_check (train/include/mxk_train.h): the hyper-parameter ranges of
 * SGD and Adam, each refused with its exact message (mxkt_module_init_optimizer
 * refuses the same optimizers through it).
 */
#include <math.h>
#include <string.h>

#include "mxk_train.h"
#include "testing.h"

/** Checks that o is refused with exactly `want`. */
#define CHECK_REFUSED(o, want)                                                                     \
    do {                                                                                           \
        CHECK_EQ_INT(mxkt_optimizer_check(&(o)), MXK_ERR_INVALID_ARGUMENT);                        \
        CHECK(strcmp(mxkt_last_error(), want) == 0);                                               \
        if (strcmp(mxkt_last_error(), want) != 0)                                                  \
            fprintf(stderr, "  got  '%s'\n  want '%s'\n", mxkt_last_error(), want);                \
    } while (0)

/** SGD: the defaults pass, each bad field is named. */
static void test_sgd_ranges(void) {
    mxkt_optimizer o;
    mxkt_optimizer_sgd(&o, 0.1, 0.9, 1e-5);
    CHECK_EQ_INT(mxkt_optimizer_check(&o), MXK_OK);
    o.momentum = 0.0;
    CHECK_EQ_INT(mxkt_optimizer_check(&o), MXK_OK);
    o.momentum = 1.0;
    CHECK_REFUSED(o, "SGD: momentum must be in [0, 1), not 1");
    o.momentum = -0.1;
    CHECK_REFUSED(o, "SGD: momentum must be in [0, 1), not -0.1");
    mxkt_optimizer_sgd(&o, 0.0, 0.9, 0.0);
    CHECK_REFUSED(o, "SGD: learning_rate must be positive, not 0");
    mxkt_optimizer_sgd(&o, 0.1, 0.9, -1.0);
    CHECK_REFUSED(o, "SGD: wd must be at least 0, not -1");
    mxkt_optimizer_sgd(&o, 0.1, 0.9, NAN);
    CHECK_REFUSED(o, "SGD: wd must be at least 0, not nan");
    mxkt_optimizer_sgd(&o, 0.1, 0.9, 0.0);
    o.rescale_grad = 0.0;
    CHECK_REFUSED(o, "SGD: rescale_grad must be positive, not 0");
    o.rescale_grad = 1.0;
    o.clip_gradient = 0.0;
    CHECK_REFUSED(o, "SGD: clip_gradient must be positive (negative: off), not 0");
    o.clip_gradient = 5.0;
    CHECK_EQ_INT(mxkt_optimizer_check(&o), MXK_OK);
}

/** Adam: betas in [0, 1), epsilon positive; momentum is not Adam's. */
static void test_adam_ranges(void) {
    mxkt_optimizer o;
    mxkt_optimizer_adam(&o, 0.001, 0.0);
    CHECK_EQ_INT(mxkt_optimizer_check(&o), MXK_OK);
    o.momentum = 5.0; /* not used by Adam */
    CHECK_EQ_INT(mxkt_optimizer_check(&o), MXK_OK);
    o.beta1 = 1.0;
    CHECK_REFUSED(o, "Adam: beta1 must be in [0, 1), not 1");
    o.beta1 = 0.9;
    o.beta2 = -0.5;
    CHECK_REFUSED(o, "Adam: beta2 must be in [0, 1), not -0.5");
    o.beta2 = 0.999;
    o.epsilon = 0.0;
    CHECK_REFUSED(o, "Adam: epsilon must be positive, not 0");
    o.kind = 7;
    CHECK_REFUSED(o, "optimizer: kind must be SGD (0) or Adam (1), not 7");
}

int main(void) {
    MXK_RUN(test_sgd_ranges);
    MXK_RUN(test_adam_ranges);
    return MXK_TEST_EXIT();
}
