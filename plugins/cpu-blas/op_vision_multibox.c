/*
 * cpu-blas plugin: the SSD operators _contrib_MultiBoxPrior, _contrib_MultiBoxTarget and
 * _contrib_MultiBoxDetection (aliases _npx_multibox_prior, _npx_multibox_target,
 * _npx_multibox_detection).
 *
 * Semantics: MXNet src/operator/contrib/multibox_prior-inl.h, multibox_prior.cc
 * (MultiBoxPriorParam: sizes (1), ratios (1), clip False, steps (-1,-1) = 1/H, 1/W,
 * offsets (0.5,0.5); output (1, H*W*(len(sizes)+len(ratios)-1), 4) of
 * [xmin, ymin, xmax, ymax] per location: every size with ratios[0], then sizes[0]
 * with the other ratios), multibox_target-inl.h, multibox_target.cc
 * (MultiBoxTargetParam: overlap_threshold 0.5, ignore_label -1, negative_mining_ratio
 * -1 (off), negative_mining_thresh 0.5, minimum_negative_samples 0 (unused upstream
 * too), variances (0.1,0.1,0.2,0.2); arguments anchor (1, A, 4), label (B, L, >=5)
 * of [cls, xmin, ymin, xmax, ymax] padded with -1 rows, cls_pred (B, C, A); outputs
 * loc_target and loc_mask (B, 4A), cls_target (B, A): greedy bipartite matching of
 * ground truths to anchors by IoU, then every anchor whose best IoU exceeds the
 * threshold, optional hard negative mining by background softmax probability) and
 * multibox_detection-inl.h, multibox_detection.cc (MultiBoxDetectionParam: clip True,
 * threshold 0.01, background_id 0 (unused upstream too: class 0 is the background),
 * nms_threshold 0.5, force_suppress False, variances, nms_topk -1; arguments
 * cls_prob (B, C, A), loc_pred (B, 4A), anchor (1, A, 4); output (B, A, 6) of
 * [class, score, xmin, ymin, xmax, ymax], -1 class for dropped rows, sorted by score
 * and suppressed by per-class (or forced) NMS). None of them is differentiable:
 * backward writes zero gradients by request.
 *
 * Deliberate differences: MultiBoxTarget's backward zeroes the requested gradients of
 * anchor and label too (MXNet leaves them unwritten), and an ADD request of either
 * MultiBox*'s backward leaves the gradient as it is (MXNet overwrites it with zeros).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cb_tensor.h"
#include "mxk_vision.h"
#include "mxk_vision_attr.h"
#include "op_vision.h"

/** Which operator a parameter object belongs to. */
enum mb_kind { MB_PRIOR, MB_TARGET, MB_DETECTION };

/** Parsed attributes of the three operators. */
typedef struct mb_param {
    int32_t kind; /**< enum mb_kind */
    /* MultiBoxPrior */
    float sizes[MXK_VIS_MAX_TUPLE], ratios[MXK_VIS_MAX_TUPLE], steps[2], offsets[2];
    int32_t num_sizes, num_ratios, clip;
    /* MultiBoxTarget and MultiBoxDetection */
    float var[4];
    float overlap_threshold, ignore_label, neg_ratio, neg_thresh;
    float threshold, nms_threshold;
    int32_t force_suppress;
    int64_t nms_topk;
} mb_param;

static const char *const pr_args[] = {"data", NULL};
static const char *const tg_args[] = {"anchor", "label", "cls_pred", NULL};
static const char *const tg_outs[] = {"loc_target", "loc_mask", "cls_target", NULL};
static const char *const dt_args[] = {"cls_prob", "loc_pred", "anchor", NULL};

