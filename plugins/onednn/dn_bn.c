/*
 * onednn plugin: the BatchNorm kernel on oneDNN's batch normalization primitive
 * (oneDNN 2.x, dnnl_batch_normalization_forward_desc_init /
 * dnnl_batch_normalization_backward_desc_init, flags dnnl_use_scale,
 * dnnl_use_shift, dnnl_use_global_stats; dnnl_binary_desc_init for the forward
 * with global statistics).
 *
 * Semantics are the operator's (cpu-blas op_batchnorm.c; upstream MXNet
 * src/operator/nn/batch_norm.cc); the mapping follows MXNet 1.9.1's
 * src/operator/nn/mkldnn/mkldnn_batch_norm-inl.h. Data (N, C, ...) of 2 to 5
 * dims with the channel on axis 1, plain layout, float32; gamma, beta and the
 * aux states moving_mean, moving_var are (C,).
 *   Training (is_train and not use_global_stats): oneDNN computes the batch mean
 *   and biased variance and normalises; the `mean` output is the batch mean and
 *   the `var` output the inverse standard deviation 1/sqrt(var + eps) (as
 *   upstream's CPU kernel stores it).
 *   Otherwise (use_global_stats, or inference): normalisation by the moving
 *   statistics, y = x * scale + shift per channel with scale = gamma /
 *   sqrt(moving_var + eps), shift = beta - moving_mean * scale (as cpu-blas
 *   computes them) on oneDNN's binary primitive (its batch norm has no JIT form
 *   for plain layouts and runs about 3x slower); mean = moving_mean, var =
 *   1/sqrt(moving_var + eps).
 *   fix_gamma: no scale (dnnl_use_scale unset: gamma used as 1), gamma's gradient
 *   0, and every forward writes 1 into the gamma argument where it is not 1, as
 *   upstream's CPU kernel does.
 *   Moving statistics: updated in the training BACKWARD, as cpu-blas and
 *   upstream's CPU and MKLDNN kernels do, from the saved mean and inverse std:
 *   moving = moving*momentum + batch*(1 - momentum) in float32, with the
 *   variance var = 1/inv^2 - eps (biased).
 * Backward (dnnl_backward with the forward's flags): from the data, gamma, the
 * mean output and the variance recovered from the var output; with global
 * statistics dx = dy gamma inv. Every request is WRITE or INPLACE (the host
 * emulates ADD); NULL writes nothing.
 * Declined: axis other than 1, eps 0 (upstream then gives a constant channel an
 * inverse std of 0, which oneDNN does not), data of 1 or more than 5 dims, empty
 * data, non-float32 tensors, and whatever oneDNN has only its reference batch
 * norm for (3-D data is viewed as 4-D to avoid it, see bn_data_md).
 */
#include "dn_util.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/**
 * BatchNorm's attributes as this kernel needs them (MXNet 1.9.1
 * BatchNormParam). Owned by the host (parse_param / free_param); read only.
 */
typedef struct dn_bn_param {
    double eps;
    float momentum; /**< float32, as upstream's BatchNormParam */
    int32_t fix_gamma;
    int32_t use_global_stats;
    int64_t axis;
} dn_bn_param;

/**
 * One oneDNN batch-norm configuration (batch statistics, or global statistics):
 * its forward primitive descriptor (the backward's hint) and primitives, each
 * made at first use (global statistics run no batch-norm forward: see
 * bn_forward_global).
 */
typedef struct dn_bn_prims {
    dnnl_primitive_desc_t fwd_pd;
    dnnl_primitive_t fwd, bwd;
} dn_bn_prims;

/**
 * Per-node state: the data, (C,) and (1, C, 1, ...) descriptors, the two
 * configurations ([0] batch statistics, [1] global statistics) and the
 * per-channel affine primitive of global statistics' forward, each made at
 * first use. Used by one call at a time.
 */
typedef struct dn_bn_state {
    dnnl_memory_desc_t data_md, vec_md, cvec_md;
    int64_t n, C; /**< elements of the data; channels */
    dn_bn_prims p[2];
    dnnl_primitive_t affine;
} dn_bn_state;

