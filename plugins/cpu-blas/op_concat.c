/*
 * cpu-blas plugin: Concat (alias concat), SliceChannel (alias split) and stack.
 *
 * Semantics: MXNet src/operator/nn/concat.cc, concat-inl.h (arguments
 * arg0..arg{num_args-1}, all dims equal except `dim` (default 1, negative counts
 * from the end), output dim = their sum; backward splits dy) and
 * src/operator/slice_channel-inl.h (outputs output0..output{k-1}; `axis`
 * (default 1) divisible by num_outputs; squeeze_axis drops the axis, whose
 * size must then equal num_outputs; backward concatenates the output
 * gradients; with a partially known data shape the outputs' shapes fill it back)
 * and src/operator/tensor/matrix_op-inl.h (stack: arguments arg0.., one shape,
 * a new axis of size num_args at `axis`). All move blocks of (length along the
 * axis) x (inner size) elements, `outer` times, of any dtype (inputs and outputs
 * of one dtype, as upstream's type inference); backward (float32) reads only the
 * output gradient(s).
 */
#include "op_init.h"

/** Parsed attributes of Concat (num = num_args) or SliceChannel (num = num_outputs). */
typedef struct cc_param {
    int64_t num;
    int64_t axis;
    int32_t squeeze; /**< SliceChannel squeeze_axis */
    int32_t stack;   /**< stack: join along a new axis (each input one entry of it) */
} cc_param;

/** Attribute schema of Concat (MXNet 1.9.1 ConcatParam). */
static const mxk_attr_def cc_attrs[] = {
    MXK_SDK_ATTR("num_args", MXK_ATTR_INT, 1, NULL, NULL, "Number of inputs to concatenate."),
    MXK_SDK_ATTR("dim", MXK_ATTR_INT, 0, "1", NULL, "The dimension to concatenate along."),
};
/** Attribute schema of SliceChannel (SliceChannelParam). */
static const mxk_attr_def sc_attrs[] = {
    MXK_SDK_ATTR("num_outputs", MXK_ATTR_INT, 1, NULL, NULL, "Number of splits."),
    MXK_SDK_ATTR("axis", MXK_ATTR_INT, 0, "1", NULL, "Axis along which to split."),
    MXK_SDK_ATTR("squeeze_axis", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If true, removes the axis (each piece must have length 1 there)."),
};

/** Attribute schema of stack (StackParam). */
static const mxk_attr_def st_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_INT, 0, "0", NULL, "The new axis of the output."),
    MXK_SDK_ATTR("num_args", MXK_ATTR_INT, 1, NULL, NULL, "Number of inputs to stack."),
};

/** Parses Concat's num_args, dim. */
static mxk_status cc_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cc_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_args", 1, CBT_MAX_IO, &p.num, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "dim", &p.axis, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Parses SliceChannel's num_outputs, axis, squeeze_axis. */
static mxk_status sc_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cc_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_outputs", 1, CBT_MAX_IO, &p.num, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "squeeze_axis", &p.squeeze, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Concat's and stack's arguments arg0..arg{num_args-1}. */
static mxk_status cc_list_arguments(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    return cbt_list_numbered(out, "arg", ((const cc_param *)param)->num, err);
}

/** SliceChannel's outputs output0..output{num_outputs-1}. */
static mxk_status sc_list_outputs(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    return cbt_list_numbered(out, "output", ((const cc_param *)param)->num, err);
}

/** Concat: inputs agree off the axis; output axis = sum of theirs. */
static mxk_status cc_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const cc_param *p = param;
    if (num_in != (uint32_t)p->num || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected %lld arguments",
                             (long long)p->num);
    mxk_shape m = mxk_sdk_shape_unknown();
    int64_t total = 0;
    int known = 1;
    int32_t a = 0;
    for (uint32_t i = 0; i < num_in; i++) {
        if (in[i].ndim == 0) {
            known = 0;
            continue;
        }
        MXK_SDK_CHECK(cbt_axis(p->axis, in[i].ndim, "dim", &a, err));
        mxk_shape s = in[i];
        if (s.dims[a] <= 0)
            known = 0;
        else
            MXK_SDK_CHECK(
                mxk_sdk_dim_add(total, s.dims[a], &total, "output size along the axis", err));
        s.dims[a] = 0;
        if (!mxk_sdk_shape_merge(&m, &s, &m)) {
            char e[MXK_SDK_SHAPE_STR_MAX], g[MXK_SDK_SHAPE_STR_MAX];
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "argument 'arg%u': expected %s (any size on axis %d), got %s",
                                 (unsigned)i, mxk_sdk_shape_format(&m, e, sizeof e), (int)a,
                                 mxk_sdk_shape_format(&in[i], g, sizeof g));
        }
    }
    if (!known || m.ndim == 0)
        return MXK_OK;
    m.dims[a] = total;
    return mxk_sdk_shape_assign_named(&out[0], &m, "output", "output", err);
}

