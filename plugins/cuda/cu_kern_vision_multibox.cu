/*
 * cuda plugin: the GPU kernels of _contrib_MultiBoxPrior, _contrib_MultiBoxTarget
 * and _contrib_MultiBoxDetection (cu_ops_vision_multibox.c), on the box math that
 * cpu-blas shares (plugins/common/mxk_vision.h), compiled without fused
 * multiply-add (sources.cmake) so every product is rounded as cpu-blas rounds it.
 *
 * Semantics: MXNet src/operator/contrib/multibox_prior.cu (one thread per
 * anchor), multibox_target.cu and multibox_detection.cu. The target runs
 * cpu-blas's sequential algorithm per batch element in one thread block: each
 * greedy matching step is a block reduction keeping the first maximum in
 * (anchor, ground truth) order, as cpu-blas's scan does, and the hard negatives
 * are the first ones under mxk_vis_score_cmp, by a rank count. The detection runs cpu-blas's
 * sequential algorithm per batch element in one thread block: the threads decode the anchors,
 * thread 0 compacts the valid rows in anchor order, the sort is a rank count under
 * mxk_vis_score_cmp (descending score, ties in row order, as the stable sort upstream), and the
 * suppression walks the sorted rows in order, the block's threads testing the later rows against
 * the current one.
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

/** cu_launch_prior: One thread per anchor. */
extern "C" cudaError_t cu_launch_prior(const cu_prior_geom *g, float *out, int32_t req,
                                       cudaStream_t stream) {
    const uint64_t n = (uint64_t)(g->h * g->w * (g->num_sizes + g->num_ratios - 1));
    cu_prior_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(*g, out, req);
    return cu_launched();
}

/** cu_launch_detection: One block per batch element. */
extern "C" cudaError_t cu_launch_detection(cu_det_geom g, const float *cls, const float *loc,
                                           const float *anchor, float *out, float *tmp,
                                           int32_t *order, cudaStream_t stream) {
    if (g.nb == 0)
        return cudaSuccess;
    cu_detection_kernel<<<(unsigned)g.nb, CU_THREADS, 0, stream>>>(g, cls, loc, anchor, out, tmp,
                                                                   order);
    return cu_launched();
}

/** The per-batch-element scratch of the MultiBoxTarget kernel. */
struct cu_target_work {
    float *match_iou;  /**< na: best IoU, -1 not computed */
    int32_t *match_gt; /**< na: its ground truth, -1 none */
    int32_t *flag;     /**< na: -1 don't care, 0 negative, 1 positive */
    float *neg;        /**< na: a negative candidate's sort value */
    int32_t *is_neg;   /**< na: 1 for a negative candidate */
    int32_t *gt_done;  /**< nl: ground truth matched */
};

/** The scratch of batch element b at base (layout of cu_target_scratch_bytes). */
static __device__ cu_target_work cu_target_work_of(const cu_target_geom &g, void *base, int64_t b) {
    const int64_t a = g.nb * g.na;
    cu_target_work wk;
    wk.match_iou = (float *)base + b * g.na;
    wk.match_gt = (int32_t *)base + a + b * g.na;
    wk.flag = (int32_t *)base + 2 * a + b * g.na;
    wk.neg = (float *)base + 3 * a + b * g.na;
    wk.is_neg = (int32_t *)base + 4 * a + b * g.na;
    wk.gt_done = (int32_t *)base + 5 * a + b * g.nl;
    return wk;
}

/** The best IoU of anchor j over the first ng ground truths into the match arrays. */
static __device__ void cu_target_best(const cu_target_geom &g, const cu_target_work &wk,
                                      const float *anchor, const float *label, int64_t j,
                                      int64_t ng) {
    float best = -1.0f;
    int64_t arg = -1;
    for (int64_t k = 0; k < ng; k++) {
        const float v = mxk_vis_iou(anchor + j * 4, label + k * g.lw + 1, 1);
        if (v > best) {
            best = v;
            arg = k;
        }
    }
    if (arg != -1) {
        wk.match_iou[j] = best;
        wk.match_gt[j] = (int32_t)arg;
    }
}