/** Attribute schema of _contrib_MultiBoxPrior (MultiBoxPriorParam). */
static const mxk_attr_def pr_attrs[] = {
    MXK_SDK_ATTR("sizes", MXK_ATTR_STRING, 0, "(1.0,)", NULL,
                 "List of sizes of generated MultiBoxPriores."),
    MXK_SDK_ATTR("ratios", MXK_ATTR_STRING, 0, "(1.0,)", NULL,
                 "List of aspect ratios of generated MultiBoxPriores."),
    MXK_SDK_ATTR("clip", MXK_ATTR_BOOL, 0, "False", NULL, "Whether to clip out-of-boundary boxes."),
    MXK_SDK_ATTR("steps", MXK_ATTR_STRING, 0, "(-1.0,-1.0)", NULL,
                 "Priorbox step across y and x, -1 for auto calculation."),
    MXK_SDK_ATTR("offsets", MXK_ATTR_STRING, 0, "(0.5,0.5)", NULL,
                 "Priorbox center offsets, y and x respectively."),
};
/** Attribute schema of _contrib_MultiBoxTarget (MultiBoxTargetParam). */
static const mxk_attr_def tg_attrs[] = {
    MXK_SDK_ATTR("overlap_threshold", MXK_ATTR_FLOAT, 0, "0.5", NULL,
                 "Anchor-GT overlap threshold to be regarded as a positive match."),
    MXK_SDK_ATTR("ignore_label", MXK_ATTR_FLOAT, 0, "-1", NULL, "Label for ignored anchors."),
    MXK_SDK_ATTR("negative_mining_ratio", MXK_ATTR_FLOAT, 0, "-1", NULL,
                 "Max negative to positive samples ratio, use -1 to disable mining."),
    MXK_SDK_ATTR("negative_mining_thresh", MXK_ATTR_FLOAT, 0, "0.5", NULL,
                 "Threshold used for negative mining."),
    MXK_SDK_ATTR("minimum_negative_samples", MXK_ATTR_INT, 0, "0", NULL,
                 "Minimum number of negative samples (unused, as upstream)."),
    MXK_SDK_ATTR("variances", MXK_ATTR_STRING, 0, "(0.1,0.1,0.2,0.2)", NULL,
                 "Variances to be encoded in box regression target."),
};
/** Attribute schema of _contrib_MultiBoxDetection (MultiBoxDetectionParam). */
static const mxk_attr_def dt_attrs[] = {
    MXK_SDK_ATTR("clip", MXK_ATTR_BOOL, 0, "True", NULL, "Clip out-of-boundary boxes."),
    MXK_SDK_ATTR("threshold", MXK_ATTR_FLOAT, 0, "0.01", NULL,
                 "Threshold to be a positive prediction."),
    MXK_SDK_ATTR("background_id", MXK_ATTR_INT, 0, "0", NULL,
                 "Background id (unused: class 0 is the background, as upstream)."),
    MXK_SDK_ATTR("nms_threshold", MXK_ATTR_FLOAT, 0, "0.5", NULL,
                 "Non-maximum suppression threshold."),
    MXK_SDK_ATTR("force_suppress", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Suppress all detections regardless of class_id."),
    MXK_SDK_ATTR("variances", MXK_ATTR_STRING, 0, "(0.1,0.1,0.2,0.2)", NULL,
                 "Variances to be decoded from box regression output."),
    MXK_SDK_ATTR("nms_topk", MXK_ATTR_INT, 0, "-1", NULL,
                 "Keep maximum top k detections before nms, -1 for no limit."),
};

/** Reads real attribute `key` as float. */
static mxk_status mb_float(const mxk_attrs *attrs, const char *key, float *v, mxk_error_sink *err) {
    double d;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, key, &d, err));
    *v = (float)d;
    return MXK_OK;
}

