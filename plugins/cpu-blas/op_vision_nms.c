/*
 * cpu-blas plugin: _contrib_box_nms (alias _contrib_box_non_maximum_suppression),
 * non-maximum suppression of scored boxes.
 *
 * Semantics: MXNet src/operator/contrib/bounding_box-inl.h, bounding_box-common.h and
 * bounding_box.cc (BoxNMSParam: overlap_thresh 0.5, valid_thresh 0, topk -1,
 * coord_start 2, score_index 1, id_index -1, background_id -1, force_suppress False,
 * in_format / out_format corner|center). The input (..., n, k) is a batch of n boxes
 * of width k (leading dims flattened into the batch). Per batch element: boxes with
 * score > valid_thresh (and, with id_index >= 0, a class != background_id) are sorted
 * by descending score (ties keep input order); only the first topk take part; going
 * down that list, a box suppresses every later one (of its class unless
 * force_suppress, classes compared as int) whose IoU with it exceeds overlap_thresh
 * (IoU = intersection / (area sum - intersection), negative widths count as 0 area).
 * The kept rows are copied whole to the front of the output in that order, the rest
 * is -1, and the hidden output (..., n, 1) records the flat input row of each output
 * row (-1 for none). With no valid box anywhere in the batch everything is -1; with
 * topk 0 the input is copied and the record is 0, 1, 2, .... Coordinates are then
 * converted to out_format, skipping rows whose first coordinate is negative (as
 * upstream). Backward (reads out_grad and the outputs, ElemwiseGradUseOut) copies each
 * output row's gradient to its recorded input row; other rows get 0.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cb_tensor.h"
#include "mxk_vision.h"
#include "op_vision.h"

/** Parsed attributes. */
typedef struct nms_param {
    float overlap_thresh, valid_thresh;
    int64_t topk, coord_start, score_index, id_index, background_id;
    int32_t force_suppress, in_format, out_format; /**< formats: 0 corner, 1 center */
} nms_param;

static const char *const nms_args[] = {"data", NULL};
/* no FListOutputNames upstream: NNVM names the outputs output0, output1 */
static const char *const nms_outs[] = {"output0", "output1", NULL};
static const char *const nms_aliases[] = {"_contrib_box_non_maximum_suppression", NULL};

