/*
 * cpu-blas plugin: broadcast binary operators broadcast_add, broadcast_sub,
 * broadcast_mul, broadcast_div, broadcast_power, broadcast_maximum,
 * broadcast_minimum, broadcast_hypot and the comparisons broadcast_equal,
 * broadcast_not_equal, broadcast_greater, broadcast_greater_equal,
 * broadcast_lesser, broadcast_lesser_equal.
 *
 * Semantics: MXNet src/operator/tensor/elemwise_binary_broadcast_op.h
 * (BinaryBroadcastShape: shapes aligned at the right, each dim pair equal or
 * one of them 1; the output takes the larger) and
 * elemwise_binary_broadcast_op_basic.cc / _extended.cc / _logic.cc, each
 * registered once under its MXNet name with MXNet's aliases (broadcast_plus,
 * broadcast_minus, _npi_maximum, ...). The element functions and their
 * derivatives are those of plugins/common/mxk_math_binary.h. Backward computes dl = dy * df/dl
 * and dr = dy * df/dr and sums them over the broadcast axes
 * (ReduceAxesComputeImpl); comparisons have zero gradients. Backward reads
 * out_grad (+ both inputs except for add and sub; nothing for comparisons).
 */
#include <math.h>

#include "cb_tensor.h"
#include "mxk_math_binary.h"

/** Static description of one operator; its parameter object. */
typedef struct bc_info {
    const char *name;
    int32_t code; /**< enum mxk_bin_code */
    const char *alias, *alias2, *alias3;
} bc_info;

/** The operators, in registration order. */
static const bc_info bc_ops[] = {
    {"broadcast_add", MXK_BIN_ADD, "broadcast_plus", "_sparse_broadcast_add",
     "_sparse_broadcast_plus"},
    {"broadcast_sub", MXK_BIN_SUB, "broadcast_minus", "_sparse_broadcast_sub",
     "_sparse_broadcast_minus"},
    {"broadcast_mul", MXK_BIN_MUL, "_sparse_broadcast_mul", NULL, NULL},
    {"broadcast_div", MXK_BIN_DIV, "_sparse_broadcast_div", NULL, NULL},
    {"broadcast_power", MXK_BIN_POW, NULL, NULL, NULL},
    {"broadcast_maximum", MXK_BIN_MAX, "_npi_maximum", NULL, NULL},
    {"broadcast_minimum", MXK_BIN_MIN, "_npi_minimum", NULL, NULL},
    {"broadcast_hypot", MXK_BIN_HYPOT, NULL, NULL, NULL},
    {"broadcast_equal", MXK_BIN_EQ, NULL, NULL, NULL},
    {"broadcast_not_equal", MXK_BIN_NE, NULL, NULL, NULL},
    {"broadcast_greater", MXK_BIN_GT, NULL, NULL, NULL},
    {"broadcast_greater_equal", MXK_BIN_GE, NULL, NULL, NULL},
    {"broadcast_lesser", MXK_BIN_LT, NULL, NULL, NULL},
    {"broadcast_lesser_equal", MXK_BIN_LE, NULL, NULL, NULL},
};
static const char *const bc_args[] = {"lhs", "rhs", NULL};

/* One parse_param per operator (its static bc_info). */
#define BC_PARSE(i)                                                                                \
    static mxk_status bc_parse_##i(const mxk_attrs *a, void **o, mxk_error_sink *e) {              \
        *o = (void *)&bc_ops[i];                                                                   \
        return MXK_OK;                                                                             \
    }
BC_PARSE(0)
BC_PARSE(1)
BC_PARSE(2)
BC_PARSE(3)
BC_PARSE(4)
BC_PARSE(5)
BC_PARSE(6)
BC_PARSE(7)
BC_PARSE(8)
BC_PARSE(9)
BC_PARSE(10)
BC_PARSE(11)
BC_PARSE(12)
BC_PARSE(13)

/** The parameter objects are static. */
static void bc_free(void *param) {}

