/*
 * cpu-blas plugin: Dropout.
 *
 * Semantics: MXNet src/operator/nn/dropout-inl.h, dropout.cc.
 * Argument data; outputs output and mask
 * (visible 1). When active (is_train, or mode 'always') each element is kept
 * with probability 1-p and scaled by 1/(1-p): mask = (u < 1-p) / (1-p) (p = 1:
 * NaN, 0 * infinity, as upstream's mask; so output and gradient are NaN) with u
 * uniform in [0, 1) from the operator's random stream, y = x * mask. With `axes`
 * (variational dropout) one draw is shared along the listed axes (the draw has
 * the data shape with those axes set to 1, kept in temp space) and broadcast.
 * Inactive: y = x, and the mask (when written) is 1, so backward stays dy * mask.
 * p = 0 draws nothing. Backward dx = dy * mask reads out_grad and mask only.
 * In-place hints: forward data -> output, backward out_grad -> in_grad.
 *
 * Random numbers come from the MXK_RESOURCE_RANDOM stream (Philox-4x32-10,
 * seeded by mxk_random_seed): the same seed and call sequence give the same
 * mask, whatever the thread count. Draws happen in blocks of CB_DO_CHUNK floats
 * on the stack, so nothing is allocated per call.
 */
#include <math.h>

#include "cb_tensor.h"
#include "mxk_random.h"
#include "mxk_random_attr.h"

/** Floats drawn per random_uniform call (stack buffer). */
#define CB_DO_CHUNK 1024

static const char *const do_args[] = {"data", NULL};
static const char *const do_outs[] = {"output", "mask", NULL};
/** Upstream's add_alias name (dropout.cc). */
static const char *const do_aliases[] = {"_npx_dropout", NULL};

/** Attribute schema (MXNet 1.9.1 DropoutParam). */
static const mxk_attr_def do_attrs[] = {
    MXK_SDK_ATTR("p", MXK_ATTR_FLOAT, 0, "0.5", NULL, "Fraction of the input that gets dropped."),
    MXK_SDK_ATTR("mode", MXK_ATTR_ENUM, 0, "training", "training|always",
                 "training: active in training only; always: also at inference."),
    MXK_SDK_ATTR("axes", MXK_ATTR_SHAPE, 0, "()", NULL,
                 "Axes along which one draw is shared (variational dropout)."),
    MXK_SDK_ATTR("cudnn_off", MXK_ATTR_BOOL, 0, "False", NULL, "Turn off cuDNN (ignored)."),
};

/** Parses p (in [0, 1]), mode and axes (mxk_dropout_parse). */
static mxk_status do_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    mxk_dropout_param p;
    MXK_SDK_CHECK(mxk_dropout_parse(attrs, &p, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Output and mask have the data shape; axes must be in range. */
static mxk_status do_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const mxk_dropout_param *p = param;
    if (num_in != 1 || num_out != 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "Dropout expects 1 argument and 2 outputs");
    MXK_SDK_CHECK(mxk_sdk_infer_shape_same(in, 1, do_args, out, 2, do_outs, err));
    for (int32_t i = 0; in[0].ndim > 0 && i < p->axes.ndim; i++) {
        int64_t a = p->axes.dims[i];
        if (a < -in[0].ndim || a >= in[0].ndim)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "attribute 'axes': axis %lld out of range for %d dimensions",
                                 (long long)a, (int)in[0].ndim);
    }
    return MXK_OK;
}

/** All float32. */
static mxk_status do_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, do_args, out, num_out, do_outs, aux,
                                      num_aux, err);
}

/** Backward reads out_grad and the mask. */
static void do_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_out_data[1] = 1;
}

/** Forward resources: a random stream, plus temp space for the shared draw with axes. */
static mxk_status do_resources(const void *param, const mxk_shape *in_shapes, uint32_t num_in,
                               mxk_resource_request *reqs, uint32_t *num, mxk_error_sink *err) {
    const mxk_dropout_param *p = param;
    uint32_t cap = *num, n = 0;
    mxk_sdk_resource_add(reqs, cap, &n, MXK_RESOURCE_RANDOM, 0);
    if (p->axes.ndim > 0 && num_in == 1 && mxk_sdk_shape_is_known(&in_shapes[0])) {
        mxk_shape s = mxk_dropout_draw_shape(p, &in_shapes[0]);
        mxk_sdk_resource_add(reqs, cap, &n, MXK_RESOURCE_TEMP_SPACE,
                             mxk_sdk_shape_count(&s) * sizeof(float));
    }
    *num = n;
    return MXK_OK;
}

/** The random stream granted to this call, or NULL. */
static mxk_random *do_rng(const mxk_op_ctx *ctx) {
    for (uint32_t i = 0; i < ctx->num_resources; i++)
        if (ctx->resources[i] != NULL && ctx->resources[i]->type == MXK_RESOURCE_RANDOM)
            return ctx->resources[i]->random;
    return NULL;
}

/** Index of element i of shape d in the draw (broadcast along the shared axes). */
static int64_t do_draw_index(const mxk_shape *d, const mxk_shape *s, int64_t i) {
    int64_t idx = 0, mul = 1;
    for (int32_t a = d->ndim - 1; a >= 0; a--) {
        int64_t c = i % d->dims[a];
        i /= d->dims[a];
        if (s->dims[a] != 1)
            idx += c * mul;
        mul *= s->dims[a];
    }
    return idx;
}