/**
 * SliceChannel (SliceChannelProp::InferShape): each output is data with the axis
 * divided (and squeezed); data's unknown dims are filled back from a known output.
 */
static mxk_status sc_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const cc_param *p = param;
    if (num_in != 1 || num_out != (uint32_t)p->num)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    if (in[0].ndim == 0)
        return MXK_OK;
    int32_t a;
    char s[MXK_SDK_SHAPE_STR_MAX];
    MXK_SDK_CHECK(cbt_axis(p->axis, in[0].ndim, "axis", &a, err));
    mxk_shape o = in[0];
    if (o.dims[a] % p->num != 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "You are trying to split the %d-th axis of input tensor with shape %s "
                             "into num_outputs=%lld evenly sized chunks, but this is not possible "
                             "because %lld does not evenly divide %lld",
                             (int)a, mxk_sdk_shape_format(&in[0], s, sizeof s), (long long)p->num,
                             (long long)p->num, (long long)o.dims[a]);
    if (p->squeeze && o.dims[a] != 0 && o.dims[a] != p->num)
        return mxk_sdk_error(
            err, MXK_ERR_SHAPE,
            "If squeeze axis is True, the size of the sliced axis must be the same "
            "as num_outputs. Input shape=%s, axis=%d, num_outputs=%lld.",
            mxk_sdk_shape_format(&in[0], s, sizeof s), (int)a, (long long)p->num);
    o.dims[a] /= p->num;
    int squeezed = p->squeeze && o.ndim > 1;
    if (squeezed) {
        for (int32_t i = a; i + 1 < o.ndim; i++)
            o.dims[i] = o.dims[i + 1];
        o.dims[--o.ndim] = 0;
    }
    char what[32];
    for (uint32_t i = 0; i < num_out; i++) {
        snprintf(what, sizeof what, "output%u", (unsigned)i);
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[i], &o, "output", what, err));
        mxk_shape back = in[0]; /* data's shape from this output's */
        for (int32_t d = 0, k = 0; d < back.ndim; d++) {
            if (d == a && squeezed) {
                back.dims[d] = p->num;
                continue;
            }
            int64_t v = out[i].dims[k++];
            if (d == a)
                MXK_SDK_CHECK(mxk_sdk_dim_mul(v, p->num, &v, "argument 'data' axis", err));
            back.dims[d] = v;
        }
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[0], &back, "argument", "data", err));
    }
    return MXK_OK;
}

/** SliceChannel's backward reads every output gradient. */
static void sc_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    for (uint32_t i = 0; i < num_visible; i++)
        need_out_grad[i] = 1;
}

/**
 * Moves data between `big` (axis a) and pieces[i] (all of big's dtype) (ordered along the
 * axis): join (pieces -> big, request req[0]) or split (big -> pieces, req[i]).
 * Pieces with a NULL request are skipped (split) or must not occur (join).
 * `uniform` > 0: every piece has that length on the axis (their shapes are not read).
 */
static void cc_move(const mxk_tensor *big, int32_t a, const mxk_tensor *const *pieces, uint32_t n,
                    int join, const mxk_op_req *req, uint64_t uniform) {
    uint64_t outer, k, inner;
    cbt_split(&big->shape, a, &outer, &k, &inner);
    size_t es = mxk_sdk_dtype_size(big->dtype);
    uint64_t off = 0;
    for (uint32_t i = 0; i < n; i++) {
        mxk_op_req r = join ? req[0] : req[i];
        uint64_t len = uniform;
        if (len == 0)
            len = mxk_sdk_shape_count(&pieces[i]->shape) / (outer ? outer : 1) / inner;
        if (r != MXK_REQ_NULL) {
            for (uint64_t o = 0; o < outer; o++) {
                char *b = (char *)big->data + (o * k + off) * inner * es;
                char *q = (char *)pieces[i]->data + o * len * inner * es;
                cbi_copy_n(join ? b : q, join ? q : b, big->dtype, len * inner, r);
            }
        }
        off += len;
    }
}

