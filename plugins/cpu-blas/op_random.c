/*
 * cpu-blas plugin: random sampling without inputs: _random_uniform (aliases
 * uniform, random_uniform), _random_normal (normal, random_normal),
 * _random_gamma (random_gamma), _random_exponential (random_exponential) and
 * _random_randint (random_randint, _npi_random_randint).
 *
 * Semantics: MXNet src/operator/random/sample_op.h and sample_op.cc
 * (SampleUniformParam: low 0, high 1, low <= high; SampleNormalParam: loc 0,
 * scale 1 > 0 (the standard deviation); SampleGammaParam: alpha 1 > 0 (shape),
 * beta 1 > 0 (scale), mean alpha beta; SampleExponentialParam: lam 1 > 0 (rate),
 * mean 1 / lam; SampleRandIntParam: low, high (required int64s, low <= high),
 * integers uniform in [low, high); all: shape (required here, "()" is refused),
 * ctx (ignored: the device is the caller's), dtype None|float32|float64|float16
 * (None: float32) or, for randint, None|int32|int64 (None: int32)). No
 * arguments; numbers come from the operator's random resource (counter-based
 * Philox streams of the kernel), so a fixed mxk_random_seed gives the same
 * numbers whatever the thread count. Gamma uses Marsaglia and Tsang's method
 * (with the alpha + 1 boost below 1), exponential -log(1 - u) / lam, randint
 * 64 random bits modulo high - low. Other dtypes are converted from float32
 * samples drawn in fixed-size chunks (no allocation). No gradient.
 */
#include <math.h>

#include "cb_tensor.h"
#include "mxk_random.h"
#include "op_math_random.h"

/** Samples drawn per chunk. */
#define RND_CHUNK 256

/** The samplers. */
enum rnd_kind { RND_UNIFORM, RND_NORMAL, RND_GAMMA, RND_EXPONENTIAL, RND_RANDINT };

/** Parsed attributes. */
typedef struct rnd_param {
    int32_t kind;      /**< enum rnd_kind */
    int32_t dtype;     /**< output dtype */
    float a, b;        /**< (low, high), (loc, scale), (alpha, beta) or (lam, unused) */
    int64_t low, high; /**< randint */
    mxk_shape shape;
} rnd_param;

static const char *const rnd_args[] = {NULL};
static const char *const rnd_outs[] = {"output", NULL};

#define RND_DTYPES "None|float32|float64|float16"
#define RND_INT_DTYPES "None|int32|int64"

/** The attributes every sampler shares (after its distribution's). */
#define RND_COMMON_ATTRS(dtypes)                                                                   \
    MXK_SDK_ATTR("shape", MXK_ATTR_SHAPE, 0, "()", NULL, "Shape of the output."),                  \
        MXK_SDK_ATTR("ctx", MXK_ATTR_STRING, 0, "", NULL, "Context of the output (ignored)."),     \
        MXK_SDK_ATTR("dtype", MXK_ATTR_ENUM, 0, "None", dtypes,                                    \
                     "Output dtype (None: float32, int32 for randint).")

static const mxk_attr_def uni_attrs[] = {
    MXK_SDK_ATTR("low", MXK_ATTR_FLOAT, 0, "0", NULL, "Lower bound of the distribution."),
    MXK_SDK_ATTR("high", MXK_ATTR_FLOAT, 0, "1", NULL, "Upper bound of the distribution."),
    RND_COMMON_ATTRS(RND_DTYPES),
};
static const mxk_attr_def nrm_attrs[] = {
    MXK_SDK_ATTR("loc", MXK_ATTR_FLOAT, 0, "0", NULL, "Mean of the distribution."),
    MXK_SDK_ATTR("scale", MXK_ATTR_FLOAT, 0, "1", NULL, "Standard deviation of the distribution."),
    RND_COMMON_ATTRS(RND_DTYPES),
};
static const mxk_attr_def gam_attrs[] = {
    MXK_SDK_ATTR("alpha", MXK_ATTR_FLOAT, 0, "1", NULL, "Alpha parameter (shape) of the gamma."),
    MXK_SDK_ATTR("beta", MXK_ATTR_FLOAT, 0, "1", NULL, "Beta parameter (scale) of the gamma."),
    RND_COMMON_ATTRS(RND_DTYPES),
};
static const mxk_attr_def exp_attrs[] = {
    MXK_SDK_ATTR("lam", MXK_ATTR_FLOAT, 0, "1", NULL,
                 "Lambda parameter (rate) of the exponential."),
    RND_COMMON_ATTRS(RND_DTYPES),
};
static const mxk_attr_def int_attrs[] = {
    MXK_SDK_ATTR("low", MXK_ATTR_INT, 1, NULL, NULL, "Lower bound of the distribution."),
    MXK_SDK_ATTR("high", MXK_ATTR_INT, 1, NULL, NULL, "Upper bound of the distribution."),
    RND_COMMON_ATTRS(RND_INT_DTYPES),
};

