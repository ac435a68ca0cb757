/*
 * cpu-blas plugin: element-wise binary operators _plus, _minus, _mul, _div.
 *
 * Semantics: MXNet src/operator/tensor/elemwise_binary_op_basic.cc (digest
 * operators-kvstore-module.md §2.2). Arguments lhs, rhs of the same shape; output
 * `output` of that shape. Each is also registered under MXNet's other names for
 * the same operator: elemwise_add / _Plus, elemwise_sub / _Minus, elemwise_mul /
 * _Mul, elemwise_div / _Div. Gradients: _plus (dy, dy), _minus (dy, -dy), _mul
 * (dy*rhs, dy*lhs), _div (dy/rhs, -dy*lhs/rhs^2); _plus and _minus read only
 * out_grad. Forward may run in place (lhs or rhs -> output); backward may write
 * either gradient over out_grad (the other one is computed first).
 */
#include "cb_loops.h"
#include "cpu_blas.h"

/** The four operations. */
enum ew_code { EW_PLUS, EW_MINUS, EW_MUL, EW_DIV };

/** Static description of one operation; the parameter object of its operators. */
typedef struct ew_info {
    int32_t code; /**< enum ew_code */
} ew_info;

static const ew_info ew_infos[4] = {{EW_PLUS}, {EW_MINUS}, {EW_MUL}, {EW_DIV}};

static const char *const ew_args[] = {"lhs", "rhs", NULL};
static const char *const ew_outs[] = {"output", NULL};

/** parse_param of _plus (each operation's parameter is its static ew_info; no attributes). */
static mxk_status ew_parse_plus(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    *out = (void *)&ew_infos[EW_PLUS];
    return MXK_OK;
}
/** parse_param of _minus. */
static mxk_status ew_parse_minus(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    *out = (void *)&ew_infos[EW_MINUS];
    return MXK_OK;
}
/** parse_param of _mul. */
static mxk_status ew_parse_mul(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    *out = (void *)&ew_infos[EW_MUL];
    return MXK_OK;
}
/** parse_param of _div. */
static mxk_status ew_parse_div(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    *out = (void *)&ew_infos[EW_DIV];
    return MXK_OK;
}

/** The parameter objects are static: nothing to free. */
static void ew_free(void *param) {}

/** lhs, rhs and output share one shape (merged in every direction). */
static mxk_status ew_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    if (num_in != 2 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "binary operator expects 2 arguments and 1 output");
    return mxk_sdk_infer_shape_same(in, num_in, ew_args, out, num_out, ew_outs, err);
}

/** All float32. */
static mxk_status ew_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, ew_args, out, num_out, ew_outs, aux,
                                      num_aux, err);
}

/** out_grad always; lhs and rhs for _mul and _div. */
static void ew_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    const ew_info *p = param;
    need_out_grad[0] = 1;
    if (p->code == EW_MUL || p->code == EW_DIV) {
        need_in_data[0] = 1;
        need_in_data[1] = 1;
    }
}

/** Forward in-place lhs -> output and rhs -> output. */
static uint32_t ew_forward_inplace(const void *param, mxk_inplace_pair *pairs, uint32_t capacity) {
    uint32_t n = 0;
    mxk_sdk_inplace_add(pairs, capacity, &n, 0, 0, 0);
    mxk_sdk_inplace_add(pairs, capacity, &n, 1, 0, 0);
    return n;
}

/** Backward in-place out_grad -> in_grad[lhs] (identity for _plus, _minus) and -> in_grad[rhs]. */
static uint32_t ew_backward_inplace(const void *param, mxk_inplace_pair *pairs, uint32_t capacity) {
    const ew_info *p = param;
    uint32_t n = 0;
    mxk_sdk_inplace_add(pairs, capacity, &n, 0, 0, p->code == EW_PLUS || p->code == EW_MINUS);
    mxk_sdk_inplace_add(pairs, capacity, &n, 0, 1, p->code == EW_PLUS);
    return n;
}

CB_DEFINE_BINARY(ew_add, a + b)
CB_DEFINE_BINARY(ew_sub, a - b)
CB_DEFINE_BINARY(ew_mul, (a) * (b))
CB_DEFINE_BINARY(ew_div, a / b)

/** out = lhs op rhs by the request (out may be lhs or rhs). */
static mxk_status ew_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const ew_info *p = param;
    MXK_SDK_CHECK(cb_check_forward(args, 2, 1, ew_args, ew_outs, ew_infer_shape, param, err));
    const float *a = cb_f32(args->in_data[0]), *b = cb_f32(args->in_data[1]);
    float *o = cb_f32(args->out_data[0]);
    size_t n = (size_t)mxk_sdk_shape_count(&args->in_data[0]->shape);
    mxk_op_req req = args->req[0];
    static const cb_binary_fn fns[] = {
        [EW_PLUS] = ew_add, [EW_MINUS] = ew_sub, [EW_MUL] = ew_mul, [EW_DIV] = ew_div};
    cb_binary_parallel(ctx, fns[p->code], o, a, b, 0.0f, n, req);
    return MXK_OK;
}

/* Gradient of rhs for _div: -dy * lhs / rhs^2 (o may equal dy). */
static void ew_div_rgrad_r(float *restrict o, const float *restrict dy, const float *restrict l,
                           const float *restrict r, size_t n, int add) {
    if (add) {
        for (size_t i = 0; i < n; i++)
            o[i] += -dy[i] * l[i] / (r[i] * r[i]);
    } else {
        for (size_t i = 0; i < n; i++)
            o[i] = -dy[i] * l[i] / (r[i] * r[i]);
    }
}

