/*
 * onednn plugin: elemwise_add, add_n and Concat kernels on oneDNN's sum and
 * concat primitives (oneDNN 2.x, dnnl_sum_primitive_desc_create,
 * dnnl_concat_primitive_desc_create).
 *
 * Semantics are the operators' (cpu-blas op_elemwise.c, op_add_n.c, op_concat.c;
 * upstream MXNet src/operator/tensor/elemwise_binary_op_basic.cc,
 * src/operator/tensor/elemwise_sum.cc, src/operator/nn/concat.cc); the mapping
 * follows MXNet 1.9.1's src/operator/nn/mkldnn/mkldnn_sum.cc and
 * mkldnn_concat.cc. Kernels registered under the canonical names serve the
 * aliases (_plus, _add, _Plus; ElementWiseSum; concat).
 *   elemwise_add, add_n  forward: one sum primitive (scales 1) over the inputs,
 *                        viewed 1-D; backward: every requested input gradient is
 *                        a copy of the output gradient
 *   Concat               forward: one concat primitive over plain descriptors
 *                        along `dim` (negative counts from the end); backward:
 *                        each requested input gradient is its slice of the
 *                        output gradient (plain row copies)
 * Accepted: float32 inputs, none empty, at most 15 inputs (one primitive call
 * takes 16 arguments), Concat on 1 to 6 dims. Everything else is declined.
 * Forward requests WRITE / INPLACE / NULL (the host emulates ADD); oneDNN's sum
 * allows the output to be its first source only, so an output sharing memory
 * with another input is made the first source, and one sharing memory with
 * several inputs is computed into scratch and copied.
 */
#include "dn_util.h"

#include <stdlib.h>
#include <string.h>

/** Most inputs: dn_execute's 16 arguments less the output. */
#define DN_SUM_MAX_IN 15

/** Which operator a kernel computes. */
enum dn_sum_op { DN_SUM_ADD = 0, DN_SUM_CONCAT = 1 };

/** Parsed attributes: the operator, its input count and Concat's `dim` (as given). */
typedef struct dn_sum_param {
    int32_t op; /**< enum dn_sum_op */
    int64_t num;
    int64_t dim;
} dn_sum_param;

/**
 * Per-node state: the primitive, the output's and inputs' descriptors, the
 * output's element count and, for Concat, the (outer, axis length, inner) view of
 * the output and each input's length along the axis. Used by one call at a time.
 */
typedef struct dn_sum_state {
    dnnl_primitive_t prim;
    dnnl_memory_desc_t dst_md;
    dnnl_memory_desc_t src_md[DN_SUM_MAX_IN];
    uint32_t num;
    int64_t n;
    int64_t outer, inner;
    int64_t len[DN_SUM_MAX_IN];
} dn_sum_state;

/** Allocates a copy of *p as the kernel's parameter object; MXK_ERR_OUT_OF_MEMORY. */
static mxk_status sum_param_new(const dn_sum_param *p, void **out, mxk_error_sink *err) {
    dn_sum_param *q = malloc(sizeof *q);
    if (q == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN sum: out of memory");
    *q = *p;
    *out = q;
    return MXK_OK;
}

/** Frees a parameter object of sum_param_new. */
static void sum_param_free(void *p) {
    free(p);
}

/** elemwise_add: no attributes, two inputs. */
static mxk_status add_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    dn_sum_param p = {.op = DN_SUM_ADD, .num = 2};
    return sum_param_new(&p, out, err);
}

/** add_n: num_args. Errors: mxk_sdk_attr_int's. */
static mxk_status add_n_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    dn_sum_param p = {.op = DN_SUM_ADD};
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "num_args", &p.num, err));
    return sum_param_new(&p, out, err);
}

/** Concat: num_args and dim. Errors: mxk_sdk_attr_int's. */
static mxk_status concat_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    dn_sum_param p = {.op = DN_SUM_CONCAT};
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "num_args", &p.num, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "dim", &p.dim, err));
    return sum_param_new(&p, out, err);
}

/** Concat's axis in [0, ndim) from `dim` (negative from the end); -1 when out of range. */
static int32_t concat_axis(const dn_sum_param *p, int32_t ndim) {
    int64_t a = p->dim < 0 ? p->dim + ndim : p->dim;
    return a >= 0 && a < ndim ? (int32_t)a : -1;
}

/** The operator's name in error messages: "sum" (elemwise_add, add_n) or "Concat". */
static const char *sum_family(const dn_sum_param *p) {
    return p->op == DN_SUM_ADD ? "sum" : "Concat";
}

