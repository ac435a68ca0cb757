/*
 * onednn plugin: Activation and LeakyReLU kernels on oneDNN's eltwise primitive
 * (oneDNN 2.x, dnnl_eltwise_forward_desc_init / dnnl_eltwise_backward_desc_init).
 *
 * Semantics are the operators' (cpu-blas op_activation.c and op_leaky_relu.c;
 * upstream MXNet src/operator/nn/activation.cc, src/operator/leaky_relu-inl.h,
 * src/operator/mshadow_op.h); the mapping follows MXNet 1.9.1's
 * src/operator/nn/mkldnn/mkldnn_act.cc. The backward reads what the operator's
 * backward dependency declares, so the algorithms that read the output use
 * oneDNN's *_use_dst_for_bwd forms (forward and backward alike, as oneDNN
 * requires of a hint):
 *   Activation relu      relu_use_dst_for_bwd (alpha 0)      backward from y
 *   Activation sigmoid   logistic_use_dst_for_bwd            backward from y
 *   Activation tanh      tanh_use_dst_for_bwd                backward from y
 *   Activation softrelu  soft_relu                           backward from y by a
 *                        plain loop, dx = dy (1 - e^-y) (oneDNN's soft_relu backward
 *                        reads x, which the operator does not keep)
 *   LeakyReLU leaky      relu_use_dst_for_bwd (alpha slope)  backward from y
 *   LeakyReLU elu        elu_use_dst_for_bwd (alpha slope)   backward from y
 *   LeakyReLU gelu       gelu_erf                            backward from x
 * Declined (the next backend runs them): Activation softsign (oneDNN 2.x has no
 * soft_sign), LeakyReLU prelu, rrelu and selu, leaky and elu with a negative
 * slope (oneDNN's use_dst forms need alpha >= 0), non-float32 or empty data.
 * Every tensor is viewed as a 1-D array of its elements. Forward and backward may
 * run in place (oneDNN's eltwise allows src == dst and diff_dst == diff_src).
 */
#include "dn_util.h"

#include <math.h>
#include <stdlib.h>

/** Where the backward takes f'(.) from. */
enum dn_elt_bwd {
    DN_ELT_FROM_DST = 0,      /**< oneDNN backward reading the output */
    DN_ELT_FROM_SRC = 1,      /**< oneDNN backward reading the input */
    DN_ELT_SOFTRELU_LOOP = 2, /**< plain loop, dx = dy (1 - e^-y) */
};

/**
 * A kernel's parameters, parsed from either operator's attributes: the oneDNN
 * algorithm and its alpha (beta unused by these algorithms), where backward reads
 * from, and whether the configuration is supported at all. Owned by the host
 * (parse_param / free_param); read only.
 */
typedef struct dn_elt_param {
    dnnl_alg_kind_t alg;
    float alpha;
    int32_t bwd;       /**< enum dn_elt_bwd */
    int32_t supported; /**< 0: `supports` declines */
} dn_elt_param;

/**
 * Per-node state: the 1-D descriptor of the data, the forward primitive
 * descriptor (the backward's hint) and primitives; the backward one is made at
 * the first backward call. Used by one call at a time (the host serialises calls
 * on one state).
 */
typedef struct dn_elt_state {
    dnnl_memory_desc_t md;
    int64_t n;
    dnnl_primitive_desc_t fwd_pd;
    dnnl_primitive_t fwd;
    dnnl_primitive_t bwd;
} dn_elt_state;

/** Allocates a copy of *p as the kernel's parameter object; MXK_ERR_OUT_OF_MEMORY. */
static mxk_status elt_param_new(const dn_elt_param *p, void **out, mxk_error_sink *err) {
    dn_elt_param *q = malloc(sizeof *q);
    if (q == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN eltwise: out of memory");
    *q = *p;
    *out = q;
    return MXK_OK;
}

/** Frees a parameter object of elt_param_new. */
static void elt_param_free(void *p) {
    free(p);
}

/**
 * Activation's act_type (relu|sigmoid|tanh|softrelu|softsign, the operator's
 * schema order) into a dn_elt_param; softsign is parsed as unsupported. Errors:
 * mxk_sdk_attr_enum's.
 */
static mxk_status act_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    static const dnnl_alg_kind_t algs[] = {
        dnnl_eltwise_relu_use_dst_for_bwd, dnnl_eltwise_logistic_use_dst_for_bwd,
        dnnl_eltwise_tanh_use_dst_for_bwd, dnnl_eltwise_soft_relu, dnnl_alg_kind_undef};
    int32_t act = 0;
    MXK_SDK_CHECK(
        mxk_sdk_attr_enum(attrs, "act_type", "relu|sigmoid|tanh|softrelu|softsign", &act, err));
    dn_elt_param p = {.alg = algs[act],
                      .alpha = 0.0f,
                      .bwd = act == 3 ? DN_ELT_SOFTRELU_LOOP : DN_ELT_FROM_DST,
                      .supported = act != 4};
    return elt_param_new(&p, out, err);
}

