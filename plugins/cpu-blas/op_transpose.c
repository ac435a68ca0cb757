/*
 * cpu-blas plugin: transpose and SwapAxis.
 *
 * Semantics: MXNet src/operator/tensor/matrix_op-inl.h (TransposeParam: axes,
 * default () = reverse all axes; output dim i = input dim axes[i]; TransposeShape
 * refuses inputs of more than 6 dims and axes outside [0, ndim): negative axes are
 * not counted from the end) and src/operator/swapaxis-inl.h (dim1, dim2 default 0:
 * exchanges two axes; negative dims count from the end; alias swapaxes, swapaxis.cc).
 * Both are axis permutations; backward applies the inverse permutation to dy
 * (reads only out_grad). A repeated axis in `axes` is refused (MXNet crashes).
 */
#include "cb_tensor.h"

/** Parsed attributes: transpose's axes, or SwapAxis's dims (swap = 1). */
typedef struct tr_param {
    int32_t swap;
    int64_t dim1, dim2;
    mxk_shape axes;
} tr_param;

static const char *const tr_args[] = {"data", NULL};
static const char *const tr_outs[] = {"output", NULL};

/** Attribute schema of transpose. */
static const mxk_attr_def tp_attrs[] = {
    MXK_SDK_ATTR("axes", MXK_ATTR_SHAPE, 0, "()", NULL, "Target axis order; () reverses the axes."),
};
/** Attribute schema of SwapAxis (SwapAxisParam). */
static const mxk_attr_def sw_attrs[] = {
    MXK_SDK_ATTR("dim1", MXK_ATTR_INT, 0, "0", NULL, "The first axis to be swapped."),
    MXK_SDK_ATTR("dim2", MXK_ATTR_INT, 0, "0", NULL, "The second axis to be swapped."),
};

/** parse_param of transpose. */
static mxk_status tp_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    tr_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "axes", &p.axes, err));
    return cbt_param_new(&p, sizeof p, out, err);
}
/** parse_param of SwapAxis. */
static mxk_status sw_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    tr_param p = {.swap = 1};
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "dim1", &p.dim1, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "dim2", &p.dim2, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** The permutation perm[i] = input axis of output axis i, for `ndim` dims. */
static mxk_status tr_perm(const tr_param *p, int32_t ndim, int32_t *perm, mxk_error_sink *err) {
    if (!p->swap && ndim > 6)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "Transpose support at most 6 dimensions, got %d",
                             (int)ndim);
    for (int32_t i = 0; i < ndim; i++)
        perm[i] = p->axes.ndim == 0 && !p->swap ? ndim - 1 - i : i;
    if (p->swap) {
        int32_t a, b;
        MXK_SDK_CHECK(cbt_axis(p->dim1, ndim, "dim1", &a, err));
        MXK_SDK_CHECK(cbt_axis(p->dim2, ndim, "dim2", &b, err));
        perm[a] = b;
        perm[b] = a;
    } else if (p->axes.ndim != 0) {
        if (p->axes.ndim != ndim)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "attribute 'axes': %d axes given for an input of %d dims",
                                 (int)p->axes.ndim, (int)ndim);
        uint8_t seen[MXK_MAX_NDIM] = {0};
        for (int32_t i = 0; i < ndim; i++) {
            if (p->axes.dims[i] < 0 || p->axes.dims[i] >= ndim)
                return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                     "attribute 'axes': index = %lld must be in range [0, %d)",
                                     (long long)p->axes.dims[i], (int)ndim);
            perm[i] = (int32_t)p->axes.dims[i];
            if (seen[perm[i]]++)
                return mxk_sdk_error(err, MXK_ERR_SHAPE, "attribute 'axes': axis %d repeated",
                                     (int)perm[i]);
        }
    }
    return MXK_OK;
}

