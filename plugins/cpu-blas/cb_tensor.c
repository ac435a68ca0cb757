/*
 * cpu-blas plugin: helpers of the tensor operator files (see cb_tensor.h).
 *
 * Element access by dtype follows mshadow's MSHADOW_TYPE_SWITCH
 * (3rdparty/mshadow/mshadow/base.h); checks mirror common.c for operators whose
 * input/output counts or dtypes vary.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cb_tensor.h"
#include "mxk_math_cast.h"
#include "mxk_sdk_half.h"

/** Checks presence, device and ndim of a tensor of any dtype (see cb_tensor.h). */
mxk_status cbt_check_any(const mxk_tensor *t, const char *what, mxk_error_sink *err) {
    if (t == NULL || t->data == NULL || mxk_sdk_dtype_size(t->dtype) == 0)
        return mxk_sdk_error(err, t ? MXK_ERR_TYPE : MXK_ERR_INVALID_ARGUMENT,
                             "%s: no tensor given or invalid dtype", what);
    mxk_tensor f = *t; /* cb_check_tensor's checks, float32 aside */
    f.dtype = MXK_FLOAT32;
    return cb_check_tensor(&f, what, err);
}

/** Checks a forward call of any arity (see cb_tensor.h). */
mxk_status cbt_check_forward(const mxk_forward_args *args, uint32_t num_in, uint32_t num_out,
                             cb_infer_shape_fn infer, const void *param, int any_dtype,
                             mxk_error_sink *err) {
    char what[64];
    if (args->num_in != num_in || args->num_out != num_out)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "expected %u inputs and %u outputs, got %u and %u", (unsigned)num_in,
                             (unsigned)num_out, (unsigned)args->num_in, (unsigned)args->num_out);
    if (num_in > CBT_MAX_IO || num_out > CBT_MAX_IO)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED, "more than %d inputs or outputs",
                             CBT_MAX_IO);
    mxk_shape in_shapes[CBT_MAX_IO], out_shapes[CBT_MAX_IO];
    for (uint32_t i = 0; i < num_in; i++) {
        snprintf(what, sizeof what, "argument %u", (unsigned)i);
        const mxk_tensor *t = args->in_data[i];
        MXK_SDK_CHECK(any_dtype ? cbt_check_any(t, what, err) : cb_check_tensor(t, what, err));
        in_shapes[i] = t->shape;
        if (!mxk_sdk_shape_is_known(&in_shapes[i]))
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: shape is not fully known", what);
    }
    for (uint32_t i = 0; i < num_out; i++) {
        out_shapes[i] = mxk_sdk_shape_unknown();
        if (args->req[i] == MXK_REQ_NULL)
            continue;
        snprintf(what, sizeof what, "output %u", (unsigned)i);
        const mxk_tensor *t = args->out_data[i];
        MXK_SDK_CHECK(any_dtype ? cbt_check_any(t, what, err) : cb_check_tensor(t, what, err));
        out_shapes[i] = t->shape;
    }
    MXK_SDK_CHECK(infer(param, in_shapes, num_in, out_shapes, num_out, NULL, 0, err));
    for (uint32_t i = 0; i < num_out; i++)
        if (args->req[i] != MXK_REQ_NULL &&
            !mxk_sdk_shape_equal(&out_shapes[i], &args->out_data[i]->shape))
            return mxk_sdk_error(err, MXK_ERR_INTERNAL, "output %u: inconsistent inference",
                                 (unsigned)i);
    return MXK_OK;
}

/** Checks a requested gradient against a tensor of the same size (see cb_tensor.h). */
mxk_status cbt_check_grad_like(const mxk_tensor *g, mxk_op_req req, const mxk_tensor *like,
                               const char *name, mxk_error_sink *err) {
    return cb_check_grad(g, req, &like->shape, name, err);
}

/** Normalises an axis (see cb_tensor.h). */
mxk_status cbt_axis(int64_t axis, int32_t ndim, const char *attr, int32_t *out,
                    mxk_error_sink *err) {
    int64_t a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "attribute '%s': axis %lld is out of range for an input of %d dims",
                             attr, (long long)axis, (int)ndim);
    *out = (int32_t)a;
    return MXK_OK;
}

/** (outer, k, inner) around an axis (see cb_tensor.h). */
void cbt_split(const mxk_shape *s, int32_t axis, uint64_t *outer, uint64_t *k, uint64_t *inner) {
    *outer = mxk_sdk_shape_prod(s, 0, axis);
    *k = (uint64_t)s->dims[axis];
    *inner = mxk_sdk_shape_prod(s, axis + 1, s->ndim);
}

