/*
 * cuda plugin: the launcher of the fused optimizer update kernel
 * (cu_kern_optimizer.cu) for sgd_update, sgd_mom_update and adam_update
 * (cu_ops_optimizer.c). Pointers are device memory; the work is queued on `stream`.
 */
#ifndef MXK_CU_KERN_OPTIMIZER_H
#define MXK_CU_KERN_OPTIMIZER_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "mxk_optimizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The update rules. */
enum cu_opt_rule { CU_OPT_SGD, CU_OPT_SGD_MOM, CU_OPT_ADAM };

/**
 * One pass over n elements of rule `rule` (mxk_optimizer.h): reads weight w and
 * gradient g, updates the states m (sgd_mom: momentum; adam: mean) and v (adam:
 * var) in place, and stores the new weight into out by req (out may be w).
 */
cudaError_t cu_launch_optimizer(int32_t rule, mxk_opt_hparams h, const float *w, const float *g,
                                float *m, float *v, float *out, int32_t req, uint64_t n,
                                cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MXK_CU_KERN_OPTIMIZER_H */
