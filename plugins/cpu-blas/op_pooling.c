/*
 * cpu-blas plugin: Pooling (2-D, NCHW).
 *
 * Semantics: MXNet src/operator/nn/pooling-inl.h, pooling.cc, pool.h (digest
 * operators-kvstore-module.md §2.3). Data (N, C, H, W); output (N, C, OH, OW) with
 *   valid: OH = floor((H + 2p - k)/s) + 1     full: OH = ceil((H + 2p - k)/s) + 1
 * global_pool: the kernel is the whole map, pad 0, stride 1 (output 1x1).
 * Windows follow pool.h: start = o*s - p, end = min(start + k, H + p); the
 * count_include_pad divisor of avg is (end - start) before clipping to the
 * input, else after; the window is then clipped to [0, H). max of an empty
 * window is the lowest float (as upstream); sum adds without dividing.
 * Backward: max sends dy to the FIRST position in row-major scan of the window
 * whose input equals the output (pool.h unpool_max); avg spreads dy/size, sum dy.
 * Backward reads out_grad, plus data and output for max only. pool_type 'lp',
 * convention 'same' and layouts other than NCHW are refused with a clear error.
 */
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "cb_tensor.h"

/** Pool types. */
enum { PL_MAX = 0, PL_AVG = 1, PL_SUM = 2, PL_LP = 3 };

/** Parsed attributes of Pooling. */
typedef struct pl_param {
    int64_t kernel[2], stride[2], pad[2];
    int32_t type;        /**< PL_* */
    int32_t global;      /**< global_pool */
    int32_t full;        /**< pooling_convention == full */
    int32_t include_pad; /**< count_include_pad */
} pl_param;

static const char *const pl_args[] = {"data", NULL};
static const char *const pl_outs[] = {"output", NULL};

