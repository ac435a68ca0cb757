/*
 * cuda plugin: FullyConnected on cuBLAS.
 *
 * Semantics are the operator's (cpu-blas op_fully_connected.c; upstream MXNet
 * src/operator/nn/fully_connected-inl.h, FCForward / FCBackward on
 * Tensor<gpu>). Data is viewed as an (M, K) matrix: flatten=True (N, x1..xn) as
 * (N, x1*..*xn), flatten=False (d1..dn-1, K) as (d1*..*dn-1, K); weight (H, K),
 * bias (H) (or (H, 1)), output (M, H):
 *   forward   y = b broadcast over the rows (or y += b for ADD), then
 *             y += x W^T (one GEMM, beta 1); without bias the GEMM's beta is
 *             the request's (0, or 1 for ADD)
 *   backward  dW = dy^T x, db = column sums of dy, then dx = dy W, each with
 *             its request's beta; dx may share memory with x (INPLACE): it is
 *             computed last, on the same stream.
 * Accepted: float32 arguments (cpu-blas's coverage); everything else is declined.
 */
#include "cu_blas_util.h"
#include "cu_kern_blas.h"

/** Parsed attributes (MXNet 1.9.1 FullyConnectedParam). */
typedef struct cu_fc_param {
    int64_t num_hidden;
    int32_t no_bias;
    int32_t flatten;
} cu_fc_param;

/** The matrix sizes of one call: data (M, K), weight (H, K), output (M, H). */
typedef struct cu_fc_dims {
    int64_t M, K, H;
} cu_fc_dims;

/** Parses num_hidden, no_bias, flatten. Errors: the mxk_sdk_attr_* getters', cu_param_dup's. */
static mxk_status fc_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_fc_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "num_hidden", &p.num_hidden, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "no_bias", &p.no_bias, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "flatten", &p.flatten, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** Number of arguments: 2 with no_bias, else 3. */
static uint32_t fc_num_args(const cu_fc_param *p) {
    return p->no_bias ? 2u : 3u;
}

/** The matrix view of data shape d (ndim >= 1; see the file comment). */
static cu_fc_dims fc_dims_of(const cu_fc_param *p, const mxk_shape *d) {
    cu_fc_dims m;
    m.M = (int64_t)(p->flatten ? (uint64_t)d->dims[0] : mxk_sdk_shape_prod(d, 0, d->ndim - 1));
    m.K =
        (int64_t)(p->flatten ? mxk_sdk_shape_prod(d, 1, d->ndim) : (uint64_t)d->dims[d->ndim - 1]);
    m.H = p->num_hidden;
    return m;
}

/** Accepts float32 arguments of the operator's count, data of at least one axis. */
static int32_t fc_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                           uint32_t num_in) {
    const cu_fc_param *p = param;
    return num_in == fc_num_args(p) && p->num_hidden >= 1 && in_shapes[0].ndim >= 1 &&
           cu_all_f32(in_types, num_in);
}

/**
 * Checks the call's data and weight (and the bias when `bias`: the forward's,
 * as the backward does not read it and gets no bias memory) against the view of
 * the data's shape, which it returns. Errors: cu_check_tensor's.
 */
static mxk_status fc_check_inputs(const cu_fc_param *p, const mxk_tensor *const *in, int bias,
                                  cu_fc_dims *m, mxk_error_sink *err) {
    if (in[0] == NULL || in[0]->shape.ndim < 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "cuda FullyConnected: the data is missing or has no axes");
    *m = fc_dims_of(p, &in[0]->shape);
    MXK_SDK_CHECK(cu_check_tensor(in[1], m->H * m->K, "FullyConnected", "the weight", err));
    if (bias)
        MXK_SDK_CHECK(cu_check_tensor(in[2], m->H, "FullyConnected", "the bias", err));
    return MXK_OK;
}

/** y (=|+=) x W^T + b: the bias broadcast, then one GEMM (see the file comment). */
static mxk_status fc_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_fc_param *p = param;
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    cu_fc_dims m;
    MXK_SDK_CHECK(fc_check_inputs(p, args->in_data, !p->no_bias, &m, err));
    MXK_SDK_CHECK(
        cu_check_tensor(args->out_data[0], m.M * m.H, "FullyConnected", "the output", err));
    if (m.M * m.H == 0)
        return MXK_OK;
    cublasHandle_t h;
    MXK_SDK_CHECK(cu_blas_get(ctx, &h, err));
    float *y = args->out_data[0]->data;
    cu_gemm_args g = {.ta = 0, .tb = 1, .m = m.M, .n = m.H, .k = m.K};
    g.a = args->in_data[0]->data, g.lda = m.K;
    g.b = args->in_data[1]->data, g.ldb = m.K;
    g.c = y, g.ldc = m.H;
    g.alpha = 1.0f, g.beta = mxk_sdk_req_beta(req), g.batch = 1;
    if (!p->no_bias) {
        CU_CHECK(cu_launch_bias_rows(y, args->in_data[2]->data, m.M, m.H, req == MXK_REQ_ADD,
                                     cu_stream(ctx)),
                 "FullyConnected bias", err);
        g.beta = 1.0f;
    }
    return cu_gemm(h, &g, "FullyConnected forward GEMM", err);
}

