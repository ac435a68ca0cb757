/*
 * cpu-blas plugin: random sampling _random_uniform / random_uniform and
 * _random_normal / random_normal.
 *
 * Semantics: MXNet src/operator/random/sample_op.h and sample_op.cc
 * (SampleUniformParam: low 0, high 1; SampleNormalParam: loc 0, scale 1 (the
 * standard deviation); both: shape (required here, "()" is refused), ctx (ignored:
 * the device is the caller's), dtype None|float16|float32|float64, None meaning
 * float32). No arguments; numbers come from the operator's random resource
 * (counter-based Philox streams of the kernel), so a fixed mxk_random_seed gives
 * the same numbers whatever the thread count. Other dtypes are converted from
 * float32 samples drawn in fixed-size chunks (no allocation). No gradient.
 */
#include <math.h>

#include "cb_tensor.h"

/** Samples drawn per chunk for non-float32 outputs or the ADD request. */
#define RND_CHUNK 256

/** Parsed attributes: a, b are (low, high) or (loc, scale). */
typedef struct rnd_param {
    int32_t normal;
    int32_t dtype;
    float a, b;
    mxk_shape shape;
} rnd_param;

static const char *const rnd_args[] = {NULL};
static const char *const rnd_outs[] = {"output", NULL};

#define RND_DTYPES "None|float16|float32|float64"

/** Attribute schema of the uniform sampler. */
static const mxk_attr_def uni_attrs[] = {
    MXK_SDK_ATTR("low", MXK_ATTR_FLOAT, 0, "0", NULL, "Lower bound of the distribution."),
    MXK_SDK_ATTR("high", MXK_ATTR_FLOAT, 0, "1", NULL, "Upper bound of the distribution."),
    MXK_SDK_ATTR("shape", MXK_ATTR_SHAPE, 0, "()", NULL, "Shape of the output."),
    MXK_SDK_ATTR("ctx", MXK_ATTR_STRING, 0, "", NULL, "Context of the output (ignored)."),
    MXK_SDK_ATTR("dtype", MXK_ATTR_ENUM, 0, "None", RND_DTYPES, "Output dtype (None: float32)."),
};
/** Attribute schema of the normal sampler. */
static const mxk_attr_def nrm_attrs[] = {
    MXK_SDK_ATTR("loc", MXK_ATTR_FLOAT, 0, "0", NULL, "Mean of the distribution."),
    MXK_SDK_ATTR("scale", MXK_ATTR_FLOAT, 0, "1", NULL, "Standard deviation of the distribution."),
    MXK_SDK_ATTR("shape", MXK_ATTR_SHAPE, 0, "()", NULL, "Shape of the output."),
    MXK_SDK_ATTR("ctx", MXK_ATTR_STRING, 0, "", NULL, "Context of the output (ignored)."),
    MXK_SDK_ATTR("dtype", MXK_ATTR_ENUM, 0, "None", RND_DTYPES, "Output dtype (None: float32)."),
};

/** Parses the attributes of one sampler; shape must be non-empty with dims >= 1. */
static mxk_status rnd_parse(const mxk_attrs *attrs, int32_t normal, void **out,
                            mxk_error_sink *err) {
    static const int32_t codes[] = {MXK_FLOAT32, MXK_FLOAT16, MXK_FLOAT32, MXK_FLOAT64};
    rnd_param p = {.normal = normal};
    double a, b;
    int32_t dt = 0;
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, normal ? "loc" : "low", &a, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, normal ? "scale" : "high", &b, err));
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "shape", &p.shape, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "dtype", RND_DTYPES, &dt, err));
    if (!mxk_sdk_shape_is_known(&p.shape))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'shape': needs at least one dim, all >= 1");
    if (normal && !(b >= 0.0))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'scale': must be >= 0, got %g", b);
    if (!normal && !(a <= b))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'low' (%g) must not exceed 'high' (%g)", a, b);
    p.a = (float)a;
    p.b = (float)b;
    p.dtype = codes[dt];
    return cbt_param_new(&p, sizeof p, out, err);
}
/** parse_param of the uniform sampler. */
static mxk_status uni_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return rnd_parse(a, 0, o, e);
}
/** parse_param of the normal sampler. */
static mxk_status nrm_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return rnd_parse(a, 1, o, e);
}

/** Output shape from the attribute. */
static mxk_status rnd_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    if (num_in != 0 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "samplers take no arguments");
    return mxk_sdk_shape_assign_named(&out[0], &((const rnd_param *)param)->shape, "output",
                                      "output", err);
}

/** Output dtype from the attribute. */
static mxk_status rnd_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                 uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    return mxk_sdk_type_assign(&out[0], ((const rnd_param *)param)->dtype, "output 'output'", err);
}

/** Draws n samples into buf. */
static void rnd_draw(const rnd_param *p, mxk_random *rng, float *buf, uint64_t n) {
    if (p->normal)
        mxk_sdk_host()->random_normal(rng, buf, n, p->a, p->b);
    else
        mxk_sdk_host()->random_uniform(rng, buf, n, p->a, p->b);
}

/** Fills the output with samples by its request. */
static mxk_status rnd_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const rnd_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, 0, 1, rnd_infer_shape, param, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *y = args->out_data[0];
    if (y->dtype != p->dtype)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "output: expected %s, got %s",
                             mxk_sdk_dtype_name(p->dtype), mxk_sdk_dtype_name(y->dtype));
    mxk_random *rng = cbt_random(ctx);
    if (rng == NULL)
        return mxk_sdk_error(err, MXK_ERR_STATE, "no random resource granted");
    uint64_t n = mxk_sdk_shape_count(&y->shape);
    if (y->dtype == MXK_FLOAT32 && req != MXK_REQ_ADD) {
        rnd_draw(p, rng, y->data, n);
        return MXK_OK;
    }
    float buf[RND_CHUNK];
    for (uint64_t i = 0; i < n; i += RND_CHUNK) {
        uint64_t m = n - i < RND_CHUNK ? n - i : RND_CHUNK;
        rnd_draw(p, rng, buf, m);
        for (uint64_t j = 0; j < m; j++)
            cbt_store(y->data, y->dtype, i + j, buf[j], req);
    }
    return MXK_OK;
}

/** Samplers have no gradient. */
static int32_t rnd_no_gradient(const void *param) {
    return 1;
}

/** Registers the samplers under their MXNet names and their CPU kernels. */
mxk_status cb_register_random(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const names[] = {"_random_uniform", "random_uniform", "_random_normal",
                                        "random_normal"};
    for (int i = 0; i < 4; i++) {
        int normal = i >= 2;
        mxk_op_def def;
        mxk_sdk_op_def_init(&def);
        def.description = normal ? "Samples from a normal distribution N(loc, scale^2)."
                                 : "Samples from a uniform distribution on [low, high).";
        def.attrs = normal ? nrm_attrs : uni_attrs;
        def.num_attrs = normal ? MXK_SDK_COUNTOF(nrm_attrs) : MXK_SDK_COUNTOF(uni_attrs);
        def.arguments = rnd_args;
        def.outputs = rnd_outs;
        def.parse_param = normal ? nrm_parse : uni_parse;
        def.free_param = cbt_param_free;
        def.infer_shape = rnd_infer_shape;
        def.infer_type = rnd_infer_type;
        def.forward_resources = cbt_resources_random;
        def.no_gradient = rnd_no_gradient;
        MXK_SDK_CHECK(cbt_register(reg, &def, names[i], rnd_forward, NULL, 1, err));
    }
    return MXK_OK;
}
