/*
 * FusedRNNCell of mxk_rnn.h (upstream python/mxnet/rnn/rnn_cell.py, MXNet
 * 1.9.1): unfuse into a stack of cells, and the fused RNN operator's flat
 * parameter vector (src/operator/rnn-inl.h, cuDNN's layout, sliced by
 * FusedRNNCell._slice_weights) to and from the stack's per-cell arrays.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_rnn.h"
#include "train_internal.h"

/** The checked configuration: gates G (their name suffixes), directions D, the prefix. */
typedef struct fused {
    const mxkt_fused_rnn *f;
    const char *const *gates; /**< upstream's _gate_names */
    int64_t g, d, h, l;
    char prefix[128];
} fused;

static mxk_status check(const mxkt_fused_rnn *f, fused *o) {
    static const char *const modes[4] = {"rnn_relu", "rnn_tanh", "lstm", "gru"};
    static const int64_t gates[4] = {1, 1, 4, 3};
    static const char *const names[4][4] = {
        {""}, {""}, {"_i", "_f", "_c", "_o"}, {"_r", "_z", "_o"}};
    int m = -1;
    for (int i = 0; i < 4 && f->mode; i++)
        if (strcmp(f->mode, modes[i]) == 0)
            m = i;
    if (m < 0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "fused rnn: unknown mode '%s'",
                          f->mode ? f->mode : "(null)");
    if (f->num_hidden <= 0 || f->num_layers <= 0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "fused rnn: num_hidden and num_layers must be positive");
    *o = (fused){f, names[m], gates[m], f->bidirectional ? 2 : 1, f->num_hidden, f->num_layers, ""};
    if (f->prefix)
        snprintf(o->prefix, sizeof o->prefix, "%s", f->prefix);
    else
        snprintf(o->prefix, sizeof o->prefix, "%s_", f->mode);
    return MXK_OK;
}

/** A cell of the mode prefixed `prefix` (FusedRNNCell.unfuse's get_cell). */
static mxk_status mode_cell(const fused *c, const char *prefix, mxkt_rnn_cell **out) {
    const char *mode = c->f->mode;
    if (strcmp(mode, "lstm") == 0)
        return mxkt_rnn_cell_lstm(c->f->num_hidden, 1.0, prefix, out);
    if (strcmp(mode, "gru") == 0)
        return mxkt_rnn_cell_gru(c->f->num_hidden, prefix, out);
    return mxkt_rnn_cell_rnn(c->f->num_hidden, mode + 4, prefix, out);
}

mxk_status mxkt_fused_rnn_unfuse(const mxkt_fused_rnn *f, mxkt_rnn_cell **out) {
    fused c;
    *out = NULL;
    MXKT_CHECK(check(f, &c));
    mxkt_rnn_cell *stack = NULL, *cell = NULL, *r = NULL;
    mxk_status st = mxkt_rnn_cell_sequential(&stack);
    for (int64_t i = 0; st == MXK_OK && i < c.l; i++) {
        char p[160], q[160], bi[160];
        snprintf(p, sizeof p, "%sl%d_", c.prefix, (int)i);
        snprintf(q, sizeof q, "%sr%d_", c.prefix, (int)i);
        snprintf(bi, sizeof bi, "%sbi_l%d_", c.prefix, (int)i);
        st = mode_cell(&c, p, &cell);
        if (st == MXK_OK && c.d == 2) {
            st = mode_cell(&c, q, &r);
            if (st == MXK_OK)
                st = mxkt_rnn_cell_bidirectional(cell, r, bi, &cell);
            else
                mxkt_rnn_cell_free(cell);
        }
        if (st == MXK_OK)
            st = mxkt_rnn_cell_add(stack, cell);
        if (st == MXK_OK && f->dropout > 0 && i != c.l - 1) {
            snprintf(p, sizeof p, "%s_dropout%d_", c.prefix, (int)i);
            st = mxkt_rnn_cell_dropout(f->dropout, p, &cell);
            if (st == MXK_OK)
                st = mxkt_rnn_cell_add(stack, cell);
        }
    }
    if (st != MXK_OK) {
        mxkt_rnn_cell_free(stack);
        return st;
    }
    *out = stack;
    return MXK_OK;
}