/**
 * LeakyReLU's act_type (rrelu|leaky|prelu|elu|selu|gelu, the operator's schema
 * order) and slope into a dn_elt_param; leaky and elu with slope >= 0 and gelu
 * are supported. Errors: mxk_sdk_attr_enum's and mxk_sdk_attr_float's.
 */
static mxk_status lr_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    enum { RRELU, LEAKY, PRELU, ELU, SELU, GELU };
    int32_t act = 0;
    double slope;
    MXK_SDK_CHECK(
        mxk_sdk_attr_enum(attrs, "act_type", "rrelu|leaky|prelu|elu|selu|gelu", &act, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "slope", &slope, err));
    dn_elt_param p = {.alg = dnnl_alg_kind_undef, .alpha = (float)slope, .bwd = DN_ELT_FROM_DST};
    if (act == LEAKY)
        p.alg = dnnl_eltwise_relu_use_dst_for_bwd;
    else if (act == ELU)
        p.alg = dnnl_eltwise_elu_use_dst_for_bwd;
    else if (act == GELU)
        p.alg = dnnl_eltwise_gelu_erf, p.alpha = 0.0f, p.bwd = DN_ELT_FROM_SRC;
    p.supported = p.alg != dnnl_alg_kind_undef && p.alpha >= 0.0f;
    return elt_param_new(&p, out, err);
}

/** Accepts a supported configuration on one non-empty float32 input (of any rank: viewed 1-D). */
static int32_t elt_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                            uint32_t num_in) {
    const dn_elt_param *p = param;
    return p->supported && num_in == 1 && in_types[0] == MXK_FLOAT32 &&
           dn_shape_size(&in_shapes[0]) > 0;
}

/** Frees a state of elt_create_state (NULL allowed). */
static void elt_destroy_state(void *state) {
    dn_elt_state *s = state;
    if (s == NULL)
        return;
    dnnl_primitive_destroy(s->bwd);
    dnnl_primitive_destroy(s->fwd);
    dnnl_primitive_desc_destroy(s->fwd_pd);
    free(s);
}

/**
 * Creates the state: the 1-D descriptor of the input's elements and the forward
 * (training) primitive. Errors: MXK_ERR_OUT_OF_MEMORY, dn_check's.
 */
static mxk_status elt_create_state(const void *param, int32_t dev_type, int32_t dev_id,
                                   const mxk_shape *in_shapes, const int32_t *in_types,
                                   uint32_t num_in, void **state, mxk_error_sink *err) {
    const dn_elt_param *p = param;
    dn_elt_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN eltwise: out of memory");
    s->n = dn_shape_size(&in_shapes[0]);
    dnnl_dim_t n = s->n;
    dnnl_eltwise_desc_t d;
    mxk_status rc = dn_md_plain(&s->md, 1, &n, err);
    if (rc == MXK_OK)
        rc = dn_check(dnnl_eltwise_forward_desc_init(&d, dnnl_forward_training, p->alg, &s->md,
                                                     p->alpha, 0.0f),
                      "eltwise forward descriptor", err);
    if (rc == MXK_OK)
        rc = dn_check(dn_pd_create(&s->fwd_pd, &d, NULL), "eltwise forward primitive descriptor",
                      err);
    if (rc == MXK_OK)
        rc = dn_primitive(&s->fwd, s->fwd_pd, "eltwise forward primitive", err);
    if (rc != MXK_OK) {
        elt_destroy_state(s);
        return rc;
    }
    *state = s;
    return MXK_OK;
}