static mxk_status st_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err);

/** Concat and stack forward: joins the inputs into the output (stack: one entry each). */
static mxk_status cc_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cc_param *p = param;
    MXK_SDK_CHECK(cbi_check_forward_same(args, (uint32_t)p->num, 1,
                                         p->stack ? st_infer_shape : cc_infer_shape, param, err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_shape *os = &args->out_data[0]->shape;
    int32_t a;
    MXK_SDK_CHECK(cbt_axis(p->axis, os->ndim, p->stack ? "axis" : "dim", &a, err));
    cc_move(args->out_data[0], a, args->in_data, args->num_in, 1, args->req, (uint64_t)p->stack);
    return MXK_OK;
}

/** Concat backward: splits dy into the input gradients by their requests. */
static mxk_status cc_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cc_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, (uint32_t)p->num, 1, 1, err));
    const mxk_tensor *dy = args->out_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(dy, "gradient of 'output'", err));
    int32_t a;
    MXK_SDK_CHECK(cbt_axis(p->axis, dy->shape.ndim, "dim", &a, err));
    uint64_t total = 0;
    for (uint32_t i = 0; i < args->num_in; i++) {
        const mxk_tensor *g = args->in_grad[i];
        /* every input gradient's shape is needed, its memory only when requested */
        if (g == NULL)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "gradient of 'arg%u': missing",
                                 (unsigned)i);
        if (args->req[i] != MXK_REQ_NULL)
            MXK_SDK_CHECK(cb_check_tensor(g, "input gradient", err));
        if (g->shape.ndim != dy->shape.ndim)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'arg%u': wrong rank",
                                 (unsigned)i);
        total += (uint64_t)g->shape.dims[a];
    }
    if (total != (uint64_t)dy->shape.dims[a])
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "input gradients do not add up to the output");
    cc_move(dy, a, args->in_grad, args->num_in, 0, args->req, 0);
    return MXK_OK;
}

/** SliceChannel forward: splits the input into the outputs. */
static mxk_status sc_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cc_param *p = param;
    MXK_SDK_CHECK(cbi_check_forward_same(args, 1, (uint32_t)p->num, sc_infer_shape, param, err));
    const mxk_shape *is = &args->in_data[0]->shape;
    int32_t a;
    MXK_SDK_CHECK(cbt_axis(p->axis, is->ndim, "axis", &a, err));
    cc_move(args->in_data[0], a, args->out_data, args->num_out, 0, args->req,
            (uint64_t)(is->dims[a] / p->num));
    return MXK_OK;
}

/** SliceChannel backward: joins the output gradients into d data. */
static mxk_status sc_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cc_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, (uint32_t)p->num, (uint32_t)p->num, err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *g = args->in_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(g, "gradient of 'data'", err));
    uint64_t total = 0;
    for (uint32_t i = 0; i < args->num_out_grad; i++) {
        MXK_SDK_CHECK(cb_check_tensor(args->out_grad[i], "output gradient", err));
        total += mxk_sdk_shape_count(&args->out_grad[i]->shape);
    }
    if (total != mxk_sdk_shape_count(&g->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "output gradients do not add up to the input");
    int32_t a;
    MXK_SDK_CHECK(cbt_axis(p->axis, g->shape.ndim, "axis", &a, err));
    cc_move(g, a, args->out_grad, args->num_out_grad, 1, args->req,
            (uint64_t)(g->shape.dims[a] / p->num));
    return MXK_OK;
}

/** Parses stack's num_args, axis. */
static mxk_status st_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cc_param p = {.stack = 1};
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_args", 1, CBT_MAX_IO, &p.num, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/**
 * stack (StackOpShape): the inputs share one shape (merged, and written back into
 * every input); the output inserts num_args at `axis` in [-ndim-1, ndim].
 */