/** Reads the positive finite attribute `key`; upstream's message otherwise. */
static mxk_status rnd_positive(const mxk_attrs *attrs, const char *key, const char *what,
                               float *out, mxk_error_sink *err) {
    double v;
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, key, &v, err));
    if (!(v > 0.0))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "attribute '%s': %s, got %g", key, what,
                             v);
    *out = (float)v;
    return MXK_OK;
}

/** Parses the attributes of sampler `kind`; shape must be non-empty with dims >= 1. */
static mxk_status rnd_parse(const mxk_attrs *attrs, int32_t kind, void **out, mxk_error_sink *err) {
    static const int32_t fcodes[] = {MXK_FLOAT32, MXK_FLOAT32, MXK_FLOAT64, MXK_FLOAT16};
    static const int32_t icodes[] = {MXK_INT32, MXK_INT32, MXK_INT64};
    rnd_param p = {.kind = kind};
    int32_t dt = 0;
    double a, b;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "shape", &p.shape, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "dtype",
                                    kind == RND_RANDINT ? RND_INT_DTYPES : RND_DTYPES, &dt, err));
    p.dtype = kind == RND_RANDINT ? icodes[dt] : fcodes[dt];
    if (!mxk_sdk_shape_is_known(&p.shape))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'shape': needs at least one dim, all >= 1");
    switch (kind) {
    case RND_UNIFORM:
        MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, "low", &a, err));
        MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, "high", &b, err));
        if (!(a <= b))
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "low must be less or equal to high in uniform distribution "
                                 "(low %g, high %g)",
                                 a, b);
        p.a = (float)a;
        p.b = (float)b;
        break;
    case RND_NORMAL:
        MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, "loc", &a, err));
        p.a = (float)a;
        MXK_SDK_CHECK(rnd_positive(attrs, "scale", "scale parameter in gaussian has to be positive",
                                   &p.b, err));
        break;
    case RND_GAMMA:
        MXK_SDK_CHECK(rnd_positive(
            attrs, "alpha", "alpha parameter in gamma distribution has to be positive", &p.a, err));
        MXK_SDK_CHECK(rnd_positive(
            attrs, "beta", "beta parameter in gamma distribution has to be positive", &p.b, err));
        break;
    case RND_EXPONENTIAL:
        MXK_SDK_CHECK(rnd_positive(
            attrs, "lam", "lambda parameter in exponential distribution has to be positive", &p.a,
            err));
        break;
    default:
        MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "low", &p.low, err));
        MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "high", &p.high, err));
        if (p.high < p.low)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "low must be less or equal to high in uniform distribution "
                                 "(low %lld, high %lld)",
                                 (long long)p.low, (long long)p.high);
        break;
    }
    return cbt_param_new(&p, sizeof p, out, err);
}

/* One parse_param per sampler. */
#define RND_PARSE(fn, kind)                                                                        \
    static mxk_status fn(const mxk_attrs *a, void **o, mxk_error_sink *e) {                        \
        return rnd_parse(a, kind, o, e);                                                           \
    }
RND_PARSE(uni_parse, RND_UNIFORM)
RND_PARSE(nrm_parse, RND_NORMAL)
RND_PARSE(gam_parse, RND_GAMMA)
RND_PARSE(exp_parse, RND_EXPONENTIAL)
RND_PARSE(int_parse, RND_RANDINT)

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

/** Fills out[0..n) with 64 random bits each (see op_math_random.h). */
void cbm_random_bits(mxk_random *rng, uint64_t *out, uint64_t n) {
    uint64_t key, lo, hi;
    mxk_sdk_host()->random_reserve(rng, (n + 1) / 2, &key, &lo, &hi);
    for (uint64_t i = 0; i < n; i += 2) {
        mxk_philox_block b = mxk_philox4x32_10(mxk_philox_counter(lo, hi, i / 2), key);
        out[i] = mxk_philox_bits64(b, 0);
        if (i + 1 < n)
            out[i + 1] = mxk_philox_bits64(b, 1);
    }
}

/** One gamma(alpha, 1) sample (Marsaglia and Tsang, ACM TOMS 26(3), 2000). */
static double rnd_gamma1(mxk_random *rng, double alpha) {
    const mxk_host_api *h = mxk_sdk_host();
    double boost = 1.0;
    if (alpha < 1.0) { /* gamma(alpha) = gamma(alpha + 1) u^(1/alpha) */
        float u;
        h->random_uniform(rng, &u, 1, 0.0f, 1.0f);
        boost = pow(1.0 - u, 1.0 / alpha);
        alpha += 1.0;
    }
    const double d = alpha - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        float z, u;
        h->random_normal(rng, &z, 1, 0.0f, 1.0f);
        double v = 1.0 + c * z;
        if (v <= 0.0)
            continue;
        v = v * v * v;
        h->random_uniform(rng, &u, 1, 0.0f, 1.0f);
        if (log(1.0 - u) < 0.5 * z * z + d - d * v + d * log(v))
            return d * v * boost;
    }
}

