/*
 * cuda plugin: the offsets of an element of an index space (cu_kern_math.h's
 * cu_index) in its operands, shared by the element-wise and reduction kernels.
 * Semantics: MXNet src/operator/tensor/broadcast_reduce-inl.cuh (unravel_dot).
 */
#ifndef MXK_CU_KERN_INDEX_CUH
#define MXK_CU_KERN_INDEX_CUH

#include "cu_kern_math.h"

/** Adds the offsets of row-major element i of ix in every operand to off[0 .. CU_MAX_OPERANDS). */
static __device__ __forceinline__ void cu_index_offsets(const cu_index &ix, uint64_t i,
                                                        int64_t *off) {
    for (int32_t d = ix.ndim - 1; d >= 0; d--) {
        uint64_t n = (uint64_t)ix.dim[d];
        int64_t c = (int64_t)(i % n);
        i /= n;
        for (int k = 0; k < CU_MAX_OPERANDS; k++)
            off[k] += c * ix.stride[k][d];
    }
}

#endif /* MXK_CU_KERN_INDEX_CUH */
