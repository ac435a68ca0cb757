/*
 * cuda plugin: the operator's random stream on the host side of the random kernels
 * (cu_ops_random.c, cu_ops_dropout.c): finding the granted MXK_RESOURCE_RANDOM
 * stream and reserving Philox blocks of it for a launch (MXNet's
 * Resource::get_parallel_random on a GPU, src/resource.cc).
 */
#ifndef MXK_CU_RANDOM_H
#define MXK_CU_RANDOM_H

#include "cu_kern_random.h"
#include "cuda_plugin.h"

/**
 * The random stream granted to the call (its first MXK_RESOURCE_RANDOM resource), or
 * NULL with MXK_ERR_STATE "OP: no random stream was granted" in err.
 */
mxk_random *cu_random_stream(const mxk_op_ctx *ctx, const char *op, mxk_error_sink *err);

/** Reserves n_blocks Philox blocks of rng (host->random_reserve): their first position. */
cu_philox_pos cu_random_reserve(mxk_random *rng, uint64_t n_blocks);

#endif /* MXK_CU_RANDOM_H */
