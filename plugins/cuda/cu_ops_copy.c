/*
 * cuda plugin: GPU kernels of the operators that copy, fill or describe an
 * array, which cpu-blas defines: the identities _copy, _copyto, Flatten,
 * Reshape, expand_dims, squeeze, reshape_like, BlockGrad, MakeLoss and make_loss
 * (device-to-device cudaMemcpyAsync, or an add kernel for ADD); the fills
 * _zeros, _ones, _full, zeros_like, ones_like; _arange; shape_array and
 * size_array. Every dtype the operators allow; every request.
 *
 * Semantics: cpu-blas op_init_shape.c, op_reshape.c, op_misc.c, op_init_fill.c
 * and op_norm_loss.c (MakeLoss); upstream MXNet
 * src/operator/tensor/elemwise_unary_op_basic.cc, matrix_op-inl.h, init_op.h
 * and src/operator/make_loss-inl.h. MakeLoss with normalization 'valid'
 * (a count over the data) is declined.
 */
#include <string.h>

#include "cu_ops_math.h"

/** What an operator does. */
enum cu_cp_kind {
    CU_CP_COPY,      /**< output = data; gradient dy (reshape_like: rhs gets zeros) */
    CU_CP_BLOCKGRAD, /**< output = data; zero gradient */
    CU_CP_MAKELOSS,  /**< output = data; constant gradient (grad_scale, normalization) */
    CU_CP_FILL,      /**< output = value; no arguments, no gradient */
    CU_CP_LIKE,      /**< output = value in data's shape and dtype; zero gradient */
    CU_CP_ARANGE,    /**< output = start + (i / repeat) step */
    CU_CP_SHAPE,     /**< output = data's dims (int64) */
    CU_CP_SIZE       /**< output = data's element count (int64) */
};

/** X(name, kind, value): the operators (value: the fill value of _zeros, _ones, *_like). */
#define CU_COPY_OPS(X)                                                                             \
    X(_copy, CU_CP_COPY, 0)                                                                        \
    X(_copyto, CU_CP_COPY, 0)                                                                      \
    X(Flatten, CU_CP_COPY, 0)                                                                      \
    X(Reshape, CU_CP_COPY, 0)                                                                      \
    X(expand_dims, CU_CP_COPY, 0)                                                                  \
    X(squeeze, CU_CP_COPY, 0)                                                                      \
    X(reshape_like, CU_CP_COPY, 0)                                                                 \
    X(BlockGrad, CU_CP_BLOCKGRAD, 0)                                                               \
    X(MakeLoss, CU_CP_MAKELOSS, 0)                                                                 \
    X(make_loss, CU_CP_MAKELOSS, 0)                                                                \
    X(_zeros, CU_CP_FILL, 0)                                                                       \
    X(_ones, CU_CP_FILL, 1)                                                                        \
    X(_full, CU_CP_FILL, 0)                                                                        \
    X(zeros_like, CU_CP_LIKE, 0)                                                                   \
    X(ones_like, CU_CP_LIKE, 1)                                                                    \
    X(_arange, CU_CP_ARANGE, 0)                                                                    \
    X(shape_array, CU_CP_SHAPE, 0)                                                                 \
    X(size_array, CU_CP_SIZE, 0)

/** MakeLoss normalization values, in the order of its enum string. */
enum cu_ml_norm { CU_ML_NULL, CU_ML_BATCH, CU_ML_VALID };

/** A kernel's parameters. */
typedef struct cu_cp_param {
    const char *name;
    int32_t kind;       /**< enum cu_cp_kind */
    double value;       /**< fills: the value; MakeLoss: grad_scale */
    double start, step; /**< _arange */
    int64_t repeat;     /**< _arange */
    int32_t norm;       /**< MakeLoss: enum cu_ml_norm */
} cu_cp_param;