/** parse_param of _contrib_MultiBoxPrior (the checks of MultiBoxPriorOp's constructor). */
static mxk_status pr_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    mb_param p = {.kind = MB_PRIOR};
    int32_t ns, no;
    MXK_SDK_CHECK(
        mxk_vis_attr_tuple(attrs, "sizes", p.sizes, MXK_VIS_MAX_TUPLE, &p.num_sizes, err));
    MXK_SDK_CHECK(
        mxk_vis_attr_tuple(attrs, "ratios", p.ratios, MXK_VIS_MAX_TUPLE, &p.num_ratios, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "clip", &p.clip, err));
    MXK_SDK_CHECK(mxk_vis_attr_tuple(attrs, "steps", p.steps, 2, &ns, err));
    MXK_SDK_CHECK(mxk_vis_attr_tuple(attrs, "offsets", p.offsets, 2, &no, err));
    if (p.num_sizes == 0 || p.num_ratios == 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attributes 'sizes' and 'ratios': at least one value each");
    if (ns != 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'steps': Step ndim must be 2: (step_y, step_x)");
    if (no != 2 || !(p.offsets[0] >= 0.0f && p.offsets[0] <= 1.0f) ||
        !(p.offsets[1] >= 0.0f && p.offsets[1] <= 1.0f))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'offsets': expected 2 values in [0, 1]");
    if (p.steps[0] * p.steps[1] < 0.0f)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'steps': Must specify both step_y and step_x");
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of _contrib_MultiBoxTarget. */
static mxk_status tg_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    mb_param p = {.kind = MB_TARGET};
    MXK_SDK_CHECK(mb_float(attrs, "overlap_threshold", &p.overlap_threshold, err));
    MXK_SDK_CHECK(mb_float(attrs, "ignore_label", &p.ignore_label, err));
    MXK_SDK_CHECK(mb_float(attrs, "negative_mining_ratio", &p.neg_ratio, err));
    MXK_SDK_CHECK(mb_float(attrs, "negative_mining_thresh", &p.neg_thresh, err));
    MXK_SDK_CHECK(mxk_vis_attr_variances(attrs, p.var, err));
    if (p.neg_ratio > 0.0f && !(p.neg_thresh > 0.0f))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'negative_mining_thresh': must be > 0 with negative "
                             "mining, got %g",
                             (double)p.neg_thresh);
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of _contrib_MultiBoxDetection. */
static mxk_status dt_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    mb_param p = {.kind = MB_DETECTION};
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "clip", &p.clip, err));
    MXK_SDK_CHECK(mb_float(attrs, "threshold", &p.threshold, err));
    MXK_SDK_CHECK(mb_float(attrs, "nms_threshold", &p.nms_threshold, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "force_suppress", &p.force_suppress, err));
    MXK_SDK_CHECK(mxk_vis_attr_variances(attrs, p.var, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "nms_topk", &p.nms_topk, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Shapes of the three operators (see the file comment). */
static mxk_status mb_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const mb_param *p = param;
    if (num_in != (p->kind == MB_PRIOR ? 1u : 3u) || num_out != (p->kind == MB_TARGET ? 3u : 1u))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "wrong number of arguments");
    for (uint32_t i = 0; i < num_in; i++)
        if (in[i].ndim == 0)
            return MXK_OK;
    if (p->kind == MB_PRIOR) {
        if (in[0].ndim < 4 || in[0].dims[2] <= 0 || in[0].dims[3] <= 0)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "argument 'data': Input data should be 4D: batch-channel-y-x "
                                 "with height and width > 0");
        int64_t d[3] = {1, in[0].dims[2] * in[0].dims[3] * (p->num_sizes + p->num_ratios - 1), 4};
        mxk_shape o = mxk_sdk_shape_from(d, 3);
        return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
    }
    if (p->kind == MB_TARGET) {
        const mxk_shape *a = &in[0], *l = &in[1], *c = &in[2];
        if (a->ndim != 3 || a->dims[0] != 1 || a->dims[1] <= 0 || a->dims[2] != 4)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "argument 'anchor': Anchor should be batch shared N*4 tensor "
                                 "(1, num_anchors > 0, 4)");
        if (l->ndim != 3 || l->dims[1] <= 0 || l->dims[2] < 5)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "argument 'label': Label should be [batch, num_labels > 0, "
                                 "label_width >= 5] tensor");
        if (c->ndim != 3 || c->dims[2] != a->dims[1])
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "argument 'cls_pred': Prediction: [batch, num_classes, "
                                 "num_anchors]: Number of anchors mismatch");
        mxk_shape loc = mxk_sdk_shape2(l->dims[0], a->dims[1] * 4);
        mxk_shape cls = mxk_sdk_shape2(l->dims[0], a->dims[1]);
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[0], &loc, "output", "loc_target", err));
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[1], &loc, "output", "loc_mask", err));
        return mxk_sdk_shape_assign_named(&out[2], &cls, "output", "cls_target", err);
    }
    const mxk_shape *c = &in[0], *l = &in[1], *a = &in[2];
    if (c->ndim != 3 || l->ndim != 2 || a->ndim != 3 || a->dims[2] != 4)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "expected cls_prob (batch, classes, "
                             "anchors), loc_pred (batch, 4*anchors), anchor (1, anchors, 4)");
    if (c->dims[2] != a->dims[1] || a->dims[1] <= 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'anchor': Number of anchors mismatch");
    if (c->dims[2] * 4 != l->dims[1])
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'loc_pred': # anchors mismatch with # loc");
    int64_t d[3] = {c->dims[0], a->dims[1], 6};
    mxk_shape o = mxk_sdk_shape_from(d, 3);
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** MultiBoxPrior: the anchors of every location (multibox_prior.cc's MultiBoxPriorForward). */
static void pr_forward(const mb_param *p, int64_t h, int64_t w, float *out, mxk_op_req req) {
    float sy = p->steps[0], sx = p->steps[1];
    if (sy <= 0.0f || sx <= 0.0f) {
        sy = 1.0f / (float)h;
        sx = 1.0f / (float)w;
    }
    int64_t k = 0;
    for (int64_t r = 0; r < h; r++) {
        float cy = ((float)r + p->offsets[0]) * sy;
        for (int64_t c = 0; c < w; c++) {
            float cx = ((float)c + p->offsets[1]) * sx;
            for (int32_t i = 0; i < p->num_sizes + p->num_ratios - 1; i++, k += 4) {
                float size = i < p->num_sizes ? p->sizes[i] : p->sizes[0];
                float ratio =
                    sqrtf(i < p->num_sizes ? p->ratios[0] : p->ratios[i - p->num_sizes + 1]);
                float box[4];
                mxk_vis_prior_box(cy, cx, size, ratio, h, w, p->clip, box);
                for (int j = 0; j < 4; j++)
                    mxk_sdk_assign_f32(&out[k + j], box[j], req);
            }
        }
    }
}

/** One element of a score sort: value (descending) and original position. */
typedef struct mb_sort {
    float value;
    int64_t index;
} mb_sort;

/** Descending by value, then by index (a stable sort, as std::stable_sort upstream). */
static int mb_sort_cmp(const void *x, const void *y) {
    const mb_sort *a = x, *b = y;
    return mxk_vis_score_cmp(a->value, a->index, b->value, b->index);
}

/** Scratch of MultiBoxTarget for one batch element. */
typedef struct tg_work {
    float *iou;        /**< (A, L) */
    float *match_iou;  /**< A: best IoU, -1 not computed */
    int64_t *match_gt; /**< A: its ground truth, -1 none */
    signed char *flag; /**< A: -1 don't care, 0 negative, 1 positive */
    uint8_t *gt_done;  /**< L */
    mb_sort *neg;      /**< A */
} tg_work;

/** The best IoU of anchor j over the first `ng` ground truths into the match arrays. */
static void tg_best(tg_work *w, int64_t j, int64_t nl, int64_t ng) {
    float best = -1.0f;
    int64_t arg = -1;
    for (int64_t k = 0; k < ng; k++)
        if (w->iou[j * nl + k] > best) {
            best = w->iou[j * nl + k];
            arg = k;
        }
    if (arg != -1) {
        w->match_iou[j] = best;
        w->match_gt[j] = arg;
    }
}

/** MultiBoxTarget for batch element `b` (multibox_target.cc's MultiBoxTargetForward). */
static mxk_status tg_batch(const mb_param *p, tg_work *w, const float *anchor, const float *label,
                           const float *cls_pred, int64_t na, int64_t nl, int64_t lw, int64_t nc,
                           float *loc, float *mask, float *cls, mxk_error_sink *err) {
    int64_t ng = 0;
    for (; ng < nl && label[ng * lw] != -1.0f; ng++)
        ;
    if (ng < nl)
        for (int j = 1; j < 5; j++)
            if (label[ng * lw + j] != -1.0f)
                return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                     "argument 'label': padding row %lld "
                                     "has class -1 but value %g at column %d (must be -1)",
                                     (long long)ng, (double)label[ng * lw + j], j);
    for (int64_t i = 0; i < na * 4; i++) {
        loc[i] = 0.0f;
        mask[i] = 0.0f;
    }
    for (int64_t i = 0; i < na; i++)
        cls[i] = p->ignore_label;
    if (ng == 0)
        return MXK_OK;
    for (int64_t j = 0; j < na; j++) {
        for (int64_t k = 0; k < ng; k++)
            w->iou[j * nl + k] = mxk_vis_iou(anchor + j * 4, label + k * lw + 1, 1);
        w->match_iou[j] = -1.0f;
        w->match_gt[j] = -1;
        w->flag[j] = -1;
    }
    memset(w->gt_done, 0, (size_t)ng);
    int64_t npos = 0, left = ng;
    while (left > 0) { /* greedy bipartite matching */
        int64_t ba = -1, bg = -1;
        float best = 1e-6f;
        for (int64_t j = 0; j < na; j++)
            for (int64_t k = 0; w->flag[j] != 1 && k < ng; k++)
                if (!w->gt_done[k] && w->iou[j * nl + k] > best) {
                    ba = j;
                    bg = k;
                    best = w->iou[j * nl + k];
                }
        if (ba == -1)
            break;
        w->match_iou[ba] = best;
        w->match_gt[ba] = bg;
        w->gt_done[bg] = 1;
        w->flag[ba] = 1;
        npos++;
        left--;
    }
    if (p->overlap_threshold > 0.0f)
        for (int64_t j = 0; j < na; j++) {
            if (w->flag[j] == 1)
                continue;
            tg_best(w, j, nl, ng);
            if (w->match_gt[j] != -1 && w->match_iou[j] > p->overlap_threshold) {
                npos++;
                w->gt_done[w->match_gt[j]] = 1;
                w->flag[j] = 1;
            }
        }
    if (p->neg_ratio > 0.0f) {
        double want = (double)npos * p->neg_ratio;
        int64_t nneg = want < (double)(na - npos) ? (int64_t)want : na - npos, cnt = 0;
        if (nneg > 0) {
            for (int64_t j = 0; j < na; j++) {
                if (w->flag[j] == 1)
                    continue;
                if (w->match_iou[j] < 0.0f)
                    tg_best(w, j, nl, ng);
                if (!(w->match_iou[j] < p->neg_thresh) || w->flag[j] != -1)
                    continue;
                const float *cp = cls_pred + j;
                float mx = cp[0], sum = 0.0f;
                for (int64_t k = 1; k < nc; k++)
                    mx = cp[k * na] > mx ? cp[k * na] : mx;
                for (int64_t k = 0; k < nc; k++)
                    sum += expf(cp[k * na] - mx);
                w->neg[cnt].value = -(expf(cp[0] - mx) / sum);
                w->neg[cnt++].index = j;
            }
            if (cnt < nneg)
                return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                     "%lld negative candidates for %lld "
                                     "negative samples (temp.size() >= num_negative)",
                                     (long long)cnt, (long long)nneg);
            qsort(w->neg, (size_t)cnt, sizeof *w->neg, mb_sort_cmp);
            for (int64_t i = 0; i < nneg; i++)
                w->flag[w->neg[i].index] = 0;
        }
    } else {
        for (int64_t j = 0; j < na; j++)
            if (w->flag[j] != 1)
                w->flag[j] = 0;
    }
    for (int64_t j = 0; j < na; j++) {
        if (w->flag[j] == 0) {
            cls[j] = 0.0f;
            continue;
        }
        if (w->flag[j] != 1)
            continue;
        const float *g = label + w->match_gt[j] * lw, *a = anchor + j * 4;
        cls[j] = g[0] + 1.0f;
        mxk_vis_encode(a, g + 1, p->var, loc + j * 4);
        for (int k = 0; k < 4; k++)
            mask[j * 4 + k] = 1.0f;
    }
    return MXK_OK;
}

