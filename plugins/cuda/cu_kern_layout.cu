/*
 * cuda plugin: the strided copy and sum kernels of the data-movement operators
 * (cu_kern_layout.h). One thread per destination element (grid-stride): the
 * element's index is split into per-dim indices, innermost first, giving its
 * source and destination offsets. Upstream: MXNet src/operator/tensor/
 * matrix_op-inl.h (Transpose, slice, tile, repeat, reverse kernels),
 * broadcast_reduce_op.h (broadcast and its reduce-sum backward) and pad.cu (Pad;
 * its edge / reflect gradient adds with atomicAdd, several outputs reading one
 * input element).
 */
#include "cu_dtype.cuh"
#include "cu_kern_layout.h"
#include "cu_launch.cuh"
#include "mxk_index.h"

/** Elements of the leading `nd` dims of a view. */
static uint64_t cu_view_count(const cu_view *v, int32_t first, int32_t nd) {
    uint64_t n = 1;
    for (int32_t d = first; d < first + nd; d++)
        n *= (uint64_t)v->dims[d];
    return n;
}

/** Source and destination offsets of index i over dims [first, first + nd) of v. */
__device__ static void cu_view_offsets(const cu_view &v, int32_t first, int32_t nd, uint64_t i,
                                       int64_t *so, int64_t *dso) {
    int64_t s = 0, t = 0;
    for (int32_t d = first + nd - 1; d >= first; d--) {
        uint64_t n = (uint64_t)v.dims[d];
        int64_t q = (int64_t)(i % n);
        i /= n;
        s += q * v.src[d];
        t += q * v.dst[d];
    }
    *so = s;
    *dso = t;
}

/** a + b in T's arithmetic (float16 through float, integers wrapping as the hardware does). */
template <typename T> __device__ static T cu_add(T a, T b) {
    return (T)(a + b);
}
/** float16 sum, rounded to nearest. */
template <> __device__ __half cu_add<__half>(__half a, __half b) {
    return __float2half_rn(__half2float(a) + __half2float(b));
}

/** dst[map] (=|+=) src[map] over the view for element type T. */
template <typename T>
__global__ void cu_view_copy_kernel(cu_view v, const T *src, T *dst, int add, uint64_t n) {
    CU_KERNEL_LOOP(i, n) {
        int64_t so, dso;
        cu_view_offsets(v, 0, v.ndim, i, &so, &dso);
        T x = src[v.src_off + so];
        T *y = &dst[v.dst_off + dso];
        *y = add ? cu_add<T>(*y, x) : x;
    }
}