/** Attribute schema (MXNet 1.9.1 PoolingParam). */
static const mxk_attr_def pl_attrs[] = {
    MXK_SDK_ATTR("kernel", MXK_ATTR_SHAPE, 0, "()", NULL, "Pooling kernel size: (h, w)."),
    MXK_SDK_ATTR("pool_type", MXK_ATTR_ENUM, 0, "max", "max|avg|sum|lp", "Pooling type."),
    MXK_SDK_ATTR("global_pool", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Pool over the whole map, ignoring kernel, stride and pad."),
    MXK_SDK_ATTR("pooling_convention", MXK_ATTR_ENUM, 0, "valid", "valid|full|same",
                 "Output size rule: floor (valid) or ceil (full)."),
    MXK_SDK_ATTR("stride", MXK_ATTR_SHAPE, 0, "()", NULL, "Stride: (h, w); default 1."),
    MXK_SDK_ATTR("pad", MXK_ATTR_SHAPE, 0, "()", NULL, "Padding: (h, w); default 0."),
    MXK_SDK_ATTR("p_value", MXK_ATTR_INT, 0, "2", NULL, "Power of lp pooling (unsupported)."),
    MXK_SDK_ATTR("count_include_pad", MXK_ATTR_BOOL, 0, "True", NULL,
                 "avg: count padded positions in the divisor."),
    MXK_SDK_ATTR("cudnn_off", MXK_ATTR_BOOL, 0, "False", NULL, "Turn off cuDNN (ignored)."),
    MXK_SDK_ATTR("layout", MXK_ATTR_ENUM, 0, "None", "None|NCW|NCHW|NCDHW|NWC|NHWC|NDHWC",
                 "Data layout; cpu-blas computes NCHW only."),
};

/** Parses and validates the attributes. */
static mxk_status pl_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    pl_param p;
    memset(&p, 0, sizeof p);
    int32_t conv = 0, layout = 0;
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "pool_type", "max|avg|sum|lp", &p.type, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "global_pool", &p.global, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "pooling_convention", "valid|full|same", &conv, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "count_include_pad", &p.include_pad, err));
    MXK_SDK_CHECK(
        mxk_sdk_attr_enum(attrs, "layout", "None|NCW|NCHW|NCDHW|NWC|NHWC|NDHWC", &layout, err));
    if (p.type == PL_LP)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                             "attribute 'pool_type': 'lp' is not supported by cpu-blas");
    if (conv == 2)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                             "attribute 'pooling_convention': 'same' (1-D only) is not supported "
                             "by cpu-blas");
    if (layout != 0 && layout != 2)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                             "attribute 'layout': cpu-blas computes NCHW only, got '%s'",
                             mxk_sdk_attr_raw(attrs, "layout"));
    p.full = conv == 1;
    MXK_SDK_CHECK(cb_attr_pair(attrs, "kernel", 0, 1, "cpu-blas Pooling", p.kernel, err));
    MXK_SDK_CHECK(cb_attr_pair(attrs, "stride", 1, 1, "cpu-blas Pooling", p.stride, err));
    MXK_SDK_CHECK(cb_attr_pair(attrs, "pad", 0, 0, "cpu-blas Pooling", p.pad, err));
    if (!p.global && p.kernel[0] == 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'kernel': required unless global_pool is set");
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Effective geometry of one call. */
typedef struct pl_geom {
    int64_t N, C, H, W, OH, OW;
    int64_t kh, kw, sh, sw, ph, pw;
} pl_geom;

/** Computes the geometry from a 4-D data shape with known spatial dims. */
static mxk_status pl_geom_of(const pl_param *p, const mxk_shape *d, pl_geom *g,
                             mxk_error_sink *err) {
    g->N = d->dims[0], g->C = d->dims[1], g->H = d->dims[2], g->W = d->dims[3];
    if (p->global) {
        g->kh = g->H, g->kw = g->W, g->sh = g->sw = 1, g->ph = g->pw = 0;
    } else {
        g->kh = p->kernel[0], g->kw = p->kernel[1];
        g->sh = p->stride[0], g->sw = p->stride[1];
        g->ph = p->pad[0], g->pw = p->pad[1];
    }
    int64_t x[2] = {g->H, g->W}, k[2] = {g->kh, g->kw}, s[2] = {g->sh, g->sw},
            pd[2] = {g->ph, g->pw}, o[2];
    for (int i = 0; i < 2; i++) {
        if (x[i] == 0) {
            o[i] = 0;
            continue;
        }
        if (k[i] > x[i] + 2 * pd[i])
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "kernel size (%lld) exceeds input (%lld padded with %lld)",
                                 (long long)k[i], (long long)x[i], (long long)pd[i]);
        int64_t span = x[i] + 2 * pd[i] - k[i];
        o[i] = (p->full ? (span + s[i] - 1) / s[i] : span / s[i]) + 1;
    }
    g->OH = o[0], g->OW = o[1];
    return MXK_OK;
}

/** Shape inference: 4-D data -> (N, C, OH, OW). */
static mxk_status pl_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "Pooling expects 1 argument and 1 "
                             "output");
    if (in[0].ndim == 0)
        return MXK_OK;
    if (in[0].ndim != 4) {
        char s[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': cpu-blas Pooling needs 4-D NCHW data, got %s",
                             mxk_sdk_shape_format(&in[0], s, sizeof s));
    }
    /* past this, x + 2 * pad (pad < 2^31) cannot overflow */
    MXK_SDK_CHECK(mxk_sdk_shape_check_count(&in[0], "argument 'data'", err));
    pl_geom g;
    MXK_SDK_CHECK(pl_geom_of(param, &in[0], &g, err));
    int64_t od[4] = {g.N, g.C, g.OH, g.OW};
    mxk_shape y = mxk_sdk_shape_from(od, 4);
    return mxk_sdk_shape_assign_named(&out[0], &y, "output", "output", err);
}

/** All float32. */
static mxk_status pl_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, pl_args, out, num_out, pl_outs, aux,
                                      num_aux, err);
}

/** Backward reads out_grad; max also data and output (to find the argmax). */
static void pl_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    const pl_param *p = param;
    need_out_grad[0] = 1;
    if (p->type == PL_MAX) {
        need_in_data[0] = 1;
        need_out_data[0] = 1;
    }
}

/** One window: clipped bounds and the divisor of avg. */
typedef struct pl_win {
    int64_t h0, h1, w0, w1;
    float size;
} pl_win;

