/*
 * cpu-blas plugin: topk, sort, argsort and argmin.
 *
 * Semantics: MXNet src/operator/tensor/ordering_op-inl.h / ordering_op.cc (TopKParam,
 * SortParam, ArgSortParam, ParseTopKParam, TopKShapeImpl, TopKType, TopKImpl,
 * TopKBackwardImpl) and broadcast_reduce_op_index.cc / broadcast_reduce_op.h
 * (argmin: ReduceAxisParam, ReduceAxisShapeImpl, SearchAxisCompute).
 *   topk(data, axis=-1 (None: flattened), k=1 (< 1: all), ret_typ, is_ascend=False,
 *   dtype=float32): the k largest (smallest) elements along the axis, in order;
 *   ret_typ value (output0 values, hidden output1 their int32 indices), indices
 *   (indices as dtype), mask (data's shape, 1 at the selected elements), both
 *   (values and dtype indices, both visible). sort = topk(k=0, value, is_ascend=True
 *   default); argsort = topk(k=0, indices, is_ascend=True default).
 *   argmin(data, axis=None, keepdims=False): index of the first minimum (NaN counts
 *   as the minimum, as mshadow's red::minimum), float32.
 * Gradients: values scatter out_grad back to the selected positions (backward reads
 * out_grad and the index output); indices, masks and argmin give zeros. Ties are
 * ordered by position (lowest first) and NaN sorts above every number; MXNet's
 * std::sort leaves the order of ties unspecified. An index dtype that cannot
 * represent every position is refused, as MXNet.
 */
#include <stdlib.h>
#include <string.h>

#include "op_index.h"

/** Which operator a parameter object belongs to. */
typedef enum so_kind { SO_TOPK, SO_SORT, SO_ARGSORT, SO_ARGMIN } so_kind;
/** topk's ret_typ values, in MXNet's enum order. */
typedef enum so_ret { SO_VALUE, SO_INDICES, SO_MASK, SO_BOTH } so_ret;

/** Parsed attributes. */
typedef struct so_param {
    so_kind kind;
    int32_t has_axis;
    int64_t axis;
    int64_t k;
    so_ret ret;
    int32_t ascend;
    int32_t dtype;    /**< index output dtype (mxk_dtype) */
    int32_t keepdims; /**< argmin */
} so_param;

static const char *const so_args[] = {"data", NULL};

/** Attribute schema of topk (TopKParam). */
static const mxk_attr_def topk_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_STRING, 0, "-1", NULL,
                 "Axis along which to choose the top k indices. If not given, the flattened "
                 "array is used. Default is -1."),
    MXK_SDK_ATTR("k", MXK_ATTR_INT, 0, "1", NULL,
                 "Number of top elements to select. A global sort is performed if set k < 1."),
    MXK_SDK_ATTR("ret_typ", MXK_ATTR_ENUM, 0, "indices", "value|indices|mask|both",
                 "The return type."),
    MXK_SDK_ATTR("is_ascend", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Whether to choose k largest or k smallest elements."),
    MXK_SDK_ATTR("dtype", MXK_ATTR_ENUM, 0, "float32", MXK_IDX_DTYPES,
                 "DType of the output indices when ret_typ is \"indices\" or \"both\"."),
};
/** Attribute schema of argsort (ArgSortParam); sort (SortParam) has its first two. */
static const mxk_attr_def argsort_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_STRING, 0, "-1", NULL,
                 "Axis along which to sort the input tensor. If not given, the flattened array "
                 "is used. Default is -1."),
    MXK_SDK_ATTR("is_ascend", MXK_ATTR_BOOL, 0, "True", NULL,
                 "Whether to sort in ascending or descending order."),
    MXK_SDK_ATTR("dtype", MXK_ATTR_ENUM, 0, "float32", MXK_IDX_DTYPES,
                 "DType of the output indices."),
};
/** Attribute schema of argmin (ReduceAxisParam). */
static const mxk_attr_def argmin_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_STRING, 0, "None", NULL,
                 "The axis along which to perform the reduction; None: the flattened input."),
    MXK_SDK_ATTR("keepdims", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If this is set to `True`, the reduced axis is left in the result as dimension "
                 "with size one."),
};

