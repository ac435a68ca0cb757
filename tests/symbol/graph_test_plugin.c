/*
 * graph-test: a test plugin with operators that cpu-blas lacks, for the graph
 * tests (symbols, JSON, passes, executor). Built by tests/symbol/CMakeLists.txt as
 * ${MXK_TEST_PLUGIN_DIR}/libmxk-graph-test.so (target mxk-graph-test; the CMake
 * variable MXK_GRAPH_TEST_PLUGIN holds the path); load it with
 * mxk_load_plugin(path, NULL) after mxk_init. float32 on CPU only; every kernel
 * honours the write request of each output (NULL / WRITE / INPLACE / ADD).
 *
 * Operators (real shape inference, simple kernels):
 *
 * - TestConv: a 2-D convolution shaped as MXNet's Convolution: arguments data
 *   (N,C,H,W), weight (F,C,kh,kw), bias (F,) (absent with no_bias); output
 *   (N,F,(H+2ph-kh)/sh+1,(W+2pw-kw)/sw+1); attributes kernel (required, 2
 *   entries), num_filter (required, > 0), stride ((1,1)), pad ((0,0)), no_bias
 *   (False). Weight and bias shapes are inferred from data. Kernels: a direct
 *   (naive) convolution, forward and backward (d data, d weight, d bias), so the
 *   results can be checked against finite differences.
 *
 * - TestPool: 2-D pooling shaped as MXNet's Pooling (valid convention): argument
 *   data (N,C,H,W), output (N,C,(H+2ph-kh)/sh+1,(W+2pw-kw)/sw+1); attributes
 *   kernel (required), stride ((1,1)), pad ((0,0)), pool_type (max|avg, max).
 *   Max takes the first maximum of the window (padding excluded) and routes the
 *   gradient there; avg divides by kh*kw (padding included, MXNet's default).
 *
 * Threading: callbacks are pure; kernels keep no state.
 */
#include <stdlib.h>
#include <string.h>

#include "testing_plugin.h"

/* ------------------------------------------------------------------------- */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------- */

/** Checks that t is a float32 CPU tensor with data; `what` names it in the message. */
static mxk_status gt_check(const mxk_tensor *t, const char *what, mxk_error_sink *err) {
    if (t == NULL || t->data == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: no tensor given", what);
    if (t->dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "%s: expected float32, got %s", what,
                             mxk_sdk_dtype_name(t->dtype));
    if (t->dev_type != MXK_DEV_CPU && t->dev_type != MXK_DEV_CPU_PINNED)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: not in CPU memory", what);
    return MXK_OK;
}

/** float32 data of a tensor. */
static float *gt_f32(const mxk_tensor *t) {
    return (float *)t->data;
}

/** Reads a 2-entry tuple attribute with entries >= lo into a[2]. */
static mxk_status gt_pair(const mxk_attrs *attrs, const char *key, int64_t lo, int64_t a[2],
                          mxk_error_sink *err) {
    mxk_shape s;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, key, &s, err));
    if (s.ndim != 2 || s.dims[0] < lo || s.dims[1] < lo || s.dims[0] > INT32_MAX ||
        s.dims[1] > INT32_MAX)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': expected 2 entries in [%lld, %d] (2-D only)", key,
                             (long long)lo, INT32_MAX);
    a[0] = s.dims[0];
    a[1] = s.dims[1];
    return MXK_OK;
}

/**
 * Output size of a window along one axis (valid convention); 0 when the input is
 * unknown. No overflow: in <= 2^60 (mxk_sdk_shape_check_count first), k, s, p < 2^31.
 */
static int64_t gt_out_dim(int64_t in, int64_t k, int64_t s, int64_t p) {
    if (in <= 0)
        return 0;
    int64_t span = in + 2 * p - k;
    return span < 0 ? -1 : span / s + 1;
}

/** free_param of every operator here. */
static void gt_free(void *param) {
    free(param);
}

/* ------------------------------------------------------------------------- */
/* TestConv                                                                  */
/* ------------------------------------------------------------------------- */

/** Parsed TestConv attributes. */
typedef struct conv_param {
    int64_t kernel[2], stride[2], pad[2];
    int64_t num_filter;
    int32_t no_bias;
} conv_param;

