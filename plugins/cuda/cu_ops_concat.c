/*
 * cuda plugin: Concat, SliceChannel and stack on the GPU, as strided views
 * (cu_layout.h) of the operators cpu-blas defines (op_concat.c).
 *
 * Semantics: MXNet src/operator/nn/concat-inl.h (inputs joined along `dim`),
 * src/operator/slice_channel-inl.h (the input split along `axis` into
 * num_outputs equal pieces, squeeze_axis only dropping the axis from the shapes)
 * and src/operator/tensor/matrix_op-inl.h (stack: inputs of one shape joined
 * along a new axis). Around the axis the big array is (outer, k, inner); piece i
 * of length len along the axis is the block (outer, len * inner) at offset
 * off_i * inner of each outer row, moved by one view per piece. Forward takes
 * every dtype; backward (float32, reading only the output gradients) moves the
 * blocks the other way, each gradient by its own request.
 */
#include "cu_layout.h"

/** Parsed attributes: the count (num_args, num_outputs), the axis, stack's new axis. */
typedef struct cu_cc_param {
    int64_t num;
    int64_t axis;
    int32_t stack;
} cu_cc_param;

/** (outer, k, inner) of shape s around axis a. */
static void cc_split(const mxk_shape *s, int32_t a, int64_t *outer, int64_t *k, int64_t *inner) {
    *outer = 1;
    *inner = 1;
    for (int32_t d = 0; d < a; d++)
        *outer *= s->dims[d];
    for (int32_t d = a + 1; d < s->ndim; d++)
        *inner *= s->dims[d];
    *k = s->dims[a];
}

/**
 * The view of one piece (length len at offset off along the axis of a big array
 * of (outer, k, inner)): join copies the piece into the big array, split the
 * other way.
 */
static void cc_view(int64_t outer, int64_t k, int64_t inner, int64_t off, int64_t len, int join,
                    cu_view *v) {
    int64_t big = k * inner, piece = len * inner;
    cu_view_init(v);
    cu_view_push(v, outer, join ? piece : big, join ? big : piece);
    cu_view_push(v, piece, 1, 1);
    if (join)
        v->dst_off = off * inner;
    else
        v->src_off = off * inner;
}

/** The axis, counted from the end when negative, checked against `ndim`. */
static mxk_status cc_axis(const char *op, int64_t axis, int32_t ndim, int32_t *a,
                          mxk_error_sink *err) {
    int64_t v = axis < 0 ? axis + ndim : axis;
    if (v < 0 || v >= ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: axis %lld is out of range for %d dims", op,
                             (long long)axis, (int)ndim);
    *a = (int32_t)v;
    return MXK_OK;
}

/**
 * Moves every piece between `big` and pieces[0 .. n): join (pieces -> big with
 * request req[0]) or split (big -> pieces[i] by req[i], NULL requests skipped).
 * `len` > 0: every piece has that length on the axis, else piece i's dim a.
 * `grad`: float32 gradients (the sum kernel), else any dtype.
 */
static mxk_status cc_move(const mxk_op_ctx *ctx, const char *op, const mxk_tensor *big, int32_t a,
                          const mxk_tensor *const *pieces, uint32_t n, int join,
                          const mxk_op_req *req, int64_t len, int grad, mxk_error_sink *err) {
    int64_t outer, k, inner, off = 0;
    MXK_SDK_CHECK(cu_need(big, op, join ? "the output" : "the input", err));
    cc_split(&big->shape, a, &outer, &k, &inner);
    for (uint32_t i = 0; i < n; i++) {
        mxk_op_req r = join ? req[0] : req[i];
        if (pieces[i] == NULL)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: piece %u is missing", op,
                                 (unsigned)i);
        int64_t l = len > 0 ? len : pieces[i]->shape.dims[a];
        if (r != MXK_REQ_NULL) {
            cu_view v;
            MXK_SDK_CHECK(cu_need(pieces[i], op, "a piece", err));
            if (cu_shape_size(&pieces[i]->shape) != outer * l * inner)
                return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                     "%s: piece %u of %lld elements, expected %lld", op,
                                     (unsigned)i, (long long)cu_shape_size(&pieces[i]->shape),
                                     (long long)(outer * l * inner));
            cc_view(outer, k, inner, off, l, join, &v);
            const mxk_tensor *src = join ? pieces[i] : big, *dst = join ? big : pieces[i];
            MXK_SDK_CHECK(grad ? cu_view_sum(ctx, &v, src, dst, r, 0, err)
                               : cu_view_copy(ctx, &v, src, dst, r, err));
        }
        off += l;
    }
    if (off != k)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "%s: pieces of %lld entries along axis %d, "
                             "expected %lld",
                             op, (long long)off, (int)a, (long long)k);
    return MXK_OK;
}

