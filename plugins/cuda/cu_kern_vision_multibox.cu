/*
 * cuda plugin: the GPU kernels of _contrib_MultiBoxPrior and
 * _contrib_MultiBoxDetection (cu_ops_vision_multibox.c), on the box math that
 * cpu-blas shares (plugins/common/mxk_vision.h), compiled without fused
 * multiply-add (sources.cmake) so every product is rounded as cpu-blas rounds it.
 *
 * Semantics: MXNet src/operator/contrib/multibox_prior.cu (one thread per
 * anchor) and multibox_detection.cu. The detection runs cpu-blas's sequential
 * algorithm per batch element in one thread block: the threads decode the
 * anchors, thread 0 compacts the valid rows in anchor order, the sort is a rank
 * count under mxk_vis_score_cmp (descending score, ties in row order, as the
 * stable sort upstream), and the suppression walks the sorted rows in order,
 * the block's threads testing the later rows against the current one.
 */
#include "cu_kern_vision.h"
#include "cu_launch.cuh"
#include "cu_req.cuh"
#include "mxk_vision.h"

/** MultiBoxPrior: anchor i = (location, k); its four coordinates. */
static __global__ void cu_prior_kernel(cu_prior_geom g, float *out, int32_t req) {
    const int64_t per = g.num_sizes + g.num_ratios - 1;
    CU_KERNEL_LOOP(i, (uint64_t)(g.h * g.w * per)) {
        const int64_t k = (int64_t)i % per, loc = (int64_t)i / per;
        const float cy = ((float)(loc / g.w) + g.oy) * g.sy;
        const float cx = ((float)(loc % g.w) + g.ox) * g.sx;
        const float size = k < g.num_sizes ? g.sizes[k] : g.sizes[0];
        const float r = k < g.num_sizes ? g.sqrt_ratios[0] : g.sqrt_ratios[k - g.num_sizes + 1];
        float box[4];
        mxk_vis_prior_box(cy, cx, size, r, g.h, g.w, g.clip, box);
        for (int j = 0; j < 4; j++)
            cu_store(&out[i * 4 + j], box[j], req);
    }
}

/** Copies the 6 floats of a detection row. */
static __device__ void cu_det_row(float *dst, const float *src) {
    for (int k = 0; k < 6; k++)
        dst[k] = src[k];
}

/** MultiBoxDetection of batch element blockIdx.x (multibox_detection.cc's per-item loop). */
static __global__ void cu_detection_kernel(cu_det_geom g, const float *cls_all,
                                           const float *loc_all, const float *anchor,
                                           float *out_all, float *tmp_all, int32_t *order_all) {
    const int64_t b = blockIdx.x, na = g.na;
    const float *cls = cls_all + b * g.nc * na, *lp = loc_all + b * na * 4;
    float *out = out_all + b * na * 6, *tmp = tmp_all + b * na * 6;
    int32_t *order = order_all + b * na;
    __shared__ int64_t valid;
    for (int64_t i = threadIdx.x; i < na; i += blockDim.x) {
        float score = -1.0f;
        int64_t id = 0;
        for (int64_t j = 1; j < g.nc; j++)
            if (cls[j * na + i] > score) {
                score = cls[j * na + i];
                id = j;
            }
        if (id > 0 && score < g.threshold)
            id = 0;
        float *o = tmp + i * 6;
        o[0] = (float)(id - 1);
        o[1] = score;
        mxk_vis_decode(anchor + i * 4, lp + i * 4, g.var, g.clip, o + 2);
        for (int k = 0; k < 6; k++)
            out[i * 6 + k] = -1.0f;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int64_t v = 0;
        for (int64_t i = 0; i < na; i++)
            if (tmp[i * 6] >= 0.0f)
                cu_det_row(out + 6 * v++, tmp + i * 6);
        valid = v;
    }
    __syncthreads();
    if (valid < 1 || g.nms_threshold <= 0.0f || g.nms_threshold > 1.0f)
        return;
    for (int64_t i = threadIdx.x; i < na * 6; i += blockDim.x)
        tmp[i] = out[i];
    __syncthreads();
    for (int64_t i = threadIdx.x; i < valid; i += blockDim.x) {
        int64_t rank = 0;
        for (int64_t j = 0; j < valid; j++)
            rank += mxk_vis_score_cmp(tmp[j * 6 + 1], j, tmp[i * 6 + 1], i) < 0;
        order[rank] = (int32_t)i;
    }
    __syncthreads();
    const int64_t keep = g.nms_topk > 0 && g.nms_topk < valid ? g.nms_topk : valid;
    for (int64_t i = keep + threadIdx.x; i < valid; i += blockDim.x)
        out[i * 6] = -1.0f;
    for (int64_t i = threadIdx.x; i < keep; i += blockDim.x)
        cu_det_row(out + i * 6, tmp + (int64_t)order[i] * 6);
    __syncthreads();
    for (int64_t i = 0; i < keep; i++) {
        const float ci = out[i * 6];
        if (ci >= 0.0f)
            for (int64_t j = i + 1 + threadIdx.x; j < keep; j += blockDim.x)
                if (out[j * 6] >= 0.0f && (g.force_suppress || ci == out[j * 6]) &&
                    mxk_vis_iou(out + i * 6 + 2, out + j * 6 + 2, 0) >= g.nms_threshold)
                    out[j * 6] = -1.0f;
        __syncthreads();
    }
}

extern "C" cudaError_t cu_launch_prior(const cu_prior_geom *g, float *out, int32_t req,
                                       cudaStream_t stream) {
    const uint64_t n = (uint64_t)(g->h * g->w * (g->num_sizes + g->num_ratios - 1));
    cu_prior_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(*g, out, req);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_detection(cu_det_geom g, const float *cls, const float *loc,
                                           const float *anchor, float *out, float *tmp,
                                           int32_t *order, cudaStream_t stream) {
    if (g.nb == 0)
        return cudaSuccess;
    cu_detection_kernel<<<(unsigned)g.nb, CU_THREADS, 0, stream>>>(g, cls, loc, anchor, out, tmp,
                                                                   order);
    return cu_launched();
}