/** The output shape: right-aligned, dims equal or 1. */
static mxk_status bc_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    if (num_in != 2 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 2 arguments");
    const mxk_shape *l = &in[0], *r = &in[1];
    if (l->ndim == 0 || r->ndim == 0)
        return MXK_OK;
    mxk_shape o = mxk_sdk_shape_unknown();
    o.ndim = l->ndim > r->ndim ? l->ndim : r->ndim;
    for (int32_t i = 0; i < o.ndim; i++) {
        int32_t li = i - (o.ndim - l->ndim), ri = i - (o.ndim - r->ndim);
        int64_t a = li >= 0 ? l->dims[li] : 1, b = ri >= 0 ? r->dims[ri] : 1;
        if (a != b && a != 1 && b != 1 && a != 0 && b != 0) {
            char e[MXK_SDK_SHAPE_STR_MAX], g[MXK_SDK_SHAPE_STR_MAX];
            return mxk_sdk_error(
                err, MXK_ERR_SHAPE, "operands could not be broadcast together with shapes %s %s",
                mxk_sdk_shape_format(l, e, sizeof e), mxk_sdk_shape_format(r, g, sizeof g));
        }
        o.dims[i] = a == 1 ? b : (b == 1 ? a : (a ? a : b));
    }
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** Whether the gradients read lhs and rhs (all but add, sub and the comparisons). */
static int bc_reads_inputs(int32_t code) {
    return code != MXK_BIN_ADD && code != MXK_BIN_SUB && !mxk_bin_is_compare(code);
}

/** out_grad unless a comparison; both inputs as bc_reads_inputs. */
static void bc_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    const bc_info *p = param;
    if (mxk_bin_is_compare(p->code))
        return;
    need_out_grad[0] = 1;
    if (bc_reads_inputs(p->code))
        need_in_data[0] = need_in_data[1] = 1;
}

/** Index walker over the output with the strides of both operands (0 on broadcast axes). */
typedef struct bc_walk {
    int32_t nd;
    int64_t dim[MXK_MAX_NDIM], ls[MXK_MAX_NDIM], rs[MXK_MAX_NDIM], idx[MXK_MAX_NDIM];
    int64_t lo, ro; /**< current offsets into lhs and rhs */
} bc_walk;

/** Strides of operand s aligned to output shape o (0 where s broadcasts). */
static void bc_strides(const mxk_shape *s, const mxk_shape *o, int64_t *st) {
    int64_t acc = 1;
    for (int32_t i = o->ndim - 1; i >= 0; i--) {
        int32_t si = i - (o->ndim - s->ndim);
        int64_t d = si >= 0 ? s->dims[si] : 1;
        st[i] = d == 1 ? 0 : acc;
        acc *= d;
    }
}

/** Starts a walk over output shape o for operand shapes l, r. */
static void bc_walk_init(bc_walk *w, const mxk_shape *o, const mxk_shape *l, const mxk_shape *r) {
    w->nd = o->ndim;
    for (int32_t i = 0; i < o->ndim; i++) {
        w->dim[i] = o->dims[i];
        w->idx[i] = 0;
    }
    bc_strides(l, o, w->ls);
    bc_strides(r, o, w->rs);
    w->lo = w->ro = 0;
}

/** Advances to the next output element. */
static void bc_walk_next(bc_walk *w) {
    for (int32_t i = w->nd - 1; i >= 0; i--) {
        w->lo += w->ls[i];
        w->ro += w->rs[i];
        if (++w->idx[i] < w->dim[i])
            return;
        w->lo -= w->ls[i] * w->dim[i];
        w->ro -= w->rs[i] * w->dim[i];
        w->idx[i] = 0;
    }
}

/** y (=|+=) f(l, r) with broadcasting. */
static mxk_status bc_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const bc_info *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, 2, 1, bc_infer_shape, param, 0, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *lt = args->in_data[0], *rt = args->in_data[1], *yt = args->out_data[0];
    const float *l = cb_f32(lt), *r = cb_f32(rt);
    float *y = cb_f32(yt);
    uint64_t n = mxk_sdk_shape_count(&yt->shape);
    bc_walk w;
    bc_walk_init(&w, &yt->shape, &lt->shape, &rt->shape);
    for (uint64_t i = 0; i < n; i++, bc_walk_next(&w))
        mxk_sdk_assign_f32(&y[i], mxk_bin_f(p->code, l[w.lo], r[w.ro]), req);
    return MXK_OK;
}