/** Attribute schema (MXNet 1.9.1 BoxNMSParam). */
static const mxk_attr_def nms_attrs[] = {
    MXK_SDK_ATTR("overlap_thresh", MXK_ATTR_FLOAT, 0, "0.5", NULL,
                 "Overlapping(IoU) threshold to suppress object with smaller score."),
    MXK_SDK_ATTR("valid_thresh", MXK_ATTR_FLOAT, 0, "0", NULL,
                 "Filter input boxes to those whose scores greater than valid_thresh."),
    MXK_SDK_ATTR("topk", MXK_ATTR_INT, 0, "-1", NULL,
                 "Apply nms to topk boxes with descending scores, -1 to no restriction."),
    MXK_SDK_ATTR("coord_start", MXK_ATTR_INT, 0, "2", NULL,
                 "Start index of the consecutive 4 coordinates."),
    MXK_SDK_ATTR("score_index", MXK_ATTR_INT, 0, "1", NULL,
                 "Index of the scores/confidence of boxes."),
    MXK_SDK_ATTR("id_index", MXK_ATTR_INT, 0, "-1", NULL,
                 "Optional, index of the class categories, -1 to disable."),
    MXK_SDK_ATTR("background_id", MXK_ATTR_INT, 0, "-1", NULL,
                 "Optional, id of the background class which will be ignored in nms."),
    MXK_SDK_ATTR("force_suppress", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If false and id_index is provided, nms only applies to boxes of one class."),
    MXK_SDK_ATTR("in_format", MXK_ATTR_ENUM, 0, "corner", "corner|center",
                 "The input box encoding type: [xmin, ymin, xmax, ymax] or [x, y, w, h]."),
    MXK_SDK_ATTR("out_format", MXK_ATTR_ENUM, 0, "corner", "corner|center",
                 "The output box encoding type: [xmin, ymin, xmax, ymax] or [x, y, w, h]."),
};

/** Parses the attributes (indices into int range). */
static mxk_status nms_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    nms_param p;
    double d;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "overlap_thresh", &d, err));
    p.overlap_thresh = (float)d;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "valid_thresh", &d, err));
    p.valid_thresh = (float)d;
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "topk", INT32_MIN, INT32_MAX, &p.topk, err));
    MXK_SDK_CHECK(
        mxk_sdk_attr_int_range(attrs, "coord_start", INT32_MIN, INT32_MAX, &p.coord_start, err));
    MXK_SDK_CHECK(
        mxk_sdk_attr_int_range(attrs, "score_index", INT32_MIN, INT32_MAX, &p.score_index, err));
    MXK_SDK_CHECK(
        mxk_sdk_attr_int_range(attrs, "id_index", INT32_MIN, INT32_MAX, &p.id_index, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "background_id", INT32_MIN, INT32_MAX,
                                         &p.background_id, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "force_suppress", &p.force_suppress, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "in_format", "corner|center", &p.in_format, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "out_format", "corner|center", &p.out_format, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** output = data; temp = data with the last dim 1; the index attributes checked (BoxNMSShape). */
static mxk_status nms_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    const nms_param *p = param;
    if (num_in != 1 || num_out != 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "BoxNMS output: [output, temp]");
    if (in[0].ndim == 0 && out[0].ndim != 0)
        in[0] = out[0];
    if (in[0].ndim == 0)
        return MXK_OK;
    const mxk_shape *s = &in[0];
    if (s->ndim < 2)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': input must have dim >= 2 the last two dimensions "
                             "are num_box and box_width, %d dims provided",
                             (int)s->ndim);
    int64_t w = s->dims[s->ndim - 1], expected = p->id_index >= 0 ? 6 : 5;
    int64_t cs = p->coord_start, ce = p->coord_start + 3, si = p->score_index, ii = p->id_index;
    if (w < expected)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': the last dimension must have at least 5 elements "
                             "namely (score, coordinates x 4) %lld provided, %lld expected.",
                             (long long)w, (long long)expected);
    if (si < 0 || si >= w)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "score_index: %lld out of range: (0, %lld)",
                             (long long)si, (long long)w);
    if (si >= cs && si <= ce)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "score_index: %lld conflict with coordinates: (%lld, %lld).",
                             (long long)si, (long long)cs, (long long)ce);
    if (cs < 0 || ce >= w)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "coordinates: (%lld, %lld) out of range:: (0, %lld)", (long long)cs,
                             (long long)ce, (long long)w);
    if (ii >= 0 && ii >= w)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "id_index: %lld out of range: (0, %lld)",
                             (long long)ii, (long long)w);
    if (ii >= 0 && ii >= cs && ii <= ce)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "id_index: %lld conflict with coordinates: (%lld, %lld).",
                             (long long)ii, (long long)cs, (long long)ce);
    if (ii >= 0 && ii == si)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "id_index: %lld conflict with score_index: %lld",
                             (long long)ii, (long long)si);
    if (mxk_sdk_shape_count(s) / (uint64_t)(w > 0 ? w : 1) > INT32_MAX)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': more than 2^31-1 boxes (the record is int32)");
    mxk_shape t = *s;
    t.dims[t.ndim - 1] = 1;
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[0], s, "output", "output0", err));
    return mxk_sdk_shape_assign_named(&out[1], &t, "output", "output1", err);
}

/** Backward reads out_grad and both outputs (upstream's ElemwiseGradUseOut). */
static void nms_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                    uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                    uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_out_data[0] = need_out_data[1] = 1;
}

/** One candidate: score and flat row index. */
typedef struct nms_cand {
    float score;
    int64_t row;
} nms_cand;

/** Descending score, ties in row order (std::stable_sort upstream). */
static int nms_cmp(const void *x, const void *y) {
    const nms_cand *a = x, *b = y;
    return mxk_vis_score_cmp(a->score, a->row, b->score, b->row);
}

/** NMS of one batch element's `nc` sorted candidates into out / rec (both prefilled -1). */
static void nms_batch(const nms_param *p, const float *x, int64_t w, nms_cand *c, int64_t nc,
                      float *area, float *out, float *rec) {
    int center = p->in_format == 1;
    for (int64_t i = 0; i < nc; i++)
        area[i] = mxk_vis_nms_area(x + c[i].row * w + p->coord_start, center);
    for (int64_t r = 0; r < nc; r++) {
        if (c[r].row < 0)
            continue;
        const float *rb = x + c[r].row * w;
        for (int64_t q = r + 1; q < nc; q++) {
            if (c[q].row < 0)
                continue;
            const float *qb = x + c[q].row * w;
            if (!p->force_suppress && p->id_index >= 0 &&
                mxk_vis_nms_class(rb[p->id_index]) != mxk_vis_nms_class(qb[p->id_index]))
                continue;
            float in =
                mxk_vis_nms_intersect(rb + p->coord_start, qb + p->coord_start, center) *
                mxk_vis_nms_intersect(rb + p->coord_start + 1, qb + p->coord_start + 1, center);
            if (in / (area[r] + area[q] - in) > p->overlap_thresh)
                c[q].row = -1;
        }
    }
    int64_t k = 0;
    for (int64_t i = 0; i < nc; i++)
        if (c[i].row >= 0) {
            memcpy(out + k * w, x + c[i].row * w, (size_t)w * sizeof *out);
            rec[k++] = (float)c[i].row;
        }
}