/** y = f(x) (WRITE or INPLACE; nothing for NULL). Errors: dn_check_tensor's, dn_execute's. */
static mxk_status elt_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    dn_elt_state *s = state;
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(dn_check_tensor(args->in_data[0], s->n, "eltwise", "the input", err));
    MXK_SDK_CHECK(dn_check_tensor(args->out_data[0], s->n, "eltwise", "the output", err));
    dn_arg a[] = {{DNNL_ARG_SRC, &s->md, args->in_data[0]->data},
                  {DNNL_ARG_DST, &s->md, args->out_data[0]->data}};
    return dn_execute(ctx, s->fwd, 2, a, err);
}

/**
 * softrelu's gradient from its output, dx = dy (1 - e^-y) = -dy expm1(-y), as
 * cpu-blas computes it (mshadow_op.h softrelu_grad); dx may be dy.
 */
static void elt_softrelu_grad(float *dx, const float *dy, const float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        dx[i] = dy[i] * -expm1f(-y[i]);
}

/**
 * dx = dy f'(.) from the output (or the input for gelu), WRITE or INPLACE
 * (nothing for NULL); creates the backward primitive at the first call.
 * Errors: dn_check_tensor's, dn_check's, dn_execute's.
 */
static mxk_status elt_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const dn_elt_param *p = param;
    dn_elt_state *s = state;
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *ref = p->bwd == DN_ELT_FROM_SRC ? args->in_data[0] : args->out_data[0];
    MXK_SDK_CHECK(dn_check_tensor(args->out_grad[0], s->n, "eltwise", "the output gradient", err));
    MXK_SDK_CHECK(dn_check_tensor(args->in_grad[0], s->n, "eltwise", "the input gradient", err));
    MXK_SDK_CHECK(dn_check_tensor(ref, s->n, "eltwise",
                                  p->bwd == DN_ELT_FROM_SRC ? "the input" : "the output", err));
    if (p->bwd == DN_ELT_SOFTRELU_LOOP) {
        elt_softrelu_grad(args->in_grad[0]->data, args->out_grad[0]->data, ref->data, s->n);
        return MXK_OK;
    }
    if (s->bwd == NULL) {
        dnnl_eltwise_desc_t d;
        dnnl_primitive_desc_t pd;
        DN_CHECK(dnnl_eltwise_backward_desc_init(&d, p->alg, &s->md, &s->md, p->alpha, 0.0f),
                 "eltwise backward descriptor", err);
        DN_CHECK(dn_pd_create(&pd, &d, s->fwd_pd), "eltwise backward primitive descriptor", err);
        mxk_status rc = dn_primitive(&s->bwd, pd, "eltwise backward primitive", err);
        dnnl_primitive_desc_destroy(pd);
        MXK_SDK_CHECK(rc);
    }
    dn_arg a[] = {{p->bwd == DN_ELT_FROM_SRC ? DNNL_ARG_SRC : DNNL_ARG_DST, &s->md, ref->data},
                  {DNNL_ARG_DIFF_DST, &s->md, args->out_grad[0]->data},
                  {DNNL_ARG_DIFF_SRC, &s->md, args->in_grad[0]->data}};
    return dn_execute(ctx, s->bwd, 3, a, err);
}

/**
 * Registers the Activation and LeakyReLU kernels. Tolerances against cpu-blas:
 * oneDNN's vectorised exp/tanh/erf differ from libm's by a few float32 ulps.
 */
mxk_status dn_register_eltwise(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const ops[] = {"Activation", "LeakyReLU"};
    mxk_status (*const parse[])(const mxk_attrs *, void **, mxk_error_sink *) = {act_parse,
                                                                                 lr_parse};
    for (int i = 0; i < 2; i++) {
        mxk_op_kernel_def k;
        mxk_sdk_kernel_def_init(&k);
        k.op_name = ops[i];
        k.parse_param = parse[i];
        k.free_param = elt_param_free;
        k.supports = elt_supports;
        k.create_state = elt_create_state;
        k.destroy_state = elt_destroy_state;
        k.forward = elt_forward;
        k.backward = elt_backward;
        k.crosscheck_rtol = 1e-5;
        k.crosscheck_atol = 2e-6;
        MXK_SDK_CHECK(dn_register_kernel(reg, &k, err));
    }
    return MXK_OK;
}
