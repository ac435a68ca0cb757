/*
 * cpu-blas plugin: SequenceMask, SequenceLast and SequenceReverse.
 *
 * Semantics: MXNet src/operator/sequence_mask-inl.h / sequence_mask.cc,
 * sequence_last-inl.h and sequence_reverse-inl.h. `data` is (seq, batch, ...) for
 * axis 0 or (batch, seq, ...) for axis 1 (SequenceReverse: axis 0 only); with
 * use_sequence_length the argument `sequence_length` (batch,) gives each batch
 * element's length (any dtype, truncated as MXNet's static_cast), else every
 * sequence is full length.
 *   SequenceMask:    steps at or past the length are set to `value`;
 *   SequenceLast:    the step at length - 1, output data's shape without the axis;
 *   SequenceReverse: the first `length` steps reversed, padding kept in place.
 * Gradients follow the same mapping (masked steps get 0); backward reads out_grad
 * and sequence_length. SequenceMask may run in place (data -> output, out_grad ->
 * data gradient). Differences: lengths that MXNet would use to read or write outside
 * the data (negative; SequenceLast below 1 or above the sequence; SequenceReverse
 * above the sequence) are refused; the gradient of sequence_length is zero (MXNet
 * leaves it unwritten); a forward ADD request adds the masked output (MXNet adds
 * `value` on top of the data there).
 */
#include <math.h>
#include <string.h>

#include "op_index.h"

/** Which operator a parameter object belongs to. */
typedef enum sq_kind { SQ_MASK, SQ_LAST, SQ_REVERSE } sq_kind;

/** Parsed attributes. */
typedef struct sq_param {
    sq_kind kind;
    int32_t use_len;
    double value; /**< SequenceMask */
    int64_t axis;
} sq_param;

static const char *const sq_args1[] = {"data", NULL};
static const char *const sq_args2[] = {"data", "sequence_length", NULL};
static const char *const sq_names[] = {"SequenceMask", "SequenceLast", "SequenceReverse"};

/**
 * Attribute schema of SequenceMask (SequenceMaskParam); SequenceLast and
 * SequenceReverse have its first two.
 */
static const mxk_attr_def sq_attrs[] = {
    MXK_SDK_ATTR("use_sequence_length", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If set to true, this layer takes in an extra input parameter "
                 "`sequence_length` to specify variable length sequence"),
    MXK_SDK_ATTR("axis", MXK_ATTR_INT, 0, "0", NULL,
                 "The sequence axis. Only values of 0 and 1 are currently supported."),
    MXK_SDK_ATTR("value", MXK_ATTR_FLOAT, 0, "0", NULL, "The value to be used as a mask."),
};

/** parse_param of the three operators; `kind` from the attribute set. */
static mxk_status sq_parse_kind(const mxk_attrs *attrs, sq_kind kind, void **out,
                                mxk_error_sink *err) {
    sq_param p = {.kind = kind};
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_sequence_length", &p.use_len, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    if (kind == SQ_MASK)
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "value", &p.value, err));
    if (kind == SQ_REVERSE ? p.axis != 0 : (p.axis != 0 && p.axis != 1))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "Current implementation expects axis to be %s (got %lld)",
                             kind == SQ_REVERSE ? "0" : "0 or 1", (long long)p.axis);
    return cbt_param_new(&p, sizeof p, out, err);
}
/* parse_param of SequenceMask, SequenceLast, SequenceReverse */
CB_IDX_PARSE_AS(sqm_parse, sq_parse_kind, SQ_MASK)
CB_IDX_PARSE_AS(sql_parse, sq_parse_kind, SQ_LAST)
CB_IDX_PARSE_AS(sqr_parse, sq_parse_kind, SQ_REVERSE)

/** Arguments: data[, sequence_length]. */
static mxk_status sq_list_arguments(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    const sq_param *p = param;
    const char *const *names = p->use_len ? sq_args2 : sq_args1;
    for (; *names != NULL; names++)
        MXK_SDK_CHECK(mxk_sdk_host()->name_list_add(out, *names, err));
    return MXK_OK;
}

