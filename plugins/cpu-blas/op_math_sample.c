/*
 * cpu-blas plugin: random operators with an input: _sample_multinomial (alias
 * sample_multinomial) and _shuffle (aliases shuffle, _npi_shuffle).
 *
 * Semantics: MXNet src/operator/random/sample_multinomial_op.h / .cc and
 * src/operator/random/shuffle_op.cc.
 *   _sample_multinomial: data (..., K) holds K probabilities per distribution
 *     (float32; they should sum to 1). Attributes shape (default (): one
 *     sample), get_prob (False), dtype uint8|int32|float16|float32|float64
 *     (default int32). Output `output` (`output0` with get_prob) of shape data.shape[:-1] + shape
 * (1-D data: shape, or (1,)) holds indices: the first k whose cumulative probability (summed in
 * double, compared in float32) reaches a uniform [0, 1) draw (clipped to K - 1 when rounding leaves
 * the draw above the total). With get_prob, a second visible output `output1` (float32, same shape)
 * holds log(data[k]); its gradient flows to data as d data[k] += d prob / data[k] (upstream's
 * _backward_sample_multinomial); without get_prob the gradient is zero. _shuffle: the rows (first
 * axis) of data (any dtype) in a uniformly random order (Fisher-Yates with 64 random bits per
 * step); not differentiable; may run in place; the ADD request is refused ("Shuffle does not
 * support AddTo", as upstream). Random numbers come from the operator's random resource.
 */
#include <math.h>
#include <string.h>

#include "cb_tensor.h"
#include "mxk_random.h"
#include "mxk_random_attr.h"
#include "op_math_random.h"

/** Parsed attributes of _sample_multinomial. */
typedef struct mn_param {
    mxk_shape shape;  /**< samples per distribution (ndim 0: one) */
    int32_t get_prob; /**< second output: log probabilities */
    int32_t dtype;    /**< dtype code of the indices */
} mn_param;

#define MN_DTYPES "uint8|int32|float16|float32|float64"

/** Attribute schema (SampleMultinomialParam). */
static const mxk_attr_def mn_attrs[] = {
    MXK_SDK_ATTR("shape", MXK_ATTR_SHAPE, 0, "()", NULL,
                 "Shape to be sampled from each random distribution."),
    MXK_SDK_ATTR("get_prob", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Whether to also return the log probability of the sampled result."),
    MXK_SDK_ATTR("dtype", MXK_ATTR_ENUM, 0, "int32", MN_DTYPES, "DType of the output."),
};
static const char *const mn_args[] = {"data", NULL};

/** Parses shape, get_prob, dtype. */
static mxk_status mn_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    static const int32_t codes[] = {MXK_UINT8, MXK_INT32, MXK_FLOAT16, MXK_FLOAT32, MXK_FLOAT64};
    mn_param p = {0};
    int32_t dt = 1;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "shape", &p.shape, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "get_prob", &p.get_prob, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "dtype", MN_DTYPES, &dt, err));
    for (int32_t i = 0; i < p.shape.ndim; i++)
        if (p.shape.dims[i] < 1)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "attribute 'shape': dims must be >= 1");
    p.dtype = codes[dt];
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Outputs: output, or output0 and output1 with get_prob (nnvm's default names). */
static mxk_status mn_list_outputs(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    if (!((const mn_param *)param)->get_prob)
        return mxk_sdk_host()->name_list_add(out, "output", err);
    MXK_SDK_CHECK(mxk_sdk_host()->name_list_add(out, "output0", err));
    return mxk_sdk_host()->name_list_add(out, "output1", err);
}

/** data.shape[:-1] + shape (1-D data: shape, or (1,)) for every output. */
static mxk_status mn_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const mn_param *p = param;
    if (in[0].ndim == 0)
        return MXK_OK;
    mxk_shape o = mxk_sdk_shape_unknown();
    for (int32_t i = 0; i < in[0].ndim - 1; i++)
        o.dims[o.ndim++] = in[0].dims[i];
    if (o.ndim + p->shape.ndim > MXK_MAX_NDIM)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "output: more than %d dims", MXK_MAX_NDIM);
    for (int32_t i = 0; i < p->shape.ndim; i++)
        o.dims[o.ndim++] = p->shape.dims[i];
    if (o.ndim == 0)
        o = mxk_sdk_shape1(1);
    for (uint32_t k = 0; k < num_out; k++)
        MXK_SDK_CHECK(
            mxk_sdk_shape_assign_named(&out[k], &o, "output", k ? "output1" : "output0", err));
    return MXK_OK;
}