/**
 * One step of the greedy bipartite matching: the first (anchor, ground truth) pair
 * in (anchor, ground truth) order of the largest IoU above 1e-6 among unmatched
 * anchors and ground truths, into *ba, *bg (-1: none). Every thread of the block
 * calls it; the result is valid in all of them.
 */
static __device__ void cu_target_pick(const cu_target_geom &g, const cu_target_work &wk,
                                      const float *anchor, const float *label, int64_t ng,
                                      int64_t *ba, int64_t *bg) {
    __shared__ float sv[CU_THREADS];
    __shared__ int64_t sj[CU_THREADS], sk[CU_THREADS];
    float best = 1e-6f;
    int64_t bj = -1, bk = -1;
    for (int64_t j = threadIdx.x; j < g.na; j += blockDim.x)
        for (int64_t k = 0; wk.flag[j] != 1 && k < ng; k++) {
            if (wk.gt_done[k])
                continue;
            const float v = mxk_vis_iou(anchor + j * 4, label + k * g.lw + 1, 1);
            if (v > best) {
                best = v;
                bj = j;
                bk = k;
            }
        }
    sv[threadIdx.x] = best;
    sj[threadIdx.x] = bj;
    sk[threadIdx.x] = bk;
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) {
            const unsigned o = threadIdx.x + h;
            const int take = sj[o] != -1 && (sj[threadIdx.x] == -1 || sv[o] > sv[threadIdx.x] ||
                                             (sv[o] == sv[threadIdx.x] && sj[o] < sj[threadIdx.x]));
            if (take) {
                sv[threadIdx.x] = sv[o];
                sj[threadIdx.x] = sj[o];
                sk[threadIdx.x] = sk[o];
            }
        }
        __syncthreads();
    }
    *ba = sj[0];
    *bg = sk[0];
    __syncthreads();
}