static const char *const conv_args[] = {"data", "weight", "bias", NULL};
static const char *const gt_outs[] = {"output", NULL};

static const mxk_attr_def conv_attrs[] = {
    MXK_SDK_ATTR("kernel", MXK_ATTR_SHAPE, 1, NULL, NULL, "Window size (kh,kw)."),
    MXK_SDK_ATTR("num_filter", MXK_ATTR_INT, 1, NULL, NULL, "Number of output channels."),
    MXK_SDK_ATTR("stride", MXK_ATTR_SHAPE, 0, "(1,1)", NULL, "Stride (sh,sw)."),
    MXK_SDK_ATTR("pad", MXK_ATTR_SHAPE, 0, "(0,0)", NULL, "Zero padding (ph,pw)."),
    MXK_SDK_ATTR("no_bias", MXK_ATTR_BOOL, 0, "False", NULL, "No bias argument."),
};

/** parse_param of TestConv. */
static mxk_status conv_parse(const mxk_attrs *attrs, void **param, mxk_error_sink *err) {
    conv_param p;
    MXK_SDK_CHECK(gt_pair(attrs, "kernel", 1, p.kernel, err));
    MXK_SDK_CHECK(gt_pair(attrs, "stride", 1, p.stride, err));
    MXK_SDK_CHECK(gt_pair(attrs, "pad", 0, p.pad, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_filter", 1, 1 << 20, &p.num_filter, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "no_bias", &p.no_bias, err));
    conv_param *q = malloc(sizeof *q);
    if (q == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "out of memory");
    *q = p;
    *param = q;
    return MXK_OK;
}

/** Arguments of TestConv: data, weight[, bias]. */
static mxk_status conv_list_arguments(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    const conv_param *p = param;
    for (uint32_t i = 0; i < (p->no_bias ? 2u : 3u); i++)
        MXK_SDK_CHECK(mxk_sdk_host()->name_list_add(out, conv_args[i], err));
    return MXK_OK;
}

/** Shape inference of TestConv (see the file comment). */
static mxk_status conv_infer_shape(const void *param, mxk_shape *in, uint32_t num_in,
                                   mxk_shape *out, uint32_t num_out, mxk_shape *aux,
                                   uint32_t num_aux, mxk_error_sink *err) {
    const conv_param *p = param;
    if (num_in != (p->no_bias ? 2u : 3u) || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "wrong number of arguments");
    const mxk_shape *d = &in[0];
    if (d->ndim == 0)
        return MXK_OK;
    if (d->ndim != 4) {
        char s[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': expected 4 dims (N,C,H,W), "
                             "got %s",
                             mxk_sdk_shape_format(d, s, sizeof s));
    }
    int64_t wd[4] = {p->num_filter, d->dims[1], p->kernel[0], p->kernel[1]};
    mxk_shape ws = mxk_sdk_shape_from(wd, 4);
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[1], &ws, "argument", "weight", err));
    if (!p->no_bias) {
        mxk_shape bs = mxk_sdk_shape1(p->num_filter);
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[2], &bs, "argument", "bias", err));
    }
    MXK_SDK_CHECK(mxk_sdk_shape_check_count(d, "argument 'data'", err));
    int64_t ho = gt_out_dim(d->dims[2], p->kernel[0], p->stride[0], p->pad[0]);
    int64_t wo = gt_out_dim(d->dims[3], p->kernel[1], p->stride[1], p->pad[1]);
    if (ho < 0 || wo < 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': kernel (%lld,%lld) larger than the padded input",
                             (long long)p->kernel[0], (long long)p->kernel[1]);
    int64_t od[4] = {d->dims[0], p->num_filter, ho, wo};
    mxk_shape os = mxk_sdk_shape_from(od, 4);
    return mxk_sdk_shape_assign_named(&out[0], &os, "output", "output", err);
}

/** Backward of TestConv reads the output gradient, data and weight. */
static void conv_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                     uint32_t num_out, uint8_t *need_out_grad,
                                     uint8_t *need_in_data, uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[0] = 1;
    need_in_data[1] = 1;
}