/** Parses what operator `name` of `kind` needs (fill value `value` unless _full). */
static mxk_status cp_parse(const char *name, int32_t kind, double value, const mxk_attrs *attrs,
                           void **out, mxk_error_sink *err) {
    cu_cp_param p = {.name = name, .kind = kind, .value = value, .repeat = 1};
    if (strcmp(name, "_full") == 0) {
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "value", &p.value, err));
    } else if (strcmp(name, "MakeLoss") == 0) {
        double gs;
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "grad_scale", &gs, err));
        MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "normalization", "null|batch|valid", &p.norm, err));
        p.value = (float)gs; /* a float32 upstream */
    } else if (kind == CU_CP_MAKELOSS) {
        p.value = 1.0;
    } else if (kind == CU_CP_ARANGE) {
        int32_t infer = 0;
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "start", &p.start, err));
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "step", &p.step, err));
        MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "repeat", &p.repeat, err));
        MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "infer_range", &infer, err));
        const char *stop = mxk_sdk_attr_raw(attrs, "stop");
        if ((stop == NULL || strcmp(stop, "None") == 0) && !infer)
            p.start = 0.0; /* the range is [0, start) */
        if (p.repeat < 1)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "Range only supports repeat > 0, received %lld",
                                 (long long)p.repeat);
    }
    return cu_math_param_new(&p, sizeof p, out, err);
}

/* One parse_param per operator (the registrar keeps function pointers only). */
#define CU_CP_PARSE(n, kind, value)                                                                \
    static mxk_status parse_##n(const mxk_attrs *a, void **o, mxk_error_sink *e) {                 \
        return cp_parse(#n, kind, value, a, o, e);                                                 \
    }
CU_COPY_OPS(CU_CP_PARSE)
#undef CU_CP_PARSE

/** Declines MakeLoss with normalization 'valid' and a MakeLoss gradient other than float32. */
static int32_t cp_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                           uint32_t num_in) {
    const cu_cp_param *p = param;
    if (p->kind == CU_CP_MAKELOSS)
        return p->norm != CU_ML_VALID && num_in == 1 && in_types[0] == MXK_FLOAT32;
    return 1;
}

/** dst (=|+=) src by the request: a device-to-device copy (none in place) or an add kernel. */
static mxk_status copy_req(const mxk_op_ctx *ctx, const mxk_tensor *dst, const mxk_tensor *src,
                           mxk_op_req req, const char *name, mxk_error_sink *err) {
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    if (dst == NULL || src == NULL || dst->data == NULL || src->data == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: missing input or output", name);
    int64_t n = cu_shape_size(&dst->shape);
    if (dst->dtype != src->dtype || cu_shape_size(&src->shape) != n)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "%s: source (%s, %lld elements) and destination (%s, %lld elements) "
                             "differ",
                             name, mxk_sdk_dtype_name(src->dtype),
                             (long long)cu_shape_size(&src->shape), mxk_sdk_dtype_name(dst->dtype),
                             (long long)n);
    MXK_SDK_CHECK(cu_enter(ctx, err));
    if (req == MXK_REQ_ADD) {
        CU_CHECK(cu_launch_copy_add(src->data, dst->data, dst->dtype, (uint64_t)n, cu_stream(ctx)),
                 name, err);
    } else if (dst->data != src->data) {
        CU_CHECK(cudaMemcpyAsync(dst->data, src->data, (size_t)n * mxk_sdk_dtype_size(dst->dtype),
                                 cudaMemcpyDeviceToDevice, cu_stream(ctx)),
                 name, err);
    }
    return MXK_OK;
}

