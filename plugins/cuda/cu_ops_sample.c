/*
 * cuda plugin: GPU kernels of _sample_multinomial and _shuffle (defined by
 * cpu-blas, op_math_sample.c).
 *
 * Semantics: MXNet src/operator/random/sample_multinomial_op.h / .cu and
 * src/operator/random/shuffle_op.cu, as cpu-blas computes them; each call reserves
 * the Philox blocks cpu-blas's kernel consumes (one per multinomial sample; one per
 * two Fisher-Yates steps), so a seed gives cpu-blas's indices and permutation
 * (cu_kern_sample.cu). _sample_multinomial: data float32, indices in the dtype
 * attribute; with get_prob the backward scatters d prob / p into d data (atomics).
 * An index outside [0, k) met by the backward is skipped on the GPU (cpu-blas
 * reports it). _shuffle: any dtype, copied (unless in place) then permuted on one
 * thread block; not differentiable; ADD is refused ("Shuffle does not support
 * AddTo", as cpu-blas). _sample_multinomial does not handle ADD (the executor
 * writes into a temporary and adds).
 */
#include <stdlib.h>

#include "cu_random.h"
#include "mxk_random_attr.h"

/** The kernel's parameters of _sample_multinomial. */
typedef struct cu_mn_param {
    int32_t get_prob; /**< second output: log probabilities */
} cu_mn_param;

/** Parses get_prob (shape and dtype are the outputs'). */
static mxk_status mn_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_mn_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "get_prob", &p.get_prob, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** Draws the indices (and their log probabilities). */
static mxk_status mn_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_mn_param *p = param;
    if (args->num_in != 1 || args->num_out != (p->get_prob ? 2u : 1u))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "_sample_multinomial: expected 1 argument and %u outputs",
                             p->get_prob ? 2u : 1u);
    const mxk_tensor *xt = args->in_data[0], *yt = args->out_data[0];
    uint64_t n = 0, k = 0, m = 0;
    MXK_SDK_CHECK(mxk_multinomial_sizes(&xt->shape, &yt->shape, &n, &k, &m, err));
    float *prob = p->get_prob && args->req[1] != MXK_REQ_NULL ? args->out_data[1]->data : NULL;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    mxk_random *rng = cu_random_stream(ctx, "_sample_multinomial", err);
    if (rng == NULL)
        return MXK_ERR_STATE;
    cu_philox_pos pos = cu_random_reserve(rng, n * m);
    void *idx = args->req[0] != MXK_REQ_NULL ? yt->data : NULL;
    if (n * m == 0 || (idx == NULL && prob == NULL))
        return MXK_OK;
    CU_CHECK(cu_launch_multinomial(xt->data, idx, yt->dtype, prob, n, k, m, pos, cu_stream(ctx)),
             "_sample_multinomial kernel", err);
    return MXK_OK;
}

/** d data: zero, plus the scattered d prob / p with get_prob. */
static mxk_status mn_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_mn_param *p = param;
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dx = args->in_grad[0];
    uint64_t nx = mxk_sdk_shape_count(&dx->shape);
    MXK_SDK_CHECK(cu_enter(ctx, err));
    cudaStream_t st = cu_stream(ctx);
    CU_CHECK(cudaMemsetAsync(dx->data, 0, nx * sizeof(float), st), "cudaMemsetAsync", err);
    if (!p->get_prob)
        return MXK_OK;
    const mxk_tensor *gp = args->out_grad[1], *xt = args->in_data[0], *yt = args->out_data[0];
    uint64_t n = 0, k = 0, m = 0;
    MXK_SDK_CHECK(mxk_multinomial_sizes(&xt->shape, &yt->shape, &n, &k, &m, err));
    if (mxk_sdk_shape_count(&gp->shape) != n * m)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'prob': expected %llu elements",
                             (unsigned long long)(n * m));
    if (n * m == 0)
        return MXK_OK;
    CU_CHECK(cu_launch_multinomial_backward(xt->data, yt->data, yt->dtype, gp->data, dx->data, n, k,
                                            m, st),
             "_sample_multinomial backward kernel", err);
    return MXK_OK;
}

/** _shuffle: copies data (unless in place) and permutes its rows; ADD is refused. */
static mxk_status sh_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    if (args->num_in != 1 || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "_shuffle: expected 1 argument");
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *xt = args->in_data[0], *yt = args->out_data[0];
    MXK_SDK_CHECK(mxk_shuffle_check(req, xt, yt, err));
    uint64_t rows = mxk_shuffle_rows(&xt->shape);
    uint64_t bytes = mxk_sdk_shape_count(&xt->shape) * mxk_sdk_dtype_size(xt->dtype);
    MXK_SDK_CHECK(cu_enter(ctx, err));
    mxk_random *rng = cu_random_stream(ctx, "_shuffle", err);
    if (rng == NULL)
        return MXK_ERR_STATE;
    cu_philox_pos pos = cu_random_reserve(rng, rows / 2); /* ceil((rows - 1) / 2) steps' pairs */
    cudaStream_t st = cu_stream(ctx);
    if (yt->data != xt->data && bytes > 0)
        CU_CHECK(cudaMemcpyAsync(yt->data, xt->data, bytes, cudaMemcpyDeviceToDevice, st),
                 "cudaMemcpyAsync", err);
    if (rows < 2 || bytes == 0)
        return MXK_OK;
    CU_CHECK(cu_launch_shuffle(yt->data, rows, bytes / rows, pos, st), "_shuffle kernel", err);
    return MXK_OK;
}

mxk_status cu_register_sample(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "_sample_multinomial";
    k.parse_param = mn_parse;
    k.free_param = cu_param_free;
    k.supports = cu_supports_float32;
    k.forward = mn_forward;
    k.backward = mn_backward;
    MXK_SDK_CHECK(cu_register_kernel(reg, &k, err));
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "_shuffle";
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO; /* so ADD is refused, as cpu-blas does */
    k.forward = sh_forward;
    return cu_register_kernel(reg, &k, err);
}