/** Geometry of one convolution or pooling call. */
typedef struct geom {
    int64_t n, c, h, w, f, ho, wo, kh, kw, sh, sw, ph, pw;
} geom;

/** Fills g from a data shape, an output shape and the window parameters. */
static void geom_of(geom *g, const mxk_shape *d, const mxk_shape *o, const int64_t k[2],
                    const int64_t s[2], const int64_t p[2]) {
    g->n = d->dims[0];
    g->c = d->dims[1];
    g->h = d->dims[2];
    g->w = d->dims[3];
    g->f = o->dims[1];
    g->ho = o->dims[2];
    g->wo = o->dims[3];
    g->kh = k[0];
    g->kw = k[1];
    g->sh = s[0];
    g->sw = s[1];
    g->ph = p[0];
    g->pw = p[1];
}

/**
 * Checks the data and output tensors of a 2-D window operator against shape
 * inference (`infer` with `nin` arguments; the shapes of present tensors other
 * than data are checked too, absent ones inferred) and fills the geometry.
 */
static mxk_status
window_check(const void *param,
             mxk_status (*infer)(const void *, mxk_shape *, uint32_t, mxk_shape *, uint32_t,
                                 mxk_shape *, uint32_t, mxk_error_sink *),
             uint32_t nin, const mxk_tensor *const *in, const mxk_tensor *outt, const int64_t k[2],
             const int64_t s[2], const int64_t p[2], geom *g, mxk_error_sink *err) {
    mxk_shape ins[3], outs[1];
    MXK_SDK_CHECK(gt_check(in[0], "argument 'data'", err));
    for (uint32_t i = 0; i < nin && i < 3; i++)
        ins[i] = in[i] != NULL && in[i]->data != NULL ? in[i]->shape : mxk_sdk_shape_unknown();
    MXK_SDK_CHECK(gt_check(outt, "output", err));
    outs[0] = outt->shape;
    MXK_SDK_CHECK(infer(param, ins, nin, outs, 1, NULL, 0, err));
    if (ins[0].ndim != 4)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'data': expected 4 dims");
    geom_of(g, &ins[0], &outs[0], k, s, p);
    return MXK_OK;
}

/** Forward of TestConv: direct convolution, out = sum(w * x) + b. */
static mxk_status conv_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_forward_args *args, mxk_error_sink *err) {
    const conv_param *p = param;
    mxk_op_req rq = args->req[0];
    if (rq == MXK_REQ_NULL)
        return MXK_OK;
    geom g = {0};
    if (args->num_in != (p->no_bias ? 2u : 3u))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "wrong number of arguments");
    MXK_SDK_CHECK(gt_check(args->in_data[1], "argument 'weight'", err));
    if (!p->no_bias)
        MXK_SDK_CHECK(gt_check(args->in_data[2], "argument 'bias'", err));
    MXK_SDK_CHECK(window_check(param, conv_infer_shape, args->num_in, args->in_data,
                               args->out_data[0], p->kernel, p->stride, p->pad, &g, err));
    const float *x = gt_f32(args->in_data[0]), *w = gt_f32(args->in_data[1]);
    const float *b = p->no_bias ? NULL : gt_f32(args->in_data[2]);
    float *y = gt_f32(args->out_data[0]);
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t f = 0; f < g.f; f++)
            for (int64_t oy = 0; oy < g.ho; oy++)
                for (int64_t ox = 0; ox < g.wo; ox++) {
                    float acc = b ? b[f] : 0.0f;
                    for (int64_t c = 0; c < g.c; c++)
                        for (int64_t ky = 0; ky < g.kh; ky++) {
                            int64_t iy = oy * g.sh - g.ph + ky;
                            if (iy < 0 || iy >= g.h)
                                continue;
                            for (int64_t kx = 0; kx < g.kw; kx++) {
                                int64_t ix = ox * g.sw - g.pw + kx;
                                if (ix < 0 || ix >= g.w)
                                    continue;
                                acc += w[((f * g.c + c) * g.kh + ky) * g.kw + kx] *
                                       x[((n * g.c + c) * g.h + iy) * g.w + ix];
                            }
                        }
                    mxk_sdk_assign_f32(&y[((n * g.f + f) * g.ho + oy) * g.wo + ox], acc, rq);
                }
    return MXK_OK;
}