/**
 * Parses BatchNorm's attributes (names and defaults of the operator's schema).
 * Errors: the mxk_sdk_attr_* readers'; MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status bn_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    dn_bn_param p;
    double momentum;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "eps", &p.eps, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "momentum", &momentum, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "fix_gamma", &p.fix_gamma, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_global_stats", &p.use_global_stats, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    p.momentum = (float)momentum;
    return dn_param_dup(&p, sizeof p, out, err);
}

/** oneDNN flags of a configuration: shift, scale unless fix_gamma, global statistics. */
static unsigned bn_flags(const dn_bn_param *p, int global) {
    return dnnl_use_shift | (p->fix_gamma ? 0u : (unsigned)dnnl_use_scale) |
           (global ? (unsigned)dnnl_use_global_stats : 0u);
}

/**
 * Makes the forward primitive descriptor of configuration `global` (0: batch
 * statistics, forward_training; 1: global statistics) over data_md. Errors:
 * dn_check's.
 */
static mxk_status bn_fwd_pd(const dn_bn_param *p, const dnnl_memory_desc_t *data_md, int global,
                            dnnl_primitive_desc_t *pd, mxk_error_sink *err) {
    dnnl_batch_normalization_desc_t d;
    DN_CHECK(dnnl_batch_normalization_forward_desc_init(&d, dnnl_forward_training, data_md,
                                                        (float)p->eps, bn_flags(p, global)),
             "batch norm forward descriptor", err);
    DN_CHECK(dn_pd_create(pd, &d, NULL), "batch norm forward primitive descriptor", err);
    return MXK_OK;
}

/**
 * The plain descriptor of data shape d as the primitives see it: (N, C, W) data
 * as (N, C, W, 1), since oneDNN 2.x runs its reference batch norm on 3-D data
 * (20x slower than cpu-blas at (128,64,784)) and its NCHW one on 4-D. Errors:
 * dn_md_plain's.
 */
static mxk_status bn_data_md(const mxk_shape *d, dnnl_memory_desc_t *md, mxk_error_sink *err) {
    dnnl_dim_t dims[DNNL_MAX_NDIMS];
    int nd = d->ndim;
    for (int i = 0; i < nd; i++)
        dims[i] = d->dims[i];
    if (nd == 3)
        dims[nd++] = 1;
    return dn_md_plain(md, nd, dims, err);
}

/**
 * Accepts float32 data of 2 to 5 non-empty dims, channel axis 1, eps > 0, when
 * oneDNN has a non-reference batch-statistics forward for it.
 */
static int32_t bn_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                           uint32_t num_in) {
    const dn_bn_param *p = param;
    const mxk_shape *d = &in_shapes[0];
    if (num_in != 3 || d->ndim < 2 || d->ndim > 5 || dn_shape_size(d) < 1 || !(p->eps > 0.0) ||
        (p->axis < 0 ? p->axis + d->ndim : p->axis) != 1)
        return 0;
    for (uint32_t i = 0; i < num_in; i++)
        if (in_types[i] != MXK_FLOAT32)
            return 0;
    dnnl_memory_desc_t md;
    dnnl_primitive_desc_t pd = NULL;
    int ok = bn_data_md(d, &md, NULL) == MXK_OK && bn_fwd_pd(p, &md, 0, &pd, NULL) == MXK_OK &&
             !dn_pd_is_ref(pd);
    dnnl_primitive_desc_destroy(pd);
    return ok;
}

/** Frees a state of bn_create_state (NULL allowed). */
static void bn_destroy_state(void *state) {
    dn_bn_state *s = state;
    if (s == NULL)
        return;
    for (int i = 0; i < 2; i++) {
        dnnl_primitive_destroy(s->p[i].bwd);
        dnnl_primitive_destroy(s->p[i].fwd);
        dnnl_primitive_desc_destroy(s->p[i].fwd_pd);
    }
    dnnl_primitive_destroy(s->affine);
    free(s);
}

/**
 * Creates the state (descriptors; primitives come at first use). Errors:
 * MXK_ERR_OUT_OF_MEMORY, dn_md_plain's.
 */