/** MultiBoxTarget over the batch into the requested outputs (WRITE: the kernel has no ADD). */
static mxk_status tg_forward(const mxk_op_ctx *ctx, const mb_param *p, const mxk_forward_args *args,
                             mxk_error_sink *err) {
    const mxk_shape *as = &args->in_data[0]->shape, *ls = &args->in_data[1]->shape,
                    *cs = &args->in_data[2]->shape;
    int64_t na = as->dims[1], nb = ls->dims[0], nl = ls->dims[1], lw = ls->dims[2],
            nc = cs->dims[1], nal;
    if (cs->dims[0] != nb)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'cls_pred': batch %lld, label has %lld",
                             (long long)cs->dims[0], (long long)nb);
    MXK_SDK_CHECK(mxk_sdk_dim_mul(na, nl, &nal, "anchors * labels", err));
    tg_work w;
    float *scratch, *dst[3];
    uint64_t a = (uint64_t)na;
    const cb_vision_part parts[] = {{(void **)&w.neg, a, sizeof *w.neg},
                                    {(void **)&w.match_gt, a, sizeof *w.match_gt},
                                    {(void **)&w.iou, (uint64_t)nal, sizeof *w.iou},
                                    {(void **)&w.match_iou, a, sizeof(float)},
                                    {(void **)&scratch, a * 4, sizeof(float)},
                                    {(void **)&w.flag, a, 1},
                                    {(void **)&w.gt_done, (uint64_t)nl, 1}};
    MXK_SDK_CHECK(cb_vision_temp(ctx, MXK_SDK_COUNTOF(parts), parts, err));
    int64_t step[3] = {na * 4, na * 4, na};
    for (int i = 0; i < 3; i++) {
        /* an output nobody wants is computed into the scratch (the batches overwrite it) */
        int want = args->req[i] != MXK_REQ_NULL;
        dst[i] = want ? cb_f32(args->out_data[i]) : scratch;
        step[i] = want ? step[i] : 0;
    }
    for (int64_t b = 0; b < nb; b++)
        MXK_SDK_CHECK(
            tg_batch(p, &w, cb_f32(args->in_data[0]), cb_f32(args->in_data[1]) + b * nl * lw,
                     cb_f32(args->in_data[2]) + b * nc * na, na, nl, lw, nc, dst[0] + b * step[0],
                     dst[1] + b * step[1], dst[2] + b * step[2], err));
    return MXK_OK;
}

