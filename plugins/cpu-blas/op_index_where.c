/*
 * cpu-blas plugin: where.
 *
 * Semantics: MXNet src/operator/tensor/control_flow_op.h / control_flow_op.cc
 * (WhereOpShape, WhereOpType, WhereOpForward, WhereOpBackward). Arguments
 * condition, x, y; x, y and the output share one shape; condition has that shape,
 * or is 1-D with x.shape[0] elements (one per row). out = condition != 0 ? x : y
 * (NaN counts as true). Gradients: x gets out_grad where the condition holds, y
 * where it does not, condition zeros; backward reads out_grad and condition.
 * The condition may be of any dtype (float32 when unknown).
 */
#include "op_index.h"

static const char *const wh_args[] = {"condition", "x", "y", NULL};

/** Shapes: x, y, output merged; condition the same or (x.shape[0],). */
static mxk_status wh_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_sdk_infer_shape_same(in + 1, 2, wh_args + 1, out, 1, NULL, err));
    const mxk_shape *t = &out[0];
    if (in[0].ndim == 0 || t->ndim == 0)
        return MXK_OK;
    if (in[0].ndim == 1 && t->ndim != 1) {
        if (t->dims[0] != 0 && in[0].dims[0] != 0 && in[0].dims[0] != t->dims[0])
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "a 1-D condition must have x.shape[0] = %lld elements, "
                                 "got %lld",
                                 (long long)t->dims[0], (long long)in[0].dims[0]);
        return MXK_OK;
    }
    mxk_shape c = in[0];
    if (c.ndim != t->ndim || !mxk_sdk_shape_merge(&c, t, &c)) {
        char a[MXK_SDK_SHAPE_STR_MAX], b[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "condition %s must have the shape of x %s or be 1-D with "
                             "x.shape[0] elements",
                             mxk_sdk_shape_format(&in[0], a, sizeof a),
                             mxk_sdk_shape_format(t, b, sizeof b));
    }
    in[0] = c;
    return mxk_sdk_infer_shape_same(in, 3, wh_args, out, 1, NULL, err);
}

/** Types: x, y and output float32; condition any (float32 when unknown). */
static mxk_status wh_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    if (in[0] < 0)
        in[0] = MXK_FLOAT32;
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in + 1, 2, wh_args + 1, out, 1, NULL, NULL, 0,
                                      err);
}

/** Backward reads out_grad and condition. */
static void wh_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                          uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                          uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[0] = 1;
}

/** Elements per condition value: 1 (same shape) or the row size (1-D condition). */
static uint64_t wh_per_cond(const mxk_tensor *cond, const mxk_shape *x) {
    return mxk_sdk_shape_count(x) / mxk_sdk_shape_count(&cond->shape);
}

/** out (=|+=) cond ? x : y. */
static mxk_status wh_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cbt_check_forward(args, 3, 1, wh_infer_shape, param, 1, err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *ct = args->in_data[0], *ot = args->out_data[0];
    MXK_SDK_CHECK(cb_check_tensor(args->in_data[1], "argument 'x'", err));
    MXK_SDK_CHECK(cb_check_tensor(args->in_data[2], "argument 'y'", err));
    MXK_SDK_CHECK(cb_check_tensor(ot, "output 'output'", err));
    const float *x = cb_f32(args->in_data[1]), *y = cb_f32(args->in_data[2]);
    float *o = cb_f32(ot);
    uint64_t n = mxk_sdk_shape_count(&ot->shape), per = wh_per_cond(ct, &ot->shape);
    for (uint64_t i = 0; i < n; i++)
        mxk_sdk_assign_f32(&o[i], cbt_load(ct->data, ct->dtype, i / per) != 0 ? x[i] : y[i],
                           args->req[0]);
    return MXK_OK;
}

/** dx (=|+=) cond ? dy : 0; dy (=|+=) cond ? 0 : dy; dcondition = 0. */
static mxk_status wh_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_backward_counts(args, 3, 1, 1, err));
    MXK_SDK_CHECK(cbt_zero_grad(args->in_grad[0], args->req[0], "condition", err));
    const mxk_op_req *req = args->req;
    if (req[1] == MXK_REQ_NULL && req[2] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dt = args->out_grad[0], *ct = args->in_data[0];
    MXK_SDK_CHECK(cb_check_tensor(dt, "gradient of 'output'", err));
    MXK_SDK_CHECK(cbt_check_any(ct, "argument 'condition'", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[1], req[1], &dt->shape, "x", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[2], req[2], &dt->shape, "y", err));
    uint64_t n = mxk_sdk_shape_count(&dt->shape), nc = mxk_sdk_shape_count(&ct->shape);
    if (nc == 0 || n % nc != 0 || (nc != n && ct->shape.dims[0] != dt->shape.dims[0]))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "condition does not match out_grad");
    uint64_t per = wh_per_cond(ct, &dt->shape);
    const float *g = cb_f32(dt);
    float *gx = req[1] != MXK_REQ_NULL ? cb_f32(args->in_grad[1]) : NULL;
    float *gy = req[2] != MXK_REQ_NULL ? cb_f32(args->in_grad[2]) : NULL;
    for (uint64_t i = 0; i < n; i++) {
        int c = cbt_load(ct->data, ct->dtype, i / per) != 0;
        if (gx != NULL)
            mxk_sdk_assign_f32(&gx[i], c ? g[i] : 0.0f, req[1]);
        if (gy != NULL)
            mxk_sdk_assign_f32(&gy[i], c ? 0.0f : g[i], req[2]);
    }
    return MXK_OK;
}

/** Registers where with its CPU kernel. */
mxk_status cb_register_index_where(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const aliases[] = {"_sparse_where", NULL};
    mxk_op_def def;
    cbt_def_init(&def, "Return the elements, either from x or y, depending on the condition.", NULL,
                 0, wh_args, NULL);
    def.free_param = NULL;
    def.infer_shape = wh_infer_shape;
    def.infer_type = wh_infer_type;
    def.backward_dependency = wh_dependency;
    def.aliases = aliases;
    return cbt_register(reg, &def, "where", wh_forward, wh_backward, 1, err);
}
