/*
 * Helpers shared by the onednn kernel tests (test_dn_kernels.c, test_dn_conv.c):
 * float32 arrays from host values and the start-up from a config dir.
 */
#ifndef MXK_ONEDNN_TEST_H
#define MXK_ONEDNN_TEST_H

#include <stdio.h>

#include "mxk.h"
#include "testing.h"

static const mxk_context cpu = {MXK_DEV_CPU, 0};

/** A float32 array of `shape` holding `v` (NULL: uninitialised). */
static inline mxk_ndarray *array(const mxk_shape *shape, const float *v, size_t n) {
    mxk_ndarray *a = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(shape, MXK_FLOAT32, cpu, &a), MXK_OK);
    if (a != NULL && v != NULL)
        CHECK_EQ_INT(mxk_ndarray_copy_from_host(a, v, n * sizeof *v), MXK_OK);
    return a;
}

/** mxk_init from the config dir argv[1]; 0 on success, else the exit status (usage: 2). */
static inline int onednn_test_init(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s CONFDIR\n", argv[0]);
        return 2;
    }
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = argv[1]};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    return 0;
}

#endif /* MXK_ONEDNN_TEST_H */