static int64_t param_size(const fused *c, int64_t in) {
    return (in + c->h + 2) * c->h * c->g * c->d +
           (c->l - 1) * c->g * c->h * (c->h + c->d * c->h + 2) * c->d;
}

mxk_status mxkt_fused_rnn_param_size(const mxkt_fused_rnn *f, int64_t num_input, int64_t *size) {
    fused c;
    MXKT_CHECK(check(f, &c));
    if (num_input <= 0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "fused rnn: num_input must be positive");
    *size = param_size(&c, num_input);
    return MXK_OK;
}

/** Input size of layer `layer`: the data's, then both directions' outputs. */
static int64_t layer_input(const fused *c, int64_t layer, int64_t in) {
    return layer ? c->d * c->h : in;
}

/** Number of blocks of the layout: per layer and direction, 2 weights and 2 biases. */
#define BLOCKS(c) ((uint32_t)(4 * (c)->l * (c)->d))

/**
 * Block k of the flat vector (the order of FusedRNNCell._slice_weights, the gates
 * of a block contiguous), whole (gate -1) or its gate `gate`: name, offset, rows
 * and columns (cols 0: a bias).
 */
static void block(const fused *c, int64_t in, uint32_t k, int gate, char *name, size_t size,
                  int64_t *off, int64_t *rows, int64_t *cols) {
    int64_t gh = c->g * c->h, nb = 2 * c->l * c->d; /* weight blocks, then bias blocks */
    int64_t bias = k >= nb, j = bias ? k - nb : k, ld = j / 2, hh = j % 2;
    int64_t layer = ld / c->d, dir = ld % c->d;
    snprintf(name, size, "%s%c%d_%s%s_%s", c->prefix, dir ? 'r' : 'l', (int)layer,
             hh ? "h2h" : "i2h", gate < 0 ? "" : c->gates[gate], bias ? "bias" : "weight");
    *rows = gate < 0 ? gh : c->h;
    *cols = bias ? 0 : hh ? c->h : layer_input(c, layer, in);
    if (bias) {
        *off = param_size(c, in) - nb * gh + j * gh;
    } else {
        *off = hh ? gh * layer_input(c, layer, in) : 0;
        for (int64_t p = 0; p < ld; p++) /* earlier (layer, direction) pairs: i2h, h2h weights */
            *off += gh * (layer_input(c, p / c->d, in) + c->h);
    }
    if (gate > 0)
        *off += gate * c->h * (*cols ? *cols : 1);
}