/** Draws n float samples into buf (not randint). */
static void rnd_draw(const rnd_param *p, mxk_random *rng, float *buf, uint64_t n) {
    const mxk_host_api *h = mxk_sdk_host();
    switch (p->kind) {
    case RND_UNIFORM:
        h->random_uniform(rng, buf, n, p->a, p->b);
        break;
    case RND_NORMAL:
        h->random_normal(rng, buf, n, p->a, p->b);
        break;
    case RND_GAMMA:
        for (uint64_t i = 0; i < n; i++)
            buf[i] = (float)(rnd_gamma1(rng, p->a) * p->b);
        break;
    default:
        h->random_uniform(rng, buf, n, 0.0f, 1.0f);
        for (uint64_t i = 0; i < n; i++)
            buf[i] = mxk_random_exponential(buf[i], p->a);
        break;
    }
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
    if (p->kind != RND_RANDINT && y->dtype == MXK_FLOAT32 && req != MXK_REQ_ADD) {
        rnd_draw(p, rng, y->data, n);
        return MXK_OK;
    }
    float buf[RND_CHUNK];
    uint64_t bits[RND_CHUNK];
    uint64_t range = (uint64_t)p->high - (uint64_t)p->low;
    for (uint64_t i = 0; i < n; i += RND_CHUNK) {
        uint64_t m = n - i < RND_CHUNK ? n - i : RND_CHUNK;
        if (p->kind != RND_RANDINT) {
            rnd_draw(p, rng, buf, m);
            for (uint64_t j = 0; j < m; j++)
                cbt_store(y->data, y->dtype, i + j, buf[j], req);
            continue;
        }
        cbm_random_bits(rng, bits, m);
        for (uint64_t j = 0; j < m; j++) {
            int64_t v = mxk_random_randint(bits[j], p->low, range);
            if (y->dtype == MXK_INT64 && req != MXK_REQ_ADD)
                ((int64_t *)y->data)[i + j] = v; /* exact beyond 2^53 */
            else
                cbt_store(y->data, y->dtype, i + j, (double)v, req);
        }
    }
    return MXK_OK;
}

/** Samplers have no gradient. */
static int32_t rnd_no_gradient(const void *param) {
    return 1;
}

/** Registers the samplers (with MXNet's aliases) and their CPU kernels. */
mxk_status cb_register_random(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const uni_al[] = {"uniform", "random_uniform", NULL};
    static const char *const nrm_al[] = {"normal", "random_normal", NULL};
    static const char *const gam_al[] = {"random_gamma", NULL};
    static const char *const exp_al[] = {"random_exponential", NULL};
    static const char *const int_al[] = {"random_randint", "_npi_random_randint", NULL};
    static const struct {
        const char *name, *doc;
        const char *const *aliases;
        const mxk_attr_def *attrs;
        uint32_t num_attrs;
        mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *);
    } ops[] = {
        {"_random_uniform", "Samples from a uniform distribution on [low, high).", uni_al,
         uni_attrs, MXK_SDK_COUNTOF(uni_attrs), uni_parse},
        {"_random_normal", "Samples from a normal distribution N(loc, scale^2).", nrm_al, nrm_attrs,
         MXK_SDK_COUNTOF(nrm_attrs), nrm_parse},
        {"_random_gamma", "Samples from a gamma distribution (shape alpha, scale beta).", gam_al,
         gam_attrs, MXK_SDK_COUNTOF(gam_attrs), gam_parse},
        {"_random_exponential", "Samples from an exponential distribution of rate lam.", exp_al,
         exp_attrs, MXK_SDK_COUNTOF(exp_attrs), exp_parse},
        {"_random_randint", "Samples integers uniformly from [low, high).", int_al, int_attrs,
         MXK_SDK_COUNTOF(int_attrs), int_parse},
    };
    for (uint32_t i = 0; i < MXK_SDK_COUNTOF(ops); i++) {
        mxk_op_def def;
        mxk_sdk_op_def_init(&def);
        def.description = ops[i].doc;
        def.aliases = ops[i].aliases;
        def.attrs = ops[i].attrs;
        def.num_attrs = ops[i].num_attrs;
        def.arguments = rnd_args;
        def.outputs = rnd_outs;
        def.parse_param = ops[i].parse;
        def.free_param = cbt_param_free;
        def.infer_shape = rnd_infer_shape;
        def.infer_type = rnd_infer_type;
        def.forward_resources = cbt_resources_random;
        def.no_gradient = rnd_no_gradient;
        MXK_SDK_CHECK(cbt_register(reg, &def, ops[i].name, rnd_forward, NULL, 1, err));
    }
    return MXK_OK;
}
