/*
 * cpu-blas plugin: sum (reduction over axes).
 *
 * Semantics: MXNet src/operator/tensor/broadcast_reduce_op.h
 * (ReduceAxesParam, ReduceAxesShapeImpl) and broadcast_reduce_op_value.cc.
 * One argument `data`; attributes `axis` (tuple, default "()" = all axes;
 * negative values count from the end), `keepdims` (False: reduced axes are
 * dropped; True: kept with size 1), `exclude` (True: reduce the axes NOT listed).
 * Reducing every axis without keepdims gives shape (1,). Sums accumulate in
 * double. Backward (reads only out_grad): dx = dy broadcast over the reduced axes.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_blas.h"

/** Parsed attributes of sum. */
typedef struct sum_param {
    mxk_shape axis;   /**< as given (ndim 0: all axes) */
    int32_t keepdims; /**< keep reduced axes with size 1 */
    int32_t exclude;  /**< reduce the complement of axis */
} sum_param;

static const char *const sum_args[] = {"data", NULL};
static const char *const sum_outs[] = {"output", NULL};

/** Attribute schema. */
static const mxk_attr_def sum_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_SHAPE, 0, "()", NULL,
                 "The axis or axes along which to sum; () sums over all axes."),
    MXK_SDK_ATTR("keepdims", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If true, the reduced axes are left in the result with size 1."),
    MXK_SDK_ATTR("exclude", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Whether to sum over all axes that are NOT in axis instead."),
};

/** Parses axis, keepdims, exclude. */
static mxk_status sum_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    sum_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "axis", &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "keepdims", &p.keepdims, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "exclude", &p.exclude, err));
    sum_param *q = malloc(sizeof *q);
    if (q == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "out of memory");
    *q = p;
    *out = q;
    return MXK_OK;
}

/** Frees a parameter object from sum_parse. */
static void sum_free(void *param) {
    free(param);
}

/**
 * Marks in red[0..ndim) the axes reduced for an input of `ndim` dims.
 * MXK_ERR_SHAPE for an axis out of range or listed twice.
 */
static mxk_status sum_reduced_axes(const sum_param *p, int32_t ndim, uint8_t *red,
                                   mxk_error_sink *err) {
    if (p->axis.ndim == 0) {
        memset(red, 1, (size_t)ndim);
        return MXK_OK;
    }
    uint8_t listed[MXK_MAX_NDIM] = {0};
    for (int32_t i = 0; i < p->axis.ndim; i++) {
        int64_t a = p->axis.dims[i];
        int64_t n = a < 0 ? a + ndim : a;
        if (n < 0 || n >= ndim)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "attribute 'axis': axis %lld is out of range for an input of %d "
                                 "dims",
                                 (long long)a, (int)ndim);
        if (listed[n])
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "attribute 'axis': axis %lld listed twice",
                                 (long long)a);
        listed[n] = 1;
    }
    for (int32_t i = 0; i < ndim; i++)
        red[i] = p->exclude ? !listed[i] : listed[i];
    return MXK_OK;
}

/** Output shape of the reduction (unknown dims stay unknown). */
static mxk_status sum_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    const sum_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "sum expects 1 argument");
    const mxk_shape *d = &in[0];
    if (d->ndim == 0)
        return MXK_OK;
    uint8_t red[MXK_MAX_NDIM];
    MXK_SDK_CHECK(sum_reduced_axes(p, d->ndim, red, err));
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

/** Backward reads only out_grad. */
static void sum_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                    uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                    uint8_t *need_out_data) {
    need_out_grad[0] = 1;
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
    MXK_SDK_CHECK(sum_reduced_axes(p, d->ndim, red, err));
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

/** out[o] (=|+=) sum of its reduced elements (double accumulation). */
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
        double acc = 0.0;
        SUM_FOR_REDUCED(&pl, base, off, acc += (double)x[off]);
        mxk_sdk_assign_f32(&y[o], (float)acc, req);
    }
    return MXK_OK;
}

/** dx (=|+=) dy broadcast back over the reduced axes. */
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
    const float *dy = cb_f32(gy);
    float *dx = cb_f32(gx);
    for (uint64_t o = 0; o < pl.nout; o++) {
        int64_t base = sum_base(&pl, o);
        float g = dy[o];
        SUM_FOR_REDUCED(&pl, base, off, mxk_sdk_assign_f32(&dx[off], g, req));
    }
    return MXK_OK;
}

/** Registers sum and its CPU kernel. */
mxk_status cb_register_sum(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = "sum";
    def.description = "Sum of array elements over the given axes.";
    def.attrs = sum_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(sum_attrs);
    def.arguments = sum_args;
    def.outputs = sum_outs;
    def.parse_param = sum_parse;
    def.free_param = sum_free;
    def.infer_shape = sum_infer_shape;
    def.infer_type = sum_infer_type;
    def.backward_dependency = sum_backward_dependency;
    mxk_op_kernel_def k;
    cb_kernel_init(&k, "sum", sum_forward, sum_backward);
    return cb_register(reg, &def, &k, err);
}
