/*
 * cpu-blas plugin: Pooling (1-D, 2-D and 3-D; channel-first or channel-last).
 *
 * Semantics: MXNet src/operator/nn/pooling-inl.h, pooling.cc, pool.h,
 * pool_utils.h. Data (N, C, x...) with nd = the kernel's length spatial axes (any
 * of 1..3 with global_pool); output (N, C, o...) with
 *   valid: o = floor((x + 2p - k)/s) + 1     full: o = ceil((x + 2p - k)/s) + 1
 *   same (1-D only, pad 0): o = ceil(x/s)
 * global_pool: the kernel is the whole map, pad 0, stride 1 (output 1 per axis).
 * Windows follow pool.h: start = o*s - p, end = min(start + k, x + p); the
 * count_include_pad divisor of avg is the window size before clipping to the
 * input, else after; the window is then clipped to [0, x). max of an empty
 * window is the lowest float (as upstream); sum adds without dividing; lp
 * (p_value 1, 2 or 3) is (sum of x^p)^(1/p) without absolute values, as
 * pool_utils.h's a_pow_p / a_root_p.
 * Backward: max sends dy to the FIRST position in row-major scan of the window
 * whose input equals the output (pool.h unpool_max); avg spreads dy/size, sum dy,
 * lp dy * (x/y)^(p-1) (0 where y is 0). Backward reads out_grad, plus data and
 * output for max and lp.
 * Layouts: channel-first (NCW, NCHW, NCDHW; the default) and channel-last (NWC,
 * NHWC, NDHWC: data (N, x..., C), output (N, o..., C)), as pool.h's CPU kernels.
 * Every call works on three axes (d, h, w): 1-D and 2-D data have leading axes of
 * size 1 (cb_spatial.h). The window arithmetic is plugins/common/mxk_pool.h's,
 * shared with the cuda plugin.
 * Refused like upstream: pad >= kernel with max or avg pooling (MXNet's MKLDNN
 * pooling, src/operator/nn/mkldnn/mkldnn_pooling.cc: "Check failed: pad_l[0] <
 * kernel[0]"), lp without p_value or with p other than 1..3, 'same' with pad or
 * data other than 3-D.
 */
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "cb_spatial.h"
#include "cb_tensor.h"
#include "mxk_pool.h"

/** Pool types (mxk_pool.h). */
enum { PL_MAX = MXK_POOL_MAX, PL_AVG = MXK_POOL_AVG, PL_SUM = MXK_POOL_SUM, PL_LP = MXK_POOL_LP };

/** Pooling conventions. */
enum { PL_VALID = 0, PL_FULL = 1, PL_SAME = 2 };

/** Parsed attributes of Pooling; per-axis arrays are (d, h, w) (cb_spatial.h). */
typedef struct pl_param {
    int32_t nd;        /**< the kernel's length (0: global_pool without kernel) */
    int32_t layout_nd; /**< spatial axes of the layout attribute (0: not set) */
    int32_t last;      /**< channel-last layout (NWC, NHWC, NDHWC) */
    int64_t kernel[CB_SP_AXES], stride[CB_SP_AXES], pad[CB_SP_AXES];
    int32_t type;        /**< PL_* */
    int32_t global;      /**< global_pool */
    int32_t conv;        /**< pooling_convention, PL_VALID / PL_FULL / PL_SAME */
    int32_t include_pad; /**< count_include_pad */
    int64_t p_value;     /**< lp: 1, 2 or 3 */
} pl_param;

static const char *const pl_args[] = {"data", NULL};
static const char *const pl_outs[] = {"output", NULL};

/** Layout values of MXNet's schema. */
#define PL_LAYOUTS "None|NCW|NCHW|NCDHW|NWC|NHWC|NDHWC"