/** MultiBoxTarget of batch element blockIdx.x (multibox_target.cc's per-item loop). */
static __global__ void cu_target_kernel(cu_target_geom g, const float *anchor,
                                        const float *label_all, const float *cls_pred_all,
                                        float *loc_all, float *mask_all, float *cls_all,
                                        void *scratch) {
    const int64_t b = blockIdx.x, na = g.na;
    const float *label = label_all + b * g.nl * g.lw, *cp_all = cls_pred_all + b * g.nc * na;
    float *loc = loc_all + b * na * 4, *mask = mask_all + b * na * 4, *cls = cls_all + b * na;
    const cu_target_work wk = cu_target_work_of(g, scratch, b);
    __shared__ int64_t ng, npos;
    if (threadIdx.x == 0) {
        int64_t c = 0;
        while (c < g.nl && label[c * g.lw] != -1.0f)
            c++;
        ng = c;
        npos = 0;
    }
    for (int64_t i = threadIdx.x; i < na; i += blockDim.x) {
        for (int k = 0; k < 4; k++)
            loc[i * 4 + k] = mask[i * 4 + k] = 0.0f;
        cls[i] = g.ignore_label;
        wk.match_iou[i] = -1.0f;
        wk.match_gt[i] = -1;
        wk.flag[i] = -1;
        wk.is_neg[i] = 0;
    }
    for (int64_t k = threadIdx.x; k < g.nl; k += blockDim.x)
        wk.gt_done[k] = 0;
    __syncthreads();
    if (ng == 0)
        return;
    for (int64_t left = ng; left > 0; left--) {
        int64_t ba, bg;
        cu_target_pick(g, wk, anchor, label, ng, &ba, &bg);
        if (ba == -1)
            break;
        if (threadIdx.x == 0) {
            wk.match_iou[ba] = mxk_vis_iou(anchor + ba * 4, label + bg * g.lw + 1, 1);
            wk.match_gt[ba] = (int32_t)bg;
            wk.gt_done[bg] = 1;
            wk.flag[ba] = 1;
            npos++;
        }
        __syncthreads();
    }
    if (g.overlap_threshold > 0.0f) {
        for (int64_t j = threadIdx.x; j < na; j += blockDim.x) {
            if (wk.flag[j] == 1)
                continue;
            cu_target_best(g, wk, anchor, label, j, ng);
            if (wk.match_gt[j] != -1 && wk.match_iou[j] > g.overlap_threshold) {
                atomicAdd((unsigned long long *)&npos, 1ull);
                wk.gt_done[wk.match_gt[j]] = 1;
                wk.flag[j] = 1;
            }
        }
        __syncthreads();
    }
    if (g.neg_ratio > 0.0f) {
        const double want = (double)npos * g.neg_ratio;
        const int64_t nneg = want < (double)(na - npos) ? (int64_t)want : na - npos;
        if (nneg > 0) {
            for (int64_t j = threadIdx.x; j < na; j += blockDim.x) {
                if (wk.flag[j] == 1)
                    continue;
                if (wk.match_iou[j] < 0.0f)
                    cu_target_best(g, wk, anchor, label, j, ng);
                if (!(wk.match_iou[j] < g.neg_thresh) || wk.flag[j] != -1)
                    continue;
                const float *cp = cp_all + j;
                float mx = cp[0], sum = 0.0f;
                for (int64_t k = 1; k < g.nc; k++)
                    mx = cp[k * na] > mx ? cp[k * na] : mx;
                for (int64_t k = 0; k < g.nc; k++)
                    sum += expf(cp[k * na] - mx);
                wk.neg[j] = -(expf(cp[0] - mx) / sum);
                wk.is_neg[j] = 1;
            }
            __syncthreads();
            for (int64_t j = threadIdx.x; j < na; j += blockDim.x) {
                if (!wk.is_neg[j])
                    continue;
                int64_t rank = 0;
                for (int64_t i = 0; i < na && rank < nneg; i++)
                    rank += wk.is_neg[i] && mxk_vis_score_cmp(wk.neg[i], i, wk.neg[j], j) < 0;
                if (rank < nneg)
                    wk.flag[j] = 0;
            }
        }
    } else {
        for (int64_t j = threadIdx.x; j < na; j += blockDim.x)
            if (wk.flag[j] != 1)
                wk.flag[j] = 0;
    }
    __syncthreads();
    for (int64_t j = threadIdx.x; j < na; j += blockDim.x) {
        if (wk.flag[j] == 0) {
            cls[j] = 0.0f;
            continue;
        }
        if (wk.flag[j] != 1)
            continue;
        const float *gt = label + (int64_t)wk.match_gt[j] * g.lw;
        cls[j] = gt[0] + 1.0f;
        mxk_vis_encode(anchor + j * 4, gt + 1, g.var, loc + j * 4);
        for (int k = 0; k < 4; k++)
            mask[j * 4 + k] = 1.0f;
    }
}

/** cu_target_scratch_bytes: Six int32/float arrays: five of nb*na entries, one of nb*nl. */
extern "C" uint64_t cu_target_scratch_bytes(const cu_target_geom *g) {
    return (uint64_t)(g->nb * g->na) * 5 * 4 + (uint64_t)(g->nb * g->nl) * 4;
}

/** cu_launch_target: One block per batch element. */
extern "C" cudaError_t cu_launch_target(const cu_target_geom *g, const float *anchor,
                                        const float *label, const float *cls_pred, float *loc,
                                        float *mask, float *cls, void *scratch,
                                        cudaStream_t stream) {
    if (g->nb == 0)
        return cudaSuccess;
    cu_target_kernel<<<(unsigned)g->nb, CU_THREADS, 0, stream>>>(*g, anchor, label, cls_pred, loc,
                                                                 mask, cls, scratch);
    return cu_launched();
}
