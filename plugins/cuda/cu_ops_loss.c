/*
 * cuda plugin: GPU kernels of SoftmaxOutput and softmax_cross_entropy (defined by
 * cpu-blas, op_softmax_output.c and op_norm_loss.c).
 *
 * Semantics: MXNet src/operator/softmax_output-inl.h (softmax_output.cu) and
 * src/operator/loss_binary_op-inl.h, as cpu-blas computes them (see its file
 * comments): SoftmaxOutput's softmax over groups of k elements of stride inner
 * (default: rows of (N, size/N); preserve_shape: the last axis; multi_output:
 * axis 1), its backward the cross-entropy gradient with probability labels (label
 * of data's shape) or class labels (grad_scale, ignore_label / use_ignore,
 * normalization null / batch / valid, smooth_alpha, out_grad=True multiplying by
 * the output as upstream 1.9.1); softmax_cross_entropy's summed loss and its
 * gradient out_grad[0] (softmax - onehot). The valid-label count and the loss sum
 * live in a device word of the kernel's state (create_state), so nothing
 * synchronises. A softmax_cross_entropy label outside [0, K) gives NaN on the GPU
 * (cpu-blas reports an error, which needs the labels on the host). float32 only,
 * as the operators; every request is honoured (ADD included).
 */
#include <stdlib.h>

#include "cu_kern_loss.h"
#include "cuda_plugin.h"

/** SoftmaxOutput's normalization values, in the order of the operator's enum string. */
enum cu_smo_norm { CU_SMO_NULL, CU_SMO_BATCH, CU_SMO_VALID };

/** The kernel's parameters of SoftmaxOutput (softmax_cross_entropy has none: NULL). */
typedef struct cu_smo_param {
    double grad_scale, ignore_label, smooth_alpha;
    int32_t multi_output, use_ignore, preserve_shape, normalization, out_grad;
} cu_smo_param;

/** Per-node state: one device word (the valid-label count or the loss sum). */
typedef struct cu_loss_state {
    int32_t dev_id;
    void *word; /**< 8 bytes of device memory */
} cu_loss_state;