/** Attribute schema (MXNet 1.9.1 PoolingParam). */
static const mxk_attr_def pl_attrs[] = {
    MXK_SDK_ATTR("kernel", MXK_ATTR_SHAPE, 0, "()", NULL,
                 "Pooling kernel size: (x,), (y, x) or (d, y, x)."),
    MXK_SDK_ATTR("pool_type", MXK_ATTR_ENUM, 0, "max", "max|avg|sum|lp", "Pooling type."),
    MXK_SDK_ATTR("global_pool", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Pool over the whole map, ignoring kernel, stride and pad."),
    MXK_SDK_ATTR("pooling_convention", MXK_ATTR_ENUM, 0, "valid", "valid|full|same",
                 "Output size rule: floor (valid), ceil (full), or ceil(x/s) (same, 1-D)."),
    MXK_SDK_ATTR("stride", MXK_ATTR_SHAPE, 0, "()", NULL, "Stride per axis; default 1."),
    MXK_SDK_ATTR("pad", MXK_ATTR_SHAPE, 0, "()", NULL, "Padding per axis; default 0."),
    MXK_SDK_ATTR("p_value", MXK_ATTR_INT, 0, NULL, NULL,
                 "Power of lp pooling: 1, 2 or 3; required for lp."),
    MXK_SDK_ATTR("count_include_pad", MXK_ATTR_BOOL, 0, "True", NULL,
                 "avg: count padded positions in the divisor."),
    MXK_SDK_ATTR("cudnn_off", MXK_ATTR_BOOL, 0, "False", NULL, "Turn off cuDNN (ignored)."),
    MXK_SDK_ATTR("layout", MXK_ATTR_ENUM, 0, "None", PL_LAYOUTS,
                 "Data layout; default: channel-first of the data's rank."),
};

/**
 * The pad of pooling_convention 'same': every value must be 0 ("Same pooling
 * convention disables the use of pad parameter", pooling.cc). Any length is
 * accepted: upstream reads pad[0..2] whatever the kernel's length, so its only
 * working spelling for a 1-D kernel is pad=(0,0,0).
 */
static mxk_status pl_same_pad(const mxk_attrs *attrs, mxk_error_sink *err) {
    mxk_shape s = mxk_sdk_shape_unknown();
    if (mxk_sdk_attr_is_set(attrs, "pad"))
        MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "pad", &s, err));
    for (int i = 0; i < s.ndim; i++)
        if (s.dims[i] != 0)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "attribute 'pad': Same pooling convention disables the use of "
                                 "pad parameter");
    return MXK_OK;
}

/** Parses and validates the attributes (see the file comment for the refusals). */
static mxk_status pl_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    pl_param p;
    memset(&p, 0, sizeof p);
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "pool_type", "max|avg|sum|lp", &p.type, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "global_pool", &p.global, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "pooling_convention", "valid|full|same", &p.conv, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "count_include_pad", &p.include_pad, err));
    if (p.type == PL_LP) {
        if (!mxk_sdk_attr_is_set(attrs, "p_value"))
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "attribute 'p_value': required for lp pooling");
        MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "p_value", &p.p_value, err));
        if (p.p_value < 1 || p.p_value > 3)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "attribute 'p_value': p value of %lld is not supported yet "
                                 "(1, 2 or 3)",
                                 (long long)p.p_value);
    }
    mxk_shape k = mxk_sdk_shape_unknown();
    if (mxk_sdk_attr_is_set(attrs, "kernel"))
        MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "kernel", &k, err));
    if (k.ndim > CB_SP_AXES)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'kernel': %dD pooling not supported", (int)k.ndim);
    if (k.ndim == 0 && !p.global)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'kernel': required unless global_pool is set");
    p.nd = (int32_t)k.ndim;
    if (p.nd > 0) { /* global_pool without kernel ignores stride and pad */
        MXK_SDK_CHECK(cb_sp_tuple(attrs, "kernel", "Kernel", p.nd, 1, 1, p.kernel, err));
        MXK_SDK_CHECK(cb_sp_tuple(attrs, "stride", "Stride", p.nd, 1, 1, p.stride, err));
        if (p.conv == PL_SAME)
            MXK_SDK_CHECK(pl_same_pad(attrs, err));
        else
            MXK_SDK_CHECK(cb_sp_tuple(attrs, "pad", "Padding", p.nd, 0, 0, p.pad, err));
    }
    int32_t layout = 0;
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "layout", PL_LAYOUTS, &layout, err));
    if (layout > 0) {
        p.layout_nd = (layout - 1) % CB_SP_AXES + 1;
        p.last = layout > CB_SP_AXES;
    }
    if (p.nd > 0 && p.layout_nd > 0 && p.layout_nd != p.nd)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'layout': Need %dD layout for a %d-D kernel, got '%s'",
                             p.nd, p.nd, mxk_sdk_attr_raw(attrs, "layout"));
    for (int i = CB_SP_AXES - p.nd; i < CB_SP_AXES && !p.global; i++) {
        if ((p.type == PL_MAX || p.type == PL_AVG) && p.pad[i] >= p.kernel[i])
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "attribute 'pad': pad %lld is not smaller than the kernel %lld "
                                 "along spatial axis %d (max and avg pooling need pad < kernel, "
                                 "as MXNet's pad_l < kernel check)",
                                 (long long)p.pad[i], (long long)p.kernel[i],
                                 i - (CB_SP_AXES - p.nd));
    }
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Effective geometry of one call on three axes (d, h, w). */
typedef struct pl_geom {
    int64_t N, C, D, H, W, OD, OH, OW;
    int64_t kd, kh, kw, sd, sh, sw, pd, ph, pw;
    int64_t S, OS; /**< input / output plane sizes */
    int64_t es;    /**< element stride of a plane: 1 (channel-first) or C (channel-last) */
} pl_geom;