/** Forward: see the file comment. */
static mxk_status nms_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const nms_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, 1, 2, nms_infer_shape, param, 0, err));
    const mxk_shape *s = &args->in_data[0]->shape;
    int64_t w = s->dims[s->ndim - 1], n = s->dims[s->ndim - 2];
    int64_t nb = (int64_t)mxk_sdk_shape_prod(s, 0, s->ndim - 2), total = nb * n;
    const float *x = cb_f32(args->in_data[0]);
    float *out = cb_f32(args->out_data[0]), *rec = cb_f32(args->out_data[1]);
    int64_t topk = p->topk < 0 ? n : (p->topk < n ? p->topk : n);
    if (topk < 1) {
        memcpy(out, x, (size_t)(total * w) * sizeof *out);
        for (int64_t i = 0; i < total; i++)
            rec[i] = (float)i;
        return MXK_OK;
    }
    nms_cand *c;
    float *area;
    const cb_vision_part parts[] = {{(void **)&c, (uint64_t)n, sizeof *c},
                                    {(void **)&area, (uint64_t)n, sizeof *area}};
    MXK_SDK_CHECK(cb_vision_temp(ctx, MXK_SDK_COUNTOF(parts), parts, err));
    for (int64_t i = 0; i < total * w; i++)
        out[i] = -1.0f;
    for (int64_t i = 0; i < total; i++)
        rec[i] = -1.0f;
    for (int64_t b = 0; b < nb; b++) {
        int64_t nc = 0;
        for (int64_t i = 0; i < n; i++) {
            const float *row = x + (b * n + i) * w;
            float sc = row[p->score_index];
            if (sc > p->valid_thresh &&
                (p->id_index < 0 || row[p->id_index] != (float)p->background_id)) {
                c[nc].score = sc;
                c[nc++].row = b * n + i;
            }
        }
        qsort(c, (size_t)nc, sizeof *c, nms_cmp);
        nms_batch(p, x, w, c, nc < topk ? nc : topk, area, out + b * n * w, rec + b * n);
    }
    if (p->in_format != p->out_format)
        for (int64_t i = 0; i < total; i++)
            mxk_vis_nms_convert(out + i * w + p->coord_start, p->out_format == 1);
    return MXK_OK;
}

/** Backward: each output row's gradient to its recorded input row, by request. */
static mxk_status nms_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 2, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0], *rt = args->out_data[1], *dxt = args->in_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(dyt, "gradient of 'output0'", err));
    MXK_SDK_CHECK(cb_check_tensor(rt, "output 'output1'", err));
    MXK_SDK_CHECK(cb_check_grad(dxt, req, &dyt->shape, "data", err));
    const mxk_shape *s = &dyt->shape;
    uint64_t total = mxk_sdk_shape_count(&rt->shape);
    int64_t w = s->ndim > 0 ? s->dims[s->ndim - 1] : 0;
    if (total * (uint64_t)w != mxk_sdk_shape_count(s))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "output 'output1' does not match the gradient");
    float *dx = cb_f32(dxt);
    const float *dy = cb_f32(dyt), *rec = cb_f32(rt);
    if (req != MXK_REQ_ADD)
        mxk_sdk_fill_f32(dx, 0.0f, (size_t)(total * (uint64_t)w), MXK_REQ_WRITE);
    for (uint64_t i = 0; i < total; i++)
        if (rec[i] >= 0.0f && rec[i] < (float)total)
            mxk_sdk_copy_f32(dx + (uint64_t)rec[i] * (uint64_t)w, dy + i * (uint64_t)w, (size_t)w,
                             MXK_REQ_ADD);
    return MXK_OK;
}

/** Registers _contrib_box_nms with its CPU kernel. */
mxk_status cb_register_vision_nms(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    cbt_def_init(&def, "Apply non-maximum suppression to input.", nms_attrs,
                 MXK_SDK_COUNTOF(nms_attrs), nms_args, nms_parse);
    def.outputs = nms_outs;
    def.num_visible_outputs = cbt_num_visible_1;
    def.infer_shape = nms_infer_shape;
    def.backward_dependency = nms_backward_dependency;
    def.forward_resources = cb_vision_resources_temp;
    def.aliases = nms_aliases;
    return cbt_register(reg, &def, "_contrib_box_nms", nms_forward, nms_backward, 0, err);
}
