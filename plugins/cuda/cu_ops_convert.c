/*
 * cuda plugin: GPU kernels of Cast (every pair of mxk's dtypes) and add_n
 * (alias ElementWiseSum: the sum the KVStore reduces gradients with on a
 * device; every dtype), which cpu-blas defines (op_cast.c, op_add_n.c). Every
 * request; add_n may write over any of its inputs.
 *
 * Semantics: MXNet src/operator/tensor/elemwise_unary_op.h (CastParam,
 * CastCompute), elemwise_sum.h / elemwise_sum.cu (ElementWiseSumCompute), with
 * the conversions of plugins/common/mxk_math_cast.h.
 */
#include "cu_ops_math.h"

/** A kernel's parameters: Cast's target dtype, add_n's input count. */
typedef struct cu_cv_param {
    int32_t dtype;
    int64_t num_args;
} cu_cv_param;

/** Parses Cast's `dtype` (its position in the enum is mxk's code). */
static mxk_status cast_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_cv_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_enum(
        attrs, "dtype", "float32|float64|float16|uint8|int32|int8|int64", &p.dtype, err));
    return cu_math_param_new(&p, sizeof p, out, err);
}

/** Parses add_n's `num_args`. */
static mxk_status add_n_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_cv_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_args", 1, CU_ADD_N_MAX, &p.num_args, err));
    return cu_math_param_new(&p, sizeof p, out, err);
}

/** dst (=|+=) src converted to dst's dtype. */
static mxk_status cast_req(const mxk_op_ctx *ctx, const mxk_tensor *dst, const mxk_tensor *src,
                           mxk_op_req req, mxk_error_sink *err) {
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    if (dst == NULL || src == NULL || dst->data == NULL || src->data == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "Cast: missing input or output");
    int64_t n = cu_shape_size(&src->shape);
    if (cu_shape_size(&dst->shape) != n)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "Cast: input and output differ in size");
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_cast(src->data, src->dtype, dst->data, dst->dtype, (uint64_t)n,
                            cu_req_add(req), cu_stream(ctx)),
             "Cast", err);
    return MXK_OK;
}

/** y = (dtype) x. */
static mxk_status cast_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_cv_param *p = param;
    if (args->num_in != 1 || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "Cast: expected 1 input and 1 output");
    const mxk_tensor *y = args->out_data[0];
    if (args->req[0] != MXK_REQ_NULL && y->dtype != p->dtype)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "output: expected %s, got %s",
                             mxk_sdk_dtype_name(p->dtype), mxk_sdk_dtype_name(y->dtype));
    return cast_req(ctx, y, args->in_data[0], args->req[0], err);
}

/** dx = (input dtype) dy. */
static mxk_status cast_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_backward_args *args, mxk_error_sink *err) {
    if (args->num_in != 1 || args->num_out_grad != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "Cast backward: expected 1 input");
    return cast_req(ctx, args->in_grad[0], args->out_grad[0], args->req[0], err);
}

/** Accepts inputs of one dtype. */
static int32_t add_n_supports(const void *param, const mxk_shape *in_shapes,
                              const int32_t *in_types, uint32_t num_in) {
    for (uint32_t i = 1; i < num_in; i++)
        if (in_types[i] != in_types[0])
            return 0;
    return num_in <= CU_ADD_N_MAX;
}

/** out (=|+=) the sum of the inputs (any may share the output's memory). */
static mxk_status add_n_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_cv_param *p = param;
    if (args->num_in != (uint32_t)p->num_args || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "add_n: expected %lld inputs",
                             (long long)p->num_args);
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *y = args->out_data[0];
    int64_t n = cu_shape_size(&y->shape);
    const void *x[CU_ADD_N_MAX];
    for (uint32_t k = 0; k < args->num_in; k++) {
        const mxk_tensor *t = args->in_data[k];
        if (t == NULL || t->data == NULL || t->dtype != y->dtype || cu_shape_size(&t->shape) != n)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "add_n: argument %u differs from the output in dtype or size",
                                 (unsigned)k);
        x[k] = t->data;
    }
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_add_n(x, args->num_in, y->data, y->dtype, (uint64_t)n, cu_req_add(req),
                             cu_stream(ctx)),
             "add_n", err);
    return MXK_OK;
}

/** in_grad[k] (=|+=) dy for every input; one sharing dy's memory is written last. */
static mxk_status add_n_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                                 const mxk_backward_args *args, mxk_error_sink *err) {
    if (args->num_out_grad != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "add_n backward: expected 1 gradient");
    const mxk_tensor *dy = args->out_grad[0];
    MXK_SDK_CHECK(cu_enter(ctx, err));
    for (int last = 0; last < 2; last++) {
        for (uint32_t k = 0; k < args->num_in; k++) {
            const mxk_tensor *g = args->in_grad[k];
            mxk_op_req req = args->req[k];
            if (req == MXK_REQ_NULL || (g->data == dy->data) != last)
                continue;
            if (g->dtype != dy->dtype || cu_shape_size(&g->shape) != cu_shape_size(&dy->shape))
                return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                     "add_n: gradient of argument %u differs from the output "
                                     "gradient",
                                     (unsigned)k);
            if (req == MXK_REQ_ADD)
                CU_CHECK(cu_launch_copy_add(dy->data, g->data, g->dtype,
                                            (uint64_t)cu_shape_size(&g->shape), cu_stream(ctx)),
                         "add_n backward", err);
            else if (g->data != dy->data)
                CU_CHECK(
                    cudaMemcpyAsync(g->data, dy->data,
                                    (size_t)cu_shape_size(&g->shape) * mxk_sdk_dtype_size(g->dtype),
                                    cudaMemcpyDeviceToDevice, cu_stream(ctx)),
                    "add_n backward", err);
        }
    }
    return MXK_OK;
}

/** Registers the GPU kernels of Cast and add_n. */
mxk_status cu_register_convert(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "Cast";
    k.parse_param = cast_parse;
    k.free_param = cu_math_param_free;
    k.forward = cast_forward;
    k.backward = cast_backward;
    MXK_SDK_CHECK(cu_register_math_kernel(reg, &k, err));

    mxk_sdk_kernel_def_init(&k);
    k.op_name = "add_n";
    k.parse_param = add_n_parse;
    k.free_param = cu_math_param_free;
    k.supports = add_n_supports;
    k.forward = add_n_forward;
    k.backward = add_n_backward;
    return cu_register_math_kernel(reg, &k, err);
}
