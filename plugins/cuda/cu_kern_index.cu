/*
 * cuda plugin: the indexing kernels (cu_kern_index.h): take / pick / Embedding /
 * gather_nd / scatter_nd block moves, one_hot, where and the Sequence* mappings,
 * one thread per element of the small tensor (grid-stride). Index arithmetic is mxk_index.h's,
 * shared with cpu-blas. Upstream: MXNet src/operator/tensor/indexing_op.h / .cu (TakeKernel,
 * EmbeddingOpForward, AddTakeGrad, gather_nd, scatter_nd, one_hot), broadcast_reduce_op.h (pick),
 * control_flow_op.h (where) and src/operator/sequence_mask-inl.h, sequence_last-inl.h,
 * sequence_reverse-inl.h. Scatters add with atomicAdd, so sums over repeated indices may round
 * differently from the CPU's sequential order.
 */
#include "cu_dtype.cuh"
#include "cu_kern_index.h"
#include "cu_launch.cuh"
#include "mxk_index.h"

/** The big tensor's offset of the first element of block b. */
template <typename I>
__device__ static uint64_t cu_take_block(const cu_take_geom &g, const void *idx, uint64_t b) {
    if (g.kind == CU_GATHER_ND) {
        int64_t off = 0;
        for (int32_t j = 0; j < g.m; j++)
            off += g.strides[j] *
                   mxk_idx_nd_pos(cu_load<I>(idx, (uint64_t)j * g.nblocks + b), g.dims[j]);
        return (uint64_t)off;
    }
    int32_t pick = g.kind == CU_PICK;
    double v = cu_load<I>(idx, mxk_idx_take_index(pick, b, g.n));
    return mxk_idx_take_offset(pick, b, g.n, g.size, g.inner, v, (mxk_idx_mode)g.mode);
}

/** One block-move element per thread (see cu_take_dir). */
template <typename I>
__global__ void cu_take_kernel(cu_take_geom g, const void *idx, float *big, float *small,
                               int32_t dir, int add, uint64_t total) {
    CU_KERNEL_LOOP(e, total) {
        uint64_t b = e / g.len;
        float *q = &big[cu_take_block<I>(g, idx, b) + e % g.len];
        if (dir == CU_TAKE_GATHER)
            small[e] = add ? small[e] + *q : *q;
        else if (add)
            atomicAdd(q, small[e]);
        else
            *q = small[e];
    }
}