/** The window of output (oh, ow) (pool.h). */
static inline pl_win pl_window(const pl_param *p, const pl_geom *g, int64_t oh, int64_t ow) {
    pl_win w;
    int64_t hs = oh * g->sh - g->ph, ws = ow * g->sw - g->pw;
    int64_t he = hs + g->kh < g->H + g->ph ? hs + g->kh : g->H + g->ph;
    int64_t we = ws + g->kw < g->W + g->pw ? ws + g->kw : g->W + g->pw;
    int64_t padded = (he - hs) * (we - ws);
    w.h0 = hs < 0 ? 0 : hs, w.w0 = ws < 0 ? 0 : ws;
    w.h1 = he < g->H ? he : g->H, w.w1 = we < g->W ? we : g->W;
    int64_t real = (w.h1 - w.h0) * (w.w1 - w.w0);
    if (real < 0)
        real = 0;
    w.size = (float)(p->include_pad ? padded : real);
    return w;
}

/** 1 when max pooling is 2x2 / stride 2 / no padding with every window inside the map. */
static int pl_is_max22(const pl_param *p, const pl_geom *g) {
    return p->type == PL_MAX && g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2 &&
           g->ph == 0 && g->pw == 0 && 2 * g->OH <= g->H && 2 * g->OW <= g->W;
}

/**
 * Max 2x2 / stride 2 forward (pl_is_max22): the general loop's result exactly
 * (start at the lowest float, take each of the four in row-major order when it
 * is greater), without the per-window bounds.
 */
static void pl_max22_forward(const pl_geom *g, int64_t nc0, int64_t nc1, const float *x, float *y,
                             mxk_op_req req) {
    const int64_t S = g->H * g->W, OS = g->OH * g->OW;
    for (int64_t nc = nc0; nc < nc1; nc++)
        for (int64_t oh = 0; oh < g->OH; oh++) {
            const float *r0 = x + nc * S + 2 * oh * g->W, *r1 = r0 + g->W;
            float *yp = y + nc * OS + oh * g->OW;
            for (int64_t ow = 0; ow < g->OW; ow++) {
                float r = -FLT_MAX, v;
                v = r0[2 * ow], r = v > r ? v : r;
                v = r0[2 * ow + 1], r = v > r ? v : r;
                v = r1[2 * ow], r = v > r ? v : r;
                v = r1[2 * ow + 1], r = v > r ? v : r;
                if (req == MXK_REQ_ADD)
                    yp[ow] += r;
                else
                    yp[ow] = r;
            }
        }
}

/** v when f is 1, else the float with bits `other` (bit masks, so no branch). */
static inline float pl_pick(int f, float v, uint32_t other) {
    uint32_t u, m = UINT32_C(0) - (uint32_t)f;
    memcpy(&u, &v, sizeof u);
    u = (u & m) | (other & ~m);
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
}

/**
 * Max 2x2 / stride 2 backward (pl_is_max22): dy goes to the first of the four
 * (row-major) equal to the output, as in the general loop. add = 1: dx holds
 * what the gradients add to (ADD; or zeroed, when the windows do not tile the
 * map); add = 0: the windows tile the map (2 OH = H, 2 OW = W) and every
 * element of dx is written (WRITE / INPLACE, no memset needed). Branch-free:
 * data-dependent branches mispredict about every other window.
 */
static void pl_max22_backward(const pl_geom *g, int64_t nc0, int64_t nc1, const float *restrict x,
                              const float *restrict y, const float *restrict dy, float *restrict dx,
                              int add) {
    const int64_t S = g->H * g->W, OS = g->OH * g->OW, OW = g->OW;
    /* adding -0.0 leaves every value (even -0.0) unchanged */
    const uint32_t other = add ? UINT32_C(0x80000000) : 0u;
    for (int64_t nc = nc0; nc < nc1; nc++)
        for (int64_t oh = 0; oh < g->OH; oh++) {
            const float *restrict x0 = x + nc * S + 2 * oh * g->W, *restrict x1 = x0 + g->W;
            float *restrict d0 = dx + nc * S + 2 * oh * g->W, *restrict d1 = d0 + g->W;
            const float *restrict yp = y + nc * OS + oh * OW, *restrict dyp =
                                                                  dy + nc * OS + oh * OW;
            for (int64_t ow = 0; ow < OW; ow++) {
                const float m = yp[ow], gv = dyp[ow];
                const int f0 = x0[2 * ow] == m;
                const int f1 = !f0 & (x0[2 * ow + 1] == m);
                const int f2 = !(f0 | f1) & (x1[2 * ow] == m);
                const int f3 = !(f0 | f1 | f2) & (x1[2 * ow + 1] == m);
                const float v0 = pl_pick(f0, gv, other), v1 = pl_pick(f1, gv, other);
                const float v2 = pl_pick(f2, gv, other), v3 = pl_pick(f3, gv, other);
                if (add) {
                    d0[2 * ow] += v0, d0[2 * ow + 1] += v1;
                    d1[2 * ow] += v2, d1[2 * ow + 1] += v3;
                } else {
                    d0[2 * ow] = v0, d0[2 * ow + 1] = v1;
                    d1[2 * ow] = v2, d1[2 * ow + 1] = v3;
                }
            }
        }
}