/**
 * Checks the requested gradients of a backward call against the view m.
 * Errors: cu_check_tensor's.
 */
static mxk_status fc_check_grads(const cu_fc_param *p, const mxk_backward_args *args,
                                 const cu_fc_dims *m, mxk_error_sink *err) {
    static const char *const names[] = {"the data gradient", "the weight gradient",
                                        "the bias gradient"};
    const int64_t sizes[] = {m->M * m->K, m->H * m->K, m->H};
    for (uint32_t i = 0; i < fc_num_args(p); i++)
        if (args->req[i] != MXK_REQ_NULL)
            MXK_SDK_CHECK(
                cu_check_tensor(args->in_grad[i], sizes[i], "FullyConnected", names[i], err));
    return MXK_OK;
}

/** dW = dy^T x, db = colsum(dy), then dx = dy W, each by its request (see the file comment). */
static mxk_status fc_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_fc_param *p = param;
    const mxk_op_req *req = args->req;
    int want_b = !p->no_bias && req[2] != MXK_REQ_NULL;
    if (req[0] == MXK_REQ_NULL && req[1] == MXK_REQ_NULL && !want_b)
        return MXK_OK;
    cu_fc_dims m;
    MXK_SDK_CHECK(fc_check_inputs(p, args->in_data, 0, &m, err));
    MXK_SDK_CHECK(cu_check_tensor(args->out_grad[0], m.M * m.H, "FullyConnected",
                                  "the output gradient", err));
    MXK_SDK_CHECK(fc_check_grads(p, args, &m, err));
    cublasHandle_t h;
    MXK_SDK_CHECK(cu_blas_get(ctx, &h, err));
    const float *dy = args->out_grad[0]->data;
    const float *x = args->in_data[0]->data, *w = args->in_data[1]->data;
    if (req[1] != MXK_REQ_NULL) { /* dW (H x K) = dy^T (H x M) x (M x K) */
        cu_gemm_args g = {.ta = 1, .tb = 0, .m = m.H, .n = m.K, .k = m.M};
        g.a = dy, g.lda = m.H, g.b = x, g.ldb = m.K;
        g.c = args->in_grad[1]->data, g.ldc = m.K;
        g.alpha = 1.0f, g.beta = mxk_sdk_req_beta(req[1]), g.batch = 1;
        MXK_SDK_CHECK(cu_gemm(h, &g, "FullyConnected weight gradient GEMM", err));
    }
    if (want_b)
        CU_CHECK(cu_launch_column_sum(args->in_grad[2]->data, dy, m.M, m.H, req[2] == MXK_REQ_ADD,
                                      cu_stream(ctx)),
                 "FullyConnected bias gradient", err);
    if (req[0] == MXK_REQ_NULL)
        return MXK_OK;
    /* dx (M x K) = dy (M x H) W (H x K), after dW has read x */
    cu_gemm_args g = {.ta = 0, .tb = 0, .m = m.M, .n = m.K, .k = m.H};
    g.a = dy, g.lda = m.H, g.b = w, g.ldb = m.K;
    g.c = args->in_grad[0]->data, g.ldc = m.K;
    g.alpha = 1.0f, g.beta = mxk_sdk_req_beta(req[0]), g.batch = 1;
    return cu_gemm(h, &g, "FullyConnected data gradient GEMM", err);
}

/**
 * Registers the FullyConnected kernel (it handles ADD itself). Tolerance against
 * cpu-blas: both sum K products in float32 in different orders (cuBLAS's
 * blocking, FMA), so outputs that cancel differ by more than a few ulps.
 */
mxk_status cu_register_fc(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "FullyConnected";
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.parse_param = fc_parse;
    k.free_param = cu_param_free;
    k.supports = fc_supports;
    k.forward = fc_forward;
    k.backward = fc_backward;
    k.crosscheck_rtol = 1e-4;
    k.crosscheck_atol = 1e-4;
    return cu_register_kernel(reg, &k, err);
}