/** Concat and stack forward: joins the inputs into the output. */
static mxk_status cc_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_cc_param *p = param;
    const char *op = p->stack ? "stack" : "Concat";
    if (args->num_in != (uint32_t)p->num || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: expected %lld inputs", op,
                             (long long)p->num);
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    int32_t a = 0;
    MXK_SDK_CHECK(cc_axis(op, p->axis, args->out_data[0]->shape.ndim, &a, err));
    return cc_move(ctx, op, args->out_data[0], a, args->in_data, args->num_in, 1, args->req,
                   p->stack, 0, err);
}

/** Concat and stack backward: splits the output gradient into the input gradients. */
static mxk_status cc_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_cc_param *p = param;
    const char *op = p->stack ? "stack" : "Concat";
    if (args->num_in != (uint32_t)p->num || args->num_out_grad != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: expected %lld inputs", op,
                             (long long)p->num);
    const mxk_tensor *dy = args->out_grad[0];
    MXK_SDK_CHECK(cu_need(dy, op, "the output gradient", err));
    int32_t a = 0;
    MXK_SDK_CHECK(cc_axis(op, p->axis, dy->shape.ndim, &a, err));
    return cc_move(ctx, op, dy, a, args->in_grad, args->num_in, 0, args->req, p->stack, 1, err);
}

/** SliceChannel forward: splits the input into the outputs. */
static mxk_status sc_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_cc_param *p = param;
    if (args->num_in != 1 || args->num_out != (uint32_t)p->num)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "SliceChannel: expected %lld outputs",
                             (long long)p->num);
    const mxk_tensor *x = args->in_data[0];
    MXK_SDK_CHECK(cu_need(x, "SliceChannel", "the input", err));
    int32_t a = 0;
    MXK_SDK_CHECK(cc_axis("SliceChannel", p->axis, x->shape.ndim, &a, err));
    return cc_move(ctx, "SliceChannel", x, a, args->out_data, args->num_out, 0, args->req,
                   x->shape.dims[a] / p->num, 0, err);
}

/** SliceChannel backward: joins the output gradients into the input gradient. */
static mxk_status sc_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_cc_param *p = param;
    if (args->num_in != 1 || args->num_out_grad != (uint32_t)p->num)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "SliceChannel: expected %lld outputs",
                             (long long)p->num);
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *g = args->in_grad[0];
    MXK_SDK_CHECK(cu_need(g, "SliceChannel", "the input gradient", err));
    int32_t a = 0;
    MXK_SDK_CHECK(cc_axis("SliceChannel", p->axis, g->shape.ndim, &a, err));
    return cc_move(ctx, "SliceChannel", g, a, args->out_grad, args->num_out_grad, 1, args->req,
                   g->shape.dims[a] / p->num, 1, err);
}

/** parse_param of Concat: num_args, dim. */
static mxk_status cc_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_cc_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "num_args", &p.num, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "dim", &p.axis, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of SliceChannel: num_outputs, axis (squeeze_axis changes shapes only). */
static mxk_status sc_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_cc_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "num_outputs", &p.num, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of stack: num_args, axis (of the output). */
static mxk_status st_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_cc_param p = {.stack = 1};
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "num_args", &p.num, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

mxk_status cu_register_concat(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_register_simple(reg, "Concat", cc_parse, cc_forward, cc_backward, err));
    MXK_SDK_CHECK(cu_register_simple(reg, "SliceChannel", sc_parse, sc_forward, sc_backward, err));
    return cu_register_simple(reg, "stack", st_parse, cc_forward, cc_backward, err);
}