/** A pooling call split by planes (n, c) over the kernel's threads. */
typedef struct pl_run {
    const pl_param *p;
    const pl_geom *g;
    const float *x, *y; /**< data and output (backward of max only) */
    const float *dy;    /**< output gradient (backward) */
    float *out;         /**< forward: y; backward: dx */
    mxk_op_req req;
} pl_run;

/** Fewest elements of the input per thread worth splitting for. */
#define PL_GRAIN 16384

/** Planes of the input per thread: at least one, PL_GRAIN elements in all. */
static int64_t pl_grain(const pl_geom *g) {
    int64_t S = g->H * g->W;
    return S >= PL_GRAIN ? 1 : PL_GRAIN / (S > 0 ? S : 1);
}

/** Forward of planes [nc0, nc1): max / avg / sum over each window, by the request. */
static void pl_forward_part(void *arg, int64_t nc0, int64_t nc1) {
    const pl_run *r = arg;
    const pl_param *p = r->p;
    const pl_geom *g = r->g;
    if (pl_is_max22(p, g)) {
        pl_max22_forward(g, nc0, nc1, r->x, r->out, r->req);
        return;
    }
    const int64_t S = g->H * g->W, OS = g->OH * g->OW;
    for (int64_t nc = nc0; nc < nc1; nc++) {
        const float *xp = r->x + nc * S;
        float *yp = r->out + nc * OS;
        for (int64_t oh = 0; oh < g->OH; oh++)
            for (int64_t ow = 0; ow < g->OW; ow++) {
                pl_win w = pl_window(p, g, oh, ow);
                float v;
                if (p->type == PL_MAX) {
                    v = -FLT_MAX;
                    for (int64_t h = w.h0; h < w.h1; h++)
                        for (int64_t c = w.w0; c < w.w1; c++)
                            v = xp[h * g->W + c] > v ? xp[h * g->W + c] : v;
                } else {
                    v = 0.0f;
                    for (int64_t h = w.h0; h < w.h1; h++)
                        for (int64_t c = w.w0; c < w.w1; c++)
                            v += xp[h * g->W + c];
                    if (p->type == PL_AVG)
                        v = w.size > 0 ? v / w.size : 0.0f;
                }
                mxk_sdk_assign_f32(&yp[oh * g->OW + ow], v, r->req);
            }
    }
}

