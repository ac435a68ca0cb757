/*
 * cpu-blas plugin: Embedding.
 *
 * Semantics: MXNet src/operator/tensor/indexing_op.h (EmbeddingOpForward,
 * EmbeddingOpBackward) and indexing_op.cc.
 * Arguments data (indices stored as float32, any shape) and weight
 * (input_dim, output_dim); output data.shape + (output_dim,). Index
 * truncation: (int64) of the value, clipped into [0, input_dim - 1] (MXNet's
 * clip mode; sparse_grad is accepted, gradients are dense). Backward reads
 * out_grad and data: d weight scatter-adds dy rows (WRITE zeroes first);
 * a requested gradient of data is refused, as EmbeddingOpBackward does ("Embedding
 * layer doesn't support calculate data gradient"). Alias _npx_embedding.
 * dtype other than float32 is declined by the kernel (supports).
 */

#include "cb_tensor.h"
#include "mxk_index.h"

/** Parsed attributes. */
typedef struct emb_param {
    int64_t input_dim, output_dim;
    int32_t dtype;
    int32_t sparse_grad;
} emb_param;

static const char *const emb_args[] = {"data", "weight", NULL};
static const char *const emb_outs[] = {"output", NULL};
static const char *const emb_aliases[] = {"_npx_embedding", NULL};

/** Attribute schema (MXNet 1.9.1 EmbeddingParam). */
static const mxk_attr_def emb_attrs[] = {
    MXK_SDK_ATTR("input_dim", MXK_ATTR_INT, 1, NULL, NULL, "Vocabulary size of the input indices."),
    MXK_SDK_ATTR("output_dim", MXK_ATTR_INT, 1, NULL, NULL, "Dimension of the embedding vectors."),
    MXK_SDK_ATTR("dtype", MXK_ATTR_ENUM, 0, "float32", CBT_DTYPES, "Data type of weight."),
    MXK_SDK_ATTR("sparse_grad", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Row-sparse gradient of weight (computed dense here)."),
};

/** Parses the attributes; both dims >= 1. */
static mxk_status emb_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    emb_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "input_dim", 1, INT64_MAX, &p.input_dim, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "output_dim", 1, INT64_MAX, &p.output_dim, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "dtype", CBT_DTYPES, &p.dtype, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "sparse_grad", &p.sparse_grad, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** weight = (input_dim, output_dim); output = data.shape + (output_dim,). */
static mxk_status emb_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    const emb_param *p = param;
    if (num_in != 2 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "Embedding expects 2 arguments");
    mxk_shape w = mxk_sdk_shape2(p->input_dim, p->output_dim);
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[1], &w, "argument", "weight", err));
    if (in[0].ndim == 0)
        return MXK_OK;
    if (in[0].ndim >= MXK_MAX_NDIM)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'data': at most %d dims",
                             MXK_MAX_NDIM - 1);
    mxk_shape o = in[0];
    o.dims[o.ndim++] = p->output_dim;
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** weight and output of `dtype`; data (indices) defaults to it too. */
static mxk_status emb_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                 uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const emb_param *p = param;
    MXK_SDK_CHECK(mxk_sdk_type_assign(&in[1], p->dtype, "argument 'weight'", err));
    if (in[0] == MXK_DTYPE_UNKNOWN)
        in[0] = p->dtype;
    return mxk_sdk_type_assign(&out[0], p->dtype, "output 'output'", err);
}

/** Backward reads out_grad and the indices. */
static void emb_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                    uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                    uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[0] = 1;
}

/** The weight row of index value v: truncated, clipped into [0, rows) (take's clip mode). */
static int64_t emb_row(float v, int64_t rows) {
    return mxk_idx_pos((double)v, rows, MXK_IDX_CLIP);
}

/** y[i, :] (=|+=) weight[row(data[i]), :]. */
static mxk_status emb_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const emb_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, 2, 1, emb_infer_shape, param, 0, err));
    const float *x = cb_f32(args->in_data[0]), *w = cb_f32(args->in_data[1]);
    float *y = cb_f32(args->out_data[0]);
    uint64_t n = mxk_sdk_shape_count(&args->in_data[0]->shape);
    size_t d = (size_t)p->output_dim;
    for (uint64_t i = 0; i < n; i++)
        mxk_sdk_copy_f32(y + i * d, w + (size_t)emb_row(x[i], p->input_dim) * d, d, args->req[0]);
    return MXK_OK;
}

/** d weight: scatter-add of dy rows; a gradient of data is refused. */
static mxk_status emb_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const emb_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 2, 1, 1, err));
    if (args->req[0] != MXK_REQ_NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "gradient of 'data' requested: Embedding layer doesn't "
                             "support calculate data gradient");
    mxk_op_req req = args->req[1];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0], *xt = args->in_data[0];
    MXK_SDK_CHECK(cb_check_tensor(dyt, "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(xt, "argument 'data'", err));
    mxk_shape ws = mxk_sdk_shape2(p->input_dim, p->output_dim);
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[1], req, &ws, "weight", err));
    uint64_t n = mxk_sdk_shape_count(&xt->shape);
    size_t d = (size_t)p->output_dim;
    if (mxk_sdk_shape_count(&dyt->shape) != n * d)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'output': wrong size");
    float *dw = cb_f32(args->in_grad[1]);
    const float *x = cb_f32(xt), *dy = cb_f32(dyt);
    if (req != MXK_REQ_ADD)
        mxk_sdk_fill_f32(dw, 0.0f, (size_t)mxk_sdk_shape_count(&ws), MXK_REQ_WRITE);
    for (uint64_t i = 0; i < n; i++)
        mxk_sdk_copy_f32(dw + (size_t)emb_row(x[i], p->input_dim) * d, dy + i * d, d, MXK_REQ_ADD);
    return MXK_OK;
}

/** Registers Embedding and its CPU kernel. */
mxk_status cb_register_embedding(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.description = "Maps integer indices to rows of a weight matrix (input_dim, output_dim).";
    def.attrs = emb_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(emb_attrs);
    def.arguments = emb_args;
    def.outputs = emb_outs;
    def.parse_param = emb_parse;
    def.free_param = cbt_param_free;
    def.infer_shape = emb_infer_shape;
    def.infer_type = emb_infer_type;
    def.backward_dependency = emb_backward_dependency;
    def.aliases = emb_aliases;
    return cbt_register(reg, &def, "Embedding", emb_forward, emb_backward, 0, err);
}
