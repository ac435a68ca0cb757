/*
 * cpu-blas plugin, init group: index maps (gather forward, scatter-add backward);
 * see op_init.h.
 */
#include <stdlib.h>
#include <string.h>

#include "op_init.h"

/**
 * Prepares a map for output shape `out` read from input `in` (known shapes). The
 * input view has the output's rank: an input of fewer dims is left-padded with
 * 1s (tile), one of more dims has its leading dims merged (repeat without axis
 * flattens). The tables start as the broadcast rule (index j where the view dim
 * equals the output dim, else 0) for `fill` callbacks to overwrite. Errors:
 * MXK_ERR_OUT_OF_MEMORY. Free with cbi_map_free (also after a failure).
 */
static mxk_status cbi_map_init(cbi_map *m, const mxk_shape *out, const mxk_shape *in,
                               mxk_error_sink *err) {
    memset(m, 0, sizeof *m);
    int32_t nd = out->ndim, shift = nd - in->ndim;
    uint64_t total = 0;
    for (int32_t d = 0; d < nd; d++) {
        total += (uint64_t)out->dims[d];
        m->out_dims[d] = out->dims[d];
        m->in_dims[d] = shift >= 0 ? (d < shift ? 1 : in->dims[d - shift]) : in->dims[d - shift];
    }
    if (shift < 0) /* merge the leading input dims into the first view dim */
        m->in_dims[0] = (int64_t)mxk_sdk_shape_prod(in, 0, 1 - shift);
    m->buf = malloc((size_t)total * sizeof(int64_t));
    if (m->buf == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "index map: out of memory");
    m->ndim = nd;
    int64_t stride = 1, *p = m->buf;
    for (int32_t d = nd - 1; d >= 0; d--) {
        m->in_stride[d] = stride;
        stride *= m->in_dims[d];
    }
    for (int32_t d = 0; d < nd; d++) {
        m->tab[d] = p;
        for (int64_t j = 0; j < out->dims[d]; j++)
            p[j] = m->in_dims[d] == out->dims[d] ? j : 0;
        p += out->dims[d];
    }
    return MXK_OK;
}

/** Frees the tables of a map (idempotent). */
static void cbi_map_free(cbi_map *m) {
    free(m->buf);
    m->buf = NULL;
}

/**
 * Visits the output in row-major order one innermost row at a time: for each row
 * calls fn(arg, o, base, outside) with the output offset of the row, the input
 * offset of its outer indices and whether an outer index is a fill position.
 */
static void cbi_rows(const cbi_map *m, void (*fn)(void *, uint64_t, int64_t, int), void *arg) {
    int64_t idx[MXK_MAX_NDIM] = {0};
    int32_t last = m->ndim - 1;
    uint64_t rows = 1;
    for (int32_t d = 0; d < last; d++)
        rows *= (uint64_t)m->out_dims[d];
    for (uint64_t r = 0; r < rows; r++) {
        int64_t base = 0;
        int outside = 0;
        for (int32_t d = 0; d < last; d++) {
            int64_t t = m->tab[d][idx[d]];
            if (t < 0)
                outside = 1;
            else
                base += t * m->in_stride[d];
        }
        fn(arg, r * (uint64_t)m->out_dims[last], base, outside);
        for (int32_t d = last - 1; d >= 0; d--) {
            if (++idx[d] < m->out_dims[d])
                break;
            idx[d] = 0;
        }
    }
}

/** One gather or scatter call. */
typedef struct cbi_run {
    const cbi_map *m;
    void *out;
    const void *in;
    int32_t dtype; /**< of out and in */
    double fill;
    mxk_op_req req;
} cbi_run;

