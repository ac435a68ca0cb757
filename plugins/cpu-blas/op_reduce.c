/*
 * cpu-blas plugin: reductions over axes: sum, mean, max, min, prod, nansum, norm.
 *
 * Semantics: MXNet src/operator/tensor/broadcast_reduce_op.h
 * (ReduceAxesParam, ReduceAxesShapeImpl, NormParam), broadcast_reduce_sum_value.cc,
 * broadcast_reduce_minmax_value.cc, broadcast_reduce_prod_value.cc and
 * broadcast_reduce_norm_value.cc, each registered once with MXNet's aliases
 * (sum_axis, _sparse_sum, max_axis, ...). One argument `data`; attributes `axis`
 * (tuple, default "()" = all axes; negative values count from the end),
 * `keepdims` (False: reduced axes are dropped; True: kept with size 1),
 * `exclude` (True: reduce the axes NOT listed; not for norm), norm's `ord`
 * (1 or 2, default 2) and `out_dtype` (None or float32: upstream's kernel refuses
 * an out_dtype other than the data's, and data is float32). Reducing every axis without keepdims
 * gives shape (1,). Accumulation in double. Backward, dy broadcast over the reduced axes: sum dx =
 * dy; mean dx = dy / n (out_grad only); max, min dx = dy where x equals the result (every tie;
 * MXNet's mshadow_op::eq); prod dx = dy y / x (mshadow_op::rdiv; inf or NaN at x = 0, as upstream);
 *   nansum: NaN elements are skipped, dx = dy where x is not NaN, else 0;
 *   norm ord 2 dx = dy x / y (NaN where y = 0, as upstream); ord 1 dx = dy sign(x).
 * The element steps and gradient factors are plugins/common/mxk_math_reduce.h's.
 */
#include "cb_tensor.h"
#include "mxk_math_reduce.h"
#include "mxk_reduce_axes.h"

/** Parsed attributes of a reduction. */
typedef struct sum_param {
    mxk_shape axis;   /**< as given (ndim 0: all axes) */
    int32_t keepdims; /**< keep reduced axes with size 1 */
    int32_t exclude;  /**< reduce the complement of axis */
    int32_t kind;     /**< enum mxk_red_kind */
    int32_t ord;      /**< norm: 1 or 2 */
} sum_param;

static const char *const sum_args[] = {"data", NULL};
static const char *const sum_outs[] = {"output", NULL};

/** Attribute schema. */
static const mxk_attr_def sum_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_SHAPE, 0, "()", NULL,
                 "The axis or axes to reduce; () reduces over all axes."),
    MXK_SDK_ATTR("keepdims", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If true, the reduced axes are left in the result with size 1."),
    MXK_SDK_ATTR("exclude", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Whether to reduce over all axes that are NOT in axis instead."),
};

/** norm's out_dtype values (NormParam); None: the input's dtype. */
#define NORM_OUT_DTYPES "None|float16|float32|float64|int64|int32|int8"

/** Attribute schema of norm (NormParam). */
static const mxk_attr_def norm_attrs[] = {
    MXK_SDK_ATTR("ord", MXK_ATTR_INT, 0, "2", NULL, "Order of the norm: 1 or 2."),
    MXK_SDK_ATTR("axis", MXK_ATTR_SHAPE, 0, "()", NULL,
                 "The axis or axes along which to compute the norm; () all axes."),
    MXK_SDK_ATTR("out_dtype", MXK_ATTR_ENUM, 0, "None", NORM_OUT_DTYPES,
                 "The data type of the output; must be the data's (float32)."),
    MXK_SDK_ATTR("keepdims", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If true, the reduced axes are left in the result with size 1."),
};

/** Parses axis, keepdims, exclude (and norm's ord) for reduction `kind`. */
static mxk_status sum_parse_kind(const mxk_attrs *attrs, int32_t kind, void **out,
                                 mxk_error_sink *err) {
    sum_param p = {.kind = kind, .ord = 2};
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "axis", &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "keepdims", &p.keepdims, err));
    if (kind == MXK_RED_NORM) {
        int64_t ord;
        int32_t dt = 0;
        MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "ord", 1, 2, &ord, err));
        MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "out_dtype", NORM_OUT_DTYPES, &dt, err));
        if (dt != 0 && dt != 2)
            return mxk_sdk_error(err, MXK_ERR_TYPE,
                                 "attribute 'out_dtype': data type do not match specified type "
                                 "(the data is float32)");
        p.ord = (int32_t)ord;
    } else {
        MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "exclude", &p.exclude, err));
    }
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of sum. */
static mxk_status sum_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sum_parse_kind(a, MXK_RED_SUM, o, e);
}
/** parse_param of mean. */
static mxk_status mean_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sum_parse_kind(a, MXK_RED_MEAN, o, e);
}
/** parse_param of max. */
static mxk_status max_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sum_parse_kind(a, MXK_RED_MAX, o, e);
}
/** parse_param of min. */
static mxk_status min_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sum_parse_kind(a, MXK_RED_MIN, o, e);
}
/** parse_param of prod. */
static mxk_status prod_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sum_parse_kind(a, MXK_RED_PROD, o, e);
}
/** parse_param of nansum. */
static mxk_status nansum_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sum_parse_kind(a, MXK_RED_NANSUM, o, e);
}
/** parse_param of norm. */
static mxk_status norm_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sum_parse_kind(a, MXK_RED_NORM, o, e);
}

