/*
 * cpu-blas plugin: Flatten (aliases flatten, _npx_batch_flatten) and Reshape (alias
 * reshape): views of the same elements in a new shape.
 *
 * Semantics: MXNet src/operator/tensor/matrix_op.cc, matrix_op-inl.h. One argument `data`, output
 * `output`. Flatten: (d1, d2..dk) -> (d1, d2*...*dk) (a 1-D input gives (d1, 1)). Reshape:
 * attribute `shape` with MXNet's special values and `reverse` (rules in reshape_infer.h), or the
 * deprecated `target_shape` (0 = inferred) with `keep_highest`. Forward copies data to the output,
 * backward copies out_grad to in_grad (both by request; a no-op when the memory is shared), for
 * every dtype (output dtype = input dtype). Both directions are in-place identities; backward reads
 * only out_grad.
 */
#include "op_init.h"
#include "reshape_infer.h"

static const char *const rs_args[] = {"data", NULL};
static const char *const rs_outs[] = {"output", NULL};

/** Parsed attributes of Reshape. */
typedef struct rs_param {
    mxk_shape shape;      /**< `shape` values (ndim 0: not given) */
    int32_t reverse;      /**< apply the rules right to left */
    mxk_shape target;     /**< deprecated `target_shape` (ndim 0: not given) */
    int32_t keep_highest; /**< with target_shape: keep the first input dim */
} rs_param;

/** Attribute schema (MXNet 1.9.1 ReshapeParam). */
static const mxk_attr_def rs_attrs[] = {
    MXK_SDK_ATTR("shape", MXK_ATTR_SHAPE, 0, "()", NULL,
                 "The target shape; special values 0, -1, -2, -3, -4."),
    MXK_SDK_ATTR("reverse", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If true then the special values are inferred from right to left."),
    MXK_SDK_ATTR("target_shape", MXK_ATTR_SHAPE, 0, "()", NULL,
                 "(Deprecated, use shape) target shape; one dim may be 0 (inferred)."),
    MXK_SDK_ATTR("keep_highest", MXK_ATTR_BOOL, 0, "False", NULL,
                 "(Deprecated, use shape) with target_shape: keep the highest dim."),
};

/** Parses and checks the attributes; `shape` or `target_shape` must be given. */
static mxk_status rs_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    rs_param p;
    char msg[256];
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "shape", &p.shape, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "reverse", &p.reverse, err));
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "target_shape", &p.target, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "keep_highest", &p.keep_highest, err));
    if (p.shape.ndim == 0 && p.target.ndim == 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'shape': required (or the deprecated 'target_shape')");
    if (p.shape.ndim > 0) {
        mxk_status st =
            cb_reshape_check_spec(p.shape.dims, p.shape.ndim, p.reverse, msg, sizeof msg);
        if (st != MXK_OK)
            return mxk_sdk_error(err, st, "%s", msg);
    } else {
        mxk_sdk_log(MXK_LOG_WARNING, "Reshape: using target_shape will be deprecated; use shape");
    }
    return cbt_param_new(&p, sizeof p, out, err);
}

/**
 * The start of both shape inferences: the data and the output (either may be
 * given) have at most MXK_SDK_MAX_ELEMS elements, so products of their dims fit.
 */
static mxk_status rs_check_counts(const mxk_shape *in, const mxk_shape *out, mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_sdk_shapes_check_count(in, 1, "argument", rs_args, err));
    return mxk_sdk_shapes_check_count(out, 1, "output", rs_outs, err);
}

/**
 * Backwards inference shared by both operators: an input with exactly one
 * unknown dim takes it from the known output's element count.
 */
static void rs_fill_input(mxk_shape *in, const mxk_shape *out) {
    if (in->ndim == 0 || !mxk_sdk_shape_is_known(out))
        return;
    int32_t unknown = -1, n = 0;
    uint64_t known = 1;
    for (int32_t i = 0; i < in->ndim; i++) {
        if (in->dims[i] == 0) {
            unknown = i;
            n++;
        } else {
            known *= (uint64_t)in->dims[i];
        }
    }
    uint64_t total = mxk_sdk_shape_count(out);
    if (n == 1 && known > 0 && total % known == 0)
        in->dims[unknown] = (int64_t)(total / known);
}

/** Reshape's output shape (input fully known), else backwards inference. */
static mxk_status rs_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const rs_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    MXK_SDK_CHECK(rs_check_counts(in, out, err));
    rs_fill_input(&in[0], &out[0]);
    if (!mxk_sdk_shape_is_known(&in[0]))
        return MXK_OK;
    mxk_shape o;
    char msg[512];
    mxk_status st = p->shape.ndim > 0
                        ? cb_reshape_infer(p->shape.dims, p->shape.ndim, p->reverse, &in[0], &o,
                                           msg, sizeof msg)
                        : cb_reshape_infer_legacy(p->target.dims, p->target.ndim, p->keep_highest,
                                                  &in[0], &o, msg, sizeof msg);
    if (st != MXK_OK)
        return mxk_sdk_error(err, st, "%s", msg);
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** Flatten's output shape (d1, d2*...*dk); backwards the first dim and one unknown dim. */
static mxk_status fl_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    MXK_SDK_CHECK(rs_check_counts(in, out, err));
    if (in[0].ndim > 0 && out[0].ndim == 2 && in[0].dims[0] == 0)
        in[0].dims[0] = out[0].dims[0];
    rs_fill_input(&in[0], &out[0]);
    if (in[0].ndim == 0)
        return MXK_OK;
    uint64_t rest = mxk_sdk_shape_prod(&in[0], 1, in[0].ndim); /* <= 2^60: rs_check_counts */
    mxk_shape o = mxk_sdk_shape2(in[0].dims[0], (int64_t)rest);
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** Reshape forward. */
static mxk_status rs_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    return cbi_copy_forward(args, 1, rs_infer_shape, param, err);
}

/** Flatten forward. */
static mxk_status fl_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    return cbi_copy_forward(args, 1, fl_infer_shape, param, err);
}

/** Registers Flatten and Reshape with their CPU kernels. */
mxk_status cb_register_reshape(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const fl_aliases[] = {"flatten", "_npx_batch_flatten", NULL};
    static const char *const rs_aliases[] = {"reshape", NULL};
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = "Flatten";
    def.aliases = fl_aliases;
    def.description = "Flattens the input to 2-D: (d1, d2*...*dk).";
    def.arguments = rs_args;
    def.outputs = rs_outs;
    def.infer_shape = fl_infer_shape;
    def.infer_type = cbi_infer_type_same;
    def.backward_dependency = cbt_dep_out_grad;
    def.forward_inplace = cbt_inplace_identity_00;
    def.backward_inplace = cbt_inplace_identity_00;
    MXK_SDK_CHECK(cbt_register(reg, &def, "Flatten", fl_forward, cbi_copy_backward, 1, err));

    mxk_sdk_op_def_init(&def);
    def.name = "Reshape";
    def.aliases = rs_aliases;
    def.description = "Reshapes the input to a new shape with the same number of elements.";
    def.attrs = rs_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(rs_attrs);
    def.arguments = rs_args;
    def.outputs = rs_outs;
    def.parse_param = rs_parse;
    def.free_param = cbt_param_free;
    def.infer_shape = rs_infer_shape;
    def.infer_type = cbi_infer_type_same;
    def.backward_dependency = cbt_dep_out_grad;
    def.forward_inplace = cbt_inplace_identity_00;
    def.backward_inplace = cbt_inplace_identity_00;
    return cbt_register(reg, &def, "Reshape", rs_forward, cbi_copy_backward, 1, err);
}