/** ew_div_rgrad_r for any aliasing of o with the inputs (reads element i before writing it). */
static void ew_div_rgrad(float *o, const float *dy, const float *l, const float *r, size_t n,
                         mxk_op_req req) {
    if (req == MXK_REQ_NULL)
        return;
    int add = req == MXK_REQ_ADD;
    if (o != dy && o != l && o != r) {
        ew_div_rgrad_r(o, dy, l, r, n, add);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        float v = -dy[i] * l[i] / (r[i] * r[i]);
        o[i] = add ? o[i] + v : v;
    }
}

/** Writes the gradient of input `which` (0 lhs, 1 rhs). */
static void ew_grad(int32_t code, int which, float *g, const float *dy, const float *l,
                    const float *r, size_t n, mxk_op_req req) {
    switch (code) {
    case EW_PLUS:
        mxk_sdk_copy_f32(g, dy, n, req);
        break;
    case EW_MINUS:
        mxk_sdk_scale_f32(g, dy, which == 0 ? 1.0f : -1.0f, n, req);
        break;
    case EW_MUL:
        ew_mul(g, dy, which == 0 ? r : l, 0.0f, n, req);
        break;
    default:
        if (which == 0)
            ew_div(g, dy, r, 0.0f, n, req);
        else
            ew_div_rgrad(g, dy, l, r, n, req);
        break;
    }
}

/** Both gradients by their requests; one that shares memory with out_grad is written last. */
static mxk_status ew_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const ew_info *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 2, 1, 1, err));
    const mxk_op_req *req = args->req;
    if (req[0] == MXK_REQ_NULL && req[1] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(dyt, "gradient of 'output'", err));
    const float *l = NULL, *r = NULL;
    if (p->code == EW_MUL || p->code == EW_DIV) {
        MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'lhs'", err));
        MXK_SDK_CHECK(cb_check_tensor(args->in_data[1], "argument 'rhs'", err));
        if (mxk_sdk_shape_count(&args->in_data[0]->shape) != mxk_sdk_shape_count(&dyt->shape) ||
            mxk_sdk_shape_count(&args->in_data[1]->shape) != mxk_sdk_shape_count(&dyt->shape))
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "lhs, rhs and output gradient differ in size");
        l = cb_f32(args->in_data[0]);
        r = cb_f32(args->in_data[1]);
    }
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req[0], &dyt->shape, "lhs", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[1], req[1], &dyt->shape, "rhs", err));
    const float *dy = cb_f32(dyt);
    size_t n = (size_t)mxk_sdk_shape_count(&dyt->shape);
    int first = req[0] != MXK_REQ_NULL && args->in_grad[0]->data == dyt->data ? 1 : 0;
    for (int k = 0; k < 2; k++) {
        int which = k == 0 ? first : 1 - first;
        if (req[which] != MXK_REQ_NULL)
            ew_grad(p->code, which, cb_f32(args->in_grad[which]), dy, l, r, n, req[which]);
    }
    return MXK_OK;
}

/** Registers one operation under `name`. */
static mxk_status ew_register_one(mxk_registrar *reg, const char *name,
                                  mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *),
                                  const char *description, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = name;
    def.description = description;
    def.arguments = ew_args;
    def.outputs = ew_outs;
    def.parse_param = parse;
    def.free_param = ew_free;
    def.infer_shape = ew_infer_shape;
    def.infer_type = ew_infer_type;
    def.backward_dependency = ew_backward_dependency;
    def.forward_inplace = ew_forward_inplace;
    def.backward_inplace = ew_backward_inplace;
    mxk_op_kernel_def k;
    cb_kernel_init(&k, name, ew_forward, ew_backward);
    return cb_register(reg, &def, &k, err);
}

/** Registers _plus, _minus, _mul, _div and their MXNet aliases with their CPU kernels. */
mxk_status cb_register_elemwise(mxk_registrar *reg, mxk_error_sink *err) {
    static const struct {
        const char *name;
        int32_t code;
        const char *doc;
    } ops[] = {
        {"_plus", EW_PLUS, "Element-wise sum: lhs + rhs."},
        {"elemwise_add", EW_PLUS, "Element-wise sum: lhs + rhs (same as _plus)."},
        {"_Plus", EW_PLUS, "Element-wise sum: lhs + rhs (same as _plus)."},
        {"_minus", EW_MINUS, "Element-wise difference: lhs - rhs."},
        {"elemwise_sub", EW_MINUS, "Element-wise difference: lhs - rhs (same as _minus)."},
        {"_Minus", EW_MINUS, "Element-wise difference: lhs - rhs (same as _minus)."},
        {"_mul", EW_MUL, "Element-wise product: lhs * rhs."},
        {"elemwise_mul", EW_MUL, "Element-wise product: lhs * rhs (same as _mul)."},
        {"_Mul", EW_MUL, "Element-wise product: lhs * rhs (same as _mul)."},
        {"_div", EW_DIV, "Element-wise quotient: lhs / rhs."},
        {"elemwise_div", EW_DIV, "Element-wise quotient: lhs / rhs (same as _div)."},
        {"_Div", EW_DIV, "Element-wise quotient: lhs / rhs (same as _div)."},
    };
    mxk_status (*const parse[4])(const mxk_attrs *, void **, mxk_error_sink *) = {
        ew_parse_plus, ew_parse_minus, ew_parse_mul, ew_parse_div};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        MXK_SDK_CHECK(ew_register_one(reg, ops[i].name, parse[ops[i].code], ops[i].doc, err));
    return MXK_OK;
}
