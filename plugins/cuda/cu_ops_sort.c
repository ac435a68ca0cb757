/*
 * cuda plugin: argmax, argmax_channel, argmin, topk, sort and argsort on the GPU,
 * for the operators cpu-blas defines (op_argmax.c, op_index_sort.c).
 *
 * Semantics: MXNet src/operator/tensor/broadcast_reduce_op.h / broadcast_reduce_op_index.cc
 * (argmax, argmin, argmax_channel: the first extreme along an axis or of the
 * flattened input, NaN winning, as a float) and ordering_op-inl.h (TopKParam:
 * axis (None: flattened), k (< 1: all), ret_typ value|indices|mask|both,
 * is_ascend, dtype of the positions; sort and argsort as topk of the whole row).
 * Rows are sorted by mxk_idx_sort_before (shared with cpu-blas: ties by position,
 * NaN largest), so both backends give identical outputs. Rows longer than
 * CU_SORT_MAX are declined (supports). Gradients: topk / sort values scatter
 * out_grad back to the selected positions (reading the hidden or visible position
 * output); indices, masks, argmax and argmin give zeros.
 */
#include "cu_kern_sort.h"
#include "cu_layout.h"
#include "mxk_index_attr.h"

/** Which operator a parameter object belongs to. */
typedef enum so_kind { SO_ARGMAX, SO_ARGMIN, SO_TOPK, SO_SORT, SO_ARGSORT } so_kind;

/** Parsed attributes. */
typedef struct cu_so_param {
    so_kind kind;
    int32_t has_axis;
    int64_t axis;
    int64_t k;
    int32_t ret; /**< cu_sort_ret */
    int32_t ascend;
    int32_t dtype; /**< position output dtype (topk both / indices, argsort) */
} cu_so_param;

/** The operator's name. */
static const char *so_name(const cu_so_param *p) {
    static const char *const names[] = {"argmax", "argmin", "topk", "sort", "argsort"};
    return names[p->kind];
}

/** Rows of data shape s: (outer, n, inner) around the axis, or (1, size, 1) flattened. */
static mxk_status so_rows(const cu_so_param *p, const mxk_shape *s, uint64_t *outer, uint64_t *n,
                          uint64_t *inner, mxk_error_sink *err) {
    *outer = *inner = 1;
    *n = (uint64_t)cu_shape_size(s);
    if (!p->has_axis)
        return MXK_OK;
    int64_t a = p->axis < 0 ? p->axis + s->ndim : p->axis;
    if (a < 0 || a >= s->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: axis %lld is out of range for %d dims",
                             so_name(p), (long long)p->axis, (int)s->ndim);
    for (int32_t d = 0; d < a; d++)
        *outer *= (uint64_t)s->dims[d];
    for (int32_t d = (int32_t)a + 1; d < s->ndim; d++)
        *inner *= (uint64_t)s->dims[d];
    *n = (uint64_t)s->dims[a];
    return MXK_OK;
}

/** Number of outputs: topk value / both and sort have a second (position) output. */
static uint32_t so_num_outputs(const cu_so_param *p) {
    return p->kind != SO_ARGMAX && p->kind != SO_ARGMIN &&
                   (p->ret == CU_SORT_VALUE || p->ret == CU_SORT_BOTH)
               ? 2
               : 1;
}

/** Float32 data with rows of at most CU_SORT_MAX elements (argmax / argmin: any length). */
static int32_t so_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                           uint32_t num_in) {
    const cu_so_param *p = param;
    uint64_t outer, n, inner;
    if (num_in != 1 || in_types[0] != MXK_FLOAT32 ||
        so_rows(p, &in_shapes[0], &outer, &n, &inner, NULL) != MXK_OK)
        return 0;
    return p->kind == SO_ARGMAX || p->kind == SO_ARGMIN || n <= CU_SORT_MAX;
}

/** Forward: the extreme positions (argmax / argmin) or the sorted rows' outputs. */
static mxk_status so_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_so_param *p = param;
    const char *op = so_name(p);
    if (args->num_in != 1 || args->num_out != so_num_outputs(p))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "%s: expected 1 argument and %u "
                             "outputs",
                             op, (unsigned)so_num_outputs(p));
    const mxk_tensor *x = args->in_data[0], *y0 = args->out_data[0];
    MXK_SDK_CHECK(cu_need(x, op, "the data", err));
    if (x->dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "%s: data: expected float32, got %s", op,
                             mxk_sdk_dtype_name(x->dtype));
    uint64_t outer, n, inner;
    MXK_SDK_CHECK(so_rows(p, &x->shape, &outer, &n, &inner, err));
    if (p->kind == SO_ARGMAX || p->kind == SO_ARGMIN) {
        if (args->req[0] == MXK_REQ_NULL)
            return MXK_OK;
        MXK_SDK_CHECK(cu_need(y0, op, "the output", err));
        MXK_SDK_CHECK(cu_enter(ctx, err));
        CU_CHECK(cu_launch_arg_best(x->data, y0->data, outer, n, inner, p->kind == SO_ARGMIN,
                                    args->req[0] == MXK_REQ_ADD, cu_stream(ctx)),
                 op, err);
        return MXK_OK;
    }
    cu_sort_call c = {.outer = outer,
                      .n = n,
                      .inner = inner,
                      .k = p->kind == SO_TOPK && p->k > 0 ? (uint64_t)p->k : n,
                      .ascend = p->ascend,
                      .ret = p->ret};
    if (c.k > n)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: k must be smaller than %llu, get k = %llu",
                             op, (unsigned long long)n, (unsigned long long)c.k);
    for (uint32_t i = 0; i < args->num_out; i++) {
        if (args->req[i] == MXK_REQ_NULL)
            continue;
        const mxk_tensor *t = args->out_data[i];
        MXK_SDK_CHECK(cu_need(t, op, "an output", err));
        if (i == 1 || p->ret == CU_SORT_INDICES)
            MXK_SDK_CHECK(mxk_idx_check_positions(t->dtype, n, err));
        if (i == 0) {
            c.out0 = t->data, c.dtype0 = t->dtype, c.add0 = args->req[0] == MXK_REQ_ADD;
        } else {
            c.out1 = t->data, c.dtype1 = t->dtype, c.add1 = args->req[1] == MXK_REQ_ADD;
        }
    }
    if (c.out0 == NULL && c.out1 == NULL)
        return MXK_OK;
    if (c.out0 == NULL) /* only the positions wanted: a sort writing them as out0 */
        c.ret = CU_SORT_INDICES, c.out0 = c.out1, c.dtype0 = c.dtype1, c.add0 = c.add1,
        c.out1 = NULL;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_sort(x->data, &c, cu_stream(ctx)), op, err);
    return MXK_OK;
}