/** Launches cu_take_kernel for index element type I. */
template <typename I>
static cudaError_t cu_take_as(const cu_take_geom *g, const void *idx, float *big, float *small,
                              int32_t dir, int add, cudaStream_t stream) {
    uint64_t total = g->nblocks * g->len;
    cu_take_kernel<I>
        <<<cu_blocks(total), CU_THREADS, 0, stream>>>(*g, idx, big, small, dir, add, total);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_take(const cu_take_geom *g, const void *idx, int32_t idx_dtype,
                                      float *big, float *small, int32_t dir, int add,
                                      cudaStream_t stream) {
    CU_DTYPE_DISPATCH(idx_dtype, cu_take_as, g, idx, big, small, dir, add, stream)
}

/** one_hot element e = (i, j) of element type T. */
template <typename T>
__global__ void cu_one_hot_kernel(const float *x, T *out, int64_t depth, T on, T off, int add,
                                  uint64_t total) {
    CU_KERNEL_LOOP(e, total) {
        double v = trunc((double)x[e / (uint64_t)depth]); /* (int) of a float index, as MXNet */
        T t = v == (double)(int64_t)(e % (uint64_t)depth) ? on : off;
        out[e] = add ? (T)(out[e] + t) : t;
    }
}

/** float16 one_hot (sums through float). */
template <>
__global__ void cu_one_hot_kernel<__half>(const float *x, __half *out, int64_t depth, __half on,
                                          __half off, int add, uint64_t total) {
    CU_KERNEL_LOOP(e, total) {
        double v = trunc((double)x[e / (uint64_t)depth]);
        __half t = v == (double)(int64_t)(e % (uint64_t)depth) ? on : off;
        out[e] = add ? __float2half_rn(__half2float(out[e]) + __half2float(t)) : t;
    }
}

/** Launches cu_one_hot_kernel for element type T with the low bytes of the patterns. */
template <typename T>
static cudaError_t cu_one_hot_as(const float *x, void *out, uint64_t n, int64_t depth,
                                 uint64_t on_bits, uint64_t off_bits, int add,
                                 cudaStream_t stream) {
    T on, off;
    memcpy((void *)&on, &on_bits, sizeof on); /* the low bytes: little-endian hosts */
    memcpy((void *)&off, &off_bits, sizeof off);
    uint64_t total = n * (uint64_t)depth;
    cu_one_hot_kernel<T>
        <<<cu_blocks(total), CU_THREADS, 0, stream>>>(x, (T *)out, depth, on, off, add, total);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_one_hot(const float *x, void *out, int32_t out_dtype, uint64_t n,
                                         int64_t depth, uint64_t on_bits, uint64_t off_bits,
                                         int add, cudaStream_t stream) {
    CU_DTYPE_DISPATCH(out_dtype, cu_one_hot_as, x, out, n, depth, on_bits, off_bits, add, stream)
}

/** where element i: cond ? a : b (NULL reads 0). */
template <typename C>
__global__ void cu_where_kernel(const void *cond, uint64_t per, const float *a, const float *b,
                                float *out, int add, uint64_t n) {
    CU_KERNEL_LOOP(i, n) {
        int c = cu_load<C>(cond, i / per) != 0.0;
        const float *src = c ? a : b;
        float v = src != NULL ? src[i] : 0.0f;
        out[i] = add ? out[i] + v : v;
    }
}

/** Launches cu_where_kernel for condition element type C. */
template <typename C>
static cudaError_t cu_where_as(const void *cond, uint64_t per, const float *a, const float *b,
                               float *out, uint64_t n, int add, cudaStream_t stream) {
    cu_where_kernel<C><<<cu_blocks(n), CU_THREADS, 0, stream>>>(cond, per, a, b, out, add, n);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_where(const void *cond, int32_t cond_dtype, uint64_t per,
                                       const float *a, const float *b, float *out, uint64_t n,
                                       int add, cudaStream_t stream) {
    CU_DTYPE_DISPATCH(cond_dtype, cu_where_as, cond, per, a, b, out, n, add, stream)
}

/** Length of batch element b of a Sequence* call (lengths of element type L). */
template <typename L> __device__ static int64_t cu_seq_len(const cu_seq_call &c, int64_t b) {
    int64_t lo = c.kind == CU_SEQ_LAST || c.kind == CU_SEQ_LAST_GRAD ? 1 : 0;
    return c.len == NULL ? c.seq : mxk_idx_seq_len(cu_load<L>(c.len, (uint64_t)b), c.seq, lo);
}

/**
 * One element of a Sequence* mapping: MASK / REVERSE walk the data layout (e over
 * seq * batch * rest), LAST / LAST_GRAD the (batch, rest) side.
 */
template <typename L>
__global__ void cu_seq_kernel(cu_seq_call c, const float *src, float *dst, uint64_t total) {
    CU_KERNEL_LOOP(e, total) {
        uint64_t r = e / (uint64_t)c.rest, j = e % (uint64_t)c.rest;
        if (c.kind == CU_SEQ_LAST || c.kind == CU_SEQ_LAST_GRAD) {
            int64_t b = (int64_t)r;
            uint64_t d =
                mxk_idx_seq_row(c.axis, c.seq, c.batch, c.rest, cu_seq_len<L>(c, b) - 1, b) + j;
            if (c.kind == CU_SEQ_LAST)
                dst[e] = c.add ? dst[e] + src[d] : src[d];
            else
                dst[d] += src[e];
            continue;
        }
        int64_t s = c.axis ? (int64_t)(r % (uint64_t)c.seq) : (int64_t)(r / (uint64_t)c.batch);
        int64_t b = c.axis ? (int64_t)(r / (uint64_t)c.seq) : (int64_t)(r % (uint64_t)c.batch);
        int64_t len = cu_seq_len<L>(c, b);
        float v;
        if (c.kind == CU_SEQ_MASK)
            v = s >= len ? c.fill : src[e];
        else
            v = src[mxk_idx_seq_row(c.axis, c.seq, c.batch, c.rest, s < len ? len - 1 - s : s, b) +
                    j];
        dst[e] = c.add ? dst[e] + v : v;
    }
}

/** Launches cu_seq_kernel for length element type L. */
template <typename L>
static cudaError_t cu_seq_as(const cu_seq_call *c, const float *src, float *dst,
                             cudaStream_t stream) {
    uint64_t rows = c->kind == CU_SEQ_LAST || c->kind == CU_SEQ_LAST_GRAD
                        ? (uint64_t)c->batch
                        : (uint64_t)(c->seq * c->batch);
    uint64_t total = rows * (uint64_t)c->rest;
    cu_seq_kernel<L><<<cu_blocks(total), CU_THREADS, 0, stream>>>(*c, src, dst, total);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_sequence(const cu_seq_call *c, const float *src, float *dst,
                                          cudaStream_t stream) {
    CU_DTYPE_DISPATCH(c->len == NULL ? MXK_FLOAT32 : c->len_dtype, cu_seq_as, c, src, dst, stream)
}
