/*
 * cpu-blas plugin: add_n (aliases ElementWiseSum, _sparse_add_n, _sparse_ElementWiseSum).
 *
 * Semantics: MXNet src/operator/tensor/elemwise_sum.cc and elemwise_sum.h:
 * arguments arg0..arg{num_args-1} of one shape, output their sum; backward
 * passes dy to every input (reads only out_grad). Inputs and output share one
 * dtype, any (ElementWiseSumType); backward is float32. Forward may run in place
 * over arg0; the sum reads element i of every input before writing it, so any
 * input may share memory with the output.
 */
#include "op_init.h"

/** Parsed attributes. */
typedef struct an_param {
    int64_t num_args;
} an_param;

/** Attribute schema (MXNet 1.9.1 ElementWiseSumParam). */
static const mxk_attr_def an_attrs[] = {
    MXK_SDK_ATTR("num_args", MXK_ATTR_INT, 1, NULL, NULL, "Number of inputs to be summed."),
};

/** Parses num_args (>= 1). */
static mxk_status an_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    an_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_args", 1, CBT_MAX_IO, &p.num_args, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Arguments arg0..arg{num_args-1}. */
static mxk_status an_list_arguments(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    return cbt_list_numbered(out, "arg", ((const an_param *)param)->num_args, err);
}

/**
 * out (=|+=) sum of the inputs, accumulated in input order (float32 in float,
 * other dtypes in double, stored as cbt_store converts).
 */
static mxk_status an_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const an_param *p = param;
    MXK_SDK_CHECK(
        cbi_check_forward_same(args, (uint32_t)p->num_args, 1, cbt_infer_shape_same, param, err));
    mxk_op_req req = args->req[0];
    const mxk_tensor *y = args->out_data[0];
    uint64_t n = mxk_sdk_shape_count(&y->shape);
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    if (args->num_in == 1) {
        cbi_copy(y, args->in_data[0], req);
        return MXK_OK;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (y->dtype == MXK_FLOAT32) {
            float s = 0.0f;
            for (uint32_t k = 0; k < args->num_in; k++)
                s += cb_f32(args->in_data[k])[i];
            mxk_sdk_assign_f32(&cb_f32(y)[i], s, req);
        } else {
            double s = 0.0;
            for (uint32_t k = 0; k < args->num_in; k++)
                s += cbt_load(args->in_data[k]->data, y->dtype, i);
            cbt_store(y->data, y->dtype, i, s, req);
        }
    }
    return MXK_OK;
}

/** Every input gradient (=|+=) dy; one sharing dy's memory is written last. */
static mxk_status an_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const an_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, (uint32_t)p->num_args, 1, 1, err));
    const mxk_tensor *dy = args->out_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(dy, "gradient of 'output'", err));
    size_t n = (size_t)mxk_sdk_shape_count(&dy->shape);
    for (uint32_t k = 0; k < args->num_in; k++)
        MXK_SDK_CHECK(cb_check_grad(args->in_grad[k], args->req[k], &dy->shape, "arg", err));
    for (uint32_t k = 0; k < args->num_in; k++)
        if (args->req[k] != MXK_REQ_NULL && args->in_grad[k]->data != dy->data)
            mxk_sdk_copy_f32(cb_f32(args->in_grad[k]), cb_f32(dy), n, args->req[k]);
    for (uint32_t k = 0; k < args->num_in; k++)
        if (args->req[k] != MXK_REQ_NULL && args->in_grad[k]->data == dy->data)
            mxk_sdk_copy_f32(cb_f32(args->in_grad[k]), cb_f32(dy), n, args->req[k]);
    return MXK_OK;
}

/** Registers add_n (aliases ElementWiseSum, _sparse_add_n, _sparse_ElementWiseSum). */
mxk_status cb_register_add_n(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const aliases[] = {"ElementWiseSum", "_sparse_add_n",
                                          "_sparse_ElementWiseSum", NULL};
    static const char *const outs[] = {"output", NULL};
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.description = "Adds all input arguments element-wise.";
    def.aliases = aliases;
    def.attrs = an_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(an_attrs);
    def.outputs = outs;
    def.list_arguments = an_list_arguments;
    def.parse_param = an_parse;
    def.free_param = cbt_param_free;
    def.infer_shape = cbt_infer_shape_same;
    def.infer_type = cbi_infer_type_all;
    def.backward_dependency = cbt_dep_out_grad;
    def.forward_inplace = cbt_inplace_00;
    def.backward_inplace = cbt_inplace_identity_00;
    return cbt_register(reg, &def, "add_n", an_forward, an_backward, 1, err);
}