/** Output dims permuted; input inferred back from the output. */
static mxk_status tr_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    int32_t perm[MXK_MAX_NDIM];
    if (in[0].ndim == 0 && out[0].ndim != 0) {
        MXK_SDK_CHECK(tr_perm(param, out[0].ndim, perm, err));
        mxk_shape s = out[0];
        for (int32_t i = 0; i < s.ndim; i++)
            s.dims[perm[i]] = out[0].dims[i];
        in[0] = s;
        return MXK_OK;
    }
    if (in[0].ndim == 0)
        return MXK_OK;
    MXK_SDK_CHECK(tr_perm(param, in[0].ndim, perm, err));
    mxk_shape o = in[0];
    for (int32_t i = 0; i < o.ndim; i++)
        o.dims[i] = in[0].dims[perm[i]];
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/**
 * dst (shape of src permuted by perm) (=|+=) src permuted: dst element with
 * index j reads src at sum_i j[i] * stride_src[perm[i]]. `inverse` scatters
 * instead (dst is the source's layout, src the permuted one).
 */
static void tr_apply(float *dst, const float *src, const mxk_shape *ss, const int32_t *perm,
                     int inverse, mxk_op_req req) {
    int32_t nd = ss->ndim;
    int64_t sstride[MXK_MAX_NDIM], odim[MXK_MAX_NDIM], ostr[MXK_MAX_NDIM], idx[MXK_MAX_NDIM] = {0};
    int64_t s = 1;
    for (int32_t i = nd - 1; i >= 0; i--) {
        sstride[i] = s;
        s *= ss->dims[i];
    }
    for (int32_t i = 0; i < nd; i++) {
        odim[i] = ss->dims[perm[i]];
        ostr[i] = sstride[perm[i]];
    }
    uint64_t n = mxk_sdk_shape_count(ss);
    for (uint64_t j = 0; j < n; j++) {
        int64_t off = 0;
        for (int32_t i = 0; i < nd; i++)
            off += idx[i] * ostr[i];
        if (inverse)
            mxk_sdk_assign_f32(&dst[off], src[j], req);
        else
            mxk_sdk_assign_f32(&dst[j], src[off], req);
        for (int32_t i = nd - 1; i >= 0 && ++idx[i] == odim[i]; i--)
            idx[i] = 0;
    }
}

/** y = x with permuted axes. */
static mxk_status tr_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cbt_check_forward(args, 1, 1, tr_infer_shape, param, 0, err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_shape *s = &args->in_data[0]->shape;
    int32_t perm[MXK_MAX_NDIM];
    MXK_SDK_CHECK(tr_perm(param, s->ndim, perm, err));
    tr_apply(cb_f32(args->out_data[0]), cb_f32(args->in_data[0]), s, perm, 0, args->req[0]);
    return MXK_OK;
}

/** dx = dy with the inverse permutation. */
static mxk_status tr_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dy = args->out_grad[0], *dx = args->in_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(dy, "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_grad(dx, args->req[0], &dy->shape, "data", err));
    int32_t perm[MXK_MAX_NDIM];
    MXK_SDK_CHECK(tr_perm(param, dx->shape.ndim, perm, err));
    tr_apply(cb_f32(dx), cb_f32(dy), &dx->shape, perm, 1, args->req[0]);
    return MXK_OK;
}

/** Registers transpose and SwapAxis with their CPU kernels. */
mxk_status cb_register_transpose(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const sw_aliases[] = {"swapaxes", "_npi_swapaxes", NULL};
    for (int i = 0; i < 2; i++) {
        mxk_op_def def;
        mxk_sdk_op_def_init(&def);
        def.description = i == 0 ? "Permutes the axes of the input." : "Interchanges two axes.";
        def.attrs = i == 0 ? tp_attrs : sw_attrs;
        def.num_attrs = i == 0 ? MXK_SDK_COUNTOF(tp_attrs) : MXK_SDK_COUNTOF(sw_attrs);
        def.arguments = tr_args;
        def.outputs = tr_outs;
        def.parse_param = i == 0 ? tp_parse : sw_parse;
        def.free_param = cbt_param_free;
        def.infer_shape = tr_infer_shape;
        def.infer_type = cbt_infer_type_f32;
        def.backward_dependency = cbt_dep_out_grad;
        def.aliases = i == 0 ? NULL : sw_aliases;
        MXK_SDK_CHECK(cbt_register(reg, &def, i == 0 ? "transpose" : "SwapAxis", tr_forward,
                                   tr_backward, 0, err));
    }
    return MXK_OK;
}
