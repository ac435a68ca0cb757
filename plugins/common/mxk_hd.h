/*
 * Math shared by the CPU and GPU backends: headers in plugins/common/ define
 * element functions once, as `MXK_HD` functions that compile as static inline C11
 * in the cpu-blas plugin (and its host unit tests) and as __host__ __device__
 * functions in the cuda plugin's kernels, so both backends compute the same
 * formula (MXNet shares src/operator/mshadow_op.h between its CPU and GPU kernels
 * the same way, through MSHADOW_XINLINE).
 */
#ifndef MXK_HD_H
#define MXK_HD_H

#ifdef __CUDACC__
/** A function usable on the host and in CUDA kernels. */
#define MXK_HD static inline __host__ __device__
#else
/** A function usable on the host and in CUDA kernels. */
#define MXK_HD static inline
#endif

#endif /* MXK_HD_H */
