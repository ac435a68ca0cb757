/*
 * cuda plugin: GPU kernels of the samplers _random_uniform, _random_normal,
 * _random_gamma, _random_exponential and _random_randint (defined by cpu-blas,
 * op_random.c), and the random-stream helpers of cu_random.h.
 *
 * Semantics: MXNet src/operator/random/sample_op.h and sample_op.cu. Each call
 * reserves from the operator's random stream exactly the Philox blocks cpu-blas's
 * kernel consumes for the same output (ceil(n / 4) for the float samplers,
 * ceil(n / 2) for randint), so the streams stay in step and a seed gives the same
 * numbers on both backends. Gamma (rejection sampling) reserves n blocks and gives
 * the same distribution with different numbers (cu_kern_random.cu). The
 * attributes were validated by the operator; the kernel reads the values it needs.
 * Outputs: float32, float64, float16 (randint: int32, int64), WRITE or INPLACE (the
 * executor turns ADD into WRITE into a temporary).
 */
#include <stdlib.h>

#include "cu_random.h"

/** The samplers, in the order of cu_register_random's table. */
enum cu_rnd_op { CU_RND_UNIFORM, CU_RND_NORMAL, CU_RND_GAMMA, CU_RND_EXPONENTIAL, CU_RND_RANDINT };

/** A sampler's parameters (the kernel's own object). */
typedef struct cu_rnd_param {
    int32_t op;        /**< enum cu_rnd_op */
    float a, b;        /**< (low, high), (loc, scale), (alpha, beta) or (lam, unused) */
    int64_t low, high; /**< randint */
} cu_rnd_param;

mxk_random *cu_random_stream(const mxk_op_ctx *ctx, const char *op, mxk_error_sink *err) {
    for (uint32_t i = 0; i < ctx->num_resources; i++)
        if (ctx->resources[i] != NULL && ctx->resources[i]->type == MXK_RESOURCE_RANDOM &&
            ctx->resources[i]->random != NULL)
            return ctx->resources[i]->random;
    mxk_sdk_error(err, MXK_ERR_STATE, "%s: no random stream was granted", op);
    return NULL;
}

cu_philox_pos cu_random_reserve(mxk_random *rng, uint64_t n_blocks) {
    cu_philox_pos pos = {0, 0, 0};
    mxk_sdk_host()->random_reserve(rng, n_blocks, &pos.key, &pos.counter_lo, &pos.counter_hi);
    return pos;
}

/** Parses the distribution attributes of sampler `op`. */
static mxk_status rnd_parse(const mxk_attrs *attrs, int32_t op, void **out, mxk_error_sink *err) {
    static const char *const keys[][2] = {
        {"low", "high"}, {"loc", "scale"}, {"alpha", "beta"}, {"lam", NULL}, {NULL, NULL}};
    cu_rnd_param p = {.op = op};
    if (op == CU_RND_RANDINT) {
        MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "low", &p.low, err));
        MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "high", &p.high, err));
    } else {
        MXK_SDK_CHECK(cu_attr_float32(attrs, keys[op][0], &p.a, err));
        if (keys[op][1] != NULL)
            MXK_SDK_CHECK(cu_attr_float32(attrs, keys[op][1], &p.b, err));
    }
    return cu_param_dup(&p, sizeof p, out, err);
}

/* One parse_param per sampler. */
CU_PARSE_AS(uni_parse, rnd_parse, CU_RND_UNIFORM)
CU_PARSE_AS(nrm_parse, rnd_parse, CU_RND_NORMAL)
CU_PARSE_AS(gam_parse, rnd_parse, CU_RND_GAMMA)
CU_PARSE_AS(exp_parse, rnd_parse, CU_RND_EXPONENTIAL)
CU_PARSE_AS(int_parse, rnd_parse, CU_RND_RANDINT)

/** Fills the output: reserves the stream's blocks and launches the sampler. */
static mxk_status rnd_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_rnd_param *p = param;
    if (args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "samplers have one output");
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *y = args->out_data[0];
    uint64_t n = mxk_sdk_shape_count(&y->shape);
    MXK_SDK_CHECK(cu_enter(ctx, err));
    mxk_random *rng = cu_random_stream(ctx, "sampler", err);
    if (rng == NULL)
        return MXK_ERR_STATE;
    cudaStream_t st = cu_stream(ctx);
    cudaError_t rc;
    if (p->op == CU_RND_RANDINT) {
        uint64_t range = (uint64_t)p->high - (uint64_t)p->low;
        rc = cu_launch_random_randint(y->data, y->dtype, n, cu_random_reserve(rng, (n + 1) / 2),
                                      p->low, range, st);
    } else if (p->op == CU_RND_GAMMA) {
        rc =
            cu_launch_random_gamma(y->data, y->dtype, n, cu_random_reserve(rng, n), p->a, p->b, st);
    } else {
        static const int32_t kinds[] = {CU_RAND_UNIFORM, CU_RAND_NORMAL, 0, CU_RAND_EXPONENTIAL};
        rc = cu_launch_random_float(kinds[p->op], y->data, y->dtype, n,
                                    cu_random_reserve(rng, (n + 3) / 4), p->a, p->b, st);
    }
    CU_CHECK(rc, "sampler kernel", err);
    return MXK_OK;
}

mxk_status cu_register_random(mxk_registrar *reg, mxk_error_sink *err) {
    static const cu_op_entry ops[] = {{"_random_uniform", uni_parse},
                                      {"_random_normal", nrm_parse},
                                      {"_random_gamma", gam_parse},
                                      {"_random_exponential", exp_parse},
                                      {"_random_randint", int_parse}};
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.forward = rnd_forward;
    return cu_register_each(reg, &k, ops, MXK_SDK_COUNTOF(ops), err);
}