/**
 * Accepts 1 to 15 non-empty float32 inputs (num_args of them); Concat also needs
 * 1 to 6 dims, one rank and a valid axis.
 */
static int32_t sum_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                            uint32_t num_in) {
    const dn_sum_param *p = param;
    if (num_in < 1 || num_in > DN_SUM_MAX_IN || (int64_t)num_in != p->num)
        return 0;
    for (uint32_t i = 0; i < num_in; i++) {
        if (in_types[i] != MXK_FLOAT32 || dn_shape_size(&in_shapes[i]) <= 0)
            return 0;
        if (p->op == DN_SUM_CONCAT &&
            (in_shapes[i].ndim > 6 || in_shapes[i].ndim != in_shapes[0].ndim))
            return 0;
    }
    return p->op == DN_SUM_ADD || concat_axis(p, in_shapes[0].ndim) >= 0;
}

/** Frees a state of sum_create_state (NULL allowed). */
static void sum_destroy_state(void *state) {
    dn_sum_state *s = state;
    if (s == NULL)
        return;
    dnnl_primitive_destroy(s->prim);
    free(s);
}

/**
 * Fills the state's descriptors and primitive descriptor: the sum of the inputs
 * viewed 1-D, or their concatenation along the axis (output shape: the first
 * input's with the axis lengths added). The caller destroys *pd.
 */
static mxk_status sum_make_pd(const dn_sum_param *p, const mxk_shape *in, dn_sum_state *s,
                              dnnl_primitive_desc_t *pd, mxk_error_sink *err) {
    if (p->op == DN_SUM_ADD) {
        static const float ones[DN_SUM_MAX_IN] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
        dnnl_dim_t n = s->n = dn_shape_size(&in[0]);
        MXK_SDK_CHECK(dn_md_plain(&s->dst_md, 1, &n, err));
        for (uint32_t i = 0; i < s->num; i++)
            s->src_md[i] = s->dst_md;
        dn_threads_for_create();
        DN_CHECK(dnnl_sum_primitive_desc_create(pd, &s->dst_md, (int)s->num, ones, s->src_md,
                                                dn_attr(), dn_engine()),
                 "sum primitive descriptor", err);
        return MXK_OK;
    }
    int32_t a = concat_axis(p, in[0].ndim);
    mxk_shape out = in[0];
    out.dims[a] = 0;
    for (uint32_t i = 0; i < s->num; i++) {
        MXK_SDK_CHECK(dn_md_of_shape(&s->src_md[i], &in[i], err));
        s->len[i] = in[i].dims[a];
        out.dims[a] += in[i].dims[a];
    }
    MXK_SDK_CHECK(dn_md_of_shape(&s->dst_md, &out, err));
    s->n = dn_shape_size(&out);
    s->outer = 1;
    for (int32_t d = 0; d < a; d++)
        s->outer *= out.dims[d];
    s->inner = s->n / s->outer / out.dims[a];
    dn_threads_for_create();
    DN_CHECK(dnnl_concat_primitive_desc_create(pd, &s->dst_md, (int)s->num, a, s->src_md, dn_attr(),
                                               dn_engine()),
             "concat primitive descriptor", err);
    return MXK_OK;
}

/** Creates the state and its primitive. Errors: MXK_ERR_OUT_OF_MEMORY, dn_check's. */
static mxk_status sum_create_state(const void *param, int32_t dev_type, int32_t dev_id,
                                   const mxk_shape *in_shapes, const int32_t *in_types,
                                   uint32_t num_in, void **state, mxk_error_sink *err) {
    dn_sum_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN sum: out of memory");
    s->num = num_in;
    dnnl_primitive_desc_t pd = NULL;
    mxk_status rc = sum_make_pd(param, in_shapes, s, &pd, err);
    if (rc == MXK_OK)
        rc = dn_primitive(&s->prim, pd, "sum/concat primitive", err);
    dnnl_primitive_desc_destroy(pd);
    if (rc != MXK_OK) {
        sum_destroy_state(s);
        return rc;
    }
    *state = s;
    return MXK_OK;
}

/**
 * Sum or concatenation of the inputs into the output (WRITE or INPLACE; nothing
 * for NULL). For the sum, an input sharing the output's memory becomes the first
 * source; with several such inputs the sum goes through scratch. Errors:
 * dn_check_tensor's, dn_scratch's, dn_execute's.
 */
