/*
 * cuda plugin: the element-wise math kernels: binary functions of same-shape and
 * broadcast operands, scalar functions, unary functions, and their gradients,
 * one grid-stride kernel per shape form that switches on the function code of
 * plugins/common/mxk_math_binary.h / mxk_math_unary.h (float32, as the
 * operators). Each thread reads element i of every input before it writes
 * element i of the output, so in-place calls are safe.
 *
 * Semantics: MXNet src/operator/tensor/elemwise_binary_op.h,
 * elemwise_binary_broadcast_op.h (BinaryBroadcastComputeImpl),
 * elemwise_binary_scalar_op.h and elemwise_unary_op.h on mshadow_op.h's functions.
 */
#include "cu_kern_index.cuh"
#include "cu_launch.cuh"
#include "mxk_math_binary.h"
#include "mxk_math_unary.h"

/** Stores v into *p, or adds it when `add`. */
static __device__ __forceinline__ void cu_assign(float *p, float v, int add) {
    *p = add ? *p + v : v;
}

/** out[i] (=|+=) f(l, r); BCAST: operand offsets from ix, else i. */
template <bool BCAST>
__global__ void cu_binary_kernel(int32_t code, cu_index ix, const float *l, const float *r,
                                 float *out, uint64_t n, int add) {
    CU_KERNEL_LOOP(i, n) {
        int64_t off[CU_MAX_OPERANDS] = {0};
        if (BCAST)
            cu_index_offsets(ix, i, off);
        else
            off[0] = off[1] = (int64_t)i;
        cu_assign(&out[i], mxk_bin_f(code, l[off[0]], r[off[1]]), add);
    }
}

extern "C" cudaError_t cu_launch_binary(int32_t code, const cu_index *ix, const float *l,
                                        const float *r, float *out, uint64_t n, int add,
                                        cudaStream_t stream) {
    if (ix != NULL)
        cu_binary_kernel<true>
            <<<cu_blocks(n), CU_THREADS, 0, stream>>>(code, *ix, l, r, out, n, add);
    else
        cu_binary_kernel<false>
            <<<cu_blocks(n), CU_THREADS, 0, stream>>>(code, cu_index(), l, r, out, n, add);
    return cu_launched();
}

/** Both gradients of a same-shape binary function (reads dy, l, r before writing). */
__global__ void cu_binary_grad_kernel(int32_t code, const float *dy, const float *l, const float *r,
                                      float *gl, int add_l, float *gr, int add_r, uint64_t n) {
    CU_KERNEL_LOOP(i, n) {
        float g = dy[i], a = l != NULL ? l[i] : 0.0f, b = r != NULL ? r[i] : 0.0f;
        float vl = g * mxk_bin_df(code, 0, a, b), vr = g * mxk_bin_df(code, 1, a, b);
        if (gl != NULL)
            cu_assign(&gl[i], vl, add_l);
        if (gr != NULL)
            cu_assign(&gr[i], vr, add_r);
    }
}

extern "C" cudaError_t cu_launch_binary_grad(int32_t code, const float *dy, const float *l,
                                             const float *r, float *gl, int add_l, float *gr,
                                             int add_r, uint64_t n, cudaStream_t stream) {
    cu_binary_grad_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(code, dy, l, r, gl, add_l, gr,
                                                                   add_r, n);
    return cu_launched();
}

/** y[i] (=|+=) f(x[i], s). */
__global__ void cu_scalar_kernel(int32_t code, int32_t swap, float s, const float *x, float *y,
                                 uint64_t n, int add) {
    CU_KERNEL_LOOP(i, n) {
        cu_assign(&y[i], mxk_scalar_f(code, swap, x[i], s), add);
    }
}

extern "C" cudaError_t cu_launch_scalar(int32_t code, int32_t swap, float s, const float *x,
                                        float *y, uint64_t n, int add, cudaStream_t stream) {
    cu_scalar_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(code, swap, s, x, y, n, add);
    return cu_launched();
}

/** dx[i] (=|+=) dy[i] f'(x[i]) (x, y NULL: read as 0). */
__global__ void cu_scalar_grad_kernel(int32_t code, int32_t swap, float s, const float *dy,
                                      const float *x, const float *y, float *dx, uint64_t n,
                                      int add) {
    CU_KERNEL_LOOP(i, n) {
        float a = x != NULL ? x[i] : 0.0f, b = y != NULL ? y[i] : 0.0f;
        cu_assign(&dx[i], dy[i] * mxk_scalar_df(code, swap, a, b, s), add);
    }
}

extern "C" cudaError_t cu_launch_scalar_grad(int32_t code, int32_t swap, float s, const float *dy,
                                             const float *x, const float *y, float *dx, uint64_t n,
                                             int add, cudaStream_t stream) {
    cu_scalar_grad_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(code, swap, s, dy, x, y, dx, n,
                                                                   add);
    return cu_launched();
}

/** y[i] (=|+=) f(x[i]). */
__global__ void cu_unary_kernel(int32_t code, float p0, float p1, const float *x, float *y,
                                uint64_t n, int add) {
    CU_KERNEL_LOOP(i, n) {
        cu_assign(&y[i], mxk_un_f(code, x[i], p0, p1), add);
    }
}

extern "C" cudaError_t cu_launch_unary(int32_t code, float p0, float p1, const float *x, float *y,
                                       uint64_t n, int add, cudaStream_t stream) {
    cu_unary_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(code, p0, p1, x, y, n, add);
    return cu_launched();
}

/** dx[i] (=|+=) dy[i] f'(.) from r[i]. */
__global__ void cu_unary_grad_kernel(int32_t code, float p0, float p1, const float *dy,
                                     const float *r, float *dx, uint64_t n, int add) {
    CU_KERNEL_LOOP(i, n) {
        cu_assign(&dx[i], mxk_un_grad(code, dy[i], r[i], p0, p1), add);
    }
}

extern "C" cudaError_t cu_launch_unary_grad(int32_t code, float p0, float p1, const float *dy,
                                            const float *r, float *dx, uint64_t n, int add,
                                            cudaStream_t stream) {
    cu_unary_grad_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(code, p0, p1, dy, r, dx, n, add);
    return cu_launched();
}
