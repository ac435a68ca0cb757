/*
 * cpu-blas plugin: Cast.
 *
 * Semantics: MXNet src/operator/tensor/elemwise_unary_op.h (CastParam, CastType,
 * CastCompute) and elemwise_unary_op_basic.cc: output of `dtype` (float32,
 * float64, float16, uint8, int32, int8, int64), same shape; backward casts dy
 * back to the input's dtype (reads only out_grad). Aliases cast, _npi_cast,
 * _npx_cast (elemwise_unary_op_basic.cc). Float targets go through double
 * (float16 rounds to nearest even). Integer targets reproduce MXNet's
 * static_cast on x86-64 without C's undefined behaviour: a float truncates
 * toward zero into int64 (for int64) or int32 (for int32, int8, uint8), a NaN or
 * out-of-range value giving that type's minimum (what cvttsd2si returns), and
 * the result wraps modulo 2^bits into the target; an integer source wraps
 * modulo 2^bits. So [-3.7, 300, 255.9, -0.5, 256, 1000, 3e9] to uint8 is
 * [253, 44, 255, 0, 0, 232, 0], and 3e9 to int32 is -2147483648. ADD adds in
 * the target type, wrapping likewise.
 */
#include <math.h>
#include <string.h>

#include "cb_tensor.h"
#include "mxk_math_cast.h"

/** Parsed attributes. */
typedef struct cast_param {
    int32_t dtype; /**< mxk_dtype code */
} cast_param;

static const char *const cast_args[] = {"data", NULL};
static const char *const cast_outs[] = {"output", NULL};
static const char *const cast_aliases[] = {"cast", "_npi_cast", "_npx_cast", NULL};

/** Attribute schema (MXNet 1.9.1 CastParam). */
static const mxk_attr_def cast_attrs[] = {
    MXK_SDK_ATTR("dtype", MXK_ATTR_ENUM, 1, NULL, CBT_DTYPES, "Output data type."),
};

/** Parses dtype (its position in CBT_DTYPES is its code). */
static mxk_status cast_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cast_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "dtype", CBT_DTYPES, &p.dtype, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Output = dtype; the input keeps its own (float32 when unknown). */
static mxk_status cast_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                  uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    const cast_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "Cast expects 1 argument");
    return mxk_sdk_type_assign(&out[0], p->dtype, "output 'output'", err);
}

/** 1 for the integer dtypes. */
static int cast_is_int(int32_t dt) {
    return dt == MXK_UINT8 || dt == MXK_INT32 || dt == MXK_INT8 || dt == MXK_INT64;
}

/** Element i of an integer dtype as int64 (exact, unlike cbt_load's double). */
static int64_t cast_load_int(const void *p, int32_t dt, uint64_t i) {
    switch (dt) {
    case MXK_UINT8:
        return ((const uint8_t *)p)[i];
    case MXK_INT32:
        return ((const int32_t *)p)[i];
    case MXK_INT8:
        return ((const int8_t *)p)[i];
    default:
        return ((const int64_t *)p)[i];
    }
}

/** Stores the integer w (=|+=) into element i of integer dtype dt, wrapping modulo 2^bits. */
static void cast_store_int(void *p, int32_t dt, uint64_t i, int64_t w, mxk_op_req req) {
    uint64_t u = (uint64_t)w;
    if (req == MXK_REQ_ADD)
        u += (uint64_t)cast_load_int(p, dt, i);
    /* two's complement bytes: memcpy of the unsigned value avoids an out-of-range signed
     * conversion */
    if (dt == MXK_UINT8 || dt == MXK_INT8) {
        uint8_t b = (uint8_t)u;
        memcpy((uint8_t *)p + i, &b, 1);
    } else if (dt == MXK_INT32) {
        uint32_t b = (uint32_t)u;
        memcpy((uint32_t *)p + i, &b, 4);
    } else {
        memcpy((uint64_t *)p + i, &u, 8);
    }
}

/** Element-wise conversion src (dtype st) -> dst (dtype dt) by request. */
static void cast_convert(void *dst, int32_t dt, const void *src, int32_t st, uint64_t n,
                         mxk_op_req req) {
    if (req == MXK_REQ_NULL)
        return;
    if (dt == MXK_FLOAT32 && st == MXK_FLOAT32) {
        mxk_sdk_copy_f32(dst, src, (size_t)n, req);
        return;
    }
    if (!cast_is_int(dt)) {
        for (uint64_t i = 0; i < n; i++)
            cbt_store(dst, dt, i, cbt_load(src, st, i), req);
        return;
    }
    int bits = dt == MXK_INT64 ? 64 : 32;
    for (uint64_t i = 0; i < n; i++) {
        int64_t w = cast_is_int(st) ? cast_load_int(src, st, i)
                                    : mxk_cast_float_to_int(cbt_load(src, st, i), bits);
        cast_store_int(dst, dt, i, w, req);
    }
}

/** y = (dtype) x. */
static mxk_status cast_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_forward_args *args, mxk_error_sink *err) {
    const cast_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, 1, 1, cbt_infer_shape_same, param, 1, err));
    const mxk_tensor *x = args->in_data[0], *y = args->out_data[0];
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    if (y->dtype != p->dtype)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "output: expected %s, got %s",
                             mxk_sdk_dtype_name(p->dtype), mxk_sdk_dtype_name(y->dtype));
    cast_convert(y->data, y->dtype, x->data, x->dtype, mxk_sdk_shape_count(&x->shape),
                 args->req[0]);
    return MXK_OK;
}

/** dx = (input dtype) dy. */
static mxk_status cast_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dy = args->out_grad[0], *dx = args->in_grad[0];
    MXK_SDK_CHECK(cbt_check_any(dy, "gradient of 'output'", err));
    MXK_SDK_CHECK(cbt_check_any(dx, "gradient of 'data'", err));
    if (mxk_sdk_shape_count(&dy->shape) != mxk_sdk_shape_count(&dx->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradients of 'data' and 'output' differ in size");
    cast_convert(dx->data, dx->dtype, dy->data, dy->dtype, mxk_sdk_shape_count(&dy->shape),
                 args->req[0]);
    return MXK_OK;
}

/** Registers Cast and its CPU kernel (any dtype). */
mxk_status cb_register_cast(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.description = "Casts all elements of the input to a new type.";
    def.attrs = cast_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(cast_attrs);
    def.arguments = cast_args;
    def.outputs = cast_outs;
    def.parse_param = cast_parse;
    def.free_param = cbt_param_free;
    def.infer_shape = cbt_infer_shape_same;
    def.infer_type = cast_infer_type;
    def.backward_dependency = cbt_dep_out_grad;
    def.aliases = cast_aliases;
    return cbt_register(reg, &def, "Cast", cast_forward, cast_backward, 1, err);
}