/** Heap copy of a parameter struct (see cb_tensor.h). */
mxk_status cbt_param_new(const void *p, size_t size, void **out, mxk_error_sink *err) {
    void *q = malloc(size);
    if (q == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(q, p, size);
    *out = q;
    return MXK_OK;
}

/** Frees a cbt_param_new object. */
void cbt_param_free(void *param) {
    free(param);
}

/** All slots float32 (see cb_tensor.h). */
mxk_status cbt_infer_type_f32(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                              uint32_t num_out, int32_t *aux, uint32_t num_aux,
                              mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, NULL, out, num_out, NULL, aux,
                                      num_aux, err);
}

/** All slots one shape (see cb_tensor.h). */
mxk_status cbt_infer_shape_same(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_infer_shape_same(in, num_in, NULL, out, num_out, NULL, err);
}

/** Backward reads out_grad[0] only. */
void cbt_dep_out_grad(const void *param, uint32_t num_visible, uint32_t num_in, uint32_t num_out,
                      uint8_t *need_out_grad, uint8_t *need_in_data, uint8_t *need_out_data) {
    need_out_grad[0] = 1;
}

/** Backward reads nothing. */
void cbt_dep_none(const void *param, uint32_t num_visible, uint32_t num_in, uint32_t num_out,
                  uint8_t *need_out_grad, uint8_t *need_in_data, uint8_t *need_out_data) {}

/** The in-place pair 0 -> 0. */
uint32_t cbt_inplace_00(const void *param, mxk_inplace_pair *pairs, uint32_t capacity) {
    uint32_t n = 0;
    mxk_sdk_inplace_add(pairs, capacity, &n, 0, 0, 0);
    return n;
}

/** The in-place identity 0 -> 0. */
uint32_t cbt_inplace_identity_00(const void *param, mxk_inplace_pair *pairs, uint32_t capacity) {
    uint32_t n = 0;
    mxk_sdk_inplace_add(pairs, capacity, &n, 0, 0, 1);
    return n;
}

/** The loss operators' backward in-place pair 3 -> 0 (see cb_tensor.h). */
uint32_t cbt_inplace_loss_grad(const void *param, mxk_inplace_pair *pairs, uint32_t capacity) {
    uint32_t n = 0;
    mxk_sdk_inplace_add(pairs, capacity, &n, 3, 0, 0);
    return n;
}

/** One visible output. */
uint32_t cbt_num_visible_1(const void *param) {
    return 1;
}

/** Copies data to output by the request (see cb_tensor.h). */
mxk_status cbt_copy_forward(const mxk_forward_args *args, cb_infer_shape_fn infer,
                            const void *param, mxk_error_sink *err) {
    static const char *const args_names[] = {"data", NULL};
    static const char *const out_names[] = {"output", NULL};
    MXK_SDK_CHECK(cb_check_forward(args, 1, 1, args_names, out_names, infer, param, err));
    mxk_sdk_copy_f32(cb_f32(args->out_data[0]), cb_f32(args->in_data[0]),
                     (size_t)mxk_sdk_shape_count(&args->in_data[0]->shape), args->req[0]);
    return MXK_OK;
}

/** in_grad (=|+=) out_grad (see cb_tensor.h). */
mxk_status cbt_copy_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dy = args->out_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(dy, "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, &dy->shape, "data", err));
    mxk_sdk_copy_f32(cb_f32(args->in_grad[0]), cb_f32(dy), (size_t)mxk_sdk_shape_count(&dy->shape),
                     req);
    return MXK_OK;
}

/** Loads element i as a double (see cb_tensor.h). */
double cbt_load(const void *p, int32_t dtype, uint64_t i) {
    switch (dtype) {
    case MXK_FLOAT32:
        return ((const float *)p)[i];
    case MXK_FLOAT64:
        return ((const double *)p)[i];
    case MXK_FLOAT16:
        return mxk_sdk_f16_to_f32(((const uint16_t *)p)[i]);
    case MXK_UINT8:
        return ((const uint8_t *)p)[i];
    case MXK_INT32:
        return ((const int32_t *)p)[i];
    case MXK_INT8:
        return ((const int8_t *)p)[i];
    case MXK_INT64:
        return (double)((const int64_t *)p)[i];
    default:
        return 0.0;
    }
}