/** data float32; the indices the dtype attribute; the log probabilities float32. */
static mxk_status mn_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_sdk_type_assign(&in[0], MXK_FLOAT32, "argument 'data'", err));
    MXK_SDK_CHECK(
        mxk_sdk_type_assign(&out[0], ((const mn_param *)param)->dtype, "output 'output'", err));
    return num_out > 1 ? mxk_sdk_type_assign(&out[1], MXK_FLOAT32, "output 'output1'", err)
                       : MXK_OK;
}

/** With get_prob: output1's gradient, data and the sampled indices; else nothing. */
static void mn_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    if (!((const mn_param *)param)->get_prob)
        return;
    need_out_grad[1] = 1;
    need_in_data[0] = 1;
    need_out_data[0] = 1;
}

/** Draws the indices (and their log probabilities). */
static mxk_status mn_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const mn_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, 1, p->get_prob ? 2 : 1, mn_infer_shape, param, 1, err));
    MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'data'", err));
    const mxk_tensor *yt = args->out_data[0];
    if (yt->dtype != p->dtype ||
        (p->get_prob && args->req[1] != MXK_REQ_NULL && args->out_data[1]->dtype != MXK_FLOAT32))
        return mxk_sdk_error(err, MXK_ERR_TYPE, "outputs: expected %s and float32",
                             mxk_sdk_dtype_name(p->dtype));
    mxk_random *rng = cbt_random(ctx);
    if (rng == NULL)
        return mxk_sdk_error(err, MXK_ERR_STATE, "no random resource granted");
    uint64_t n, k, m;
    MXK_SDK_CHECK(mxk_multinomial_sizes(&args->in_data[0]->shape, &yt->shape, &n, &k, &m, err));
    const float *dist = cb_f32(args->in_data[0]);
    float *prob = p->get_prob && args->req[1] != MXK_REQ_NULL ? cb_f32(args->out_data[1]) : NULL;
    for (uint64_t i = 0; i < n; i++) {
        const float *d = dist + i * k;
        for (uint64_t j = 0; j < m; j++) {
            float u;
            mxk_sdk_host()->random_uniform(rng, &u, 1, 0.0f, 1.0f);
            uint64_t c = mxk_random_multinomial(d, k, u);
            cbt_store(yt->data, yt->dtype, i * m + j, (double)c, args->req[0]);
            if (prob != NULL)
                mxk_sdk_assign_f32(&prob[i * m + j], logf(d[c]), args->req[1]);
        }
    }
    return MXK_OK;
}

/** d data[k] (=|+=) sum of d output1 / data[k] over the samples that drew k; zero without get_prob.
 */
static mxk_status mn_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const mn_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, p->get_prob ? 2 : 1, p->get_prob ? 2 : 1, err));
    mxk_op_req req = args->req[0];
    if (!p->get_prob || req == MXK_REQ_NULL)
        return cbt_zero_grad(args->in_grad[0], req, "data", err);
    const mxk_tensor *gp = args->out_grad[1], *xt = args->in_data[0], *yt = args->out_data[0];
    MXK_SDK_CHECK(cb_check_tensor(gp, "gradient of 'output1'", err));
    MXK_SDK_CHECK(cb_check_tensor(xt, "argument 'data'", err));
    MXK_SDK_CHECK(cbt_check_any(yt, "output 'output0'", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, &xt->shape, "data", err));
    uint64_t n, k, m;
    MXK_SDK_CHECK(mxk_multinomial_sizes(&xt->shape, &yt->shape, &n, &k, &m, err));
    if (mxk_sdk_shape_count(&gp->shape) != n * m)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'prob': expected %llu elements",
                             (unsigned long long)(n * m));
    float *dx = cb_f32(args->in_grad[0]);
    const float *dist = cb_f32(xt), *g = cb_f32(gp);
    if (req != MXK_REQ_ADD)
        mxk_sdk_fill_f32(dx, 0.0f, (size_t)(n * k), MXK_REQ_WRITE);
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t j = 0; j < m; j++) {
            double c = cbt_load(yt->data, yt->dtype, i * m + j);
            if (!(c >= 0.0 && c < (double)k))
                return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                     "output 'output0': index %g outside [0, %llu)", c,
                                     (unsigned long long)k);
            uint64_t e = i * k + (uint64_t)c;
            dx[e] += g[i * m + j] / dist[e];
        }
    return MXK_OK;
}