/** Forward (see the file comment). */
static mxk_status do_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const mxk_dropout_param *p = param;
    MXK_SDK_CHECK(cb_check_forward(args, 1, 2, do_args, do_outs, do_infer_shape, param, err));
    const mxk_op_req *req = args->req;
    const float *x = cb_f32(args->in_data[0]);
    float *y = req[0] != MXK_REQ_NULL ? cb_f32(args->out_data[0]) : NULL;
    float *m = req[1] != MXK_REQ_NULL ? cb_f32(args->out_data[1]) : NULL;
    const mxk_shape *ds = &args->in_data[0]->shape;
    const size_t n = (size_t)mxk_sdk_shape_count(ds);
    int active = (ctx->is_train || p->always) && p->p > 0.0;
    if (!active) {
        if (y != NULL)
            mxk_sdk_copy_f32(y, x, n, req[0]);
        if (m != NULL)
            mxk_sdk_fill_f32(m, 1.0f, n, req[1]);
        return MXK_OK;
    }
    mxk_random *rng = do_rng(ctx);
    if (rng == NULL)
        return mxk_sdk_error(err, MXK_ERR_STATE, "Dropout: no random stream was granted");
    const float keep = (float)(1.0 - p->p);
    /* p = 1: upstream's mask is {0,1} * (1/0), NaN everywhere (dropout-inl.h); kept so */
    const float scale = keep > 0.0f ? 1.0f / keep : INFINITY;
    if (p->axes.ndim > 0) {
        mxk_shape s = mxk_dropout_draw_shape(p, ds);
        size_t ns = (size_t)mxk_sdk_shape_count(&s);
        void *ws = NULL;
        MXK_SDK_CHECK(mxk_sdk_host()->temp_space(ctx, ns * sizeof(float), &ws, err));
        float *u = ws;
        mxk_sdk_host()->random_uniform(rng, u, ns, 0.0f, 1.0f);
        for (size_t j = 0; j < ns; j++)
            u[j] = mxk_random_dropout_mask(u[j], keep, scale);
        for (size_t i = 0; i < n; i++) {
            float mk = u[do_draw_index(ds, &s, (int64_t)i)];
            float xv = x[i];
            if (m != NULL)
                mxk_sdk_assign_f32(&m[i], mk, req[1]);
            if (y != NULL)
                mxk_sdk_assign_f32(&y[i], xv * mk, req[0]);
        }
        return MXK_OK;
    }
    float u[CB_DO_CHUNK];
    for (size_t i0 = 0; i0 < n; i0 += CB_DO_CHUNK) {
        size_t c = n - i0 < CB_DO_CHUNK ? n - i0 : CB_DO_CHUNK;
        mxk_sdk_host()->random_uniform(rng, u, c, 0.0f, 1.0f);
        for (size_t j = 0; j < c; j++)
            u[j] = mxk_random_dropout_mask(u[j], keep, scale);
        if (m != NULL)
            mxk_sdk_copy_f32(m + i0, u, c, req[1]);
        if (y != NULL) {
            float *yp = y + i0;
            const float *xp = x + i0;
            if (req[0] == MXK_REQ_ADD)
                for (size_t j = 0; j < c; j++)
                    yp[j] += xp[j] * u[j];
            else
                for (size_t j = 0; j < c; j++)
                    yp[j] = xp[j] * u[j];
        }
    }
    return MXK_OK;
}

/** Backward: dx = dy * mask by the request. */
static mxk_status do_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 2, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cb_check_tensor(args->out_grad[0], "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(args->out_data[1], "output 'mask'", err));
    const mxk_shape *s = &args->out_grad[0]->shape;
    if (!mxk_sdk_shape_equal(&args->out_data[1]->shape, s))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "output 'mask' does not match the gradient");
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, s, "data", err));
    const float *dy = cb_f32(args->out_grad[0]), *mk = cb_f32(args->out_data[1]);
    float *dx = cb_f32(args->in_grad[0]);
    size_t n = (size_t)mxk_sdk_shape_count(s);
    if (req == MXK_REQ_ADD)
        for (size_t i = 0; i < n; i++)
            dx[i] += dy[i] * mk[i];
    else
        for (size_t i = 0; i < n; i++)
            dx[i] = dy[i] * mk[i];
    return MXK_OK;
}

/** Registers Dropout and its CPU kernel. */
mxk_status cb_register_dropout(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = "Dropout";
    def.description = "Zeroes elements with probability p in training, scaling the rest by "
                      "1/(1-p).";
    def.attrs = do_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(do_attrs);
    def.arguments = do_args;
    def.outputs = do_outs;
    def.parse_param = do_parse;
    def.free_param = cbt_param_free;
    def.num_visible_outputs = cbt_num_visible_1;
    def.infer_shape = do_infer_shape;
    def.infer_type = do_infer_type;
    def.backward_dependency = do_backward_dependency;
    def.forward_resources = do_resources;
    def.forward_inplace = cbt_inplace_00;
    def.backward_inplace = cbt_inplace_00;
    def.aliases = do_aliases;
    mxk_op_kernel_def k;
    cb_kernel_init(&k, "Dropout", do_forward, do_backward);
    return cb_register(reg, &def, &k, err);
}