static mxk_status sum_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const dn_sum_param *p = param;
    dn_sum_state *s = state;
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *y = args->out_data[0];
    MXK_SDK_CHECK(dn_check_tensor(y, s->n, sum_family(p), "the output", err));
    dn_arg a[DN_SUM_MAX_IN + 1];
    uint32_t shared = 0, first = 0;
    for (uint32_t i = 0; i < s->num; i++) {
        const mxk_tensor *x = args->in_data[i];
        int64_t n = p->op == DN_SUM_ADD ? s->n : s->outer * s->len[i] * s->inner;
        MXK_SDK_CHECK(dn_check_tensor(x, n, sum_family(p), "an input", err));
        a[i] = (dn_arg){DNNL_ARG_MULTIPLE_SRC + (int)i, &s->src_md[i], x->data};
        if (p->op == DN_SUM_ADD && x->data == y->data)
            shared++, first = i;
    }
    if (first != 0) { /* the sources share one descriptor: swap the pointers */
        void *t = a[0].data;
        a[0].data = a[first].data;
        a[first].data = t;
    }
    float *dst = y->data;
    if (shared > 1 && (dst = dn_scratch(0, sizeof(float) * (size_t)s->n, err)) == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    a[s->num] = (dn_arg){DNNL_ARG_DST, &s->dst_md, dst};
    MXK_SDK_CHECK(dn_execute(ctx, s->prim, (int)s->num + 1, a, err));
    if (dst != y->data)
        memcpy(y->data, dst, sizeof(float) * (size_t)s->n);
    return MXK_OK;
}

/**
 * Input gradients from the output gradient dy, each by its request: the sum's
 * are copies of dy (one sharing dy's memory is written last), Concat's are their
 * slices of dy along the axis (rows of len * inner elements, `outer` times).
 * Errors: dn_check_tensor's.
 */
static mxk_status sum_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const dn_sum_param *p = param;
    dn_sum_state *s = state;
    const mxk_tensor *dy = args->out_grad[0];
    MXK_SDK_CHECK(dn_check_tensor(dy, s->n, sum_family(p), "the output gradient", err));
    const float *g = dy->data;
    for (uint32_t i = 0; i < s->num; i++) {
        if (args->req[i] == MXK_REQ_NULL)
            continue;
        int64_t rows = p->op == DN_SUM_ADD ? 1 : s->outer;
        int64_t row = p->op == DN_SUM_ADD ? s->n : s->len[i] * s->inner;
        MXK_SDK_CHECK(
            dn_check_tensor(args->in_grad[i], rows * row, sum_family(p), "an input gradient", err));
    }
    if (p->op == DN_SUM_ADD) {
        for (int last = 0; last < 2; last++)
            for (uint32_t i = 0; i < s->num; i++)
                if (args->req[i] != MXK_REQ_NULL && (args->in_grad[i]->data == g) == last)
                    mxk_sdk_copy_f32(args->in_grad[i]->data, g, (size_t)s->n, args->req[i]);
        return MXK_OK;
    }
    int64_t k = s->n / s->outer / s->inner, off = 0;
    for (uint32_t i = 0; i < s->num; i++) {
        int64_t row = s->len[i] * s->inner;
        if (args->req[i] != MXK_REQ_NULL) {
            float *dx = args->in_grad[i]->data;
            for (int64_t o = 0; o < s->outer; o++)
                mxk_sdk_copy_f32(dx + o * row, g + (o * k + off) * s->inner, (size_t)row,
                                 args->req[i]);
        }
        off += s->len[i];
    }
    return MXK_OK;
}

/** Registers the elemwise_add, add_n and Concat kernels (exact but for summation order). */
mxk_status dn_register_sum(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const ops[] = {"elemwise_add", "add_n", "Concat"};
    mxk_status (*const parse[])(const mxk_attrs *, void **,
                                mxk_error_sink *) = {add_parse, add_n_parse, concat_parse};
    for (int i = 0; i < 3; i++) {
        mxk_op_kernel_def k;
        mxk_sdk_kernel_def_init(&k);
        k.op_name = ops[i];
        k.parse_param = parse[i];
        k.free_param = sum_param_free;
        k.supports = sum_supports;
        k.create_state = sum_create_state;
        k.destroy_state = sum_destroy_state;
        k.forward = sum_forward;
        k.backward = sum_backward;
        k.crosscheck_rtol = 1e-6;
        k.crosscheck_atol = 1e-6;
        MXK_SDK_CHECK(dn_register_kernel(reg, &k, err));
    }
    return MXK_OK;
}