static mxk_status bn_create_state(const void *param, int32_t dev_type, int32_t dev_id,
                                  const mxk_shape *in_shapes, const int32_t *in_types,
                                  uint32_t num_in, void **state, mxk_error_sink *err) {
    dn_bn_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN batch norm: out of memory");
    s->n = dn_shape_size(&in_shapes[0]);
    s->C = in_shapes[0].dims[1];
    dnnl_dim_t c = s->C, cdims[DNNL_MAX_NDIMS];
    mxk_status rc = bn_data_md(&in_shapes[0], &s->data_md, err);
    for (int i = 0; i < s->data_md.ndims; i++)
        cdims[i] = i == 1 ? c : 1;
    if (rc == MXK_OK)
        rc = dn_md_plain(&s->vec_md, 1, &c, err);
    if (rc == MXK_OK)
        rc = dn_md_plain(&s->cvec_md, s->data_md.ndims, cdims, err);
    if (rc != MXK_OK) {
        bn_destroy_state(s);
        return rc;
    }
    *state = s;
    return MXK_OK;
}

/** The forward primitive descriptor of configuration `global`, made at first use. Errors:
 * dn_check's. */
static mxk_status bn_pd(const dn_bn_param *p, dn_bn_state *s, int global, mxk_error_sink *err) {
    return s->p[global].fwd_pd != NULL
               ? MXK_OK
               : bn_fwd_pd(p, &s->data_md, global, &s->p[global].fwd_pd, err);
}

/** The batch-statistics forward primitive, made at first use. Errors: dn_check's. */
static mxk_status bn_fwd(const dn_bn_param *p, dn_bn_state *s, mxk_error_sink *err) {
    dn_bn_prims *q = &s->p[0];
    if (q->fwd != NULL)
        return MXK_OK;
    MXK_SDK_CHECK(bn_pd(p, s, 0, err));
    return dn_primitive(&q->fwd, q->fwd_pd, "batch norm forward primitive", err);
}

/**
 * The per-channel affine primitive (made at first use): y = x * scale + shift
 * with (1, C, 1, ...) operands, oneDNN's binary multiply and a binary-add
 * post-op (on plain layouts about 3x faster than its batch norm with global
 * statistics, which has no JIT implementation for them). Errors: dn_check's.
 */
static mxk_status bn_make_affine(dn_bn_state *s, mxk_error_sink *err) {
    if (s->affine != NULL)
        return MXK_OK;
    dnnl_binary_desc_t d;
    DN_CHECK(dnnl_binary_desc_init(&d, dnnl_binary_mul, &s->data_md, &s->cvec_md, &s->data_md),
             "batch norm affine descriptor", err);
    dnnl_post_ops_t po = NULL;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    mxk_status rc = dn_check(dnnl_post_ops_create(&po), "batch norm affine post-ops", err);
    if (rc == MXK_OK)
        rc = dn_check(dnnl_post_ops_append_binary(po, dnnl_binary_add, &s->cvec_md),
                      "batch norm affine post-ops", err);
    if (rc == MXK_OK)
        rc = dn_check(dnnl_primitive_attr_clone(&attr, dn_attr()), "batch norm affine attributes",
                      err);
    if (rc == MXK_OK)
        rc = dn_check(dnnl_primitive_attr_set_post_ops(attr, po), "batch norm affine attributes",
                      err);
    if (rc == MXK_OK) {
        dn_threads_for_create();
        rc = dn_check(dnnl_primitive_desc_create(&pd, &d, attr, dn_engine(), NULL),
                      "batch norm affine primitive descriptor", err);
    }
    if (rc == MXK_OK)
        rc = dn_primitive(&s->affine, pd, "batch norm affine primitive", err);
    dnnl_primitive_desc_destroy(pd);
    dnnl_primitive_attr_destroy(attr);
    dnnl_post_ops_destroy(po);
    return rc;
}