/** MultiBoxDetection for one batch element into out (A, 6), using tmp (A, 6) and sorter. */
static void dt_batch(const mb_param *p, const float *cls, const float *lp, const float *anchor,
                     int64_t nc, int64_t na, float *out, float *tmp, mb_sort *sorter) {
    for (int64_t i = 0; i < na * 6; i++)
        out[i] = -1.0f;
    for (int64_t i = 0; i < na; i++) {
        float score = -1.0f;
        int64_t id = 0;
        for (int64_t j = 1; j < nc; j++)
            if (cls[j * na + i] > score) {
                score = cls[j * na + i];
                id = j;
            }
        if (id > 0 && score < p->threshold)
            id = 0;
        float *o = tmp + i * 6;
        o[0] = (float)(id - 1);
        o[1] = score;
        mxk_vis_decode(anchor + i * 4, lp + i * 4, p->var, p->clip, o + 2);
    }
    int64_t valid = 0;
    for (int64_t i = 0; i < na; i++)
        if (tmp[i * 6] >= 0.0f)
            memcpy(out + 6 * valid++, tmp + i * 6, 6 * sizeof *out);
    if (valid < 1 || p->nms_threshold <= 0.0f || p->nms_threshold > 1.0f)
        return;
    memcpy(tmp, out, (size_t)(na * 6) * sizeof *out);
    for (int64_t i = 0; i < valid; i++) {
        sorter[i].value = out[i * 6 + 1];
        sorter[i].index = i;
    }
    qsort(sorter, (size_t)valid, sizeof *sorter, mb_sort_cmp);
    int64_t keep = valid;
    if (p->nms_topk > 0 && p->nms_topk < keep) {
        keep = p->nms_topk;
        for (int64_t i = keep; i < valid; i++)
            out[i * 6] = -1.0f;
    }
    for (int64_t i = 0; i < keep; i++)
        memcpy(out + i * 6, tmp + sorter[i].index * 6, 6 * sizeof *out);
    for (int64_t i = 0; i < keep; i++) {
        if (out[i * 6] < 0.0f)
            continue;
        for (int64_t j = i + 1; j < keep; j++)
            if (out[j * 6] >= 0.0f && (p->force_suppress || out[i * 6] == out[j * 6]) &&
                mxk_vis_iou(out + i * 6 + 2, out + j * 6 + 2, 0) >= p->nms_threshold)
                out[j * 6] = -1.0f;
    }
}