/** y[i] (=|+=) v for the n elements from element `first` of y (in y's dtype). */
static mxk_status fill_req(const mxk_op_ctx *ctx, const mxk_tensor *y, uint64_t first, uint64_t n,
                           double v, mxk_op_req req, const char *name, mxk_error_sink *err) {
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    if (y == NULL || y->data == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: missing output", name);
    MXK_SDK_CHECK(cu_enter(ctx, err));
    char *p = (char *)y->data + first * mxk_sdk_dtype_size(y->dtype);
    CU_CHECK(cu_launch_fill_value(p, y->dtype, v, n, cu_req_add(req), cu_stream(ctx)), name, err);
    return MXK_OK;
}

/** Forward of every kind, by the request. */
static mxk_status cp_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_cp_param *p = param;
    if (args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: expected 1 output", p->name);
    const mxk_tensor *y = args->out_data[0], *x = args->num_in > 0 ? args->in_data[0] : NULL;
    mxk_op_req req = args->req[0];
    uint64_t n = (uint64_t)cu_shape_size(&y->shape);
    switch (p->kind) {
    case CU_CP_FILL:
    case CU_CP_LIKE:
        return fill_req(ctx, y, 0, n, p->value, req, p->name, err);
    case CU_CP_ARANGE:
        if (req == MXK_REQ_NULL)
            return MXK_OK;
        MXK_SDK_CHECK(cu_enter(ctx, err));
        CU_CHECK(cu_launch_arange(y->data, y->dtype, p->start, p->step, (uint64_t)p->repeat, n,
                                  cu_req_add(req), cu_stream(ctx)),
                 p->name, err);
        return MXK_OK;
    case CU_CP_SHAPE:
    case CU_CP_SIZE:
        if (x == NULL)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: missing input", p->name);
        if (p->kind == CU_CP_SIZE)
            return fill_req(ctx, y, 0, 1, (double)cu_shape_size(&x->shape), req, p->name, err);
        if (n != (uint64_t)x->shape.ndim)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: expected %d output elements", p->name,
                                 (int)x->shape.ndim);
        for (int32_t d = 0; d < x->shape.ndim; d++)
            MXK_SDK_CHECK(
                fill_req(ctx, y, (uint64_t)d, 1, (double)x->shape.dims[d], req, p->name, err));
        return MXK_OK;
    default:
        return copy_req(ctx, y, x, req, p->name, err);
    }
}

/** MakeLoss's gradient: grad_scale, divided by the rows of the FlatTo2D view for 'batch'. */
static double makeloss_grad(const cu_cp_param *p, const mxk_shape *s) {
    double v = p->value;
    if (p->norm == CU_ML_BATCH && s->ndim > 0) {
        uint64_t n = (uint64_t)cu_shape_size(s), last = (uint64_t)s->dims[s->ndim - 1];
        v /= (double)(last > 0 ? n / last : 1);
    }
    return v;
}

/** Backward of the kinds with a gradient, by the requests. */
static mxk_status cp_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_cp_param *p = param;
    if (args->num_in < 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s backward: expected an input",
                             p->name);
    for (uint32_t k = 1; k < args->num_in; k++) /* reshape_like's rhs */
        MXK_SDK_CHECK(cu_zero_grad(ctx, args->in_grad[k], args->req[k], err));
    const mxk_tensor *g = args->in_grad[0];
    mxk_op_req req = args->req[0];
    switch (p->kind) {
    case CU_CP_COPY:
        return copy_req(ctx, g, args->num_out_grad > 0 ? args->out_grad[0] : NULL, req, p->name,
                        err);
    case CU_CP_MAKELOSS:
        if (req == MXK_REQ_NULL)
            return MXK_OK;
        MXK_SDK_CHECK(cu_check_f32(g, -1, "gradient of 'data'", err));
        return fill_req(ctx, g, 0, (uint64_t)cu_shape_size(&g->shape), makeloss_grad(p, &g->shape),
                        req, p->name, err);
    default: /* BlockGrad, the *_like fills, shape_array, size_array */
        return cu_zero_grad(ctx, g, req, err);
    }
}

/** Registers the GPU kernels of the copy, fill and shape operators. */
mxk_status cu_register_copy(mxk_registrar *reg, mxk_error_sink *err) {
    static const struct {
        const char *name;
        int32_t kind;
        mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *);
    } ops[] = {
#define CU_CP_ENTRY(n, kind, value) {#n, kind, parse_##n},
        CU_COPY_OPS(CU_CP_ENTRY)
#undef CU_CP_ENTRY
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        mxk_op_kernel_def k;
        mxk_sdk_kernel_def_init(&k);
        k.op_name = ops[i].name;
        k.parse_param = ops[i].parse;
        k.free_param = cu_math_param_free;
        k.supports = cp_supports;
        k.forward = cp_forward;
        if (ops[i].kind != CU_CP_FILL && ops[i].kind != CU_CP_ARANGE)
            k.backward = cp_backward;
        MXK_SDK_CHECK(cu_register_math_kernel(reg, &k, err));
    }
    return MXK_OK;
}
