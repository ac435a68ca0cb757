/*
 * cpu-blas plugin: random integers for the samplers that need more than the host
 * table's uniform and normal floats (op_random.c's randint, op_math_sample.c's
 * multinomial and shuffle).
 */
#ifndef MXK_CB_OP_MATH_RANDOM_H
#define MXK_CB_OP_MATH_RANDOM_H

#include <stdint.h>

#include "mxk_philox.h"
#include "mxk_sdk.h"

/**
 * Fills out[0..n) with 64 random bits each from the stream `rng`: reserves
 * ceil(n / 2) Philox-4x32-10 blocks of it (host->random_reserve) and computes them
 * with mxk_philox.h, so the values depend only on the stream's seed and position.
 * Implemented in op_random.c. Not thread-safe for one stream (kernel calls on one
 * stream are serialised).
 */
void cbm_random_bits(mxk_random *rng, uint64_t *out, uint64_t n);

/** op_math_sample.c: _sample_multinomial, _shuffle. */
mxk_status cb_register_math_sample(mxk_registrar *reg, mxk_error_sink *err);

#endif /* MXK_CB_OP_MATH_RANDOM_H */