/** Offset of the first element of plane nc = n*C + c in a tensor of `size` elements per plane. */
static inline int64_t pl_base(const pl_geom *g, int64_t nc, int64_t size) {
    return g->es == 1 ? nc * size : (nc / g->C) * size * g->C + nc % g->C;
}

/**
 * Output size along one axis (pooling.cc PoolingShape); MXK_ERR_SHAPE "kernel
 * size (3) exceeds input (2 padded to 2)" when the kernel is larger than the
 * padded input.
 */
static mxk_status pl_out_size(const pl_param *p, int64_t x, int64_t k, int64_t s, int64_t pad,
                              int64_t *o, mxk_error_sink *err) {
    if (k > x + 2 * pad)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "kernel size (%lld) exceeds input (%lld padded to %lld)", (long long)k,
                             (long long)x, (long long)(x + 2 * pad));
    int64_t span = x + 2 * pad - k;
    if (p->conv == PL_SAME)
        *o = (x + 2 * pad + s - 1) / s;
    else
        *o = (p->conv == PL_FULL ? (span + s - 1) / s : span / s) + 1;
    return MXK_OK;
}

/**
 * Computes the geometry from a data shape of 3 to 5 axes (checked by the
 * caller) with known spatial dims; an unknown (0) spatial dim gives output 0.
 */
static mxk_status pl_geom_of(const pl_param *p, const mxk_shape *d, pl_geom *g,
                             mxk_error_sink *err) {
    const int nd = d->ndim - 2, lead = CB_SP_AXES - nd, first = p->last ? 1 : 2;
    int64_t x[CB_SP_AXES] = {1, 1, 1}, k[CB_SP_AXES], s[CB_SP_AXES], pd[CB_SP_AXES],
            o[CB_SP_AXES] = {1, 1, 1};
    for (int i = 0; i < nd; i++)
        x[lead + i] = d->dims[first + i];
    for (int i = 0; i < CB_SP_AXES; i++) {
        if (p->global)
            k[i] = x[i], s[i] = 1, pd[i] = 0;
        else
            k[i] = p->kernel[i], s[i] = p->stride[i], pd[i] = p->pad[i];
        if (x[i] > 0)
            MXK_SDK_CHECK(pl_out_size(p, x[i], k[i], s[i], pd[i], &o[i], err));
        else
            o[i] = 0;
    }
    g->N = d->dims[0], g->C = d->dims[p->last ? nd + 1 : 1];
    g->es = p->last ? g->C : 1;
    g->D = x[0], g->H = x[1], g->W = x[2];
    g->OD = o[0], g->OH = o[1], g->OW = o[2];
    g->kd = k[0], g->kh = k[1], g->kw = k[2];
    g->sd = s[0], g->sh = s[1], g->sw = s[2];
    g->pd = pd[0], g->ph = pd[1], g->pw = pd[2];
    g->S = g->D * g->H * g->W, g->OS = g->OD * g->OH * g->OW;
    return MXK_OK;
}