/** parse_param of the four operators (the kind by attribute set). */
static mxk_status so_parse_kind(const mxk_attrs *attrs, so_kind kind, void **out,
                                mxk_error_sink *err) {
    so_param p = {.kind = kind, .dtype = MXK_FLOAT32, .ret = SO_VALUE};
    MXK_SDK_CHECK(mxk_idx_attr_opt_int(attrs, "axis", &p.has_axis, &p.axis, err));
    if (kind == SO_ARGMIN) {
        MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "keepdims", &p.keepdims, err));
        return cbt_param_new(&p, sizeof p, out, err);
    }
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "is_ascend", &p.ascend, err));
    if (kind == SO_TOPK) {
        int32_t ret = 0;
        MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "k", &p.k, err));
        MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "ret_typ", "value|indices|mask|both", &ret, err));
        p.ret = (so_ret)ret;
    } else if (kind == SO_ARGSORT) {
        p.ret = SO_INDICES;
    }
    if (kind != SO_SORT)
        MXK_SDK_CHECK(mxk_idx_attr_dtype(attrs, &p.dtype, err));
    return cbt_param_new(&p, sizeof p, out, err);
}
/* parse_param of topk, sort, argsort, argmin */
CB_IDX_PARSE_AS(topk_parse, so_parse_kind, SO_TOPK)
CB_IDX_PARSE_AS(sort_parse, so_parse_kind, SO_SORT)
CB_IDX_PARSE_AS(argsort_parse, so_parse_kind, SO_ARGSORT)
CB_IDX_PARSE_AS(argmin_parse, so_parse_kind, SO_ARGMIN)

/** Number of outputs: value and both have a second (index) output. */
static uint32_t so_num_outputs(const so_param *p) {
    return p->kind != SO_ARGMIN && (p->ret == SO_VALUE || p->ret == SO_BOTH) ? 2 : 1;
}

/** Outputs: "output" or "output0", "output1" (NNVM's names). */
static mxk_status so_list_outputs(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    if (so_num_outputs(param) == 1)
        return mxk_sdk_host()->name_list_add(out, "output", err);
    return cbt_list_numbered(out, "output", 2, err);
}

/** Visible outputs: both for ret_typ both, else the first. */
static uint32_t so_num_visible(const void *param) {
    const so_param *p = param;
    return p->kind == SO_TOPK && p->ret == SO_BOTH ? 2 : 1;
}

/** The sorted axis of shape s: *axis (-1: flattened), elements per row *n. */
static mxk_status so_axis(const so_param *p, const mxk_shape *s, int32_t *axis, uint64_t *n,
                          mxk_error_sink *err) {
    *axis = -1;
    *n = mxk_sdk_shape_count(s);
    if (!p->has_axis)
        return MXK_OK;
    if ((p->axis >= s->ndim || p->axis < -(int64_t)s->ndim) && p->kind == SO_ARGMIN)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "attribute 'axis': axis %lld exceeds the input dimension of %d",
                             (long long)p->axis, (int)s->ndim);
    if (p->axis >= s->ndim || p->axis < -(int64_t)s->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "attribute 'axis': Invalid axis! axis should be between 0 and %d, "
                             "found axis=%lld",
                             (int)s->ndim, (long long)p->axis);
    *axis = (int32_t)(p->axis < 0 ? p->axis + s->ndim : p->axis);
    *n = (uint64_t)s->dims[*axis];
    return MXK_OK;
}

/** argmin's output shape (ReduceAxisShapeImpl). */
static mxk_shape argmin_shape(const so_param *p, const mxk_shape *s, int32_t axis) {
    mxk_shape o = *s;
    if (axis < 0 || s->ndim == 1) {
        o = mxk_sdk_shape1(1);
        if (p->keepdims)
            for (o.ndim = 0; o.ndim < s->ndim; o.ndim++)
                o.dims[o.ndim] = 1;
    } else if (p->keepdims) {
        o.dims[axis] = 1;
    } else {
        for (int32_t i = axis; i + 1 < s->ndim; i++)
            o.dims[i] = s->dims[i + 1];
        o.dims[--o.ndim] = 0;
    }
    return o;
}

/** Elements selected per row: k, or all (k < 1); 0 when the row length is unknown. */
static uint64_t so_k(const so_param *p, uint64_t n) {
    return p->kind == SO_TOPK && p->k > 0 ? (uint64_t)p->k : n;
}

/** Shapes (TopKShapeImpl; argmin: ReduceAxisShapeImpl). */
static mxk_status so_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const so_param *p = param;
    if (in[0].ndim == 0)
        return MXK_OK;
    int32_t axis;
    uint64_t n;
    MXK_SDK_CHECK(so_axis(p, &in[0], &axis, &n, err));
    mxk_shape o = in[0];
    if (p->kind == SO_ARGMIN) {
        o = argmin_shape(p, &in[0], axis);
    } else {
        uint64_t k = so_k(p, n);
        if (n != 0 && k > n)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "k must be smaller than %llu, get k = %llu",
                                 (unsigned long long)n, (unsigned long long)k);
        if (p->ret != SO_MASK && axis < 0)
            o = mxk_sdk_shape1((int64_t)k);
        else if (p->ret != SO_MASK)
            o.dims[axis] = (int64_t)k;
    }
    for (uint32_t i = 0; i < num_out; i++)
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[i], &o, "output", "output", err));
    return MXK_OK;
}

