/*
 * cuda plugin: GPU kernels of sgd_update, sgd_mom_update and adam_update (defined
 * by cpu-blas, op_optimizer.c): one fused pass per call (cu_kern_optimizer.cu)
 * with the per-element rules of plugins/common/mxk_optimizer.h.
 *
 * Semantics: MXNet src/operator/optimizer_op-inl.h and optimizer_op.cu. Arguments
 * weight and grad; the states (mom; mean, var) are auxiliary states updated in
 * place; the new weight goes to the output by its request (ADD included), normally
 * in place over weight. lazy_update has no effect on dense arrays (as cpu-blas).
 * float32 only, as the operator.
 */
#include <stdlib.h>

#include "cu_kern_optimizer.h"
#include "cuda_plugin.h"

/** The kernel's parameters of an update operator. */
typedef struct cu_opt_param {
    int32_t rule; /**< enum cu_opt_rule */
    mxk_opt_hparams h;
} cu_opt_param;

/** Reads float attribute `key` into *v when set (else keeps the default in *v). */
static mxk_status opt_get(const mxk_attrs *attrs, const char *key, float *v, mxk_error_sink *err) {
    double d = *v;
    if (mxk_sdk_attr_is_set(attrs, key))
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, key, &d, err));
    *v = (float)d;
    return MXK_OK;
}

/** Parses the hyper-parameters of rule `rule` (the operator's defaults when absent). */
static mxk_status opt_parse(const mxk_attrs *attrs, int32_t rule, void **out, mxk_error_sink *err) {
    cu_opt_param p = {.rule = rule,
                      .h = {.lr = 0.0f,
                            .wd = 0.0f,
                            .rescale_grad = 1.0f,
                            .clip_gradient = -1.0f,
                            .momentum = 0.0f,
                            .beta1 = 0.9f,
                            .beta2 = 0.999f,
                            .epsilon = 1e-8f}};
    MXK_SDK_CHECK(opt_get(attrs, "lr", &p.h.lr, err));
    MXK_SDK_CHECK(opt_get(attrs, "wd", &p.h.wd, err));
    MXK_SDK_CHECK(opt_get(attrs, "rescale_grad", &p.h.rescale_grad, err));
    MXK_SDK_CHECK(opt_get(attrs, "clip_gradient", &p.h.clip_gradient, err));
    MXK_SDK_CHECK(opt_get(attrs, "momentum", &p.h.momentum, err));
    MXK_SDK_CHECK(opt_get(attrs, "beta1", &p.h.beta1, err));
    MXK_SDK_CHECK(opt_get(attrs, "beta2", &p.h.beta2, err));
    MXK_SDK_CHECK(opt_get(attrs, "epsilon", &p.h.epsilon, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/* One parse_param per rule. */
CU_PARSE_AS(sgd_parse, opt_parse, CU_OPT_SGD)
CU_PARSE_AS(sgd_mom_parse, opt_parse, CU_OPT_SGD_MOM)
CU_PARSE_AS(adam_parse, opt_parse, CU_OPT_ADAM)

/** One fused update; checks the counts and sizes of the states. */
static mxk_status opt_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_opt_param *p = param;
    uint32_t naux = p->rule == CU_OPT_ADAM ? 2 : p->rule == CU_OPT_SGD_MOM ? 1 : 0;
    if (args->num_in != 2 || args->num_out != 1 || args->num_aux != naux)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "expected 2 arguments, 1 output and %u auxiliary states, got %u, %u "
                             "and %u",
                             (unsigned)naux, (unsigned)args->num_in, (unsigned)args->num_out,
                             (unsigned)args->num_aux);
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    uint64_t n = mxk_sdk_shape_count(&args->in_data[0]->shape);
    if (mxk_sdk_shape_count(&args->in_data[1]->shape) != n)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'grad': not the size of 'weight'");
    for (uint32_t i = 0; i < naux; i++)
        if (mxk_sdk_shape_count(&args->aux[i]->shape) != n)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "auxiliary state %u: not the size of 'weight'",
                                 (unsigned)i);
    if (n == 0)
        return MXK_OK;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_optimizer(p->rule, p->h, args->in_data[0]->data, args->in_data[1]->data,
                                 naux > 0 ? args->aux[0]->data : NULL,
                                 naux > 1 ? args->aux[1]->data : NULL, args->out_data[0]->data,
                                 args->req[0], n, cu_stream(ctx)),
             "optimizer update kernel", err);
    return MXK_OK;
}

mxk_status cu_register_optimizer(mxk_registrar *reg, mxk_error_sink *err) {
    static const cu_op_entry ops[] = {
        {"sgd_update", sgd_parse}, {"sgd_mom_update", sgd_mom_parse}, {"adam_update", adam_parse}};
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.supports = cu_supports_float32;
    k.forward = opt_forward;
    return cu_register_each(reg, &k, ops, MXK_SDK_COUNTOF(ops), err);
}