static mxk_status st_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const cc_param *p = param;
    if (num_in != (uint32_t)p->num || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected %lld arguments",
                             (long long)p->num);
    MXK_SDK_CHECK(mxk_sdk_infer_shape_same(in, num_in, NULL, NULL, 0, NULL, err));
    const mxk_shape *d = &in[0];
    if (!mxk_sdk_shape_is_known(d))
        return MXK_OK;
    if (d->ndim + 1 > MXK_MAX_NDIM)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED, "the output would have %d dims (at most %d)",
                             (int)d->ndim + 1, MXK_MAX_NDIM);
    int32_t a;
    MXK_SDK_CHECK(cbt_axis(p->axis, d->ndim + 1, "axis", &a, err));
    mxk_shape o = mxk_sdk_shape_unknown();
    o.ndim = d->ndim + 1;
    for (int32_t i = 0; i < d->ndim; i++)
        o.dims[i < a ? i : i + 1] = d->dims[i];
    o.dims[a] = p->num;
    MXK_SDK_CHECK(mxk_sdk_shape_check_count(&o, "output 'output'", err));
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** stack backward: index i of the new axis of dy into input gradient i, by its request. */
static mxk_status st_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cc_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, (uint32_t)p->num, 1, 1, err));
    const mxk_tensor *dy = args->out_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(dy, "gradient of 'output'", err));
    int32_t a;
    MXK_SDK_CHECK(cbt_axis(p->axis, dy->shape.ndim, "axis", &a, err));
    if (dy->shape.dims[a] != p->num)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'output': %lld entries on axis %d",
                             (long long)dy->shape.dims[a], (int)a);
    uint64_t piece = mxk_sdk_shape_count(&dy->shape) / (uint64_t)p->num;
    for (uint32_t i = 0; i < args->num_in; i++) {
        char name[32];
        snprintf(name, sizeof name, "arg%u", (unsigned)i);
        MXK_SDK_CHECK(cb_check_grad(args->in_grad[i], args->req[i],
                                    &(mxk_shape){.ndim = 1, .dims = {(int64_t)piece}}, name, err));
    }
    cc_move(dy, a, args->in_grad, args->num_in, 0, args->req, 1);
    return MXK_OK;
}

/** Registers Concat, SliceChannel and stack with their CPU kernels. */
mxk_status cb_register_concat(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const data_arg[] = {"data", NULL};
    static const char *const out_name[] = {"output", NULL};
    static const char *const cc_aliases[] = {"concat", "_sparse_concat", NULL};
    static const char *const sc_aliases[] = {"split", NULL};
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.description = "Joins its inputs along dimension `dim`.";
    def.aliases = cc_aliases;
    def.attrs = cc_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(cc_attrs);
    def.outputs = out_name;
    def.list_arguments = cc_list_arguments;
    def.parse_param = cc_parse;
    def.free_param = cbt_param_free;
    def.infer_shape = cc_infer_shape;
    def.infer_type = cbi_infer_type_all;
    def.backward_dependency = cbt_dep_out_grad;
    MXK_SDK_CHECK(cbt_register(reg, &def, "Concat", cc_forward, cc_backward, 1, err));

    mxk_sdk_op_def_init(&def);
    def.description = "Splits the input along `axis` into num_outputs equal pieces.";
    def.aliases = sc_aliases;
    def.attrs = sc_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(sc_attrs);
    def.arguments = data_arg;
    def.list_outputs = sc_list_outputs;
    def.parse_param = sc_parse;
    def.free_param = cbt_param_free;
    def.infer_shape = sc_infer_shape;
    def.infer_type = cbi_infer_type_all;
    def.backward_dependency = sc_backward_dependency;
    MXK_SDK_CHECK(cbt_register(reg, &def, "SliceChannel", sc_forward, sc_backward, 1, err));

    mxk_sdk_op_def_init(&def);
    def.description = "Joins its inputs along a new axis `axis`.";
    def.attrs = st_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(st_attrs);
    def.outputs = out_name;
    def.list_arguments = cc_list_arguments;
    def.parse_param = st_parse;
    def.free_param = cbt_param_free;
    def.infer_shape = st_infer_shape;
    def.infer_type = cbi_infer_type_all;
    def.backward_dependency = cbt_dep_out_grad;
    return cbt_register(reg, &def, "stack", cc_forward, st_backward, 1, err);
}