/** Backward of TestConv: d data, d weight, d bias of the direct convolution. */
static mxk_status conv_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_backward_args *args, mxk_error_sink *err) {
    const conv_param *p = param;
    uint32_t nin = p->no_bias ? 2u : 3u;
    if (args->num_in != nin || args->num_out_grad != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "wrong number of tensors");
    geom g = {0};
    MXK_SDK_CHECK(gt_check(args->in_data[1], "argument 'weight'", err));
    MXK_SDK_CHECK(window_check(param, conv_infer_shape, nin, args->in_data, args->out_grad[0],
                               p->kernel, p->stride, p->pad, &g, err));
    const float *x = gt_f32(args->in_data[0]), *w = gt_f32(args->in_data[1]);
    const float *dy = gt_f32(args->out_grad[0]);
    size_t sizes[3] = {(size_t)(g.n * g.c * g.h * g.w), (size_t)(g.f * g.c * g.kh * g.kw),
                       (size_t)g.f};
    float *tmp[3] = {NULL, NULL, NULL};
    for (uint32_t i = 0; i < nin; i++) {
        if (args->req[i] == MXK_REQ_NULL)
            continue;
        MXK_SDK_CHECK(gt_check(args->in_grad[i], "input gradient", err));
        if (mxk_sdk_shape_count(&args->in_grad[i]->shape) != sizes[i])
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient %u: wrong size", (unsigned)i);
        tmp[i] = calloc(sizes[i] ? sizes[i] : 1, sizeof(float));
        if (tmp[i] == NULL) {
            for (uint32_t j = 0; j < i; j++)
                free(tmp[j]);
            return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "out of memory");
        }
    }
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t f = 0; f < g.f; f++)
            for (int64_t oy = 0; oy < g.ho; oy++)
                for (int64_t ox = 0; ox < g.wo; ox++) {
                    float d = dy[((n * g.f + f) * g.ho + oy) * g.wo + ox];
                    if (tmp[2])
                        tmp[2][f] += d;
                    for (int64_t c = 0; c < g.c; c++)
                        for (int64_t ky = 0; ky < g.kh; ky++) {
                            int64_t iy = oy * g.sh - g.ph + ky;
                            if (iy < 0 || iy >= g.h)
                                continue;
                            for (int64_t kx = 0; kx < g.kw; kx++) {
                                int64_t ix = ox * g.sw - g.pw + kx;
                                if (ix < 0 || ix >= g.w)
                                    continue;
                                size_t wi = (size_t)(((f * g.c + c) * g.kh + ky) * g.kw + kx);
                                size_t xi = (size_t)(((n * g.c + c) * g.h + iy) * g.w + ix);
                                if (tmp[0])
                                    tmp[0][xi] += d * w[wi];
                                if (tmp[1])
                                    tmp[1][wi] += d * x[xi];
                            }
                        }
                }
    for (uint32_t i = 0; i < nin; i++) {
        if (tmp[i] == NULL)
            continue;
        mxk_sdk_copy_f32(gt_f32(args->in_grad[i]), tmp[i], sizes[i], args->req[i]);
        free(tmp[i]);
    }
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* TestPool                                                                  */
/* ------------------------------------------------------------------------- */

/** Parsed TestPool attributes. */
typedef struct pool_param {
    int64_t kernel[2], stride[2], pad[2];
    int32_t avg;
} pool_param;

static const char *const pool_args[] = {"data", NULL};

static const mxk_attr_def pool_attrs[] = {
    MXK_SDK_ATTR("kernel", MXK_ATTR_SHAPE, 1, NULL, NULL, "Window size (kh,kw)."),
    MXK_SDK_ATTR("stride", MXK_ATTR_SHAPE, 0, "(1,1)", NULL, "Stride (sh,sw)."),
    MXK_SDK_ATTR("pad", MXK_ATTR_SHAPE, 0, "(0,0)", NULL, "Padding (ph,pw)."),
    MXK_SDK_ATTR("pool_type", MXK_ATTR_ENUM, 0, "max", "max|avg", "Pooling type."),
};

