/*
 * Internal helpers of mxk_train shared by its source files.
 */
#ifndef MXK_TRAIN_INTERNAL_H
#define MXK_TRAIN_INTERNAL_H

#include "mxk_train.h"

/**
 * Records a message of this library and returns `st`: the kernel's one error
 * channel (mxk.h mxk_set_error), so mxk_get_last_error and mxkt_last_error give it.
 */
#define mxkt_error(...) mxk_set_error(__VA_ARGS__)
/**
 * Prefixes the failed kernel call's message with "<what>: " (mxk.h
 * mxk_error_add_context) and returns `st` (for failed kernel calls).
 */
mxk_status mxkt_kernel_error(mxk_status st, const char *what);
/** Number of elements of a shape. */
int64_t mxkt_shape_size(const mxk_shape *s);
/** A 64-bit FNV-1a hash of a string (counter range of a parameter's random stream). */
uint64_t mxkt_hash(const char *s);
/** Uniform float in [0,1) number i of stream (seed, stream). */
double mxkt_rand_unit(uint64_t seed, uint64_t stream, uint64_t i);

#define MXKT_CHECK(expr)                                                                           \
    do {                                                                                           \
        mxk_status st_ = (expr);                                                                   \
        if (st_ != MXK_OK)                                                                         \
            return st_;                                                                            \
    } while (0)

#endif