/** MultiBoxDetection over the batch (WRITE: the kernel has no ADD). */
static mxk_status dt_forward(const mxk_op_ctx *ctx, const mb_param *p, const mxk_forward_args *args,
                             mxk_error_sink *err) {
    const mxk_shape *cs = &args->in_data[0]->shape;
    int64_t nb = cs->dims[0], nc = cs->dims[1], na = cs->dims[2];
    float *tmp;
    mb_sort *sorter;
    const cb_vision_part parts[] = {{(void **)&sorter, (uint64_t)na, sizeof *sorter},
                                    {(void **)&tmp, (uint64_t)na * 6, sizeof *tmp}};
    MXK_SDK_CHECK(cb_vision_temp(ctx, MXK_SDK_COUNTOF(parts), parts, err));
    for (int64_t b = 0; b < nb; b++)
        dt_batch(p, cb_f32(args->in_data[0]) + b * nc * na, cb_f32(args->in_data[1]) + b * na * 4,
                 cb_f32(args->in_data[2]), nc, na, cb_f32(args->out_data[0]) + b * na * 6, tmp,
                 sorter);
    return MXK_OK;
}

/** Forward of the three operators. */
static mxk_status mb_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const mb_param *p = param;
    uint32_t nin = p->kind == MB_PRIOR ? 1 : 3, nout = p->kind == MB_TARGET ? 3 : 1;
    MXK_SDK_CHECK(cbt_check_forward(args, nin, nout, mb_infer_shape, param, 0, err));
    if (p->kind == MB_TARGET)
        return tg_forward(ctx, p, args, err);
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    if (p->kind == MB_DETECTION)
        return dt_forward(ctx, p, args, err);
    const mxk_shape *ds = &args->in_data[0]->shape;
    pr_forward(p, ds->dims[2], ds->dims[3], cb_f32(args->out_data[0]), args->req[0]);
    return MXK_OK;
}