/** parse_param of TestPool. */
static mxk_status pool_parse(const mxk_attrs *attrs, void **param, mxk_error_sink *err) {
    pool_param p;
    MXK_SDK_CHECK(gt_pair(attrs, "kernel", 1, p.kernel, err));
    MXK_SDK_CHECK(gt_pair(attrs, "stride", 1, p.stride, err));
    MXK_SDK_CHECK(gt_pair(attrs, "pad", 0, p.pad, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "pool_type", "max|avg", &p.avg, err));
    pool_param *q = malloc(sizeof *q);
    if (q == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "out of memory");
    *q = p;
    *param = q;
    return MXK_OK;
}

/** Shape inference of TestPool. */
static mxk_status pool_infer_shape(const void *param, mxk_shape *in, uint32_t num_in,
                                   mxk_shape *out, uint32_t num_out, mxk_shape *aux,
                                   uint32_t num_aux, mxk_error_sink *err) {
    const pool_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "wrong number of arguments");
    const mxk_shape *d = &in[0];
    if (d->ndim == 0)
        return MXK_OK;
    if (d->ndim != 4) {
        char s[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': expected 4 dims (N,C,H,W), "
                             "got %s",
                             mxk_sdk_shape_format(d, s, sizeof s));
    }
    MXK_SDK_CHECK(mxk_sdk_shape_check_count(d, "argument 'data'", err));
    int64_t ho = gt_out_dim(d->dims[2], p->kernel[0], p->stride[0], p->pad[0]);
    int64_t wo = gt_out_dim(d->dims[3], p->kernel[1], p->stride[1], p->pad[1]);
    if (ho < 0 || wo < 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': kernel larger than the padded input");
    int64_t od[4] = {d->dims[0], d->dims[1], ho, wo};
    mxk_shape os = mxk_sdk_shape_from(od, 4);
    return mxk_sdk_shape_assign_named(&out[0], &os, "output", "output", err);
}

/** Backward of TestPool reads the output gradient and the data (max needs the argmax). */
static void pool_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                     uint32_t num_out, uint8_t *need_out_grad,
                                     uint8_t *need_in_data, uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[0] = 1;
}

/**
 * Visits the windows of a pooling: for output element o (flat index) calls
 * fn with the flat input index of the window's first maximum (max) or with every
 * window element (avg, scale 1/(kh*kw)).
 */
static void pool_walk(const pool_param *p, const geom *g, const float *x,
                      void (*fn)(void *ctx, size_t o, size_t i, float scale), void *ctx) {
    float scale = 1.0f / (float)(g->kh * g->kw);
    for (int64_t nc = 0; nc < g->n * g->c; nc++)
        for (int64_t oy = 0; oy < g->ho; oy++)
            for (int64_t ox = 0; ox < g->wo; ox++) {
                size_t o = (size_t)((nc * g->ho + oy) * g->wo + ox);
                int64_t best = -1;
                for (int64_t ky = 0; ky < g->kh; ky++) {
                    int64_t iy = oy * g->sh - g->ph + ky;
                    if (iy < 0 || iy >= g->h)
                        continue;
                    for (int64_t kx = 0; kx < g->kw; kx++) {
                        int64_t ix = ox * g->sw - g->pw + kx;
                        if (ix < 0 || ix >= g->w)
                            continue;
                        int64_t i = (nc * g->h + iy) * g->w + ix;
                        if (p->avg)
                            fn(ctx, o, (size_t)i, scale);
                        else if (best < 0 || x[i] > x[best])
                            best = i;
                    }
                }
                if (!p->avg && best >= 0)
                    fn(ctx, o, (size_t)best, 1.0f);
            }
}

/** Accumulation context of pool_walk: src indexed by one side, dst by the other. */
typedef struct pool_acc {
    const float *src;
    float *dst;
} pool_acc;

/** Forward step: out[o] += scale * x[i]. */
static void pool_fwd_step(void *ctx, size_t o, size_t i, float scale) {
    pool_acc *a = ctx;
    a->dst[o] += scale * a->src[i];
}