/** Shape inference: (N, C, x...) -> (N, C, o...), the data's rank checked against the kernel's. */
static mxk_status pl_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    static const char *const layouts[CB_SP_AXES] = {"(batch, channel, x)", "(batch, channel, y, x)",
                                                    "(batch, channel, d, y, x)"};
    const pl_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "Pooling expects 1 argument and 1 output");
    if (in[0].ndim == 0)
        return MXK_OK;
    char sb[MXK_SDK_SHAPE_STR_MAX];
    if (p->conv == PL_SAME && in[0].ndim != 3)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': Pooling: Input data should be 3D in (batch, "
                             "channel, x). Currently 'same' supports Max Pooling 1-D, got %s",
                             mxk_sdk_shape_format(&in[0], sb, sizeof sb));
    if (in[0].ndim < 3 || in[0].ndim > 5)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': Pooling: Input data should be 3D in (batch, "
                             "channel, x) Or 4D in (batch, channel, y, x) Or 5D in (batch, "
                             "channel, d, y, x), got %s",
                             mxk_sdk_shape_format(&in[0], sb, sizeof sb));
    if (!p->global && in[0].ndim != p->nd + 2)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': Pooling: Input data should be %dD in %s (a %d-D "
                             "kernel), got %s",
                             p->nd + 2, layouts[p->nd - 1], p->nd,
                             mxk_sdk_shape_format(&in[0], sb, sizeof sb));
    if (p->layout_nd > 0 && in[0].ndim != p->layout_nd + 2)
        return mxk_sdk_error(
            err, MXK_ERR_SHAPE, "argument 'data': Pooling: the %dD layout needs %dD data, got %s",
            p->layout_nd, p->layout_nd + 2, mxk_sdk_shape_format(&in[0], sb, sizeof sb));
    if (p->global && p->nd > 0 && in[0].ndim != p->nd + 2)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': global Pooling with a %d-D kernel needs %dD data, "
                             "got %s",
                             p->nd, p->nd + 2, mxk_sdk_shape_format(&in[0], sb, sizeof sb));
    /* past this, x + 2 * pad (pad < 2^31) cannot overflow */
    MXK_SDK_CHECK(mxk_sdk_shape_check_count(&in[0], "argument 'data'", err));
    pl_geom g;
    MXK_SDK_CHECK(pl_geom_of(param, &in[0], &g, err));
    const int nd = in[0].ndim - 2;
    const int64_t o[CB_SP_AXES] = {g.OD, g.OH, g.OW};
    mxk_shape y = in[0]; /* N and C in place; the spatial axes replaced */
    for (int i = 0; i < nd; i++)
        y.dims[(p->last ? 1 : 2) + i] = o[CB_SP_AXES - nd + i];
    return mxk_sdk_shape_assign_named(&out[0], &y, "output", "output", err);
}

/** All float32. */
static mxk_status pl_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, pl_args, out, num_out, pl_outs, aux,
                                      num_aux, err);
}

/** Backward reads out_grad; max and lp also data and output. */
static void pl_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    const pl_param *p = param;
    need_out_grad[0] = 1;
    if (p->type == PL_MAX || p->type == PL_LP) {
        need_in_data[0] = 1;
        need_out_data[0] = 1;
    }
}

/** One window: clipped bounds and the divisor of avg. */
typedef struct pl_win {
    int64_t d0, d1, h0, h1, w0, w1;
    float size;
} pl_win;