/** One output row of a gather: float32 directly, other dtypes element by element. */
static void cbi_gather_row(void *arg, uint64_t o, int64_t base, int outside) {
    const cbi_run *r = arg;
    int32_t last = r->m->ndim - 1;
    const int64_t *tab = r->m->tab[last];
    int64_t s = r->m->in_stride[last], n = r->m->out_dims[last];
    if (r->dtype == MXK_FLOAT32) {
        float *out = (float *)r->out + o, fill = cbi_to_f32(r->fill);
        const float *in = r->in;
        for (int64_t j = 0; j < n; j++)
            mxk_sdk_assign_f32(&out[j], outside || tab[j] < 0 ? fill : in[base + tab[j] * s],
                               r->req);
        return;
    }
    size_t es = mxk_sdk_dtype_size(r->dtype);
    for (int64_t j = 0; j < n; j++) {
        uint64_t k = o + (uint64_t)j;
        if (outside || tab[j] < 0)
            cbt_store(r->out, r->dtype, k, r->fill, r->req);
        else if (r->req != MXK_REQ_ADD)
            memcpy((char *)r->out + k * es, (const char *)r->in + (base + tab[j] * s) * es, es);
        else
            cbt_store(r->out, r->dtype, k, cbt_load(r->in, r->dtype, (uint64_t)(base + tab[j] * s)),
                      r->req);
    }
}

/**
 * Forward: out[o] (=|+=) in[map(o)] (or `fill`) by `req`, any dtype (both of
 * `dtype`); out and in must not overlap.
 */
static void cbi_gather(const cbi_map *m, void *out, const void *in, int32_t dtype, double fill,
                       mxk_op_req req) {
    if (req == MXK_REQ_NULL)
        return;
    cbi_run r = {m, out, in, dtype, fill, req};
    cbi_rows(m, cbi_gather_row, &r);
}

/** One output-gradient row of a scatter: r->out is the input gradient, r->in dy. */
static void cbi_scatter_row(void *arg, uint64_t o, int64_t base, int outside) {
    const cbi_run *r = arg;
    if (outside)
        return;
    int32_t last = r->m->ndim - 1;
    const int64_t *tab = r->m->tab[last];
    int64_t s = r->m->in_stride[last];
    float *g = r->out;
    const float *dy = r->in;
    for (int64_t j = 0; j < r->m->out_dims[last]; j++)
        if (tab[j] >= 0)
            g[base + tab[j] * s] += dy[o + (uint64_t)j];
}

/**
 * Backward: g (n elements) is zeroed for WRITE/INPLACE, then g[map(o)] += dy[o]
 * for every output position o that reads the input; nothing for NULL.
 */
static void cbi_scatter(const cbi_map *m, float *g, uint64_t n, const float *dy, mxk_op_req req) {
    if (req == MXK_REQ_NULL)
        return;
    if (req != MXK_REQ_ADD)
        memset(g, 0, (size_t)n * sizeof(float));
    cbi_run r = {m, g, dy, MXK_FLOAT32, 0.0, req};
    cbi_rows(m, cbi_scatter_row, &r);
}

/** Forward of the gather operators (see op_init.h). */
mxk_status cbi_gather_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const cbi_gather_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, p->num_in, 1, p->infer, param, 1, err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    cbi_map m;
    const mxk_tensor *x = args->in_data[0], *y = args->out_data[0];
    if (x->dtype != y->dtype)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "output: expected %s, got %s",
                             mxk_sdk_dtype_name(x->dtype), mxk_sdk_dtype_name(y->dtype));
    mxk_status st = cbi_map_init(&m, &y->shape, &x->shape, err);
    if (st == MXK_OK) {
        if (p->fill_map != NULL)
            p->fill_map(param, &m);
        cbi_gather(&m, y->data, x->data, x->dtype, p->fill, args->req[0]);
    }
    cbi_map_free(&m);
    return st;
}

/** Backward of the gather operators (see op_init.h). */
mxk_status cbi_gather_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const cbi_gather_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, p->num_in, 1, 1, err));
    for (uint32_t i = 1; i < p->num_in; i++)
        MXK_SDK_CHECK(cbi_zero_grad_of(args, i, "rhs", err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dy = args->out_grad[0], *g = args->in_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(dy, "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(g, "input gradient", err));
    cbi_map m;
    mxk_status st = cbi_map_init(&m, &dy->shape, &g->shape, err);
    if (st == MXK_OK) {
        if (p->fill_map != NULL)
            p->fill_map(param, &m);
        cbi_scatter(&m, cb_f32(g), mxk_sdk_shape_count(&g->shape), cb_f32(dy), req);
    }
    cbi_map_free(&m);
    return st;
}