/** Forward: max / avg / sum over each window, stored by the request. */
static mxk_status pl_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const pl_param *p = param;
    MXK_SDK_CHECK(cb_check_forward(args, 1, 1, pl_args, pl_outs, pl_infer_shape, param, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    pl_geom g;
    MXK_SDK_CHECK(pl_geom_of(p, &args->in_data[0]->shape, &g, err));
    pl_run r = {p, &g, cb_f32(args->in_data[0]), NULL, NULL, cb_f32(args->out_data[0]), req};
    cb_parallel_for(ctx, g.N * g.C, pl_grain(&g), pl_forward_part, &r);
    return MXK_OK;
}

/** Backward of planes [nc0, nc1): dx (zeroed for WRITE) += the routed dy of every window. */
static void pl_backward_part(void *arg, int64_t nc0, int64_t nc1) {
    const pl_run *r = arg;
    const pl_param *p = r->p;
    const pl_geom *g = r->g;
    const int64_t S = g->H * g->W, OS = g->OH * g->OW;
    float *dx = r->out;
    if (pl_is_max22(p, g)) {
        int tiled = 2 * g->OH == g->H && 2 * g->OW == g->W;
        if (r->req != MXK_REQ_ADD && !tiled)
            memset(dx + nc0 * S, 0, sizeof(float) * (size_t)((nc1 - nc0) * S));
        pl_max22_backward(g, nc0, nc1, r->x, r->y, r->dy, dx, r->req == MXK_REQ_ADD || !tiled);
        return;
    }
    if (r->req != MXK_REQ_ADD)
        memset(dx + nc0 * S, 0, sizeof(float) * (size_t)((nc1 - nc0) * S));
    for (int64_t nc = nc0; nc < nc1; nc++) {
        float *dxp = dx + nc * S;
        const float *dyp = r->dy + nc * OS;
        for (int64_t oh = 0; oh < g->OH; oh++)
            for (int64_t ow = 0; ow < g->OW; ow++) {
                pl_win w = pl_window(p, g, oh, ow);
                float gv = dyp[oh * g->OW + ow];
                if (p->type == PL_MAX) {
                    const float *xp = r->x + nc * S;
                    float m = r->y[nc * OS + oh * g->OW + ow];
                    int found = 0;
                    for (int64_t h = w.h0; h < w.h1 && !found; h++)
                        for (int64_t c = w.w0; c < w.w1; c++)
                            if (xp[h * g->W + c] == m) {
                                dxp[h * g->W + c] += gv;
                                found = 1;
                                break;
                            }
                } else {
                    if (p->type == PL_AVG)
                        gv = w.size > 0 ? gv / w.size : 0.0f;
                    for (int64_t h = w.h0; h < w.h1; h++)
                        for (int64_t c = w.w0; c < w.w1; c++)
                            dxp[h * g->W + c] += gv;
                }
            }
    }
}

/** Backward: dx (zeroed for WRITE) += the routed dy of every window. */
static mxk_status pl_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const pl_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cb_check_tensor(args->out_grad[0], "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(args->in_grad[0], "gradient of 'data'", err));
    const mxk_shape *ds = &args->in_grad[0]->shape;
    mxk_shape in = *ds, ys = mxk_sdk_shape_unknown();
    MXK_SDK_CHECK(pl_infer_shape(p, &in, 1, &ys, 1, NULL, 0, err));
    if (!mxk_sdk_shape_equal(&ys, &args->out_grad[0]->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'output' does not match the data");
    if (p->type == PL_MAX) {
        MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'data'", err));
        MXK_SDK_CHECK(cb_check_tensor(args->out_data[0], "output 'output'", err));
        if (!mxk_sdk_shape_equal(&args->in_data[0]->shape, ds) ||
            !mxk_sdk_shape_equal(&args->out_data[0]->shape, &ys))
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "data / output shapes do not match");
    }
    pl_geom g;
    MXK_SDK_CHECK(pl_geom_of(p, ds, &g, err));
    pl_run r = {p,
                &g,
                p->type == PL_MAX ? cb_f32(args->in_data[0]) : NULL,
                p->type == PL_MAX ? cb_f32(args->out_data[0]) : NULL,
                cb_f32(args->out_grad[0]),
                cb_f32(args->in_grad[0]),
                req};
    cb_parallel_for(ctx, g.N * g.C, pl_grain(&g), pl_backward_part, &r);
    return MXK_OK;
}

/** Registers Pooling and its CPU kernel. */
mxk_status cb_register_pooling(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = "Pooling";
    def.description = "2-D max / average / sum pooling over NCHW data.";
    def.attrs = pl_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(pl_attrs);
    def.arguments = pl_args;
    def.outputs = pl_outs;
    def.parse_param = pl_parse;
    def.free_param = cbt_param_free;
    def.infer_shape = pl_infer_shape;
    def.infer_type = pl_infer_type;
    def.backward_dependency = pl_backward_dependency;
    mxk_op_kernel_def k;
    cb_kernel_init(&k, "Pooling", pl_forward, pl_backward);
    return cb_register(reg, &def, &k, err);
}
