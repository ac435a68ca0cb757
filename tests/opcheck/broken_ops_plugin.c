/*
 * A test plugin with deliberately broken operators for the operator test kit's
 * negative test (tests/opcheck/test_opcheck.c). All are element-wise, float32, CPU,
 * with MXK_KERNEL_SUPPORTS_ADDTO (so the kernel passes ADD through, not emulating it):
 *
 *   OpcheckGood        y = x^2, dx = 2 x dy: correct (the kit must pass it)
 *   OpcheckWrongGrad   y = x^2, dx = x dy: wrong gradient ("backward" must fail)
 *   OpcheckIgnoresAdd  y = x^2, dx = 2 x dy written even for ADD ("backward_req")
 *   OpcheckUndeclared  y = a * b, declares out_grad and a only, but dx_a = b dy reads
 *                      the undeclared b ("dependency" must fail)
 *   OpcheckOverrun     y = x^2, but forward also writes one element past the end of y
 *                      (the storage guard must name it: "forward" fails)
 */
#include <stddef.h>

#include "testing_plugin.h"

/** Which broken behaviour an operator has (its parameter object). */
enum bo_kind { BO_GOOD, BO_WRONG_GRAD, BO_IGNORES_ADD, BO_UNDECLARED, BO_OVERRUN };

static const int bo_kinds[5] = {BO_GOOD, BO_WRONG_GRAD, BO_IGNORES_ADD, BO_UNDECLARED, BO_OVERRUN};
static const char *const bo_unary_args[] = {"data", NULL};
static const char *const bo_binary_args[] = {"lhs", "rhs", NULL};
static const char *const bo_outs[] = {"output", NULL};

/** parse_param of OpcheckGood. */
static mxk_status bo_parse_good(const mxk_attrs *a, void **p, mxk_error_sink *e) {
    *p = (void *)&bo_kinds[BO_GOOD];
    return MXK_OK;
}
/** parse_param of OpcheckWrongGrad. */
static mxk_status bo_parse_wrong(const mxk_attrs *a, void **p, mxk_error_sink *e) {
    *p = (void *)&bo_kinds[BO_WRONG_GRAD];
    return MXK_OK;
}
/** parse_param of OpcheckIgnoresAdd. */
static mxk_status bo_parse_add(const mxk_attrs *a, void **p, mxk_error_sink *e) {
    *p = (void *)&bo_kinds[BO_IGNORES_ADD];
    return MXK_OK;
}
/** parse_param of OpcheckUndeclared. */
static mxk_status bo_parse_undeclared(const mxk_attrs *a, void **p, mxk_error_sink *e) {
    *p = (void *)&bo_kinds[BO_UNDECLARED];
    return MXK_OK;
}
/** parse_param of OpcheckOverrun. */
static mxk_status bo_parse_overrun(const mxk_attrs *a, void **p, mxk_error_sink *e) {
    *p = (void *)&bo_kinds[BO_OVERRUN];
    return MXK_OK;
}
/** Static parameters: nothing to free. */
static void bo_free(void *p) {}

/** Every argument and the output share one shape. */
static mxk_status bo_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const char *const *args = num_in == 2 ? bo_binary_args : bo_unary_args;
    return mxk_sdk_infer_shape_same(in, num_in, args, out, num_out, bo_outs, err);
}

/** float32 only. */
static mxk_status bo_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    const char *const *args = num_in == 2 ? bo_binary_args : bo_unary_args;
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, args, out, num_out, bo_outs, aux,
                                      num_aux, err);
}

/** out_grad and in_data[0] (OpcheckUndeclared "forgets" in_data[1]). */
static void bo_dependency(const void *param, uint32_t nv, uint32_t ni, uint32_t no, uint8_t *og,
                          uint8_t *id, uint8_t *od) {
    og[0] = 1;
    id[0] = 1;
}

