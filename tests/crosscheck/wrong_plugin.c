/*
 * A test plugin with one deliberately wrong kernel for the cross-check's tests
 * (tests/crosscheck/test_crosscheck.c, the `mxk crosscheck` CLI tests): backend
 * "wrong" registers a CPU kernel for cpu-blas's Activation operator that computes
 * relu(x) * 1.01 forward (and the correct relu gradient backward), and a sigmoid
 * whose forward is right but whose backward reads the input `data`, which the
 * operator's backward dependency does not declare (it arrives with data NULL: the
 * kernel fails, naming it, where a real one would read garbage or crash). It parses
 * the operator's attributes itself (ABI 1.2 parse_param) and declines every other
 * act_type, so those run on the next backend.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "testing_plugin.h"

/** The factor the wrong forward multiplies relu by. */
#define WRONG_FACTOR 1.01f

/** The kernel's parameter objects: which activation (0 relu, 1 sigmoid). */
static const int wrong_acts[2] = {0, 1};

/**
 * parse_param: accepts act_type "relu" and "sigmoid"; any other is declined with
 * "attribute 'act_type': backend 'wrong' computes relu and sigmoid only".
 */
static mxk_status wrong_parse(const mxk_attrs *attrs, void **param, mxk_error_sink *err) {
    const char *act = mxk_sdk_attr_raw(attrs, "act_type");
    int sigmoid = act != NULL && strcmp(act, "sigmoid") == 0;
    if (act == NULL || (!sigmoid && strcmp(act, "relu") != 0))
        return mxk_sdk_error(
            err, MXK_ERR_UNSUPPORTED,
            "attribute 'act_type': backend 'wrong' computes relu and sigmoid only");
    *param = (void *)&wrong_acts[sigmoid];
    return MXK_OK;
}

/** free_param: the object is static. */
static void wrong_free(void *param) {}

/**
 * Forward: relu y = 1.01 * max(x, 0) (the bug), sigmoid y = 1 / (1 + e^-x)
 * (right); float32, WRITE / INPLACE / NULL requests.
 */
static mxk_status wrong_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_forward_args *args, mxk_error_sink *err) {
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    int sigmoid = *(const int *)param;
    const float *x = args->in_data[0]->data;
    float *y = args->out_data[0]->data;
    uint64_t n = mxk_sdk_shape_count(&args->in_data[0]->shape);
    for (uint64_t i = 0; i < n; i++)
        y[i] = sigmoid ? 1.0f / (1.0f + expf(-x[i])) : x[i] > 0.0f ? WRONG_FACTOR * x[i] : 0.0f;
    return MXK_OK;
}

/**
 * Backward: relu dx = dy where y > 0 (from its output, as cpu-blas); sigmoid reads
 * the undeclared input and fails with "backend 'wrong': sigmoid backward reads the
 * undeclared input 'data'" when it is absent (data NULL).
 */
static mxk_status wrong_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                                 const mxk_backward_args *args, mxk_error_sink *err) {
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const float *dy = args->out_grad[0]->data;
    const float *y = args->out_data[0]->data;
    float *dx = args->in_grad[0]->data;
    uint64_t n = mxk_sdk_shape_count(&args->out_data[0]->shape);
    if (*(const int *)param) {
        const float *x = args->in_data[0]->data;
        if (x == NULL)
            return mxk_sdk_error(err, MXK_ERR_INTERNAL,
                                 "backend 'wrong': sigmoid backward reads the undeclared input "
                                 "'data'");
        for (uint64_t i = 0; i < n; i++) {
            float s = 1.0f / (1.0f + expf(-x[i]));
            dx[i] = dy[i] * s * (1.0f - s);
        }
        return MXK_OK;
    }
    for (uint64_t i = 0; i < n; i++)
        dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    return MXK_OK;
}

MXK_TEST_PLUGIN_INFO("crosscheck-wrong",
                     "deliberately wrong Activation kernels for the cross-check's tests", 2,
                     MXK_PROVIDES_KERNELS)

/** Entry point 2: registers the kernel of Activation under backend "wrong". */
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_test_plugin_begin(args, MXK_SDK_HOST_SLOT_END(attr_key), err));
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "Activation";
    k.dev_type = MXK_DEV_CPU;
    k.backend = "wrong";
    k.forward = wrong_forward;
    k.backward = wrong_backward;
    k.parse_param = wrong_parse;
    k.free_param = wrong_free;
    return args->registrar->register_kernel(args->registrar, &k, err);
}
