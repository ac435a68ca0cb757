/*
 * cuda plugin: SequenceMask, SequenceLast and SequenceReverse on the GPU, for the
 * operators cpu-blas defines (op_index_sequence.c).
 *
 * Semantics: MXNet src/operator/sequence_mask-inl.h, sequence_last-inl.h and
 * sequence_reverse-inl.h (and their .cu kernels). `data` is (seq, batch, ...) for
 * axis 0 or (batch, seq, ...) for axis 1; with use_sequence_length the argument
 * sequence_length (batch,) gives each batch element's length (any dtype,
 * truncated), else every sequence is full. Step rows and lengths come from
 * mxk_index.h, shared with cpu-blas. Gradients follow the same mapping (masked
 * steps get 0; SequenceLast's gradient goes to the last step); sequence_length
 * gets a zero gradient. SequenceMask may run in place. Difference from cpu-blas:
 * lengths it refuses (negative, SequenceLast below 1, beyond the sequence) would
 * need the lengths on the host, so they are clamped into range on the device.
 */
#include "cu_kern_index.h"
#include "cu_layout.h"

/** Parsed attributes. */
typedef struct cu_sq_param {
    int32_t kind; /**< CU_SEQ_MASK, CU_SEQ_REVERSE or CU_SEQ_LAST */
    int32_t use_len;
    int64_t axis;
    double value; /**< SequenceMask */
} cu_sq_param;

/** The operator's name. */
static const char *sq_name(const cu_sq_param *p) {
    return p->kind == CU_SEQ_MASK   ? "SequenceMask"
           : p->kind == CU_SEQ_LAST ? "SequenceLast"
                                    : "SequenceReverse";
}

/** The call over data shape d with the lengths tensor (when used). */
static mxk_status sq_call(const cu_sq_param *p, const mxk_shape *d, const mxk_tensor *len,
                          cu_seq_call *c, mxk_error_sink *err) {
    if (d->ndim < 2)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: The data array must be of rank 2 or greater.",
                             sq_name(p));
    *c = (cu_seq_call){.kind = p->kind,
                       .axis = (int32_t)p->axis,
                       .seq = d->dims[p->axis],
                       .batch = d->dims[1 - p->axis],
                       .rest = 1,
                       .fill = (float)p->value};
    for (int32_t i = 2; i < d->ndim; i++)
        c->rest *= d->dims[i];
    if (!p->use_len)
        return MXK_OK;
    MXK_SDK_CHECK(cu_need(len, sq_name(p), "sequence_length", err));
    if (cu_shape_size(&len->shape) != c->batch)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: sequence_length must have %lld elements",
                             sq_name(p), (long long)c->batch);
    c->len = len->data;
    c->len_dtype = len->dtype;
    return MXK_OK;
}

/** Queues one mapping. */
static mxk_status sq_run(const mxk_op_ctx *ctx, const cu_seq_call *c, const mxk_tensor *src,
                         const mxk_tensor *dst, mxk_error_sink *err) {
    if (src->dtype != MXK_FLOAT32 || dst->dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "sequence data: expected float32");
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_sequence(c, src->data, dst->data, cu_stream(ctx)), "sequence kernel", err);
    return MXK_OK;
}

/** Forward of the three operators. */
static mxk_status sq_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_sq_param *p = param;
    if (args->num_in != (p->use_len ? 2u : 1u) || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: wrong number of arguments",
                             sq_name(p));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dt = args->in_data[0], *ot = args->out_data[0];
    MXK_SDK_CHECK(cu_need(dt, sq_name(p), "the data", err));
    MXK_SDK_CHECK(cu_need(ot, sq_name(p), "the output", err));
    cu_seq_call c;
    MXK_SDK_CHECK(sq_call(p, &dt->shape, p->use_len ? args->in_data[1] : NULL, &c, err));
    c.add = args->req[0] == MXK_REQ_ADD;
    return sq_run(ctx, &c, dt, ot, err);
}

/** Backward: the data gradient through the same mapping; zeros for sequence_length. */
static mxk_status sq_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_sq_param *p = param;
    if (args->num_in != (p->use_len ? 2u : 1u) || args->num_out_grad != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: wrong number of arguments",
                             sq_name(p));
    if (p->use_len)
        MXK_SDK_CHECK(cu_zero_grad(ctx, args->in_grad[1], args->req[1], err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dy = args->out_grad[0], *dx = args->in_grad[0];
    MXK_SDK_CHECK(cu_need(dy, sq_name(p), "the output gradient", err));
    MXK_SDK_CHECK(cu_need(dx, sq_name(p), "the data gradient", err));
    cu_seq_call c;
    MXK_SDK_CHECK(sq_call(p, &dx->shape, p->use_len ? args->in_data[1] : NULL, &c, err));
    c.fill = 0.0f;
    c.add = req == MXK_REQ_ADD;
    if (p->kind == CU_SEQ_LAST) {
        c.kind = CU_SEQ_LAST_GRAD;
        MXK_SDK_CHECK(cu_enter(ctx, err));
        if (req != MXK_REQ_ADD)
            CU_CHECK(cudaMemsetAsync(dx->data, 0, (size_t)cu_shape_size(&dx->shape) * sizeof(float),
                                     cu_stream(ctx)),
                     "cudaMemsetAsync", err);
    }
    return sq_run(ctx, &c, dy, dx, err);
}

/** parse_param of the three operators for `kind`. */
static mxk_status sq_parse_kind(const mxk_attrs *attrs, int32_t kind, void **out,
                                mxk_error_sink *err) {
    cu_sq_param p = {.kind = kind};
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_sequence_length", &p.use_len, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    if (kind == CU_SEQ_MASK)
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "value", &p.value, err));
    if (kind == CU_SEQ_REVERSE ? p.axis != 0 : (p.axis != 0 && p.axis != 1))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "Current implementation expects axis to be %s (got %lld)",
                             kind == CU_SEQ_REVERSE ? "0" : "0 or 1", (long long)p.axis);
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of SequenceMask. */
static mxk_status sqm_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return sq_parse_kind(attrs, CU_SEQ_MASK, out, err);
}

/** parse_param of SequenceLast. */
static mxk_status sql_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return sq_parse_kind(attrs, CU_SEQ_LAST, out, err);
}

/** parse_param of SequenceReverse. */
static mxk_status sqr_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return sq_parse_kind(attrs, CU_SEQ_REVERSE, out, err);
}

mxk_status cu_register_sequence(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_register_simple(reg, "SequenceMask", sqm_parse, sq_forward, sq_backward, err));
    MXK_SDK_CHECK(cu_register_simple(reg, "SequenceLast", sql_parse, sq_forward, sq_backward, err));
    return cu_register_simple(reg, "SequenceReverse", sqr_parse, sq_forward, sq_backward, err);
}