/** The backward primitive of configuration `global`, made at first use. Errors: dn_check's. */
static mxk_status bn_bwd(const dn_bn_param *p, dn_bn_state *s, int global, mxk_error_sink *err) {
    dn_bn_prims *q = &s->p[global];
    if (q->bwd != NULL)
        return MXK_OK;
    MXK_SDK_CHECK(bn_pd(p, s, global, err));
    dnnl_batch_normalization_desc_t d;
    dnnl_primitive_desc_t pd = NULL;
    DN_CHECK(dnnl_batch_normalization_backward_desc_init(
                 &d, dnnl_backward, &s->data_md, &s->data_md, (float)p->eps, bn_flags(p, global)),
             "batch norm backward descriptor", err);
    DN_CHECK(dn_pd_create(&pd, &d, q->fwd_pd), "batch norm backward primitive descriptor", err);
    mxk_status rc = dn_primitive(&q->bwd, pd, "batch norm backward primitive", err);
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

/**
 * Checks data, gamma, both aux states and, with `beta` 1, beta (the backward
 * does not declare beta, which may then arrive without data). Errors:
 * dn_check_tensor's; MXK_ERR_INVALID_ARGUMENT "oneDNN batch norm: expected 2 aux
 * states, got K".
 */
static mxk_status bn_check_vecs(const dn_bn_state *s, const mxk_tensor *const *in, int beta,
                                uint32_t num_aux, const mxk_tensor *const *aux,
                                mxk_error_sink *err) {
    if (num_aux != 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "oneDNN batch norm: expected 2 aux states, got %u", num_aux);
    MXK_SDK_CHECK(dn_check_tensor(in[0], s->n, "batch norm", "argument 'data'", err));
    MXK_SDK_CHECK(dn_check_tensor(in[1], s->C, "batch norm", "argument 'gamma'", err));
    if (beta)
        MXK_SDK_CHECK(dn_check_tensor(in[2], s->C, "batch norm", "argument 'beta'", err));
    MXK_SDK_CHECK(
        dn_check_tensor(aux[0], s->C, "batch norm", "auxiliary state 'moving_mean'", err));
    return dn_check_tensor(aux[1], s->C, "batch norm", "auxiliary state 'moving_var'", err);
}

/** v rounded to float32, +-infinity beyond its range (cpu-blas cb_norm_f32). */
static float bn_f32(double v) {
    return v > FLT_MAX ? INFINITY : v < -FLT_MAX ? -INFINITY : (float)v;
}

/** out[c] = 1/sqrt(var[c] + eps), in double and rounded once (as cpu-blas). */
static void bn_inv_std(const float *var, double eps, int64_t C, float *out) {
    for (int64_t c = 0; c < C; c++)
        out[c] = bn_f32(1.0 / sqrt((double)var[c] + eps));
}

/** The output pointer of a request, or a scratch buffer (slot) of `n` floats for NULL. */
static float *bn_out_or_scratch(const mxk_tensor *t, mxk_op_req req, int slot, int64_t n,
                                mxk_error_sink *err) {
    return req != MXK_REQ_NULL ? t->data : dn_scratch(slot, (size_t)n * sizeof(float), err);
}

/**
 * Forward with global statistics: y = x * scale + shift per channel (the
 * affine primitive) with scale = gamma / sqrt(moving_var + eps) and shift = beta
 * - moving_mean * scale, computed in double and rounded as cpu-blas does; the
 * mean output is moving_mean, var the inverse std. Errors: dn_scratch's,
 * bn_make_affine's, dn_execute's.
 */
static mxk_status bn_forward_global(const mxk_op_ctx *ctx, const dn_bn_param *p, dn_bn_state *s,
                                    const mxk_forward_args *args, float *y, mxk_error_sink *err) {
    const int64_t C = s->C;
    const float *gamma = args->in_data[1]->data, *beta = args->in_data[2]->data;
    const float *mm = args->aux[0]->data, *mv = args->aux[1]->data;
    float *scale = dn_scratch(1, (size_t)C * sizeof(float), err);
    float *shift = dn_scratch(2, (size_t)C * sizeof(float), err);
    if (scale == NULL || shift == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    for (int64_t c = 0; c < C; c++) {
        double inv = 1.0 / sqrt((double)mv[c] + p->eps);
        scale[c] = bn_f32(inv * gamma[c]);
        shift[c] = bn_f32(beta[c] - mm[c] * inv * gamma[c]);
    }
    MXK_SDK_CHECK(bn_make_affine(s, err));
    dn_arg a[] = {{DNNL_ARG_SRC_0, &s->data_md, args->in_data[0]->data},
                  {DNNL_ARG_SRC_1, &s->cvec_md, scale},
                  {DNNL_ARG_DST, &s->data_md, y},
                  {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, &s->cvec_md, shift}};
    MXK_SDK_CHECK(dn_execute(ctx, s->affine, 4, a, err));
    if (args->req[1] != MXK_REQ_NULL)
        memcpy(args->out_data[1]->data, mm, (size_t)C * sizeof(float));
    if (args->req[2] != MXK_REQ_NULL)
        bn_inv_std(mv, p->eps, C, args->out_data[2]->data);
    return MXK_OK;
}

/**
 * Forward (see the file comment): fix_gamma's write into gamma, then the
 * normalisation with the batch statistics (oneDNN's batch norm) or the global
 * ones (bn_forward_global), the mean and inverse-std outputs. Errors:
 * bn_check_vecs's, dn_scratch's, dn_check's, dn_execute's.
 */
static mxk_status bn_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const dn_bn_param *p = param;
    dn_bn_state *s = state;
    MXK_SDK_CHECK(bn_check_vecs(s, args->in_data, 1, args->num_aux, args->aux, err));
    const int64_t C = s->C;
    float *gamma = args->in_data[1]->data;
    if (p->fix_gamma)
        for (int64_t c = 0; c < C; c++)
            if (gamma[c] != 1.0f)
                gamma[c] = 1.0f;
    const mxk_op_req *req = args->req;
    if (req[0] == MXK_REQ_NULL && req[1] == MXK_REQ_NULL && req[2] == MXK_REQ_NULL)
        return MXK_OK;
    float *y = bn_out_or_scratch(args->out_data[0], req[0], 0, s->n, err);
    if (y == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    if (!ctx->is_train || p->use_global_stats)
        return bn_forward_global(ctx, p, s, args, y, err);
    MXK_SDK_CHECK(bn_fwd(p, s, err));
    float *mean = dn_scratch(1, (size_t)C * sizeof(float), err);
    float *var = dn_scratch(2, (size_t)C * sizeof(float), err);
    if (mean == NULL || var == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    dn_arg a[] = {{DNNL_ARG_SRC, &s->data_md, args->in_data[0]->data},
                  {DNNL_ARG_DST, &s->data_md, y},
                  {DNNL_ARG_MEAN, &s->vec_md, mean},
                  {DNNL_ARG_VARIANCE, &s->vec_md, var},
                  {DNNL_ARG_SHIFT, &s->vec_md, args->in_data[2]->data},
                  {DNNL_ARG_SCALE, &s->vec_md, gamma}};
    MXK_SDK_CHECK(dn_execute(ctx, s->p[0].fwd, p->fix_gamma ? 5 : 6, a, err));
    if (req[1] != MXK_REQ_NULL)
        memcpy(args->out_data[1]->data, mean, (size_t)C * sizeof(float));
    if (req[2] != MXK_REQ_NULL)
        bn_inv_std(var, p->eps, C, args->out_data[2]->data);
    return MXK_OK;
}

/**
 * The moving-average update of a training backward, float32 as cpu-blas and
 * upstream (batch_norm.cc BatchNormBackwardImpl): from the saved mean and
 * inverse std `inv` (variance 1/inv^2 - eps; infinite for inv <= 0).
 */
static void bn_update_moving(const dn_bn_param *p, int64_t C, const float *mean, const float *inv,
                             float *mm, float *mv) {
    const float mom = p->momentum;
    for (int64_t c = 0; c < C; c++) {
        float var = bn_f32(inv[c] > 0.0f ? 1.0 / ((double)inv[c] * inv[c]) - p->eps : INFINITY);
        mm[c] = mm[c] * mom + mean[c] * (1.0f - mom);
        mv[c] = mv[c] * mom + var * (1.0f - mom);
    }
}

/**
 * Backward (see the file comment): the moving statistics of a training pass,
 * then dx, dgamma (0 with fix_gamma) and dbeta by their requests. Errors:
 * bn_check_vecs's, dn_check_tensor's, dn_scratch's, dn_check's, dn_execute's.
 */
static mxk_status bn_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const dn_bn_param *p = param;
    dn_bn_state *s = state;
    const int64_t C = s->C;
    MXK_SDK_CHECK(bn_check_vecs(s, args->in_data, 0, args->num_aux, args->aux, err));
    const int global = !ctx->is_train || p->use_global_stats;
    float *mean = args->aux[0]->data, *var = args->aux[1]->data;
    if (!global) {
        MXK_SDK_CHECK(dn_check_tensor(args->out_data[1], C, "batch norm", "output 'mean'", err));
        MXK_SDK_CHECK(dn_check_tensor(args->out_data[2], C, "batch norm", "output 'var'", err));
        const float *inv = args->out_data[2]->data;
        mean = args->out_data[1]->data;
        bn_update_moving(p, C, mean, inv, args->aux[0]->data, args->aux[1]->data);
        if ((var = dn_scratch(1, (size_t)C * sizeof(float), err)) == NULL)
            return MXK_ERR_OUT_OF_MEMORY;
        for (int64_t c = 0; c < C; c++) /* oneDNN adds eps back: 1/sqrt(var + eps) = inv */
            var[c] = (float)(1.0 / ((double)inv[c] * inv[c]) - p->eps);
    }
    const mxk_op_req *req = args->req;
    if (req[0] == MXK_REQ_NULL && req[1] == MXK_REQ_NULL && req[2] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(
        dn_check_tensor(args->out_grad[0], s->n, "batch norm", "gradient of 'output'", err));
    for (int i = 0; i < 3; i++)
        if (req[i] != MXK_REQ_NULL)
            MXK_SDK_CHECK(dn_check_tensor(args->in_grad[i], i == 0 ? s->n : C, "batch norm",
                                          i == 0 ? "gradient of 'data'"
                                                 : "gradient of a (C,) "
                                                   "argument",
                                          err));
    MXK_SDK_CHECK(bn_bwd(p, s, global, err));
    /* scratch: slot 0 dx, slot 1 the variance, slot 2 dgamma and dbeta side by side
     * (slot 3 is dn_execute's scratchpad) */
    float *dx = bn_out_or_scratch(args->in_grad[0], req[0], 0, s->n, err);
    float *dvec = dn_scratch(2, 2 * (size_t)C * sizeof(float), err);
    if (dx == NULL || dvec == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    float *dgamma = req[1] != MXK_REQ_NULL && !p->fix_gamma ? args->in_grad[1]->data : dvec;
    float *dbeta = req[2] != MXK_REQ_NULL ? args->in_grad[2]->data : dvec + C;
    dn_arg a[] = {{DNNL_ARG_SRC, &s->data_md, args->in_data[0]->data},
                  {DNNL_ARG_DIFF_DST, &s->data_md, args->out_grad[0]->data},
                  {DNNL_ARG_MEAN, &s->vec_md, mean},
                  {DNNL_ARG_VARIANCE, &s->vec_md, var},
                  {DNNL_ARG_DIFF_SRC, &s->data_md, dx},
                  {DNNL_ARG_DIFF_SHIFT, &s->vec_md, dbeta},
                  /* listed by oneDNN 2.x with use_shift, read only by its fused-ReLU
                   * form: any (C,) buffer serves (beta is not kept for the backward) */
                  {DNNL_ARG_SHIFT, &s->vec_md, dbeta},
                  {DNNL_ARG_SCALE, &s->vec_md, args->in_data[1]->data},
                  {DNNL_ARG_DIFF_SCALE, &s->vec_md, dgamma}};
    MXK_SDK_CHECK(dn_execute(ctx, s->p[global].bwd, p->fix_gamma ? 7 : 9, a, err));
    if (p->fix_gamma && req[1] != MXK_REQ_NULL)
        memset(args->in_grad[1]->data, 0, (size_t)C * sizeof(float));
    return MXK_OK;
}

/** Registers the BatchNorm kernel (onednn.h). Errors: dn_register_kernel's. */
mxk_status dn_register_bn(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "BatchNorm";
    k.parse_param = bn_parse;
    k.free_param = dn_param_free;
    k.supports = bn_supports;
    k.create_state = bn_create_state;
    k.destroy_state = bn_destroy_state;
    k.forward = bn_forward;
    k.backward = bn_backward;
    /* float32 sums (oneDNN) against double ones (cpu-blas) over N*H*W elements:
     * measured on uniform inputs at (128,16,28,28) and (128,64,7,7), outputs and dx
     * within 7.2e-7, dgamma / dbeta (sums of 1.6M terms, ~100) within 2.4e-4 absolute
     * and 1.8e-5 relative; partly cancelling sums lose more */
    k.crosscheck_rtol = 1e-3;
    k.crosscheck_atol = 1e-4;
    return dn_register_kernel(reg, &k, err);
}