/** Zero gradients of every input, by request. */
static mxk_status mb_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const mb_param *p = param;
    uint32_t nin = p->kind == MB_PRIOR ? 1 : 3, nout = p->kind == MB_TARGET ? 3 : 1;
    MXK_SDK_CHECK(cb_check_backward_counts(args, nin, nout, nout, err));
    const char *const *names = p->kind == MB_PRIOR    ? pr_args
                               : p->kind == MB_TARGET ? tg_args
                                                      : dt_args;
    for (uint32_t i = 0; i < nin; i++)
        MXK_SDK_CHECK(cbt_zero_grad(args->in_grad[i], args->req[i], names[i], err));
    return MXK_OK;
}

/** Registers one MultiBox operator. */
static mxk_status mb_register(mxk_registrar *reg, const char *name, const char *alias,
                              const char *doc, const mxk_attr_def *attrs, uint32_t num_attrs,
                              const char *const *args, const char *const *outs,
                              mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *),
                              mxk_error_sink *err) {
    const char *aliases[] = {alias, NULL};
    mxk_op_def def;
    cbt_def_init(&def, doc, attrs, num_attrs, args, parse);
    if (outs != NULL)
        def.outputs = outs;
    def.infer_shape = mb_infer_shape;
    def.backward_dependency = cbt_dep_none;
    if (parse != pr_parse) /* Target and Detection work in temp space, as upstream */
        def.forward_resources = cb_vision_resources_temp;
    def.aliases = aliases;
    def.name = name;
    /* without ADD support: the executor turns an ADD into WRITE to a temporary and a sum */
    mxk_op_kernel_def k;
    cb_kernel_init(&k, name, mb_forward, mb_backward);
    k.flags &= ~(uint32_t)MXK_KERNEL_SUPPORTS_ADDTO;
    return cb_register(reg, &def, &k, err);
}

/** Registers the MultiBox operators with their CPU kernels. */
mxk_status cb_register_vision_multibox(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(mb_register(reg, "_contrib_MultiBoxPrior", "_npx_multibox_prior",
                              "Generate prior(anchor) boxes from data, sizes and ratios.", pr_attrs,
                              MXK_SDK_COUNTOF(pr_attrs), pr_args, NULL, pr_parse, err));
    MXK_SDK_CHECK(mb_register(reg, "_contrib_MultiBoxTarget", "_npx_multibox_target",
                              "Compute Multibox training targets.", tg_attrs,
                              MXK_SDK_COUNTOF(tg_attrs), tg_args, tg_outs, tg_parse, err));
    return mb_register(reg, "_contrib_MultiBoxDetection", "_npx_multibox_detection",
                       "Convert multibox detection predictions.", dt_attrs,
                       MXK_SDK_COUNTOF(dt_attrs), dt_args, NULL, dt_parse, err);
}
