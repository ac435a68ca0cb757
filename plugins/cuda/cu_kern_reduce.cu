/*
 * cuda plugin: the generic axis reduction and the backward of reductions.
 *
 * One reduction kernel serves the reduce operators (sum, mean, nansum, max, min,
 * prod, norm) and the backward of the broadcast binary operators (dy times the
 * derivative, summed over the broadcast axes): output element o reduces every
 * element of the reduced index space, for any set of reduced axes. Outputs that
 * reduce few elements, or many outputs, get one thread each; otherwise each
 * output gets one block, whose threads stride over the reduced elements and
 * combine their partial accumulators in shared memory. Accumulation is in double, as cpu-blas's.
 *
 * Semantics: MXNet src/operator/tensor/broadcast_reduce_op.h (ReduceAxesComputeImpl,
 * ReduceAxesBackwardUseInOutImpl) and broadcast_reduce-inl.cuh, with the element
 * functions of plugins/common/mxk_math_reduce.h and mxk_math_binary.h.
 */
#include "cu_kern_index.cuh"
#include "cu_launch.cuh"
#include "mxk_math_binary.h"
#include "mxk_math_reduce.h"

/** Outputs reducing at most this many elements are reduced by one thread each. */
#define CU_REDUCE_SERIAL_MAX 64
/** From this many outputs on, one thread per output fills the GPU whatever the reduction. */
#define CU_REDUCE_SERIAL_OUTPUTS 65536

/** The reduction's operand pointers and function (one kernel argument). */
struct cu_reduce_args {
    const float *src[CU_MAX_OPERANDS];
    int32_t map, kind, ord, code, which;
};

/** The value reduced for the element at operand offsets off. */
static __device__ __forceinline__ float cu_reduce_value(const cu_reduce_args &a,
                                                        const int64_t *off) {
    float v[CU_MAX_OPERANDS];
    for (int k = 0; k < CU_MAX_OPERANDS; k++)
        v[k] = a.src[k] != NULL ? a.src[k][off[k]] : 0.0f;
    if (a.map == CU_MAP_BIN_GRAD)
        return v[0] * mxk_bin_df(a.code, a.which, v[1], v[2]);
    return v[0];
}

/** The partial accumulator of output o over reduced elements r0, r0 + step, ... */
static __device__ double cu_reduce_partial(const cu_reduce_plan &p, const cu_reduce_args &a,
                                           uint64_t o, uint64_t r0, uint64_t step) {
    int64_t base[CU_MAX_OPERANDS] = {0};
    cu_index_offsets(p.kept, o, base);
    double acc = mxk_red_init(a.kind);
    for (uint64_t r = r0; r < p.nred; r += step) {
        int64_t off[CU_MAX_OPERANDS];
        for (int k = 0; k < CU_MAX_OPERANDS; k++)
            off[k] = base[k];
        cu_index_offsets(p.red, r, off);
        acc = mxk_red_step(a.kind, a.ord, acc, cu_reduce_value(a, off));
    }
    return acc;
}

/** Stores the result of output o from its accumulator. */
static __device__ __forceinline__ void cu_reduce_store(const cu_reduce_plan &p,
                                                       const cu_reduce_args &a, float *out,
                                                       uint64_t o, double acc, int add) {
    float v = (float)mxk_red_finish(a.kind, a.ord, acc, p.nred);
    out[o] = add ? out[o] + v : v;
}

/** One thread per output. */
__global__ void cu_reduce_serial_kernel(cu_reduce_plan p, cu_reduce_args a, float *out, int add) {
    CU_KERNEL_LOOP(o, p.nout) {
        cu_reduce_store(p, a, out, o, cu_reduce_partial(p, a, o, 0, 1), add);
    }
}

/** mxk_red_combine of one reduction kind, for cu_block_reduce. */
struct cu_red_op {
    int32_t kind;
    __device__ double operator()(double a, double b) const {
        return mxk_red_combine(kind, a, b);
    }
};

/** One block per output (grid-stride over outputs); CU_THREADS threads per block. */
__global__ void cu_reduce_block_kernel(cu_reduce_plan p, cu_reduce_args a, float *out, int add) {
    __shared__ double part[CU_THREADS];
    for (uint64_t o = blockIdx.x; o < p.nout; o += gridDim.x) {
        double total = cu_block_reduce(cu_reduce_partial(p, a, o, threadIdx.x, blockDim.x), part,
                                       cu_red_op{a.kind});
        if (threadIdx.x == 0)
            cu_reduce_store(p, a, out, o, total, add);
    }
}

extern "C" cudaError_t cu_launch_reduce(const cu_reduce_plan *plan, int32_t map, int32_t kind,
                                        int32_t ord, int32_t code, int32_t which,
                                        const float *const src[CU_MAX_OPERANDS], float *out,
                                        int add, cudaStream_t stream) {
    if (plan->nout == 0)
        return cudaSuccess;
    cu_reduce_args a;
    for (int k = 0; k < CU_MAX_OPERANDS; k++)
        a.src[k] = src[k];
    a.map = map;
    a.kind = kind;
    a.ord = ord;
    a.code = code;
    a.which = which;
    if (plan->nred <= CU_REDUCE_SERIAL_MAX || plan->nout >= CU_REDUCE_SERIAL_OUTPUTS) {
        cu_reduce_serial_kernel<<<cu_blocks(plan->nout), CU_THREADS, 0, stream>>>(*plan, a, out,
                                                                                  add);
    } else {
        unsigned blocks = plan->nout > CU_MAX_BLOCKS ? CU_MAX_BLOCKS : (unsigned)plan->nout;
        cu_reduce_block_kernel<<<blocks, CU_THREADS, 0, stream>>>(*plan, a, out, add);
    }
    return cu_launched();
}

/** dx[i] (=|+=) dy[o] scale factor(x[i], y[o]), o from operand 0 of ix. */
__global__ void cu_reduce_grad_kernel(cu_index ix, int32_t kind, int32_t ord, float scale,
                                      const float *dy, const float *x, const float *y, float *dx,
                                      uint64_t n, int add) {
    CU_KERNEL_LOOP(i, n) {
        int64_t off[CU_MAX_OPERANDS] = {0};
        cu_index_offsets(ix, i, off);
        float g = dy[off[0]] * scale;
        if (x != NULL)
            g *= mxk_red_dfactor(kind, ord, x[i], y[off[0]]);
        dx[i] = add ? dx[i] + g : g;
    }
}

extern "C" cudaError_t cu_launch_reduce_grad(const cu_index *ix, int32_t kind, int32_t ord,
                                             float scale, const float *dy, const float *x,
                                             const float *y, float *dx, uint64_t n, int add,
                                             cudaStream_t stream) {
    cu_reduce_grad_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(*ix, kind, ord, scale, dy, x, y,
                                                                   dx, n, add);
    return cu_launched();
}