mxk_status mxkt_fused_rnn_unpack_weights(const mxkt_fused_rnn *f, mxk_ndarray *parameters,
                                         int32_t per_gate, uint32_t *num, char ***names,
                                         mxk_ndarray ***arrays) {
    fused c;
    *num = 0;
    *names = NULL;
    *arrays = NULL;
    MXKT_CHECK(check(f, &c));
    mxk_shape s = mxk_ndarray_shape(parameters);
    int64_t n = s.ndim == 1 ? s.dims[0] : -1;
    int64_t fixed = param_size(&c, 0), per = c.h * c.g * c.d;
    if (s.ndim != 1 || mxk_ndarray_dtype(parameters) != MXK_FLOAT32 || n <= fixed ||
        (n - fixed) % per != 0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "fused rnn: a parameter vector of %lld elements fits no input size",
                          (long long)(s.ndim == 1 ? n : mxkt_shape_size(&s)));
    int64_t in = (n - fixed) / per;
    int gates = per_gate ? (int)c.g : 1;
    uint32_t nb = BLOCKS(&c) * (uint32_t)gates;
    float *flat = malloc((size_t)n * sizeof *flat);
    *names = calloc(nb + 1, sizeof **names);
    *arrays = calloc(nb, sizeof **arrays);
    mxk_status st =
        flat && *names && *arrays ? MXK_OK : mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == MXK_OK)
        st = mxk_ndarray_copy_to_host(parameters, flat, (uint64_t)n * sizeof *flat);
    for (uint32_t k = 0; st == MXK_OK && k < nb; k++) {
        char name[192];
        int64_t off, rows, cols;
        block(&c, in, k / (uint32_t)gates, per_gate ? (int)(k % (uint32_t)gates) : -1, name,
              sizeof name, &off, &rows, &cols);
        mxk_shape bs = {.ndim = cols ? 2 : 1, .dims = {rows, cols}};
        (*names)[k] = strdup(name);
        if ((*names)[k] == NULL)
            st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
        if (st == MXK_OK)
            st = mxk_ndarray_create(&bs, MXK_FLOAT32, (mxk_context){MXK_DEV_CPU, 0}, &(*arrays)[k]);
        if (st == MXK_OK)
            st = mxk_ndarray_copy_from_host((*arrays)[k], flat + off,
                                            (uint64_t)mxkt_shape_size(&bs) * sizeof *flat);
    }
    free(flat);
    if (st != MXK_OK) {
        mxk_ndarray_list_free(nb, *arrays, *names);
        *names = NULL;
        *arrays = NULL;
        return st;
    }
    *num = nb;
    return MXK_OK;
}

/** The array named `name` among `num`, or NULL. */
static mxk_ndarray *find(uint32_t num, const char *const *names, mxk_ndarray *const *arrays,
                         const char *name) {
    for (uint32_t i = 0; i < num; i++)
        if (strcmp(names[i], name) == 0)
            return arrays[i];
    return NULL;
}

/**
 * The columns of block 0 (whole or its first gate, named into `name`): the input
 * size; -1 when absent (`name` the whole block's), 0 when not 2-D.
 */
static int64_t input_size(const fused *c, uint32_t num, const char *const *names,
                          mxk_ndarray *const *arrays, char *name, size_t size) {
    int64_t off, rows, cols;
    for (int gate = -1; gate < 1; gate++) {
        block(c, 1, 0, gate, name, size, &off, &rows, &cols);
        mxk_ndarray *a = find(num, names, arrays, name);
        mxk_shape s = a ? mxk_ndarray_shape(a) : (mxk_shape){0};
        if (a)
            return s.ndim == 2 ? s.dims[1] : 0;
    }
    block(c, 1, 0, -1, name, size, &off, &rows, &cols);
    return -1;
}

/** Copies block k, given whole or by gates, into flat. */
static mxk_status pack_block(const fused *c, int64_t in, uint32_t k, uint32_t num,
                             const char *const *names, mxk_ndarray *const *arrays, float *flat) {
    char name[192], whole[192];
    int64_t off, rows, cols;
    block(c, in, k, -1, whole, sizeof whole, &off, &rows, &cols);
    int by_gate = find(num, names, arrays, whole) == NULL;
    for (int gate = by_gate ? 0 : -1; gate < (by_gate ? (int)c->g : 0); gate++) {
        block(c, in, k, gate, name, sizeof name, &off, &rows, &cols);
        int64_t want = rows * (cols ? cols : 1);
        mxk_ndarray *a = find(num, names, arrays, name);
        mxk_shape s = a ? mxk_ndarray_shape(a) : (mxk_shape){0};
        if (a == NULL)
            return mxkt_error(MXK_ERR_NOT_FOUND, "fused rnn: missing %s", gate > 0 ? name : whole);
        if (mxkt_shape_size(&s) != want || mxk_ndarray_dtype(a) != MXK_FLOAT32)
            return mxkt_error(MXK_ERR_SHAPE, "fused rnn: %s has %lld elements, expected %lld", name,
                              (long long)mxkt_shape_size(&s), (long long)want);
        MXKT_CHECK(mxk_ndarray_copy_to_host(a, flat + off, (uint64_t)want * sizeof *flat));
    }
    return MXK_OK;
}