/** Shapes: sequence_length (batch,); output data's shape (SequenceLast: without the axis). */
static mxk_status sq_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const sq_param *p = param;
    const mxk_shape *d = &in[0];
    if (d->ndim == 0)
        return MXK_OK;
    if (d->ndim < 2)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "The data array must be of rank 2 or greater.");
    int64_t batch = p->axis ? d->dims[0] : d->dims[1];
    if (p->use_len) {
        mxk_shape ls = mxk_sdk_shape1(batch);
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[1], &ls, "argument", "sequence_length", err));
    }
    mxk_shape o = *d;
    if (p->kind == SQ_LAST) {
        o.dims[0] = batch;
        for (int32_t i = 1; i + 1 < d->ndim; i++)
            o.dims[i] = d->dims[i + 1];
        o.dims[--o.ndim] = 0;
    }
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** Types: data and output float32; sequence_length any (float32 when unknown). */
static mxk_status sq_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_sdk_type_assign(&in[0], MXK_FLOAT32, "argument 'data'", err));
    if (num_in > 1 && in[1] < 0)
        in[1] = MXK_FLOAT32;
    return mxk_sdk_type_assign(&out[0], MXK_FLOAT32, "output 'output'", err);
}

/** Backward reads out_grad and sequence_length. */
static void sq_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                          uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                          uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    if (num_in > 1)
        need_in_data[1] = 1;
}

/** The (seq, batch, rest) view of a call and the per-batch lengths' tensor. */
typedef struct sq_view {
    int64_t seq, batch, rest;
    const mxk_tensor *len; /**< NULL: full lengths */
} sq_view;

/** Row offset (in elements) of step s of batch element b (mxk_idx_seq_row). */
static uint64_t sq_row(const sq_param *p, const sq_view *v, int64_t s, int64_t b) {
    return mxk_idx_seq_row((int32_t)p->axis, v->seq, v->batch, v->rest, s, b);
}

/** The view of data shape `d` and the checked lengths (NULL when not used). */
static mxk_status sq_view_of(const sq_param *p, const mxk_shape *d, const mxk_tensor *len,
                             sq_view *v, mxk_error_sink *err) {
    v->seq = d->dims[p->axis];
    v->batch = d->dims[1 - p->axis];
    v->rest = (int64_t)mxk_sdk_shape_prod(d, 2, d->ndim);
    v->len = p->use_len ? len : NULL;
    if (v->len == NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cbt_check_any(len, "argument 'sequence_length'", err));
    if (mxk_sdk_shape_count(&len->shape) != (uint64_t)v->batch)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "sequence_length must have %lld elements",
                             (long long)v->batch);
    double lo = p->kind == SQ_LAST ? 1 : 0, hi = p->kind == SQ_MASK ? INFINITY : (double)v->seq;
    for (int64_t b = 0; b < v->batch; b++) {
        double l = trunc(cbt_load(len->data, len->dtype, (uint64_t)b));
        if (!(l >= lo && l <= hi))
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "sequence_length[%lld] = %g is outside [%g, %g] (sequence "
                                 "axis of size %lld)",
                                 (long long)b, l, lo, hi, (long long)v->seq);
    }
    return MXK_OK;
}

/** Length of batch element b (checked by sq_view_of; clipped to the sequence). */
static int64_t sq_len(const sq_view *v, int64_t b) {
    if (v->len == NULL)
        return v->seq;
    return mxk_idx_seq_len(cbt_load(v->len->data, v->len->dtype, (uint64_t)b), v->seq, 0);
}

/**
 * Applies the operator's step mapping from `src` (data / out_grad) to `dst`
 * (output / data gradient) by `req`. Mask: steps past the length get `fill`.
 * Reverse: step s < length goes to length - 1 - s (an involution, so backward is
 * the same call). Last (forward only): dst[b] = src[length - 1].
 */
