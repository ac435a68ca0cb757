/*
 * scaled_tanh: an example mxk plugin with one custom operator, built out of tree
 * against the mxk SDK (see README.md next to this file).
 *
 * ScaledTanh (LeCun's scaled hyperbolic tangent, "Efficient BackProp", LeCun,
 * Bottou, Orr, Mueller 1998, section 4.4):
 *
 *     y = alpha * tanh(beta * x)        alpha = 1.7159, beta = 2/3 by default
 *
 * chosen so that f(+-1) = +-1 and the effective gain is close to 1. The gradient
 * is taken from the output alone (as MXNet's tanh does, mshadow_op::tanh_grad):
 *
 *     dy/dx = alpha * beta * (1 - tanh^2(beta x)) = (beta / alpha) * (alpha^2 - y^2)
 *
 * so backward declares only out_grad and out_data as dependencies (the input may
 * be freed or overwritten after forward, which is what makes the in-place forward
 * useful), and it may run in place too (out_grad -> in_grad).
 *
 * Operator contract (abi/mxk_abi_op.h): one argument `data`, one output `output`
 * of the same shape; float32 only (type inference rejects other dtypes); one
 * CPU kernel that honours every write request (NULL / WRITE / INPLACE / ADD) and
 * therefore sets MXK_KERNEL_SUPPORTS_ADDTO.
 *
 * Threading: the operator callbacks are pure functions of their arguments, the
 * kernel keeps no state, so everything here may run concurrently.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "mxk_sdk.h"

/** Parsed attributes of ScaledTanh (owned by the operator: scaled_tanh_free_param). */
typedef struct scaled_tanh_param {
    float alpha; /**< output scale; non-zero (the gradient divides by it) */
    float beta;  /**< input scale */
} scaled_tanh_param;

static const char *const st_args[] = {"data", NULL};
static const char *const st_outs[] = {"output", NULL};

/** Attribute schema: the kernel validates names and types and fills the defaults. */
static const mxk_attr_def st_attrs[] = {
    MXK_SDK_ATTR("alpha", MXK_ATTR_FLOAT, 0, "1.7159", NULL,
                 "Output scale: y = alpha * tanh(beta * x). Must be finite and non-zero."),
    MXK_SDK_ATTR("beta", MXK_ATTR_FLOAT, 0, "0.6667", NULL,
                 "Input scale: y = alpha * tanh(beta * x). Must be finite."),
};

/**
 * Reads one float attribute (validated by the kernel, default filled in) and
 * checks that it is finite and representable as float32, and non-zero when
 * `nonzero`. Errors: MXK_ERR_INVALID_ARGUMENT naming the attribute.
 */
static mxk_status st_attr(const mxk_attrs *attrs, const char *key, int nonzero, float *out,
                          mxk_error_sink *err) {
    double v = 0.0;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, key, &v, err));
    if (!isfinite(v) || fabs(v) > FLT_MAX)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': must be a finite float32, got %g", key, v);
    if (nonzero && v == 0.0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': must be non-zero (the gradient is computed from "
                             "the output as (beta/alpha)*(alpha^2 - y^2))",
                             key);
    *out = (float)v;
    return MXK_OK;
}

/**
 * parse_param: alpha and beta into a malloc'ed scaled_tanh_param stored in
 * *param (freed by scaled_tanh_free_param). Errors: see st_attr;
 * MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status st_parse(const mxk_attrs *attrs, void **param, mxk_error_sink *err) {
    scaled_tanh_param p;
    MXK_SDK_CHECK(st_attr(attrs, "alpha", 1, &p.alpha, err));
    MXK_SDK_CHECK(st_attr(attrs, "beta", 0, &p.beta, err));
    scaled_tanh_param *q = malloc(sizeof *q);
    if (q == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "out of memory");
    *q = p;
    *param = q;
    return MXK_OK;
}

/** free_param: frees a parameter object from st_parse. */
static void st_free_param(void *param) {
    free(param);
}

/**
 * infer_shape: element-wise, so data and output have one shape; whichever is
 * known fills the other (also backwards). Mismatch: MXK_ERR_SHAPE naming the slot.
 */