/** Types (TopKType, SortType, ArgSortType): values float32, indices dtype (hidden: int32). */
static mxk_status so_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    const so_param *p = param;
    MXK_SDK_CHECK(mxk_sdk_type_assign(&in[0], MXK_FLOAT32, "argument 'data'", err));
    int32_t t0 = p->ret == SO_INDICES ? p->dtype : MXK_FLOAT32;
    MXK_SDK_CHECK(mxk_sdk_type_assign(&out[0], t0, "output 0", err));
    if (num_out > 1)
        MXK_SDK_CHECK(mxk_sdk_type_assign(&out[1], p->ret == SO_BOTH ? p->dtype : MXK_INT32,
                                          "output 1", err));
    return MXK_OK;
}

/** Backward reads out_grad[0] and the index output (values only; else nothing). */
static void so_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                          uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                          uint8_t *need_out_data) {
    if (num_out < 2)
        return;
    need_out_grad[0] = 1;
    need_out_data[1] = 1;
}

/** One element of a row being sorted: its value and position. */
typedef struct so_item {
    float v;
    int64_t i;
} so_item;

/** Ascending by value (NaN last), ties by position (mxk_idx_sort_before). */
static int so_cmp_asc(const void *a, const void *b) {
    const so_item *x = a, *y = b;
    return mxk_idx_sort_before(x->v, x->i, y->v, y->i, 1)   ? -1
           : mxk_idx_sort_before(y->v, y->i, x->v, x->i, 1) ? 1
                                                            : 0;
}

/** Descending by value (NaN first), ties by position (mxk_idx_sort_before). */
static int so_cmp_desc(const void *a, const void *b) {
    const so_item *x = a, *y = b;
    return mxk_idx_sort_before(x->v, x->i, y->v, y->i, 0)   ? -1
           : mxk_idx_sort_before(y->v, y->i, x->v, x->i, 0) ? 1
                                                            : 0;
}

/** The (outer, n, inner) view of a call: rows of n elements `inner` apart. */
typedef struct so_view {
    uint64_t outer, n, inner, k;
} so_view;

/** The view of data shape s. */
static mxk_status so_view_of(const so_param *p, const mxk_shape *s, so_view *v,
                             mxk_error_sink *err) {
    int32_t axis;
    MXK_SDK_CHECK(so_axis(p, s, &axis, &v->n, err));
    if (axis < 0) {
        v->outer = v->inner = 1;
    } else {
        cbt_split(s, axis, &v->outer, &v->n, &v->inner);
    }
    v->k = so_k(p, v->n);
    return MXK_OK;
}

/** Writes one sorted row's outputs (values, indices, or mask) by request. */
static void so_write_row(const so_param *p, const so_view *v, const so_item *items, uint64_t o,
                         uint64_t in, const mxk_forward_args *args) {
    const mxk_tensor *t0 = args->out_data[0];
    const mxk_tensor *t1 = args->num_out > 1 ? args->out_data[1] : NULL;
    mxk_op_req r0 = args->req[0], r1 = args->num_out > 1 ? args->req[1] : MXK_REQ_NULL;
    if (p->ret == SO_MASK) {
        for (uint64_t j = 0; j < v->n; j++)
            cbt_store(t0->data, t0->dtype, (o * v->n + j) * v->inner + in, 0.0, r0);
        for (uint64_t j = 0; j < v->k; j++)
            cbt_store(t0->data, t0->dtype, (o * v->n + (uint64_t)items[j].i) * v->inner + in, 1.0,
                      r0);
        return;
    }
    for (uint64_t j = 0; j < v->k; j++) {
        uint64_t e = (o * v->k + j) * v->inner + in;
        if (p->ret == SO_INDICES) {
            cbt_store(t0->data, t0->dtype, e, (double)items[j].i, r0);
            continue;
        }
        cbt_store(t0->data, t0->dtype, e, items[j].v, r0);
        if (t1 != NULL)
            cbt_store(t1->data, t1->dtype, e, (double)items[j].i, r1);
    }
}

