/*
 * cpu-blas plugin: Crop (2-D spatial crop of NCHW data).
 *
 * Semantics: MXNet src/operator/crop-inl.h, crop.cc. Arguments arg0 (the data)
 * and, with num_args 2, arg1 (whose H, W give the crop size; h_w is then
 * ignored). Output (N, C, th, tw) with (th, tw) = h_w or arg1's spatial size.
 * The crop starts at `offset` (y, x), or centred ((H - th)/2, (W - tw)/2) with
 * center_crop. Backward: arg0's gradient is dy inside the crop and 0 elsewhere,
 * arg1's gradient is 0. It reads out_grad only (shapes come from the gradients).
 */
#include <string.h>

#include "cb_tensor.h"

/** Parsed attributes of Crop. */
typedef struct cr_param {
    int64_t num_args;
    int64_t offset[2];
    int64_t hw[2];
    int32_t center;
} cr_param;

static const char *const cr_args[] = {"arg0", "arg1", NULL};
static const char *const cr_outs[] = {"output", NULL};

/** Attribute schema (MXNet 1.9.1 CropParam). */
static const mxk_attr_def cr_attrs[] = {
    MXK_SDK_ATTR("num_args", MXK_ATTR_INT, 1, NULL, NULL,
                 "1: crop to h_w; 2: crop arg0 to the spatial size of arg1."),
    MXK_SDK_ATTR("offset", MXK_ATTR_SHAPE, 0, "(0,0)", NULL, "Crop offset (y, x)."),
    MXK_SDK_ATTR("h_w", MXK_ATTR_SHAPE, 0, "(0,0)", NULL, "Crop height and width."),
    MXK_SDK_ATTR("center_crop", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Centre the crop (offset ignored)."),
};

/** Reads a 2-tuple of integers in [0, INT32_MAX] (sums with input dims cannot overflow). */
static mxk_status cr_pair(const mxk_attrs *attrs, const char *key, int64_t out[2],
                          mxk_error_sink *err) {
    mxk_shape s;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, key, &s, err));
    if (s.ndim != 2 || s.dims[0] < 0 || s.dims[1] < 0 || s.dims[0] > INT32_MAX ||
        s.dims[1] > INT32_MAX)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': expected two integers in [0, %d] (y, x)", key,
                             INT32_MAX);
    out[0] = s.dims[0], out[1] = s.dims[1];
    return MXK_OK;
}

/** Parses the attributes. */
static mxk_status cr_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cr_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_args", 1, 2, &p.num_args, err));
    MXK_SDK_CHECK(cr_pair(attrs, "offset", p.offset, err));
    MXK_SDK_CHECK(cr_pair(attrs, "h_w", p.hw, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "center_crop", &p.center, err));
    if (p.num_args == 1 && (p.hw[0] == 0 || p.hw[1] == 0))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'h_w': required (positive) with num_args 1");
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Argument names: arg0[, arg1]. */
static mxk_status cr_list_arguments(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    const cr_param *p = param;
    for (int64_t i = 0; i < p->num_args; i++)
        MXK_SDK_CHECK(mxk_sdk_host()->name_list_add(out, cr_args[i], err));
    return MXK_OK;
}

/** Crop size and offsets for data d (and arg1 shape r when num_args 2). */
static mxk_status cr_geom(const cr_param *p, const mxk_shape *d, const mxk_shape *r, int64_t *th,
                          int64_t *tw, int64_t *oy, int64_t *ox, mxk_error_sink *err) {
    *th = p->num_args == 2 ? r->dims[2] : p->hw[0];
    *tw = p->num_args == 2 ? r->dims[3] : p->hw[1];
    if (p->center) {
        *oy = (d->dims[2] - *th) / 2;
        *ox = (d->dims[3] - *tw) / 2;
    } else {
        *oy = p->offset[0];
        *ox = p->offset[1];
    }
    if (*oy < 0 || *ox < 0 || *oy + *th > d->dims[2] || *ox + *tw > d->dims[3])
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "crop (%lld x %lld at offset %lld, %lld) exceeds the input "
                             "(%lld x %lld)",
                             (long long)*th, (long long)*tw, (long long)*oy, (long long)*ox,
                             (long long)d->dims[2], (long long)d->dims[3]);
    return MXK_OK;
}