static void sq_apply(const sq_param *p, const sq_view *v, const float *src, float *dst, float fill,
                     mxk_op_req req) {
    size_t r = (size_t)v->rest;
    for (int64_t b = 0; b < v->batch; b++) {
        int64_t len = sq_len(v, b);
        if (p->kind == SQ_LAST) {
            mxk_sdk_copy_f32(dst + (uint64_t)b * r, src + sq_row(p, v, len - 1, b), r, req);
            continue;
        }
        for (int64_t s = 0; s < v->seq; s++) {
            float *o = dst + sq_row(p, v, s, b);
            if (p->kind == SQ_MASK && s >= len)
                mxk_sdk_fill_f32(o, fill, r, req);
            else if (p->kind == SQ_MASK)
                mxk_sdk_copy_f32(o, src + sq_row(p, v, s, b), r, req);
            else
                mxk_sdk_copy_f32(o, src + sq_row(p, v, s < len ? len - 1 - s : s, b), r, req);
        }
    }
}

/** Forward of the three operators. */
static mxk_status sq_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const sq_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, p->use_len ? 2 : 1, 1, sq_infer_shape, param, 1, err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dt = args->in_data[0], *ot = args->out_data[0];
    MXK_SDK_CHECK(cb_check_tensor(dt, "argument 'data'", err));
    MXK_SDK_CHECK(cb_check_tensor(ot, "output 'output'", err));
    sq_view v;
    MXK_SDK_CHECK(sq_view_of(p, &dt->shape, p->use_len ? args->in_data[1] : NULL, &v, err));
    sq_apply(p, &v, cb_f32(dt), cb_f32(ot), (float)p->value, args->req[0]);
    return MXK_OK;
}

/** Backward: the data gradient through the same mapping; zero for sequence_length. */
static mxk_status sq_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const sq_param *p = param;
    uint32_t n = p->use_len ? 2 : 1;
    const mxk_tensor *dy, *dx;
    MXK_SDK_CHECK(cb_idx_begin_backward(args, n, "sequence_length", &dy, &dx, err));
    if (dx == NULL)
        return MXK_OK;
    mxk_op_req req = args->req[0];
    mxk_shape shapes[2] = {dx->shape, mxk_sdk_shape_unknown()}, o = mxk_sdk_shape_unknown();
    MXK_SDK_CHECK(sq_infer_shape(param, shapes, n, &o, 1, NULL, 0, err));
    if (!mxk_sdk_shape_equal(&o, &dy->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'output': inconsistent shape");
    sq_view v;
    MXK_SDK_CHECK(sq_view_of(p, &dx->shape, n == 2 ? args->in_data[1] : NULL, &v, err));
    if (p->kind != SQ_LAST) {
        sq_apply(p, &v, cb_f32(dy), cb_f32(dx), 0.0f, req);
        return MXK_OK;
    }
    if (req != MXK_REQ_ADD)
        memset(dx->data, 0, (size_t)mxk_sdk_shape_count(&dx->shape) * sizeof(float));
    for (int64_t b = 0; b < v.batch; b++) /* out_grad into the last step */
        mxk_sdk_copy_f32(cb_f32(dx) + sq_row(p, &v, sq_len(&v, b) - 1, b),
                         cb_f32(dy) + (uint64_t)(b * v.rest), (size_t)v.rest, MXK_REQ_ADD);
    return MXK_OK;
}

/** Registers SequenceMask, SequenceLast and SequenceReverse with their CPU kernels. */
mxk_status cb_register_index_sequence(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_status (*const parse[])(const mxk_attrs *, void **,
                                mxk_error_sink *) = {sqm_parse, sql_parse, sqr_parse};
    static const char *const docs[] = {
        "Sets all elements outside the sequence to a constant value.",
        "Takes the last element of a sequence.",
        "Reverses the elements of each sequence.",
    };
    for (int i = 0; i < 3; i++) {
        mxk_op_def def;
        cbt_def_init(&def, docs[i], sq_attrs, i == SQ_MASK ? 3 : 2, NULL, parse[i]);
        def.list_arguments = sq_list_arguments;
        def.infer_shape = sq_infer_shape;
        def.infer_type = sq_infer_type;
        def.backward_dependency = sq_dependency;
        if (i == SQ_MASK) { /* data -> output; out_grad (backward index 0) -> data gradient */
            def.forward_inplace = cbt_inplace_00;
            def.backward_inplace = cbt_inplace_00;
        }
        MXK_SDK_CHECK(cbt_register(reg, &def, sq_names[i], sq_forward, sq_backward, 1, err));
    }
    return MXK_OK;
}