/** Output shape of the reduction (unknown dims stay unknown). */
static mxk_status sum_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    const sum_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "reduction expects 1 argument");
    const mxk_shape *d = &in[0];
    if (d->ndim == 0)
        return MXK_OK;
    uint8_t red[MXK_MAX_NDIM];
    MXK_SDK_CHECK(mxk_reduce_axes(&p->axis, p->exclude, d->ndim, red, err));
    mxk_shape o = mxk_sdk_shape_unknown();
    for (int32_t i = 0; i < d->ndim; i++) {
        if (!red[i])
            o.dims[o.ndim++] = d->dims[i];
        else if (p->keepdims)
            o.dims[o.ndim++] = 1;
    }
    if (o.ndim == 0)
        o = mxk_sdk_shape1(1);
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** All float32. */
static mxk_status sum_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                 uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, sum_args, out, num_out, sum_outs,
                                      aux, num_aux, err);
}

/** Backward reads out_grad (sum, mean), plus data and output (the others). */
static void sum_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                    uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                    uint8_t *need_out_data) {
    const sum_param *p = param;
    need_out_grad[0] = 1;
    if (p->kind >= MXK_RED_NANSUM) {
        need_in_data[0] = 1;
        need_out_data[0] = 1;
    }
}

/**
 * Index arithmetic of a reduction: the input's dims split into kept axes
 * (row-major order of the output) and reduced axes, with the input strides of each.
 */
typedef struct sum_plan {
    int32_t nk, nr; /**< number of kept / reduced axes */
    int64_t kdim[MXK_MAX_NDIM], kstride[MXK_MAX_NDIM];
    int64_t rdim[MXK_MAX_NDIM], rstride[MXK_MAX_NDIM];
    uint64_t nout, nred; /**< output elements, elements per output */
} sum_plan;

/** Builds the plan for input shape d. */
static mxk_status sum_plan_of(const sum_param *p, const mxk_shape *d, sum_plan *pl,
                              mxk_error_sink *err) {
    uint8_t red[MXK_MAX_NDIM];
    MXK_SDK_CHECK(mxk_reduce_axes(&p->axis, p->exclude, d->ndim, red, err));
    int64_t stride[MXK_MAX_NDIM];
    int64_t s = 1;
    for (int32_t i = d->ndim - 1; i >= 0; i--) {
        stride[i] = s;
        s *= d->dims[i];
    }
    pl->nk = pl->nr = 0;
    pl->nout = pl->nred = 1;
    for (int32_t i = 0; i < d->ndim; i++) {
        if (red[i]) {
            pl->rdim[pl->nr] = d->dims[i];
            pl->rstride[pl->nr++] = stride[i];
            pl->nred *= (uint64_t)d->dims[i];
        } else {
            pl->kdim[pl->nk] = d->dims[i];
            pl->kstride[pl->nk++] = stride[i];
            pl->nout *= (uint64_t)d->dims[i];
        }
    }
    return MXK_OK;
}

/** Input offset of output element `o` (its kept-axes index). */
static int64_t sum_base(const sum_plan *pl, uint64_t o) {
    int64_t off = 0;
    for (int32_t i = pl->nk - 1; i >= 0; i--) {
        off += (int64_t)(o % (uint64_t)pl->kdim[i]) * pl->kstride[i];
        o /= (uint64_t)pl->kdim[i];
    }
    return off;
}

/**
 * Calls body(off) for every input offset reduced into the output element whose
 * input base offset is `base`, walking the reduced axes with an odometer; the
 * innermost reduced axis is a strided loop.
 */
#define SUM_FOR_REDUCED(pl, base, off, BODY)                                                       \
    do {                                                                                           \
        int64_t idx_[MXK_MAX_NDIM] = {0};                                                          \
        int32_t last_ = (pl)->nr - 1;                                                              \
        if (last_ < 0) {                                                                           \
            int64_t off = (base);                                                                  \
            BODY;                                                                                  \
            break;                                                                                 \
        }                                                                                          \
        for (;;) {                                                                                 \
            int64_t outer_ = (base);                                                               \
            for (int32_t a_ = 0; a_ < last_; a_++)                                                 \
                outer_ += idx_[a_] * (pl)->rstride[a_];                                            \
            for (int64_t j_ = 0; j_ < (pl)->rdim[last_]; j_++) {                                   \
                int64_t off = outer_ + j_ * (pl)->rstride[last_];                                  \
                BODY;                                                                              \
            }                                                                                      \
            int32_t a_ = last_ - 1;                                                                \
            while (a_ >= 0 && ++idx_[a_] == (pl)->rdim[a_])                                        \
                idx_[a_--] = 0;                                                                    \
            if (a_ < 0)                                                                            \
                break;                                                                             \
        }                                                                                          \
    } while (0)