/** Both gradients, summed over the broadcast axes, by their requests. */
static mxk_status bc_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const bc_info *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 2, 1, 1, err));
    if (mxk_bin_is_compare(p->code)) {
        MXK_SDK_CHECK(cbt_zero_grad(args->in_grad[0], args->req[0], "lhs", err));
        return cbt_zero_grad(args->in_grad[1], args->req[1], "rhs", err);
    }
    const mxk_tensor *dyt = args->out_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(dyt, "gradient of 'output'", err));
    const char *names[2] = {"lhs", "rhs"};
    mxk_shape s[2];
    const float *v[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        const mxk_tensor *g = args->in_grad[k], *x = args->in_data[k];
        int need = bc_reads_inputs(p->code);
        if (need)
            MXK_SDK_CHECK(cb_check_tensor(x, k ? "argument 'rhs'" : "argument 'lhs'", err));
        if (args->req[k] != MXK_REQ_NULL)
            MXK_SDK_CHECK(cb_check_tensor(g, k ? "gradient of 'rhs'" : "gradient of 'lhs'", err));
        const mxk_tensor *src = need ? x : g;
        if (src == NULL || src->shape.ndim == 0) {
            s[k] = mxk_sdk_shape_unknown();
            continue;
        }
        s[k] = src->shape;
        v[k] = need ? cb_f32(x) : NULL;
    }
    for (int k = 0; k < 2; k++) {
        mxk_op_req req = args->req[k];
        if (req == MXK_REQ_NULL)
            continue;
        mxk_shape o = mxk_sdk_shape_unknown();
        mxk_shape pair[2] = {s[0], s[1]};
        if (pair[1 - k].ndim == 0)
            pair[1 - k] = dyt->shape; /* add/sub: the other operand's shape is not needed */
        MXK_SDK_CHECK(bc_infer_shape(param, pair, 2, &o, 1, NULL, 0, err));
        if (!mxk_sdk_shape_equal(&o, &dyt->shape) ||
            mxk_sdk_shape_count(&args->in_grad[k]->shape) != mxk_sdk_shape_count(&pair[k]))
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "gradient of '%s': shapes do not broadcast "
                                 "to the output gradient",
                                 names[k]);
        float *g = cb_f32(args->in_grad[k]);
        if (req != MXK_REQ_ADD)
            mxk_sdk_fill_f32(g, 0.0f, (size_t)mxk_sdk_shape_count(&pair[k]), MXK_REQ_WRITE);
        const float *dy = cb_f32(dyt);
        uint64_t n = mxk_sdk_shape_count(&dyt->shape);
        bc_walk w;
        bc_walk_init(&w, &dyt->shape, &pair[0], &pair[1]);
        for (uint64_t i = 0; i < n; i++, bc_walk_next(&w)) {
            float a = v[0] ? v[0][w.lo] : 0.0f, b = v[1] ? v[1][w.ro] : 0.0f;
            g[k ? w.ro : w.lo] += dy[i] * mxk_bin_df(p->code, k, a, b);
        }
    }
    return MXK_OK;
}

/** Registers the broadcast operators (with MXNet's aliases) and their CPU kernels. */
mxk_status cb_register_broadcast(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_status (*const parse[])(const mxk_attrs *, void **, mxk_error_sink *) = {
        bc_parse_0, bc_parse_1, bc_parse_2, bc_parse_3,  bc_parse_4,  bc_parse_5,  bc_parse_6,
        bc_parse_7, bc_parse_8, bc_parse_9, bc_parse_10, bc_parse_11, bc_parse_12, bc_parse_13};
    _Static_assert(MXK_SDK_COUNTOF(parse) == MXK_SDK_COUNTOF(bc_ops),
                   "one parse function per broadcast operator");
    for (uint32_t i = 0; i < MXK_SDK_COUNTOF(bc_ops); i++) {
        const char *aliases[] = {bc_ops[i].alias, bc_ops[i].alias2, bc_ops[i].alias3, NULL};
        mxk_op_def def;
        mxk_sdk_op_def_init(&def);
        def.description = "Element-wise binary operation with NumPy-style broadcasting.";
        def.aliases = aliases;
        def.arguments = bc_args;
        def.parse_param = parse[i];
        def.free_param = bc_free;
        def.infer_shape = bc_infer_shape;
        def.infer_type = cbt_infer_type_f32;
        def.backward_dependency = bc_backward_dependency;
        MXK_SDK_CHECK(cbt_register(reg, &def, bc_ops[i].name, bc_forward, bc_backward, 0, err));
    }
    return MXK_OK;
}