/** Forward: x^2, or a*b for the binary operator; OpcheckOverrun writes y[n] too. */
static mxk_status bo_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    int kind = *(const int *)param;
    const float *a = args->in_data[0]->data;
    const float *b = kind == BO_UNDECLARED ? args->in_data[1]->data : a;
    float *y = args->out_data[0]->data;
    uint64_t n = mxk_sdk_shape_count(&args->in_data[0]->shape);
    for (uint64_t i = 0; i < n; i++) {
        float v = a[i] * b[i];
        if (args->req[0] == MXK_REQ_ADD)
            y[i] += v;
        else if (args->req[0] != MXK_REQ_NULL)
            y[i] = v;
    }
    if (kind == BO_OVERRUN)
        y[n] = 0.0f; /* the bug: one element past the output */
    return MXK_OK;
}

/** Stores v into in_grad[g][i] by the request (ignore_add: ADD treated as WRITE). */
static void bo_store(const mxk_backward_args *args, uint32_t g, uint64_t i, float v,
                     int ignore_add) {
    float *dx = args->in_grad[g]->data;
    mxk_op_req q = args->req[g];
    if (q == MXK_REQ_ADD && !ignore_add)
        dx[i] += v;
    else if (q != MXK_REQ_NULL)
        dx[i] = v;
}

/** Backward with the bug of the operator's kind. */
static mxk_status bo_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    int kind = *(const int *)param;
    const float *dy = args->out_grad[0]->data;
    const float *a = args->in_data[0]->data;
    uint64_t n = mxk_sdk_shape_count(&args->in_data[0]->shape);
    if (kind == BO_UNDECLARED) {
        /* The bug: reads in_data[1] without declaring it (NULL when omitted). */
        const float *b = args->in_data[1]->data;
        for (uint64_t i = 0; i < n; i++) {
            bo_store(args, 0, i, dy[i] * (b ? b[i] : 1.0f), 0);
            bo_store(args, 1, i, 0.0f, 0); /* also wrong, but "dependency" is the point */
        }
        return MXK_OK;
    }
    for (uint64_t i = 0; i < n; i++) {
        float g = kind == BO_WRONG_GRAD ? a[i] * dy[i] : 2.0f * a[i] * dy[i];
        bo_store(args, 0, i, g, kind == BO_IGNORES_ADD);
    }
    return MXK_OK;
}

MXK_TEST_PLUGIN_INFO("opcheck-broken",
                     "deliberately broken operators for the operator test kit's negative test", 0,
                     MXK_PROVIDES_OPERATORS | MXK_PROVIDES_KERNELS)

/** Registers one operator and its CPU kernel. */
static mxk_status bo_register(mxk_registrar *reg, const char *name, int binary,
                              mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *),
                              mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = name;
    def.arguments = binary ? bo_binary_args : bo_unary_args;
    def.outputs = bo_outs;
    def.parse_param = parse;
    def.free_param = bo_free;
    def.infer_shape = bo_infer_shape;
    def.infer_type = bo_infer_type;
    def.backward_dependency = bo_dependency;
    return mxk_test_register_cpu_op(reg, &def, bo_forward, bo_backward, err);
}

/** Entry point 2: registers the five operators. */
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_test_plugin_begin(args, MXK_SDK_HOST_SLOT_END(attr_key), err));
    mxk_registrar *reg = args->registrar;
    MXK_SDK_CHECK(bo_register(reg, "OpcheckGood", 0, bo_parse_good, err));
    MXK_SDK_CHECK(bo_register(reg, "OpcheckWrongGrad", 0, bo_parse_wrong, err));
    MXK_SDK_CHECK(bo_register(reg, "OpcheckIgnoresAdd", 0, bo_parse_add, err));
    MXK_SDK_CHECK(bo_register(reg, "OpcheckOverrun", 0, bo_parse_overrun, err));
    return bo_register(reg, "OpcheckUndeclared", 1, bo_parse_undeclared, err);
}