/** Backward: values scatter out_grad to the selected positions; zeros otherwise. */
static mxk_status so_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_so_param *p = param;
    const char *op = so_name(p);
    if (args->num_in != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: expected 1 argument", op);
    mxk_op_req req = args->req[0];
    if (so_num_outputs(p) == 1 || req == MXK_REQ_NULL)
        return cu_zero_grad(ctx, args->in_grad[0], req, err);
    const mxk_tensor *dy = args->out_grad[0], *it = args->out_data[1], *dx = args->in_grad[0];
    MXK_SDK_CHECK(cu_need(dy, op, "the output gradient", err));
    MXK_SDK_CHECK(cu_need(it, op, "the position output", err));
    MXK_SDK_CHECK(cu_need(dx, op, "the data gradient", err));
    if (dy->dtype != MXK_FLOAT32 || dx->dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "%s: gradients: expected float32", op);
    uint64_t outer, n, inner;
    MXK_SDK_CHECK(so_rows(p, &dx->shape, &outer, &n, &inner, err));
    uint64_t k = p->kind == SO_TOPK && p->k > 0 ? (uint64_t)p->k : n;
    uint64_t m = outer * k * inner;
    if ((uint64_t)cu_shape_size(&dy->shape) != m || (uint64_t)cu_shape_size(&it->shape) != m)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s backward: inconsistent shapes", op);
    MXK_SDK_CHECK(cu_enter(ctx, err));
    if (req != MXK_REQ_ADD)
        CU_CHECK(cudaMemsetAsync(dx->data, 0, (size_t)cu_shape_size(&dx->shape) * sizeof(float),
                                 cu_stream(ctx)),
                 "cudaMemsetAsync", err);
    CU_CHECK(cu_launch_sort_grad(dy->data, it->data, it->dtype, dx->data, outer, n, inner, k,
                                 cu_stream(ctx)),
             op, err);
    return MXK_OK;
}

/** parse_param of argmax (axis absent: flattened). */
static mxk_status argmax_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_so_param p = {.kind = SO_ARGMAX};
    p.has_axis = mxk_sdk_attr_is_set(attrs, "axis");
    if (p.has_axis)
        MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of argmax_channel: argmax along axis 1. */
static mxk_status argmax_channel_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_so_param p = {.kind = SO_ARGMAX, .has_axis = 1, .axis = 1};
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of argmin (axis None: flattened). */
static mxk_status argmin_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_so_param p = {.kind = SO_ARGMIN};
    MXK_SDK_CHECK(mxk_idx_attr_opt_int(attrs, "axis", &p.has_axis, &p.axis, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of topk: axis, k, ret_typ, is_ascend, dtype. */
static mxk_status topk_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_so_param p = {.kind = SO_TOPK};
    MXK_SDK_CHECK(mxk_idx_attr_opt_int(attrs, "axis", &p.has_axis, &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "k", &p.k, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "ret_typ", "value|indices|mask|both", &p.ret, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "is_ascend", &p.ascend, err));
    MXK_SDK_CHECK(mxk_idx_attr_dtype(attrs, &p.dtype, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of sort: axis, is_ascend (values, positions hidden). */
static mxk_status sort_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_so_param p = {.kind = SO_SORT, .ret = CU_SORT_VALUE};
    MXK_SDK_CHECK(mxk_idx_attr_opt_int(attrs, "axis", &p.has_axis, &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "is_ascend", &p.ascend, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of argsort: axis, is_ascend, dtype (positions). */
static mxk_status argsort_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_so_param p = {.kind = SO_ARGSORT, .ret = CU_SORT_INDICES};
    MXK_SDK_CHECK(mxk_idx_attr_opt_int(attrs, "axis", &p.has_axis, &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "is_ascend", &p.ascend, err));
    MXK_SDK_CHECK(mxk_idx_attr_dtype(attrs, &p.dtype, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

mxk_status cu_register_sort(mxk_registrar *reg, mxk_error_sink *err) {
    static const cu_op_entry ops[] = {
        {"argmax", argmax_parse}, {"argmax_channel", argmax_channel_parse},
        {"argmin", argmin_parse}, {"topk", topk_parse},
        {"sort", sort_parse},     {"argsort", argsort_parse}};
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.supports = so_supports;
    k.forward = so_forward;
    k.backward = so_backward;
    return cu_register_each(reg, &k, ops, MXK_SDK_COUNTOF(ops), err);
}