/** Stores v by request (see cb_tensor.h). */
void cbt_store(void *p, int32_t dtype, uint64_t i, double v, mxk_op_req req) {
    if (req == MXK_REQ_NULL)
        return;
    if (req == MXK_REQ_ADD)
        v += cbt_load(p, dtype, i);
    switch (dtype) {
    case MXK_FLOAT32:
        ((float *)p)[i] = (float)v;
        break;
    case MXK_FLOAT64:
        ((double *)p)[i] = v;
        break;
    case MXK_FLOAT16:
        ((uint16_t *)p)[i] = mxk_sdk_f32_to_f16((float)v);
        break;
    case MXK_UINT8:
        ((uint8_t *)p)[i] = (uint8_t)mxk_cast_saturate(v, 0, 255);
        break;
    case MXK_INT32:
        ((int32_t *)p)[i] = (int32_t)mxk_cast_saturate(v, -2147483648.0, 2147483647.0);
        break;
    case MXK_INT8:
        ((int8_t *)p)[i] = (int8_t)mxk_cast_saturate(v, -128, 127);
        break;
    case MXK_INT64:
        /* 2^63 is not representable: the largest double below it is the bound */
        ((int64_t *)p)[i] =
            (int64_t)mxk_cast_saturate(v, -9223372036854775808.0, 9223372036854774784.0);
        break;
    default:
        break;
    }
}

/** Zero gradient by request (see cb_tensor.h). */
mxk_status cbt_zero_grad(const mxk_tensor *g, mxk_op_req req, const char *name,
                         mxk_error_sink *err) {
    if (req != MXK_REQ_WRITE && req != MXK_REQ_INPLACE)
        return MXK_OK;
    char what[96];
    snprintf(what, sizeof what, "gradient of '%s'", name);
    MXK_SDK_CHECK(cbt_check_any(g, what, err));
    memset(g->data, 0, (size_t)mxk_sdk_shape_count(&g->shape) * mxk_sdk_dtype_size(g->dtype));
    return MXK_OK;
}

/** Accepts every configuration (kernels check dtypes themselves). */
static int32_t cbt_supports_any(const void *param, const mxk_shape *in_shapes,
                                const int32_t *in_types, uint32_t num_in) {
    return 1;
}

/** Registers an operator and its cpu-blas kernel (see cb_tensor.h). */
mxk_status cbt_register(mxk_registrar *reg, mxk_op_def *def, const char *name,
                        mxk_status (*forward)(const mxk_op_ctx *, const void *, void *,
                                              const mxk_forward_args *, mxk_error_sink *),
                        mxk_status (*backward)(const mxk_op_ctx *, const void *, void *,
                                               const mxk_backward_args *, mxk_error_sink *),
                        int any_dtype, mxk_error_sink *err) {
    def->name = name;
    mxk_op_kernel_def k;
    cb_kernel_init(&k, name, forward, backward);
    if (any_dtype)
        k.supports = cbt_supports_any;
    return cb_register(reg, def, &k, err);
}

/** Starts a definition with the shared fields (see cb_tensor.h). */
void cbt_def_init(mxk_op_def *def, const char *doc, const mxk_attr_def *attrs, uint32_t num_attrs,
                  const char *const *arguments,
                  mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *)) {
    static const char *const outputs[] = {"output", NULL};
    mxk_sdk_op_def_init(def);
    def->description = doc;
    def->attrs = attrs;
    def->num_attrs = num_attrs;
    def->arguments = arguments;
    def->outputs = outputs;
    def->parse_param = parse;
    def->free_param = cbt_param_free;
    def->infer_type = cbt_infer_type_f32;
}

/** Appends prefix0..prefix{n-1} (see cb_tensor.h). */
mxk_status cbt_list_numbered(mxk_name_list *out, const char *prefix, int64_t n,
                             mxk_error_sink *err) {
    char name[64];
    for (int64_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s%lld", prefix, (long long)i);
        MXK_SDK_CHECK(mxk_sdk_host()->name_list_add(out, name, err));
    }
    return MXK_OK;
}

/** The first random resource's stream (see cb_tensor.h). */
mxk_random *cbt_random(const mxk_op_ctx *ctx) {
    for (uint32_t i = 0; i < ctx->num_resources; i++)
        if (ctx->resources[i]->type == MXK_RESOURCE_RANDOM)
            return ctx->resources[i]->random;
    return NULL;
}

/** One random stream. */
mxk_status cbt_resources_random(const void *param, const mxk_shape *in_shapes, uint32_t num_in,
                                mxk_resource_request *reqs, uint32_t *num, mxk_error_sink *err) {
    uint32_t n = 0;
    mxk_sdk_resource_add(reqs, *num, &n, MXK_RESOURCE_RANDOM, 0);
    *num = n;
    return MXK_OK;
}
