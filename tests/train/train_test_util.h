/*
 * Shared start of the trainer tests: initialises mxk with the build tree's config
 * dir (BUILD_CONFDIR) and checks that cpu-blas is loaded.
 */
#ifndef MXK_TRAIN_TEST_UTIL_H
#define MXK_TRAIN_TEST_UTIL_H

#include <stdio.h>
#include <string.h>

#include "mxk.h"

/** Initialises mxk from BUILD_CONFDIR; 0 when cpu-blas is loaded, else 77 (skip) after a message.
 */
static inline int tt_init(void) {
    mxk_init_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.config_dir = BUILD_CONFDIR;
    if (mxk_init(&o) != MXK_OK || mxk_op_kernel_count("sgd_update") == 0) {
        fprintf(stderr, "cpu-blas not loaded from %s: %s\n", BUILD_CONFDIR, mxk_get_last_error());
        return 77;
    }
    return 0;
}

#endif /* MXK_TRAIN_TEST_UTIL_H */