/** Parses SoftmaxOutput's attributes (validated by the operator; grad_scale as float32). */
static mxk_status smo_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_smo_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "grad_scale", &p.grad_scale, err));
    p.grad_scale = (float)p.grad_scale;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "ignore_label", &p.ignore_label, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "multi_output", &p.multi_output, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_ignore", &p.use_ignore, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "preserve_shape", &p.preserve_shape, err));
    MXK_SDK_CHECK(
        mxk_sdk_attr_enum(attrs, "normalization", "null|batch|valid", &p.normalization, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "out_grad", &p.out_grad, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "smooth_alpha", &p.smooth_alpha, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** Allocates the state's device word on dev_id. */
static mxk_status loss_create_state(const void *param, int32_t dev_type, int32_t dev_id,
                                    const mxk_shape *in_shapes, const int32_t *in_types,
                                    uint32_t num_in, void **state, mxk_error_sink *err) {
    cu_loss_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "cuda loss: out of memory");
    s->dev_id = dev_id;
    mxk_status rc = mxk_sdk_host()->storage_alloc(MXK_DEV_GPU, dev_id, 8, &s->word, err);
    if (rc != MXK_OK) {
        free(s);
        return rc;
    }
    *state = s;
    return MXK_OK;
}

/** Frees a state of loss_create_state (NULL allowed). */
static void loss_destroy_state(void *state) {
    cu_loss_state *s = state;
    if (s == NULL)
        return;
    mxk_sdk_host()->storage_free(MXK_DEV_GPU, s->dev_id, s->word);
    free(s);
}

/** The (outer, k, inner) softmax groups of data shape d (at least 2 dims) for the mode. */
static void smo_view(const cu_smo_param *p, const mxk_shape *d, uint64_t *outer, uint64_t *k,
                     uint64_t *inner) {
    uint64_t total = mxk_sdk_shape_count(d);
    if (p->multi_output) {
        *outer = (uint64_t)d->dims[0];
        *k = (uint64_t)d->dims[1];
        *inner = *outer && *k ? total / *outer / *k : 0;
    } else if (p->preserve_shape) {
        *k = (uint64_t)d->dims[d->ndim - 1];
        *outer = *k ? total / *k : 0;
        *inner = 1;
    } else {
        *outer = (uint64_t)d->dims[0];
        *k = *outer ? total / *outer : 0;
        *inner = 1;
    }
}

/** Zeroes the gradient of the label by its request (ADD adds nothing). */
static mxk_status loss_zero_label_grad(const mxk_op_ctx *ctx, const mxk_tensor *g, mxk_op_req req,
                                       mxk_error_sink *err) {
    if (req == MXK_REQ_NULL || req == MXK_REQ_ADD)
        return MXK_OK;
    CU_CHECK(
        cudaMemsetAsync(g->data, 0, mxk_sdk_shape_count(&g->shape) * sizeof(float), cu_stream(ctx)),
        "cudaMemsetAsync", err);
    return MXK_OK;
}

/** SoftmaxOutput's forward: the softmax of every group by the request (may be in place). */
static mxk_status smo_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    if (args->num_in != 2 || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "SoftmaxOutput expects 2 arguments and 1 output");
    const mxk_shape *d = &args->in_data[0]->shape;
    if (args->req[0] == MXK_REQ_NULL || mxk_sdk_shape_count(d) == 0)
        return MXK_OK;
    if (d->ndim < 2)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'data': expected at least 2 dims");
    uint64_t outer, k, inner;
    smo_view(param, d, &outer, &k, &inner);
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_softmax_groups(args->in_data[0]->data, args->out_data[0]->data, args->req[0],
                                      outer, k, inner, cu_stream(ctx)),
             "SoftmaxOutput softmax kernel", err);
    return MXK_OK;
}

/** SoftmaxOutput's backward (see the file comment); the label gets a zero gradient. */
static mxk_status smo_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_smo_param *p = param;
    if (args->num_in != 2 || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "SoftmaxOutput expects 2 arguments and 1 output");
    MXK_SDK_CHECK(cu_enter(ctx, err));
    MXK_SDK_CHECK(loss_zero_label_grad(ctx, args->in_grad[1], args->req[1], err));
    mxk_op_req req = args->req[0];
    const mxk_tensor *yt = args->out_data[0], *lt = args->in_data[1];
    uint64_t total = mxk_sdk_shape_count(&yt->shape);
    if (req == MXK_REQ_NULL || total == 0)
        return MXK_OK;
    if (yt->shape.ndim < 2)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "output 'output': expected at least 2 dims");
    cudaStream_t st = cu_stream(ctx);
    float *g = args->in_grad[0]->data;
    if (mxk_sdk_shape_equal(&lt->shape, &yt->shape)) { /* probability labels */
        CU_CHECK(cu_launch_loss_diff(yt->data, lt->data, (float)p->grad_scale, p->out_grad, g, req,
                                     total, st),
                 "SoftmaxOutput gradient kernel", err);
        return MXK_OK;
    }
    cu_smo_grad_args a = {.ignore_label = p->ignore_label,
                          .use_ignore = p->use_ignore,
                          .grad_scale = p->grad_scale,
                          .div = 1.0,
                          .times_output = p->out_grad};
    smo_view(p, &yt->shape, &a.outer, &a.k, &a.inner);
    uint64_t nlab = a.outer * a.inner, ncount = mxk_sdk_shape_count(&lt->shape);
    if (ncount < nlab)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'label': %llu elements but data has %llu softmax rows",
                             (unsigned long long)ncount, (unsigned long long)nlab);
    if (p->normalization == CU_SMO_BATCH)
        a.div = (double)ncount;
    if (p->multi_output && p->normalization == CU_SMO_NULL)
        a.div = (double)a.inner;
    if (p->normalization == CU_SMO_VALID) {
        cu_loss_state *s = state;
        CU_CHECK(cu_launch_count_valid(lt->data, ncount, p->ignore_label, s->word, st),
                 "SoftmaxOutput valid-count kernel", err);
        a.valid_count = s->word;
    }
    a.alpha = p->multi_output ? 0.0f : (float)p->smooth_alpha;
    a.off = a.k > 1 ? a.alpha / (float)(a.k - 1) : 0.0f;
    CU_CHECK(cu_launch_softmax_output_grad(yt->data, lt->data, g, req, a, st),
             "SoftmaxOutput gradient kernel", err);
    return MXK_OK;
}