/** out[o] (=|+=) the reduction of its elements (double accumulation). */
static mxk_status sum_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const sum_param *p = param;
    MXK_SDK_CHECK(cb_check_forward(args, 1, 1, sum_args, sum_outs, sum_infer_shape, param, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    sum_plan pl;
    MXK_SDK_CHECK(sum_plan_of(p, &args->in_data[0]->shape, &pl, err));
    const float *x = cb_f32(args->in_data[0]);
    float *y = cb_f32(args->out_data[0]);
    for (uint64_t o = 0; o < pl.nout; o++) {
        int64_t base = sum_base(&pl, o);
        double acc = mxk_red_init(p->kind);
        SUM_FOR_REDUCED(&pl, base, off, acc = mxk_red_step(p->kind, p->ord, acc, x[off]));
        acc = mxk_red_finish(p->kind, p->ord, acc, pl.nred);
        mxk_sdk_assign_f32(&y[o], (float)acc, req);
    }
    return MXK_OK;
}

/** dx (=|+=) dy (times the reduction's factor) broadcast back over the reduced axes. */
static mxk_status sum_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const sum_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *gx = args->in_grad[0], *gy = args->out_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(gx, "gradient of 'data'", err));
    MXK_SDK_CHECK(cb_check_tensor(gy, "gradient of 'output'", err));
    if (!mxk_sdk_shape_is_known(&gx->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'data': shape not known");
    sum_plan pl;
    MXK_SDK_CHECK(sum_plan_of(p, &gx->shape, &pl, err));
    if (mxk_sdk_shape_count(&gy->shape) != pl.nout)
        return mxk_sdk_error(
            err, MXK_ERR_SHAPE, "gradient of 'output': expected %llu elements, got %llu",
            (unsigned long long)pl.nout, (unsigned long long)mxk_sdk_shape_count(&gy->shape));
    const float *x = NULL, *y = NULL;
    if (p->kind >= MXK_RED_NANSUM) {
        MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'data'", err));
        MXK_SDK_CHECK(cb_check_tensor(args->out_data[0], "output 'output'", err));
        if (mxk_sdk_shape_count(&args->in_data[0]->shape) != mxk_sdk_shape_count(&gx->shape) ||
            mxk_sdk_shape_count(&args->out_data[0]->shape) != pl.nout)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "data or output differ from the gradients");
        x = cb_f32(args->in_data[0]);
        y = cb_f32(args->out_data[0]);
    }
    const float *dy = cb_f32(gy);
    float *dx = cb_f32(gx);
    const float scale = p->kind == MXK_RED_MEAN ? (float)(1.0 / (double)pl.nred) : 1.0f;
    for (uint64_t o = 0; o < pl.nout; o++) {
        int64_t base = sum_base(&pl, o);
        float g = dy[o] * scale;
        if (x == NULL) {
            SUM_FOR_REDUCED(&pl, base, off, mxk_sdk_assign_f32(&dx[off], g, req));
        } else {
            float yo = y[o];
            SUM_FOR_REDUCED(&pl, base, off,
                            mxk_sdk_assign_f32(
                                &dx[off], g * mxk_red_dfactor(p->kind, p->ord, x[off], yo), req));
        }
    }
    return MXK_OK;
}

/** Registers sum, mean, max, min, prod, nansum and norm (with MXNet's aliases) and their CPU
 * kernels. */
mxk_status cb_register_reduce(mxk_registrar *reg, mxk_error_sink *err) {
    static const struct {
        const char *name, *doc, *alias, *alias2;
        mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *);
    } ops[] = {
        {"sum", "Sum of array elements over the given axes.", "sum_axis", "_sparse_sum", sum_parse},
        {"mean", "Mean of array elements over the given axes.", "_sparse_mean", NULL, mean_parse},
        {"max", "Maximum of array elements over the given axes.", "max_axis", NULL, max_parse},
        {"min", "Minimum of array elements over the given axes.", "min_axis", NULL, min_parse},
        {"prod", "Product of array elements over the given axes.", NULL, NULL, prod_parse},
        {"nansum", "Sum of array elements over the given axes, NaN counted as 0.", NULL, NULL,
         nansum_parse},
        {"norm", "L1 or L2 norm of array elements over the given axes.", "_sparse_norm", NULL,
         norm_parse},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const char *aliases[] = {ops[i].alias, ops[i].alias2, NULL};
        int norm = ops[i].parse == norm_parse;
        mxk_op_def def;
        mxk_sdk_op_def_init(&def);
        def.description = ops[i].doc;
        def.aliases = aliases;
        def.attrs = norm ? norm_attrs : sum_attrs;
        def.num_attrs = norm ? MXK_SDK_COUNTOF(norm_attrs) : MXK_SDK_COUNTOF(sum_attrs);
        def.arguments = sum_args;
        def.outputs = sum_outs;
        def.parse_param = ops[i].parse;
        def.free_param = cbt_param_free;
        def.infer_shape = sum_infer_shape;
        def.infer_type = sum_infer_type;
        def.backward_dependency = sum_backward_dependency;
        MXK_SDK_CHECK(cbt_register(reg, &def, ops[i].name, sum_forward, sum_backward, 0, err));
    }
    return MXK_OK;
}
