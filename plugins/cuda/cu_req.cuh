/*
 * cuda plugin: an output element's store by its write request (OpReqType) in the
 * CUDA C kernels, as MXNet's KERNEL_ASSIGN (src/operator/mxnet_op.h): ADD
 * accumulates, WRITE and INPLACE store, NULL is never launched.
 */
#ifndef MXK_CU_REQ_CUH
#define MXK_CU_REQ_CUH

#include <stdint.h>

#include "mxk_abi_base.h"

/** Stores v into *p by the request req (mxk_op_req). */
template <typename T> __device__ inline void cu_store(T *p, T v, int32_t req) {
    if (req == MXK_REQ_ADD)
        *p += v;
    else
        *p = v;
}

#endif /* MXK_CU_REQ_CUH */