/** Output = data shape and dtype (any dtype). */
static mxk_status sh_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    if (in[0] < 0 && out[0] < 0)
        in[0] = MXK_FLOAT32;
    if (in[0] < 0)
        in[0] = out[0];
    return mxk_sdk_type_assign(&out[0], in[0], "output 'output'", err);
}

/** _shuffle's forward: copies data (unless in place) and permutes its rows. */
static mxk_status sh_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cbt_check_forward(args, 1, 1, cbt_infer_shape_same, param, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *xt = args->in_data[0], *yt = args->out_data[0];
    MXK_SDK_CHECK(mxk_shuffle_check(req, xt, yt, err));
    mxk_random *rng = cbt_random(ctx);
    if (rng == NULL)
        return mxk_sdk_error(err, MXK_ERR_STATE, "no random resource granted");
    uint64_t rows = mxk_shuffle_rows(&xt->shape);
    size_t row_bytes =
        rows ? (size_t)(mxk_sdk_shape_count(&xt->shape) / rows) * mxk_sdk_dtype_size(xt->dtype) : 0;
    unsigned char *y = yt->data;
    if (y != xt->data && rows)
        memcpy(y, xt->data, row_bytes * rows);
    uint64_t bits[256];
    for (uint64_t i = rows; i > 1; i--) { /* row i - 1 swaps with a row in [0, i) */
        uint64_t t = (rows - i) % 256;
        if (t == 0)
            cbm_random_bits(rng, bits, i - 1 < 256 ? i - 1 : 256);
        uint64_t j = bits[t] % i;
        unsigned char *a = y + (i - 1) * row_bytes, *b = y + j * row_bytes;
        for (size_t e = 0; e < row_bytes && j != i - 1; e++) {
            unsigned char v = a[e];
            a[e] = b[e];
            b[e] = v;
        }
    }
    return MXK_OK;
}

/** _shuffle is not differentiable (upstream registers no gradient). */
static int32_t sh_no_gradient(const void *param) {
    return 1;
}

/** Registers _sample_multinomial and _shuffle (with MXNet's aliases) and their CPU kernels. */
mxk_status cb_register_math_sample(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const mn_aliases[] = {"sample_multinomial", NULL};
    static const char *const sh_aliases[] = {"shuffle", "_npi_shuffle", NULL};
    mxk_op_def def;
    cbt_def_init(&def, "Samples indices from multinomial distributions (the last axis of data).",
                 mn_attrs, MXK_SDK_COUNTOF(mn_attrs), mn_args, mn_parse);
    def.aliases = mn_aliases;
    def.outputs = NULL;
    def.list_outputs = mn_list_outputs;
    def.infer_shape = mn_infer_shape;
    def.infer_type = mn_infer_type;
    def.backward_dependency = mn_backward_dependency;
    def.forward_resources = cbt_resources_random;
    MXK_SDK_CHECK(cbt_register(reg, &def, "_sample_multinomial", mn_forward, mn_backward, 1, err));

    mxk_sdk_op_def_init(&def);
    def.description = "Shuffles the rows (first axis) of the data in a random order.";
    def.aliases = sh_aliases;
    def.arguments = mn_args;
    def.infer_shape = cbt_infer_shape_same;
    def.infer_type = sh_infer_type;
    def.forward_resources = cbt_resources_random;
    def.forward_inplace = cbt_inplace_00;
    def.no_gradient = sh_no_gradient;
    return cbt_register(reg, &def, "_shuffle", sh_forward, NULL, 1, err);
}