/** Backward step: dx[i] += scale * dy[o]. */
static void pool_bwd_step(void *ctx, size_t o, size_t i, float scale) {
    pool_acc *a = ctx;
    a->dst[i] += scale * a->src[o];
}

/** Forward of TestPool. */
static mxk_status pool_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_forward_args *args, mxk_error_sink *err) {
    const pool_param *p = param;
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    geom g = {0};
    MXK_SDK_CHECK(window_check(param, pool_infer_shape, 1, args->in_data, args->out_data[0],
                               p->kernel, p->stride, p->pad, &g, err));
    g.f = g.c;
    size_t no = (size_t)(g.n * g.c * g.ho * g.wo);
    float *tmp = calloc(no ? no : 1, sizeof(float));
    if (tmp == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "out of memory");
    pool_acc a = {gt_f32(args->in_data[0]), tmp};
    pool_walk(p, &g, a.src, pool_fwd_step, &a);
    mxk_sdk_copy_f32(gt_f32(args->out_data[0]), tmp, no, args->req[0]);
    free(tmp);
    return MXK_OK;
}

/** Backward of TestPool. */
static mxk_status pool_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_backward_args *args, mxk_error_sink *err) {
    const pool_param *p = param;
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    geom g = {0};
    MXK_SDK_CHECK(window_check(param, pool_infer_shape, 1, args->in_data, args->out_grad[0],
                               p->kernel, p->stride, p->pad, &g, err));
    MXK_SDK_CHECK(gt_check(args->in_grad[0], "gradient of 'data'", err));
    size_t ni = (size_t)(g.n * g.c * g.h * g.w);
    if (mxk_sdk_shape_count(&args->in_grad[0]->shape) != ni)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'data': wrong size");
    float *tmp = calloc(ni ? ni : 1, sizeof(float));
    if (tmp == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "out of memory");
    pool_acc a = {gt_f32(args->out_grad[0]), tmp};
    pool_walk(p, &g, gt_f32(args->in_data[0]), pool_bwd_step, &a);
    mxk_sdk_copy_f32(gt_f32(args->in_grad[0]), tmp, ni, args->req[0]);
    free(tmp);
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* Registration                                                              */
/* ------------------------------------------------------------------------- */

MXK_TEST_PLUGIN_INFO("graph-test", "Test operators for the graph tests: TestConv, TestPool", 0,
                     MXK_PROVIDES_OPERATORS | MXK_PROVIDES_KERNELS)

/** Registers TestConv and TestPool with their CPU kernels. */
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_test_plugin_begin(args, MXK_SDK_HOST_SLOT_END(attr_key), err));
    mxk_registrar *reg = args->registrar;

    mxk_op_def conv;
    mxk_sdk_op_def_init(&conv);
    conv.name = "TestConv";
    conv.description = "Test 2-D convolution shaped as MXNet's Convolution (direct kernels).";
    conv.attrs = conv_attrs;
    conv.num_attrs = MXK_SDK_COUNTOF(conv_attrs);
    conv.outputs = gt_outs;
    conv.parse_param = conv_parse;
    conv.free_param = gt_free;
    conv.list_arguments = conv_list_arguments;
    conv.infer_shape = conv_infer_shape;
    conv.backward_dependency = conv_backward_dependency;
    MXK_SDK_CHECK(mxk_test_register_cpu_op(reg, &conv, conv_forward, conv_backward, err));

    mxk_op_def pool;
    mxk_sdk_op_def_init(&pool);
    pool.name = "TestPool";
    pool.description = "Test 2-D max/avg pooling shaped as MXNet's Pooling (valid).";
    pool.attrs = pool_attrs;
    pool.num_attrs = MXK_SDK_COUNTOF(pool_attrs);
    pool.arguments = pool_args;
    pool.outputs = gt_outs;
    pool.parse_param = pool_parse;
    pool.free_param = gt_free;
    pool.infer_shape = pool_infer_shape;
    pool.backward_dependency = pool_backward_dependency;
    return mxk_test_register_cpu_op(reg, &pool, pool_forward, pool_backward, err);
}