/** The window of output (od, oh, ow) (pool.h). */
static inline pl_win pl_window(const pl_param *p, const pl_geom *g, int64_t od, int64_t oh,
                               int64_t ow) {
    pl_win w;
    int64_t padded = mxk_pool_axis(od, g->sd, g->pd, g->kd, g->D, &w.d0, &w.d1) *
                     mxk_pool_axis(oh, g->sh, g->ph, g->kh, g->H, &w.h0, &w.h1) *
                     mxk_pool_axis(ow, g->sw, g->pw, g->kw, g->W, &w.w0, &w.w1);
    int64_t real = (w.d1 - w.d0) * (w.h1 - w.h0) * (w.w1 - w.w0);
    w.size = (float)(p->include_pad ? padded : real);
    return w;
}

/**
 * 1 when channel-first 2-D max pooling is 2x2 / stride 2 / no padding with every
 * window inside the map.
 */
static int pl_is_max22(const pl_param *p, const pl_geom *g) {
    return p->type == PL_MAX && g->es == 1 && g->D == 1 && g->kd == 1 && g->kh == 2 && g->kw == 2 &&
           g->sh == 2 && g->sw == 2 && g->ph == 0 && g->pw == 0 && 2 * g->OH <= g->H &&
           2 * g->OW <= g->W;
}

/**
 * Max 2x2 / stride 2 forward (pl_is_max22): the general loop's result exactly
 * (start at the lowest float, take each of the four in row-major order when it
 * is greater), without the per-window bounds.
 */
static void pl_max22_forward(const pl_geom *g, int64_t nc0, int64_t nc1, const float *x, float *y,
                             mxk_op_req req) {
    const int64_t S = g->S, OS = g->OS;
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
    const int64_t S = g->S, OS = g->OS, OW = g->OW;
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
    const float *x, *y; /**< data and output (backward of max and lp only) */
    const float *dy;    /**< output gradient (backward) */
    float *out;         /**< forward: y; backward: dx */
    mxk_op_req req;
} pl_run;

/** Fewest elements of the input per thread worth splitting for. */
#define PL_GRAIN 16384

/** Planes of the input per thread: at least one, PL_GRAIN elements in all. */
static int64_t pl_grain(const pl_geom *g) {
    int64_t S = g->S;
    return S >= PL_GRAIN ? 1 : PL_GRAIN / (S > 0 ? S : 1);
}

/**
 * Reduces one window of plane xp (elements es apart): max, or the sum of v (avg,
 * sum) or v^p (lp), then avg's division and lp's root.
 */
static float pl_reduce(const pl_param *p, const pl_geom *g, const pl_win *w, const float *xp) {
    const int64_t es = g->es;
    float v = p->type == PL_MAX ? -FLT_MAX : 0.0f;
    for (int64_t d = w->d0; d < w->d1; d++)
        for (int64_t h = w->h0; h < w->h1; h++) {
            const float *row = xp + (d * g->H + h) * g->W * es;
            if (p->type == PL_MAX)
                for (int64_t c = w->w0; c < w->w1; c++)
                    v = row[c * es] > v ? row[c * es] : v;
            else if (p->type == PL_LP)
                for (int64_t c = w->w0; c < w->w1; c++)
                    v += mxk_pool_pow(p->p_value, row[c * es]);
            else
                for (int64_t c = w->w0; c < w->w1; c++)
                    v += row[c * es];
        }
    if (p->type == PL_AVG)
        v = w->size > 0 ? v / w->size : 0.0f;
    else if (p->type == PL_LP)
        v = mxk_pool_root(p->p_value, v);
    return v;
}