/** Launches cu_view_copy_kernel for element type T. */
template <typename T>
static cudaError_t cu_view_copy_as(const cu_view *v, const void *src, void *dst, int add,
                                   cudaStream_t stream) {
    uint64_t n = cu_view_count(v, 0, v->ndim);
    cu_view_copy_kernel<T>
        <<<cu_blocks(n), CU_THREADS, 0, stream>>>(*v, (const T *)src, (T *)dst, add, n);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_view_copy(const cu_view *v, const void *src, void *dst,
                                           int32_t dtype, int add, cudaStream_t stream) {
    if (!add) /* a copy moves bits: by element size */
        dtype = dtype == MXK_FLOAT64   ? MXK_INT64
                : dtype == MXK_FLOAT32 ? MXK_INT32
                : dtype == MXK_UINT8   ? MXK_INT8
                                       : dtype;
    switch (dtype) {
    case MXK_FLOAT32:
        return cu_view_copy_as<float>(v, src, dst, add, stream);
    case MXK_FLOAT64:
        return cu_view_copy_as<double>(v, src, dst, add, stream);
    case MXK_FLOAT16:
        return add ? cu_view_copy_as<__half>(v, src, dst, add, stream)
                   : cu_view_copy_as<uint16_t>(v, src, dst, add, stream);
    case MXK_UINT8:
        return cu_view_copy_as<uint8_t>(v, src, dst, add, stream);
    case MXK_INT8:
        return cu_view_copy_as<int8_t>(v, src, dst, add, stream);
    case MXK_INT32:
        return cu_view_copy_as<int32_t>(v, src, dst, add, stream);
    case MXK_INT64:
        return cu_view_copy_as<int64_t>(v, src, dst, add, stream);
    default:
        return cudaErrorInvalidValue;
    }
}

/** dst[kept] (=|+=) sum over the reduced dims of src, one thread per kept index. */
__global__ void cu_view_sum_kernel(cu_view v, const float *src, float *dst, int add, uint64_t n,
                                   uint64_t r) {
    CU_KERNEL_LOOP(i, n) {
        int64_t so, dso;
        cu_view_offsets(v, 0, v.ndim, i, &so, &dso);
        const float *x = src + v.src_off + so;
        float acc = 0.0f;
        for (uint64_t k = 0; k < r; k++) {
            int64_t ro, unused;
            cu_view_offsets(v, v.ndim, v.nred, k, &ro, &unused);
            acc += x[ro];
        }
        float *y = &dst[v.dst_off + dso];
        *y = add ? *y + acc : acc;
    }
}

/** Threads of a block of cu_view_sum_block_kernel (a power of two). */
#define CU_SUM_THREADS 256

/**
 * dst[kept] (=|+=) sum over the reduced dims of src, one block per kept index:
 * each thread sums a fixed stride of the reduced elements, then a tree in shared
 * memory adds the partial sums (a fixed order: deterministic).
 */
__global__ void cu_view_sum_block_kernel(cu_view v, const float *src, float *dst, int add,
                                         uint64_t n, uint64_t r) {
    __shared__ float part[CU_SUM_THREADS];
    for (uint64_t i = blockIdx.x; i < n; i += gridDim.x) {
        int64_t so, dso;
        cu_view_offsets(v, 0, v.ndim, i, &so, &dso);
        const float *x = src + v.src_off + so;
        float acc = 0.0f;
        for (uint64_t k = threadIdx.x; k < r; k += CU_SUM_THREADS) {
            int64_t ro, unused;
            cu_view_offsets(v, v.ndim, v.nred, k, &ro, &unused);
            acc += x[ro];
        }
        part[threadIdx.x] = acc;
        __syncthreads();
        for (unsigned h = CU_SUM_THREADS / 2; h > 0; h >>= 1) {
            if (threadIdx.x < h)
                part[threadIdx.x] += part[threadIdx.x + h];
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            float *y = &dst[v.dst_off + dso];
            *y = add ? *y + part[0] : part[0];
        }
        __syncthreads(); /* part is reused by the next index */
    }
}

extern "C" cudaError_t cu_launch_view_sum(const cu_view *v, const float *src, float *dst, int add,
                                          cudaStream_t stream) {
    uint64_t n = cu_view_count(v, 0, v->ndim), r = cu_view_count(v, v->ndim, v->nred);
    if (n > 0 && r >= CU_SUM_THREADS && n < (uint64_t)CU_MAX_BLOCKS * CU_THREADS / CU_SUM_THREADS) {
        /* long sums over few outputs: a block each */
        unsigned grid = n > CU_MAX_BLOCKS ? CU_MAX_BLOCKS : (unsigned)n;
        cu_view_sum_block_kernel<<<grid, CU_SUM_THREADS, 0, stream>>>(*v, src, dst, add, n, r);
    } else {
        cu_view_sum_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(*v, src, dst, add, n, r);
    }
    return cu_launched();
}

/** The input offset output element e of Pad reads, or -1 for a constant position. */
__device__ static int64_t cu_pad_source(const cu_pad_geom &g, uint64_t e) {
    int64_t off = 0, stride = 1;
    for (int32_t d = g.ndim - 1; d >= 0; d--) {
        uint64_t n = (uint64_t)g.out_dims[d];
        int64_t k =
            mxk_idx_pad_pos((int64_t)(e % n), g.before[d], g.in_dims[d], (mxk_pad_mode)g.mode);
        e /= n;
        if (k < 0)
            return -1;
        off += k * stride;
        stride *= g.in_dims[d];
    }
    return off;
}

/** Pad forward for element type T. */
template <typename T>
__global__ void cu_pad_kernel(cu_pad_geom g, const T *in, T *out, T fill, int add, uint64_t total) {
    CU_KERNEL_LOOP(e, total) {
        int64_t s = cu_pad_source(g, e);
        T v = s < 0 ? fill : in[s];
        out[e] = add ? cu_add<T>(out[e], v) : v;
    }
}

/** Launches cu_pad_kernel for element type T with the low bytes of fill_bits. */
template <typename T>
static cudaError_t cu_pad_as(const cu_pad_geom *g, const void *in, void *out, uint64_t fill_bits,
                             int add, cudaStream_t stream) {
    T fill;
    memcpy((void *)&fill, &fill_bits, sizeof fill); /* the low bytes: little-endian hosts */
    uint64_t total = 1;
    for (int32_t d = 0; d < g->ndim; d++)
        total *= (uint64_t)g->out_dims[d];
    cu_pad_kernel<T><<<cu_blocks(total), CU_THREADS, 0, stream>>>(*g, (const T *)in, (T *)out, fill,
                                                                  add, total);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_pad(const cu_pad_geom *g, const void *in, void *out, int32_t dtype,
                                     uint64_t fill_bits, int add, cudaStream_t stream){
    CU_DTYPE_DISPATCH(dtype, cu_pad_as, g, in, out, fill_bits, add, stream)}

/** Pad backward: each output gradient element added to the input element it read. */
__global__ void cu_pad_grad_kernel(cu_pad_geom g, const float *dy, float *dx, uint64_t total) {
    CU_KERNEL_LOOP(e, total) {
        int64_t s = cu_pad_source(g, e);
        if (s >= 0)
            atomicAdd(&dx[s], dy[e]);
    }
}

extern "C" cudaError_t cu_launch_pad_grad(const cu_pad_geom *g, const float *dy, float *dx,
                                          cudaStream_t stream) {
    uint64_t total = 1;
    for (int32_t d = 0; d < g->ndim; d++)
        total *= (uint64_t)g->out_dims[d];
    cu_pad_grad_kernel<<<cu_blocks(total), CU_THREADS, 0, stream>>>(*g, dy, dx, total);
    return cu_launched();
}