static mxk_status st_infer_shape(const void *param, mxk_shape *in_shapes, uint32_t num_in,
                                 mxk_shape *out_shapes, uint32_t num_out, mxk_shape *aux_shapes,
                                 uint32_t num_aux, mxk_error_sink *err) {
    if (num_in != 1 || num_out != 1 || num_aux != 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "expected 1 argument and 1 output, got %u and %u", (unsigned)num_in,
                             (unsigned)num_out);
    return mxk_sdk_infer_shape_same(in_shapes, num_in, st_args, out_shapes, num_out, st_outs, err);
}

/** infer_type: float32 only; another known dtype is MXK_ERR_TYPE naming the slot. */
static mxk_status st_infer_type(const void *param, int32_t *in_types, uint32_t num_in,
                                int32_t *out_types, uint32_t num_out, int32_t *aux_types,
                                uint32_t num_aux, mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in_types, num_in, st_args, out_types, num_out,
                                      st_outs, aux_types, num_aux, err);
}

/** backward_dependency: out_grad[0] and out_data[0] only (the gradient comes from y). */
static void st_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_out_data[0] = 1;
}

/** forward_inplace: data (input 0) may share memory with output 0. */
static uint32_t st_forward_inplace(const void *param, mxk_inplace_pair *pairs, uint32_t capacity) {
    uint32_t n = 0;
    mxk_sdk_inplace_add(pairs, capacity, &n, 0, 0, 0);
    return n;
}

/** backward_inplace: out_grad[0] (backward input 0) may share memory with in_grad[0]. */
static uint32_t st_backward_inplace(const void *param, mxk_inplace_pair *pairs, uint32_t capacity) {
    uint32_t n = 0;
    mxk_sdk_inplace_add(pairs, capacity, &n, 0, 0, 0);
    return n;
}

/**
 * Checks that tensor `t` is present, float32 and, when `expect` is not NULL,
 * holds *expect elements; stores its element count in *count when count is not
 * NULL. `what` names the tensor in messages. Errors: MXK_ERR_INVALID_ARGUMENT
 * (absent), MXK_ERR_TYPE, MXK_ERR_SHAPE.
 */
static mxk_status st_check_tensor(const mxk_tensor *t, const char *what, const uint64_t *expect,
                                  uint64_t *count, mxk_error_sink *err) {
    if (t == NULL || t->data == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s is missing", what);
    if (t->dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "%s: expected float32, got %s", what,
                             mxk_sdk_dtype_name(t->dtype));
    uint64_t c = mxk_sdk_shape_count(&t->shape);
    if (expect != NULL && c != *expect) {
        char s[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: shape %s has %llu elements, expected %llu",
                             what, mxk_sdk_shape_format(&t->shape, s, sizeof s),
                             (unsigned long long)c, (unsigned long long)*expect);
    }
    if (count != NULL)
        *count = c;
    return MXK_OK;
}

/**
 * Forward kernel (CPU, float32): output = alpha * tanh(beta * data) through
 * req[0]: NULL writes nothing, WRITE and INPLACE overwrite (INPLACE: output is
 * data's memory; each element is read before it is written), ADD accumulates.
 * Errors: missing tensors, wrong dtype or element count (see st_check_tensor).
 */
static mxk_status st_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const scaled_tanh_param *p = param;
    if (args->num_in != 1 || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 input and 1 output");
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    uint64_t n = 0;
    MXK_SDK_CHECK(st_check_tensor(args->in_data[0], "argument 'data'", NULL, &n, err));
    MXK_SDK_CHECK(st_check_tensor(args->out_data[0], "output 'output'", &n, NULL, err));
    const float *x = args->in_data[0]->data;
    float *y = args->out_data[0]->data; /* may equal x (in place) */
    const float alpha = p->alpha, beta = p->beta;
    if (req == MXK_REQ_ADD) {
        for (uint64_t i = 0; i < n; i++)
            y[i] += alpha * tanhf(beta * x[i]);
    } else {
        for (uint64_t i = 0; i < n; i++)
            y[i] = alpha * tanhf(beta * x[i]);
    }
    return MXK_OK;
}

/**
 * Backward kernel (CPU, float32): in_grad = out_grad * (beta/alpha) * (alpha^2 -
 * output^2) through req[0] (NULL: nothing; WRITE/INPLACE: overwrite, INPLACE
 * means in_grad is out_grad's memory; ADD: accumulate). Reads only out_grad[0]
 * and out_data[0]; in_data[0] arrives with data == NULL (not declared).
 * Errors: missing tensors, wrong dtype or element count.
 */
static mxk_status st_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const scaled_tanh_param *p = param;
    if (args->num_out_grad != 1 || args->num_in != 1 || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "expected 1 output gradient, 1 input and 1 output");
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    uint64_t n = 0;
    MXK_SDK_CHECK(st_check_tensor(args->out_grad[0], "gradient of output 'output'", NULL, &n, err));
    MXK_SDK_CHECK(st_check_tensor(args->out_data[0], "output 'output'", &n, NULL, err));
    MXK_SDK_CHECK(st_check_tensor(args->in_grad[0], "gradient of argument 'data'", &n, NULL, err));
    const float *dy = args->out_grad[0]->data;
    const float *y = args->out_data[0]->data;
    float *dx = args->in_grad[0]->data; /* may equal dy (in place) */
    const float k = p->beta / p->alpha, a2 = p->alpha * p->alpha;
    if (req == MXK_REQ_ADD) {
        for (uint64_t i = 0; i < n; i++)
            dx[i] += dy[i] * k * (a2 - y[i] * y[i]);
    } else {
        for (uint64_t i = 0; i < n; i++)
            dx[i] = dy[i] * k * (a2 - y[i] * y[i]);
    }
    return MXK_OK;
}