/** Forward of planes [nc0, nc1): max / avg / sum / lp over each window, by the request. */
static void pl_forward_part(void *arg, int64_t nc0, int64_t nc1) {
    const pl_run *r = arg;
    const pl_param *p = r->p;
    const pl_geom *g = r->g;
    if (pl_is_max22(p, g)) {
        pl_max22_forward(g, nc0, nc1, r->x, r->out, r->req);
        return;
    }
    for (int64_t nc = nc0; nc < nc1; nc++) {
        const float *xp = r->x + pl_base(g, nc, g->S);
        float *yp = r->out + pl_base(g, nc, g->OS);
        for (int64_t od = 0; od < g->OD; od++)
            for (int64_t oh = 0; oh < g->OH; oh++)
                for (int64_t ow = 0; ow < g->OW; ow++, yp += g->es) {
                    pl_win w = pl_window(p, g, od, oh, ow);
                    mxk_sdk_assign_f32(yp, pl_reduce(p, g, &w, xp), r->req);
                }
    }
}

/**
 * Routes gv, the gradient of output y (value m) of one window, into plane dxp
 * (elements es apart, as xp): max to the first input equal to m; avg gv/size,
 * sum gv, lp pl_lp_grad to every input.
 */
static void pl_route(const pl_param *p, const pl_geom *g, const pl_win *w, const float *xp, float m,
                     float gv, float *dxp) {
    const int64_t es = g->es;
    if (p->type == PL_AVG)
        gv = w->size > 0 ? gv / w->size : 0.0f;
    for (int64_t d = w->d0; d < w->d1; d++)
        for (int64_t h = w->h0; h < w->h1; h++) {
            const int64_t base = (d * g->H + h) * g->W;
            for (int64_t c = w->w0; c < w->w1; c++) {
                const int64_t i = (base + c) * es;
                if (p->type == PL_MAX) {
                    if (xp[i] == m) {
                        dxp[i] += gv;
                        return;
                    }
                } else if (p->type == PL_LP) {
                    dxp[i] += mxk_pool_lp_grad(p->p_value, gv, xp[i], m);
                } else {
                    dxp[i] += gv;
                }
            }
        }
}

/** Forward: max / avg / sum / lp over each window, stored by the request. */
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
    const int64_t S = g->S;
    float *dx = r->out;
    if (pl_is_max22(p, g)) {
        int tiled = 2 * g->OH == g->H && 2 * g->OW == g->W;
        if (r->req != MXK_REQ_ADD && !tiled)
            memset(dx + nc0 * S, 0, sizeof(float) * (size_t)((nc1 - nc0) * S));
        pl_max22_backward(g, nc0, nc1, r->x, r->y, r->dy, dx, r->req == MXK_REQ_ADD || !tiled);
        return;
    }
    if (r->req != MXK_REQ_ADD && g->es == 1)
        memset(dx + nc0 * S, 0, sizeof(float) * (size_t)((nc1 - nc0) * S));
    for (int64_t nc = nc0; nc < nc1; nc++) {
        const int64_t xb = pl_base(g, nc, S);
        if (r->req != MXK_REQ_ADD && g->es != 1)
            for (int64_t i = 0; i < S; i++)
                dx[xb + i * g->es] = 0.0f;
        const float *xp = r->x ? r->x + xb : NULL;
        int64_t o = pl_base(g, nc, g->OS);
        for (int64_t od = 0; od < g->OD; od++)
            for (int64_t oh = 0; oh < g->OH; oh++)
                for (int64_t ow = 0; ow < g->OW; ow++, o += g->es) {
                    pl_win w = pl_window(p, g, od, oh, ow);
                    pl_route(p, g, &w, xp, r->y ? r->y[o] : 0.0f, r->dy[o], dx + xb);
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
    const int reads = p->type == PL_MAX || p->type == PL_LP; /* data and output */
    if (reads) {
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
                reads ? cb_f32(args->in_data[0]) : NULL,
                reads ? cb_f32(args->out_data[0]) : NULL,
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
    static const char *const aliases[] = {"_npx_pooling", NULL};
    def.name = "Pooling";
    def.aliases = aliases;
    def.description = "1-D, 2-D or 3-D max / average / sum / lp pooling over NCW, NCHW or NCDHW "
                      "data.";
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