/** Forward: each row sorted (or searched, argmin) and written by request. */
static mxk_status so_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const so_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, 1, so_num_outputs(p), so_infer_shape, param, 1, err));
    const mxk_tensor *xt = args->in_data[0];
    MXK_SDK_CHECK(cb_check_tensor(xt, "argument 'data'", err));
    so_view v;
    MXK_SDK_CHECK(so_view_of(p, &xt->shape, &v, err));
    const float *x = cb_f32(xt);
    if (p->kind == SO_ARGMIN) {
        for (uint64_t o = 0; o < v.outer; o++)
            for (uint64_t in = 0; in < v.inner; in++)
                cbt_store(args->out_data[0]->data, args->out_data[0]->dtype, o * v.inner + in,
                          (double)mxk_idx_arg_best(x + o * v.n * v.inner + in, v.n, v.inner, 1),
                          args->req[0]);
        return MXK_OK;
    }
    for (uint32_t i = 0; i < args->num_out; i++) /* the index outputs */
        if ((i == 1 || p->ret == SO_INDICES) && args->req[i] != MXK_REQ_NULL)
            MXK_SDK_CHECK(mxk_idx_check_positions(args->out_data[i]->dtype, v.n, err));
    so_item *items = malloc(v.n * sizeof *items);
    if (items == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "out of memory (%llu elements)",
                             (unsigned long long)v.n);
    for (uint64_t o = 0; o < v.outer; o++)
        for (uint64_t in = 0; in < v.inner; in++) {
            for (uint64_t j = 0; j < v.n; j++)
                items[j] = (so_item){x[(o * v.n + j) * v.inner + in], (int64_t)j};
            qsort(items, v.n, sizeof *items, p->ascend ? so_cmp_asc : so_cmp_desc);
            so_write_row(p, &v, items, o, in, args);
        }
    free(items);
    return MXK_OK;
}

/** Backward: out_grad scattered to the selected positions (values); zeros otherwise. */
static mxk_status so_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const so_param *p = param;
    uint32_t nout = so_num_outputs(p);
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, nout, so_num_visible(p), err));
    mxk_op_req req = args->req[0];
    if (nout == 1 || req == MXK_REQ_NULL)
        return cbt_zero_grad(args->in_grad[0], req, "data", err);
    const mxk_tensor *dy = args->out_grad[0], *it = args->out_data[1], *dx = args->in_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(dy, "gradient of 'output0'", err));
    MXK_SDK_CHECK(cbt_check_any(it, "output 'output1'", err));
    MXK_SDK_CHECK(cb_check_tensor(dx, "gradient of 'data'", err));
    so_view v;
    MXK_SDK_CHECK(so_view_of(p, &dx->shape, &v, err));
    uint64_t m = v.outer * v.k * v.inner;
    if (mxk_sdk_shape_count(&dy->shape) != m || mxk_sdk_shape_count(&it->shape) != m)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "backward: inconsistent shapes");
    if (req != MXK_REQ_ADD)
        memset(dx->data, 0, (size_t)mxk_sdk_shape_count(&dx->shape) * sizeof(float));
    float *g = cb_f32(dx);
    const float *gy = cb_f32(dy);
    for (uint64_t o = 0; o < v.outer; o++)
        for (uint64_t j = 0; j < v.k; j++)
            for (uint64_t in = 0; in < v.inner; in++) {
                uint64_t e = (o * v.k + j) * v.inner + in;
                double idx = cbt_load(it->data, it->dtype, e);
                if (!(idx >= 0 && idx < (double)v.n))
                    return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                         "backward: index %g outside [0, %llu)", idx,
                                         (unsigned long long)v.n);
                g[(o * v.n + (uint64_t)idx) * v.inner + in] += gy[e];
            }
    return MXK_OK;
}

/** Registers topk, sort, argsort and argmin with their CPU kernels. */
mxk_status cb_register_index_sort(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const topk_aliases[] = {"_npx_topk", NULL};
    static const char *const sort_aliases[] = {"_npi_sort", NULL};
    static const char *const argsort_aliases[] = {"_npi_argsort", NULL};
    static const struct {
        const char *name, *doc;
        const mxk_attr_def *attrs;
        uint32_t num_attrs;
        const char *const *aliases;
        mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *);
    } ops[] = {
        {"topk",
         "Returns the indices of the top k elements in an input array along the given "
         "axis.",
         topk_attrs, MXK_SDK_COUNTOF(topk_attrs), topk_aliases, topk_parse},
        {"sort", "Returns a sorted copy of an input array along the given axis.", argsort_attrs, 2,
         sort_aliases, sort_parse},
        {"argsort", "Returns the indices that would sort an input array along the given axis.",
         argsort_attrs, MXK_SDK_COUNTOF(argsort_attrs), argsort_aliases, argsort_parse},
        {"argmin", "Returns indices of the minimum values along an axis.", argmin_attrs,
         MXK_SDK_COUNTOF(argmin_attrs), NULL, argmin_parse},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        mxk_op_def def;
        cbt_def_init(&def, ops[i].doc, ops[i].attrs, ops[i].num_attrs, so_args, ops[i].parse);
        def.outputs = NULL;
        def.list_outputs = so_list_outputs;
        def.num_visible_outputs = so_num_visible;
        def.infer_shape = so_infer_shape;
        def.infer_type = so_infer_type;
        def.backward_dependency = so_dependency;
        def.aliases = ops[i].aliases;
        MXK_SDK_CHECK(cbt_register(reg, &def, ops[i].name, so_forward, so_backward, 1, err));
    }
    return MXK_OK;
}
