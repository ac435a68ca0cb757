/*
 * cpu-blas plugin, init group: Pad (alias pad).
 *
 * Semantics: MXNet src/operator/pad-inl.h (PadParam, PadProp::InferShape) and
 * src/operator/pad.cc. `mode` constant|edge|reflect (required), `pad_width`
 * (required: before_1, after_1, ..., before_N, after_N), `constant_value` (0).
 * Inputs of 4 or 5 dims only, no padding on the first two axes; output dim i is
 * before_i + in_i + after_i. constant fills with constant_value, edge repeats the
 * border element, reflect mirrors without repeating the border (numpy's
 * "reflect": index -1 reads 1), which needs every width smaller than its dim.
 * MXNet checks that only for the two axes after (N, C); mxk checks every padded
 * axis (a 5-D reflect with a width >= the last dim reads outside the input in
 * MXNet). Backward sums the output gradient onto the input positions read
 * (constant positions give nothing) and reads only it. Forward takes every dtype
 * (output dtype = input dtype; MXNet: real types), backward float32.
 */
#include "mxk_index.h"
#include "mxk_index_attr.h"
#include "op_init.h"

/** Most pad_width values (2 per dim of a 5-D input; mxk_shape holds only 8). */
#define PD_MAX_WIDTHS 10

static const char *const pd_data[] = {"data", NULL};

/** Parsed attributes. */
typedef struct pd_param {
    cbi_gather_param g; /**< the kernels' view (first member) */
    int32_t mode;       /**< 0 constant, 1 edge, 2 reflect */
    int32_t nwidth;     /**< number of pad_width values */
    int64_t width[PD_MAX_WIDTHS];
} pd_param;

/* Shape inference and index map, named in the parameters. */
static mxk_status pd_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err);
static void pd_map(const void *param, cbi_map *m);

/** Attribute schema (PadParam). */
static const mxk_attr_def pd_attrs[] = {
    MXK_SDK_ATTR("mode", MXK_ATTR_ENUM, 1, NULL, "constant|edge|reflect", "Padding type."),
    MXK_SDK_ATTR("pad_width", MXK_ATTR_STRING, 1, NULL, NULL,
                 "Widths (before_1, after_1, ..., before_N, after_N)."),
    MXK_SDK_ATTR("constant_value", MXK_ATTR_FLOAT, 0, "0", NULL,
                 "The value of the padding in constant mode."),
};

/** parse_param. */
static mxk_status pd_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    pd_param p = {.g = {1, pd_infer_shape, pd_map, 0.0}};
    const char *raw;
    double v;
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", "constant|edge|reflect", &p.mode, err));
    MXK_SDK_CHECK(mxk_sdk_attr_string(attrs, "pad_width", &raw, err));
    MXK_SDK_CHECK(mxk_idx_attr_widths("pad_width", raw, PD_MAX_WIDTHS, &p.nwidth, p.width, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "constant_value", &v, err));
    p.g.fill = v;
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Output shape (PadProp::InferShape), from the known input rank. */
static mxk_status pd_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const pd_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    const mxk_shape *d = &in[0];
    if (d->ndim == 0)
        return MXK_OK;
    if (d->ndim != 4 && d->ndim != 5)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                             "Current implementation only supports 4-D or 5-D input.");
    for (int32_t i = 0; i < 4 && i < p->nwidth; i++)
        if (p->width[i] != 0)
            return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                                 "Current implementation expects padding on the first two axes "
                                 "to be zero.");
    if (p->nwidth != 2 * d->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "Input shape vs padding spec mismatch: %d dims need %d widths, got %d",
                             (int)d->ndim, 2 * (int)d->ndim, (int)p->nwidth);
    MXK_SDK_CHECK(mxk_sdk_shapes_check_count(in, 1, "argument", pd_data, err));
    mxk_shape o = *d;
    for (int32_t i = 0; i < d->ndim; i++) {
        const int64_t *w = &p->width[2 * i];
        if (d->dims[i] == 0)
            continue;
        if (p->mode == 2 && (w[0] >= d->dims[i] || w[1] >= d->dims[i]))
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "Current implementation of reflection padding only supports "
                                 "padding sizes smaller than the input size (axis %d: size %lld, "
                                 "widths %lld and %lld)",
                                 (int)i, (long long)d->dims[i], (long long)w[0], (long long)w[1]);
        MXK_SDK_CHECK(mxk_sdk_dim_add(d->dims[i], w[0], &o.dims[i], "output dim", err));
        MXK_SDK_CHECK(mxk_sdk_dim_add(o.dims[i], w[1], &o.dims[i], "output dim", err));
    }
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** The map: output j reads input j - before, outside by mode (mxk_idx_pad_pos). */
static void pd_map(const void *param, cbi_map *m) {
    const pd_param *p = param;
    for (int32_t d = 0; d < m->ndim; d++)
        for (int64_t j = 0; j < m->out_dims[d]; j++)
            m->tab[d][j] =
                mxk_idx_pad_pos(j, p->width[2 * d], m->in_dims[d], (mxk_pad_mode)p->mode);
}

/** Registers Pad. */
mxk_status cb_register_init_pad(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const aliases[] = {"pad", NULL};
    static const cbi_op op = {"Pad",
                              aliases,
                              "Pads the input with a constant, its edge values or its reflection.",
                              pd_attrs,
                              MXK_SDK_COUNTOF(pd_attrs),
                              pd_data,
                              pd_parse,
                              pd_infer_shape,
                              cbi_infer_type_same,
                              cbi_gather_forward,
                              cbi_gather_backward,
                              0};
    return cbi_register_ops(reg, &op, 1, err);
}