mxk_status mxkt_fused_rnn_pack_weights(const mxkt_fused_rnn *f, uint32_t num,
                                       const char *const *names, mxk_ndarray *const *arrays,
                                       mxk_ndarray **parameters) {
    fused c;
    *parameters = NULL;
    MXKT_CHECK(check(f, &c));
    char name[192];
    int64_t in = input_size(&c, num, names, arrays, name, sizeof name);
    if (in < 0)
        return mxkt_error(MXK_ERR_NOT_FOUND, "fused rnn: missing %s", name);
    if (in == 0)
        return mxkt_error(MXK_ERR_SHAPE, "fused rnn: %s must be 2-D", name);
    int64_t n = param_size(&c, in);
    float *flat = malloc((size_t)n * sizeof *flat);
    if (flat == NULL)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    mxk_status st = MXK_OK;
    for (uint32_t k = 0; st == MXK_OK && k < BLOCKS(&c); k++)
        st = pack_block(&c, in, k, num, names, arrays, flat);
    mxk_shape ps = {.ndim = 1, .dims = {n}};
    if (st == MXK_OK)
        st = mxk_ndarray_create(&ps, MXK_FLOAT32, (mxk_context){MXK_DEV_CPU, 0}, parameters);
    if (st == MXK_OK && (st = mxk_ndarray_copy_from_host(*parameters, flat,
                                                         (uint64_t)n * sizeof *flat)) != MXK_OK) {
        mxk_ndarray_free(*parameters);
        *parameters = NULL;
    }
    free(flat);
    return st;
}

mxk_status mxkt_fused_rnn_init_fill(const mxkt_fused_rnn *f, double forget_bias,
                                    const mxkt_initializer *init, const mxk_shape *shape,
                                    float *values) {
    int64_t n = mxkt_shape_size(shape);
    mxk_shape flat = {.ndim = 1, .dims = {n}};
    mxk_ndarray *vec = NULL, *packed = NULL, **arrays = NULL;
    char **names = NULL;
    uint32_t num = 0;
    mxk_status st = mxk_ndarray_create(&flat, MXK_FLOAT32, (mxk_context){MXK_DEV_CPU, 0}, &vec);
    if (st == MXK_OK)
        st = mxk_ndarray_copy_from_host(vec, values, (uint64_t)n * sizeof *values);
    if (st != MXK_OK) {
        mxk_ndarray_free(vec);
        return mxkt_kernel_error(st, "fused rnn");
    }
    st = mxkt_fused_rnn_unpack_weights(f, vec, 1, &num, &names, &arrays);
    for (uint32_t i = 0; st == MXK_OK && i < num; i++) {
        float *data = NULL;
        mxk_shape s = mxk_ndarray_shape(arrays[i]);
        st = mxk_ndarray_data(arrays[i], (void **)&data);
        if (st != MXK_OK)
            st = mxkt_kernel_error(st, "fused rnn");
        else if (strcmp(f->mode, "lstm") == 0 && mxkt_ends_with(names[i], "_f_bias"))
            for (int64_t k = 0; k < mxkt_shape_size(&s); k++)
                data[k] = (float)forget_bias;
        else
            st = mxkt_initializer_fill(init, names[i], &s, data);
    }
    if (st == MXK_OK)
        st = mxkt_fused_rnn_pack_weights(f, num, (const char *const *)names, arrays, &packed);
    if (st == MXK_OK &&
        (st = mxk_ndarray_copy_to_host(packed, values, (uint64_t)n * sizeof *values)) != MXK_OK)
        st = mxkt_kernel_error(st, "fused rnn");
    mxk_ndarray_free(packed);
    mxk_ndarray_list_free(num, arrays, names);
    mxk_ndarray_free(vec);
    return st;
}