/** Static description of the plugin (mxk_plugin_get_info). */
static const mxk_plugin_info st_info = {
    .struct_size = sizeof(mxk_plugin_info),
    .abi_major = MXK_ABI_MAJOR,
    .abi_minor = MXK_ABI_MINOR,
    .min_host_minor = 0,
    .name = "scaled_tanh",
    .version = "0.1.0",
    .description = "Example custom operator ScaledTanh (y = alpha * tanh(beta * x)), "
                   "built out of tree with the mxk SDK",
    .provides = MXK_PROVIDES_OPERATORS | MXK_PROVIDES_KERNELS,
};

/**
 * Entry point 1 (abi/mxk_plugin.h): returns the plugin's constant description.
 * Side-effect free: the kernel calls it before deciding to load the plugin.
 */
MXK_PLUGIN_EXPORT const mxk_plugin_info *mxk_plugin_get_info(void) {
    return &st_info;
}

/**
 * Entry point 2: checks the host table (MXK_ERR_ABI when too small for the slots
 * used here), stores it for the SDK helpers, rejects options (this plugin takes
 * none: MXK_ERR_INVALID_ARGUMENT naming the first one), then registers the
 * operator ScaledTanh and its CPU kernel. The registrar copies the definitions,
 * so they may live on this stack; on any error the kernel discards what was
 * registered and records the plugin as rejected with the message.
 */
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    if (args == NULL || args->host == NULL || args->registrar == NULL)
        return MXK_ERR_INVALID_ARGUMENT;
    MXK_SDK_CHECK(mxk_sdk_check_host(args->host, MXK_SDK_HOST_SLOT_END(attr_key), err));
    mxk_sdk_set_host(args->host);
    const mxk_host_api *host = args->host;
    if (args->options != NULL && host->attr_count(args->options) > 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "unknown option '%s' in [options]; scaled_tanh takes no options",
                             host->attr_key(args->options, 0));

    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = "ScaledTanh";
    def.description = "LeCun's scaled tanh: y = alpha * tanh(beta * x), element-wise "
                      "(alpha = 1.7159, beta = 0.6667 by default).";
    def.attrs = st_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(st_attrs);
    def.arguments = st_args;
    def.outputs = st_outs;
    def.parse_param = st_parse;
    def.free_param = st_free_param;
    def.infer_shape = st_infer_shape;
    def.infer_type = st_infer_type;
    def.backward_dependency = st_backward_dependency;
    def.forward_inplace = st_forward_inplace;
    def.backward_inplace = st_backward_inplace;
    mxk_registrar *reg = args->registrar;
    MXK_SDK_CHECK(reg->register_op(reg, &def, err));

    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "ScaledTanh";
    k.dev_type = MXK_DEV_CPU;
    k.backend = NULL; /* the plugin's name: "scaled_tanh" */
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.forward = st_forward;
    k.backward = st_backward;
    return reg->register_kernel(reg, &k, err);
}