/** The (n, k) of softmax_cross_entropy's 2-D data with a 1-D label of n. */
static mxk_status sce_sizes(const mxk_tensor *x, const mxk_tensor *l, uint64_t *n, uint64_t *k,
                            mxk_error_sink *err) {
    if (x->shape.ndim != 2 || l->shape.ndim != 1 || l->shape.dims[0] != x->shape.dims[0])
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "SoftmaxCrossEntropy: expected data (N, K) and label (N,)");
    *n = (uint64_t)x->shape.dims[0];
    *k = (uint64_t)x->shape.dims[1];
    return MXK_OK;
}

/** softmax_cross_entropy's forward: the summed loss into the (1,) output by the request. */
static mxk_status sce_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    if (args->num_in != 2 || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 2 arguments and 1 output");
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    uint64_t n = 0, k = 0;
    MXK_SDK_CHECK(sce_sizes(args->in_data[0], args->in_data[1], &n, &k, err));
    MXK_SDK_CHECK(cu_enter(ctx, err));
    cudaStream_t st = cu_stream(ctx);
    cu_loss_state *s = state;
    CU_CHECK(cudaMemsetAsync(s->word, 0, sizeof(double), st), "cudaMemsetAsync", err);
    if (n > 0 && k > 0)
        CU_CHECK(
            cu_launch_sce_rows(args->in_data[0]->data, args->in_data[1]->data, n, k, s->word, st),
            "softmax_cross_entropy kernel", err);
    CU_CHECK(cu_launch_sce_store(s->word, args->out_data[0]->data, args->req[0], st),
             "softmax_cross_entropy kernel", err);
    return MXK_OK;
}

/** softmax_cross_entropy's backward: d data by the request; a label gradient is refused. */
static mxk_status sce_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    if (args->num_in != 2 || args->num_out != 1 || args->num_out_grad != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 2 arguments and 1 output");
    if (args->req[1] != MXK_REQ_NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "SoftmaxCrossEntropy: Cannot take gradient wrt label");
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    uint64_t n = 0, k = 0;
    MXK_SDK_CHECK(sce_sizes(args->in_data[0], args->in_data[1], &n, &k, err));
    if (mxk_sdk_shape_count(&args->out_grad[0]->shape) != 1)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'output': expected (1,)");
    if (n == 0 || k == 0)
        return MXK_OK;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_sce_grad(args->in_data[0]->data, args->in_data[1]->data,
                                args->out_grad[0]->data, args->in_grad[0]->data, args->req[0], n, k,
                                cu_stream(ctx)),
             "softmax_cross_entropy gradient kernel", err);
    return MXK_OK;
}

mxk_status cu_register_loss(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "SoftmaxOutput";
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.parse_param = smo_parse;
    k.free_param = cu_param_free;
    k.supports = cu_supports_float32;
    k.create_state = loss_create_state;
    k.destroy_state = loss_destroy_state;
    k.forward = smo_forward;
    k.backward = smo_backward;
    MXK_SDK_CHECK(cu_register_kernel(reg, &k, err));
    k.op_name = "softmax_cross_entropy";
    k.parse_param = NULL;
    k.free_param = NULL;
    k.forward = sce_forward;
    k.backward = sce_backward;
    return cu_register_kernel(reg, &k, err);
}
