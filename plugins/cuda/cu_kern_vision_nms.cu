/*
 * cuda plugin: the GPU kernels of _contrib_box_nms (cu_ops_vision_nms.c), on the
 * box math that cpu-blas shares (plugins/common/mxk_vision.h), compiled without
 * fused multiply-add (sources.cmake) so every product is rounded as cpu-blas
 * rounds it.
 *
 * Semantics: MXNet src/operator/contrib/bounding_box-inl.h and bounding_box.cu.
 * Each batch element runs cpu-blas's sequential algorithm in one thread block:
 * thread 0 collects the valid boxes in row order, the sort is a rank count
 * under mxk_vis_score_cmp (descending score, ties in row order, as the stable
 * sort upstream), the suppression walks the sorted boxes in order with the
 * block's threads testing the later boxes against the current one, and thread
 * 0 copies the kept rows to the front.
 */
#include "cu_kern_vision.h"
#include "cu_launch.cuh"
#include "mxk_vision.h"

/** The per-batch-element scratch of the NMS kernel (each of n entries). */
struct cu_nms_work {
    float *score;  /**< candidate scores, in row order */
    int32_t *cand; /**< candidate flat rows */
    int32_t *kept; /**< sorted candidate rows, -1 once suppressed */
    float *area;   /**< box areas of the sorted candidates */
};

/** The scratch of batch element b in the block at base (layout of cu_nms_scratch_bytes). */
static __device__ cu_nms_work cu_nms_work_of(const cu_nms_geom &g, void *base, int64_t b) {
    const int64_t all = g.nb * g.n;
    cu_nms_work wk;
    wk.score = (float *)base + b * g.n;
    wk.cand = (int32_t *)((float *)base + all) + b * g.n;
    wk.kept = (int32_t *)((float *)base + 2 * all) + b * g.n;
    wk.area = (float *)base + 3 * all + b * g.n;
    return wk;
}

/** box_nms of batch element blockIdx.x. */
static __global__ void cu_nms_kernel(cu_nms_geom g, const float *x, float *out_all, float *rec_all,
                                     void *scratch) {
    const int64_t b = blockIdx.x, n = g.n, w = g.w;
    float *out = out_all + b * n * w, *rec = rec_all + b * n;
    const cu_nms_work wk = cu_nms_work_of(g, scratch, b);
    const int center = g.in_format == 1;
    __shared__ int64_t nc;
    for (int64_t i = threadIdx.x; i < n * w; i += blockDim.x)
        out[i] = -1.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        rec[i] = -1.0f;
    if (threadIdx.x == 0) {
        int64_t c = 0;
        for (int64_t i = 0; i < n; i++) {
            const float *row = x + (b * n + i) * w, sc = row[g.score_index];
            if (sc > g.valid_thresh &&
                (g.id_index < 0 || row[g.id_index] != (float)g.background_id)) {
                wk.score[c] = sc;
                wk.cand[c++] = (int32_t)(b * n + i);
            }
        }
        nc = c;
    }
    __syncthreads();
    for (int64_t i = threadIdx.x; i < nc; i += blockDim.x) {
        int64_t rank = 0;
        for (int64_t j = 0; j < nc; j++)
            rank += mxk_vis_score_cmp(wk.score[j], wk.cand[j], wk.score[i], wk.cand[i]) < 0;
        wk.kept[rank] = wk.cand[i];
    }
    __syncthreads();
    const int64_t nk = nc < g.topk ? nc : g.topk;
    for (int64_t i = threadIdx.x; i < nk; i += blockDim.x)
        wk.area[i] = mxk_vis_nms_area(x + (int64_t)wk.kept[i] * w + g.coord_start, center);
    __syncthreads();
    for (int64_t r = 0; r < nk; r++) {
        const int64_t rr = wk.kept[r];
        if (rr >= 0) {
            const float *rb = x + rr * w;
            for (int64_t q = r + 1 + threadIdx.x; q < nk; q += blockDim.x) {
                if (wk.kept[q] < 0)
                    continue;
                const float *qb = x + (int64_t)wk.kept[q] * w;
                if (!g.force_suppress && g.id_index >= 0 &&
                    mxk_vis_nms_class(rb[g.id_index]) != mxk_vis_nms_class(qb[g.id_index]))
                    continue;
                const float in =
                    mxk_vis_nms_intersect(rb + g.coord_start, qb + g.coord_start, center) *
                    mxk_vis_nms_intersect(rb + g.coord_start + 1, qb + g.coord_start + 1, center);
                if (in / (wk.area[r] + wk.area[q] - in) > g.overlap_thresh)
                    wk.kept[q] = -1;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        int64_t k = 0;
        for (int64_t i = 0; i < nk; i++)
            if (wk.kept[i] >= 0) {
                for (int64_t e = 0; e < w; e++)
                    out[k * w + e] = x[(int64_t)wk.kept[i] * w + e];
                rec[k++] = (float)wk.kept[i];
            }
    }
    __syncthreads();
    if (g.in_format != g.out_format)
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
            mxk_vis_nms_convert(out + i * w + g.coord_start, g.out_format == 1);
}

/** topk 0: out = x and rec = 0, 1, 2, ... over the `total` rows of width w. */
static __global__ void cu_nms_copy_kernel(const float *x, int64_t total, int64_t w, float *out,
                                          float *rec) {
    CU_KERNEL_LOOP(i, (uint64_t)(total * w)) {
        out[i] = x[i];
        if ((int64_t)i < total)
            rec[i] = (float)i;
    }
}

/** Backward: output row i = i / w adds its gradient to its recorded input row. */
static __global__ void cu_nms_grad_kernel(const float *dy, const float *rec, int64_t total,
                                          int64_t w, float *dx) {
    CU_KERNEL_LOOP(i, (uint64_t)(total * w)) {
        const float r = rec[(int64_t)i / w];
        if (r >= 0.0f && r < (float)total)
            dx[(int64_t)r * w + (int64_t)i % w] += dy[i];
    }
}

/** cu_nms_scratch_bytes: Four arrays of nb*n int32/float entries. */
extern "C" uint64_t cu_nms_scratch_bytes(const cu_nms_geom *g) {
    return (uint64_t)(g->nb * g->n) * 4 * sizeof(float);
}

/** cu_launch_nms: One block per batch element (topk 0: one thread per element). */
extern "C" cudaError_t cu_launch_nms(const cu_nms_geom *g, const float *x, float *out, float *rec,
                                     void *scratch, cudaStream_t stream) {
    if (g->topk < 1) {
        const int64_t total = g->nb * g->n;
        cu_nms_copy_kernel<<<cu_blocks((uint64_t)(total * g->w)), CU_THREADS, 0, stream>>>(
            x, total, g->w, out, rec);
        return cu_launched();
    }
    if (g->nb == 0)
        return cudaSuccess;
    cu_nms_kernel<<<(unsigned)g->nb, CU_THREADS, 0, stream>>>(*g, x, out, rec, scratch);
    return cu_launched();
}

/** cu_launch_nms_grad: One thread per gradient element. */
extern "C" cudaError_t cu_launch_nms_grad(const float *dy, const float *rec, int64_t total,
                                          int64_t w, float *dx, cudaStream_t stream) {
    cu_nms_grad_kernel<<<cu_blocks((uint64_t)(total * w)), CU_THREADS, 0, stream>>>(dy, rec, total,
                                                                                    w, dx);
    return cu_launched();
}