/** Shape inference: 4-D inputs; output (N, C, th, tw). */
static mxk_status cr_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const cr_param *p = param;
    if (num_in != (uint32_t)p->num_args || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "Crop expects %lld arguments and 1 "
                             "output",
                             (long long)p->num_args);
    for (uint32_t i = 0; i < num_in; i++) {
        if (in[i].ndim == 0)
            return MXK_OK;
        if (in[i].ndim != 4) {
            char s[MXK_SDK_SHAPE_STR_MAX];
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument '%s': Crop needs 4-D data, got %s",
                                 cr_args[i], mxk_sdk_shape_format(&in[i], s, sizeof s));
        }
    }
    if (!mxk_sdk_shape_is_known(&in[0]))
        return MXK_OK;
    /* past this, offset (< 2^31) + crop size cannot overflow */
    MXK_SDK_CHECK(mxk_sdk_shapes_check_count(in, num_in, "argument", cr_args, err));
    int64_t th, tw, oy, ox;
    MXK_SDK_CHECK(cr_geom(p, &in[0], num_in == 2 ? &in[1] : NULL, &th, &tw, &oy, &ox, err));
    int64_t od[4] = {in[0].dims[0], in[0].dims[1], th, tw};
    mxk_shape y = mxk_sdk_shape_from(od, 4);
    return mxk_sdk_shape_assign_named(&out[0], &y, "output", "output", err);
}

/** All float32. */
static mxk_status cr_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, cr_args, out, num_out, cr_outs, aux,
                                      num_aux, err);
}

/** Forward: copies the window by the request. */
static mxk_status cr_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cr_param *p = param;
    MXK_SDK_CHECK(cb_check_forward(args, (uint32_t)p->num_args, 1, cr_args, cr_outs, cr_infer_shape,
                                   param, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_shape *d = &args->in_data[0]->shape;
    int64_t th, tw, oy, ox;
    MXK_SDK_CHECK(
        cr_geom(p, d, p->num_args == 2 ? &args->in_data[1]->shape : NULL, &th, &tw, &oy, &ox, err));
    const int64_t H = d->dims[2], W = d->dims[3];
    const float *x = cb_f32(args->in_data[0]);
    float *y = cb_f32(args->out_data[0]);
    for (int64_t nc = 0; nc < d->dims[0] * d->dims[1]; nc++)
        for (int64_t h = 0; h < th; h++)
            mxk_sdk_copy_f32(y + (nc * th + h) * tw, x + nc * H * W + (oy + h) * W + ox, (size_t)tw,
                             req);
    return MXK_OK;
}

/** Backward: dx = dy inside the crop, 0 outside; arg1 gets 0. */
static mxk_status cr_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cr_param *p = param;
    uint32_t ni = (uint32_t)p->num_args;
    MXK_SDK_CHECK(cb_check_backward_counts(args, ni, 1, 1, err));
    if (ni == 2 && args->req[1] != MXK_REQ_NULL) {
        MXK_SDK_CHECK(cb_check_tensor(args->in_grad[1], "gradient of 'arg1'", err));
        if (args->req[1] != MXK_REQ_ADD)
            memset(args->in_grad[1]->data, 0,
                   sizeof(float) * (size_t)mxk_sdk_shape_count(&args->in_grad[1]->shape));
    }
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cb_check_tensor(args->out_grad[0], "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(args->in_grad[0], "gradient of 'arg0'", err));
    const mxk_shape *d = &args->in_grad[0]->shape;
    const mxk_shape *ys = &args->out_grad[0]->shape;
    if (d->ndim != 4 || ys->ndim != 4 || ys->dims[0] != d->dims[0] || ys->dims[1] != d->dims[1])
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "Crop backward: inconsistent shapes");
    int64_t th, tw, oy, ox;
    MXK_SDK_CHECK(cr_geom(p, d, ys, &th, &tw, &oy, &ox, err));
    if (th != ys->dims[2] || tw != ys->dims[3])
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "Crop backward: gradient shape mismatch");
    const int64_t H = d->dims[2], W = d->dims[3];
    const float *dy = cb_f32(args->out_grad[0]);
    float *dx = cb_f32(args->in_grad[0]);
    if (req != MXK_REQ_ADD)
        memset(dx, 0, sizeof(float) * (size_t)mxk_sdk_shape_count(d));
    for (int64_t nc = 0; nc < d->dims[0] * d->dims[1]; nc++)
        for (int64_t h = 0; h < th; h++)
            mxk_sdk_copy_f32(dx + nc * H * W + (oy + h) * W + ox, dy + (nc * th + h) * tw,
                             (size_t)tw, MXK_REQ_ADD);
    return MXK_OK;
}

/** Registers Crop and its CPU kernel. */
mxk_status cb_register_crop(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = "Crop";
    def.description = "Crops the spatial dimensions of NCHW data.";
    def.attrs = cr_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(cr_attrs);
    def.outputs = cr_outs;
    def.parse_param = cr_parse;
    def.free_param = cbt_param_free;
    def.list_arguments = cr_list_arguments;
    def.infer_shape = cr_infer_shape;
    def.infer_type = cr_infer_type;
    def.backward_dependency = cbt_dep_out_grad;
    mxk_op_kernel_def k;
    cb_kernel_init(&k, "Crop", cr_forward, cr_backward);
    return cb_register(reg, &def, &k, err);
}
