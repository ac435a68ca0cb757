/*
 * The recurrent cells of mxk_rnn.h: upstream python/mxnet/rnn/rnn_cell.py
 * (MXNet 1.9.1) RNNCell, LSTMCell, GRUCell, SequentialRNNCell,
 * BidirectionalCell, DropoutCell, ZoneoutCell and ResidualCell, unrolled into symbols with
 * the graph builder of the model zoo (net_build.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_rnn.h"
#include "net_build.h"

typedef enum cell_kind {
    RNN,
    LSTM,
    GRU,
    SEQUENTIAL,
    BIDIRECTIONAL,
    DROPOUT,
    RESIDUAL,
    ZONEOUT
} cell_kind;

struct mxkt_rnn_cell {
    cell_kind kind;
    char prefix[128]; /**< also the output prefix of a BidirectionalCell */
    int32_t num_hidden;
    char activation[16];
    float dropout;                 /**< DropoutCell's p; ZoneoutCell's zoneout_outputs */
    float zoneout_states;          /**< ZoneoutCell */
    mxk_symbol *prev_output;       /**< ZoneoutCell: the last step's output (the unroll's) */
    mxk_symbol *iw, *ib, *hw, *hb; /**< parameters of RNN, LSTM, GRU */
    mxkt_rnn_cell **cells;         /**< children: sequential, bidirectional (l, r), residual */
    uint32_t num_cells;
    int32_t counter, init_counter; /**< upstream's _counter, _init_counter */
};

/** A sequence: one merged symbol, or `n` step symbols (arrays kept by the unroll). */
typedef struct seq {
    mxk_symbol *merged;
    mxk_symbol **step;
    uint32_t n;
} seq;

/** One unroll: the builder and the arrays it allocates. */
typedef struct ur {
    nb b;
    void **allocs;
    uint32_t num_allocs;
    int axis; /**< position of T in the layout */
} ur;

/** n zeroed symbol pointers freed with the unroll (NULL and a failure when out of memory). */
static mxk_symbol **syms_new(ur *u, uint32_t n) {
    void **a = realloc(u->allocs, (u->num_allocs + 1) * sizeof *a);
    mxk_symbol **p = calloc(n ? n : 1, sizeof *p);
    if (a)
        u->allocs = a;
    if (a == NULL || p == NULL) {
        free(p);
        if (u->b.st == MXK_OK)
            u->b.st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    return u->allocs[u->num_allocs++] = p;
}

static mxk_status cell_new(cell_kind kind, const char *prefix, int32_t num_hidden,
                           mxkt_rnn_cell **out) {
    *out = NULL;
    mxkt_rnn_cell *c = calloc(1, sizeof *c);
    if (c == NULL)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    c->kind = kind;
    c->num_hidden = num_hidden;
    c->counter = c->init_counter = -1;
    snprintf(c->prefix, sizeof c->prefix, "%s", prefix);
    *out = c;
    return MXK_OK;
}

/** The variable <prefix><name> (upstream RNNParams.get). */
static mxk_status param(mxkt_rnn_cell *c, const char *name, mxk_symbol **out) {
    char full[192];
    snprintf(full, sizeof full, "%s%s", c->prefix, name);
    mxk_status st = mxk_symbol_variable(full, out);
    return st == MXK_OK ? MXK_OK : mxkt_kernel_error(st, full);
}

/** A step cell with its four parameters; `prefix` NULL gives `dflt`. */
static mxk_status step_cell(cell_kind kind, int32_t num_hidden, const char *prefix,
                            const char *dflt, mxkt_rnn_cell **out) {
    *out = NULL;
    if (num_hidden <= 0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "rnn cell: num_hidden must be positive, got %d",
                          num_hidden);
    mxkt_rnn_cell *c;
    MXKT_CHECK(cell_new(kind, prefix ? prefix : dflt, num_hidden, &c));
    mxk_status st = param(c, "i2h_weight", &c->iw);
    if (st == MXK_OK)
        st = param(c, "i2h_bias", &c->ib);
    if (st == MXK_OK)
        st = param(c, "h2h_weight", &c->hw);
    if (st == MXK_OK)
        st = param(c, "h2h_bias", &c->hb);
    if (st != MXK_OK) {
        mxkt_rnn_cell_free(c);
        return st;
    }
    *out = c;
    return MXK_OK;
}

mxk_status mxkt_rnn_cell_rnn(int32_t num_hidden, const char *activation, const char *prefix,
                             mxkt_rnn_cell **out) {
    static const char *const acts[] = {"tanh", "relu", "sigmoid", "softrelu"};
    const char *a = activation ? activation : "tanh";
    int ok = 0;
    for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
        ok |= strcmp(a, acts[i]) == 0;
    *out = NULL;
    if (!ok)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "rnn cell: unknown activation '%s'", a);
    MXKT_CHECK(step_cell(RNN, num_hidden, prefix, "rnn_", out));
    snprintf((*out)->activation, sizeof(*out)->activation, "%s", a);
    return MXK_OK;
}

mxk_status mxkt_rnn_cell_lstm(int32_t num_hidden, double forget_bias, const char *prefix,
                              mxkt_rnn_cell **out) {
    MXKT_CHECK(step_cell(LSTM, num_hidden, prefix, "lstm_", out));
    char fb[32], init[96];
    mxkt_py_float(forget_bias, fb, sizeof fb);
    snprintf(init, sizeof init, "[\"lstmbias\", {\"forget_bias\": %s}]", fb);
    mxk_status st = mxk_symbol_set_attr((*out)->ib, "__init__", init);
    if (st != MXK_OK) {
        mxkt_rnn_cell_free(*out);
        *out = NULL;
        return mxkt_kernel_error(st, "rnn cell");
    }
    return MXK_OK;
}

mxk_status mxkt_rnn_cell_gru(int32_t num_hidden, const char *prefix, mxkt_rnn_cell **out) {
    return step_cell(GRU, num_hidden, prefix, "gru_", out);
}

mxk_status mxkt_rnn_cell_sequential(mxkt_rnn_cell **out) {
    return cell_new(SEQUENTIAL, "", 0, out);
}

/** Appends `child` to c's children; frees it when out of memory. */
static mxk_status add_child(mxkt_rnn_cell *c, mxkt_rnn_cell *child) {
    mxkt_rnn_cell **p = realloc(c->cells, (c->num_cells + 1) * sizeof *p);
    if (p == NULL) {
        mxkt_rnn_cell_free(child);
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    }
    c->cells = p;
    c->cells[c->num_cells++] = child;
    return MXK_OK;
}

mxk_status mxkt_rnn_cell_add(mxkt_rnn_cell *stack, mxkt_rnn_cell *cell) {
    if (stack == NULL || stack->kind != SEQUENTIAL) {
        mxkt_rnn_cell_free(cell);
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "rnn cell: add needs a SequentialRNNCell");
    }
    return add_child(stack, cell);
}

/** A cell of `kind` owning `n` children (all freed on failure). */
static mxk_status wrapper(cell_kind kind, const char *prefix, mxkt_rnn_cell *const *children,
                          uint32_t n, mxkt_rnn_cell **out) {
    mxk_status st = cell_new(kind, prefix, 0, out);
    for (uint32_t i = 0; i < n; i++) {
        if (st == MXK_OK)
            st = add_child(*out, children[i]);
        else
            mxkt_rnn_cell_free(children[i]);
    }
    if (st != MXK_OK) {
        mxkt_rnn_cell_free(*out);
        *out = NULL;
    }
    return st;
}

mxk_status mxkt_rnn_cell_bidirectional(mxkt_rnn_cell *l, mxkt_rnn_cell *r,
                                       const char *output_prefix, mxkt_rnn_cell **out) {
    mxkt_rnn_cell *lr[2] = {l, r};
    return wrapper(BIDIRECTIONAL, output_prefix ? output_prefix : "bi_", lr, 2, out);
}

mxk_status mxkt_rnn_cell_residual(mxkt_rnn_cell *base, mxkt_rnn_cell **out) {
    return wrapper(RESIDUAL, "", &base, 1, out);
}

mxk_status mxkt_rnn_cell_dropout(float p, const char *prefix, mxkt_rnn_cell **out) {
    *out = NULL;
    if (!(p >= 0.0f && p < 1.0f))
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "rnn cell: dropout must be in [0, 1), got %g",
                          (double)p);
    MXKT_CHECK(cell_new(DROPOUT, prefix ? prefix : "dropout_", 0, out));
    (*out)->dropout = p;
    return MXK_OK;
}

mxk_status mxkt_rnn_cell_zoneout(mxkt_rnn_cell *base, float zoneout_outputs, float zoneout_states,
                                 mxkt_rnn_cell **out) {
    *out = NULL;
    if (base == NULL || (base->kind != RNN && base->kind != LSTM && base->kind != GRU)) {
        mxkt_rnn_cell_free(base);
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "rnn cell: ZoneoutCell needs an RNN, LSTM or GRU cell");
    }
    if (!(zoneout_outputs >= 0.0f && zoneout_outputs < 1.0f && zoneout_states >= 0.0f &&
          zoneout_states < 1.0f)) {
        mxkt_rnn_cell_free(base);
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "rnn cell: zoneout must be in [0, 1), got %g and %g",
                          (double)zoneout_outputs, (double)zoneout_states);
    }
    MXKT_CHECK(wrapper(ZONEOUT, "", &base, 1, out));
    (*out)->dropout = zoneout_outputs;
    (*out)->zoneout_states = zoneout_states;
    return MXK_OK;
}

void mxkt_rnn_cell_free(mxkt_rnn_cell *c) {
    if (c == NULL)
        return;
    for (uint32_t i = 0; i < c->num_cells; i++)
        mxkt_rnn_cell_free(c->cells[i]);
    free(c->cells);
    mxk_symbol_free(c->iw);
    mxk_symbol_free(c->ib);
    mxk_symbol_free(c->hw);
    mxk_symbol_free(c->hb);
    free(c);
}

/**
 * Upstream's reset: step counters back to -1, children's too except a modifier
 * cell's base (ModifierCell has no _cells; the base's counters run on, as upstream's).
 */
static void reset(mxkt_rnn_cell *c) {
    c->counter = c->init_counter = -1;
    c->prev_output = NULL;
    if (c->kind != RESIDUAL && c->kind != ZONEOUT)
        for (uint32_t i = 0; i < c->num_cells; i++)
            reset(c->cells[i]);
}

/** len(state_info). */
static uint32_t num_states(const mxkt_rnn_cell *c) {
    switch (c->kind) {
    case LSTM:
        return 2;
    case RNN:
    case GRU:
        return 1;
    case DROPOUT:
        return 0;
    default: {
        uint32_t n = 0;
        for (uint32_t i = 0; i < c->num_cells; i++)
            n += num_states(c->cells[i]);
        return n;
    }
    }
}

/** begin_state(func=symbol.zeros) into out[0..num_states): `_zeros` (0, H) nodes. */
static void begin_state(ur *u, mxkt_rnn_cell *c, mxk_symbol **out) {
    if (c->kind == RNN || c->kind == LSTM || c->kind == GRU) {
        for (uint32_t k = 0; k < num_states(c); k++)
            out[k] = nb_op(&u->b, "_zeros", NULL, 0,
                           "name=%sbegin_state_%d;shape=(0, %d);dtype=float32;__layout__=NC",
                           c->prefix, ++c->init_counter, c->num_hidden);
        return;
    }
    for (uint32_t i = 0; i < c->num_cells; i++) {
        begin_state(u, c->cells[i], out);
        out += num_states(c->cells[i]);
    }
}

/**
 * _normalize_sequence: a merged input is split on the T axis when merge is
 * FALSE; steps are stacked (expand_dims, Concat) when merge is TRUE.
 */
static seq normalize(ur *u, uint32_t length, seq in, mxkt_rnn_merge merge) {
    seq out = in;
    if (in.merged && merge == MXKT_RNN_MERGE_FALSE) {
        char name[48];
        nb_auto_name(&u->b, "split", name, sizeof name);
        mxk_symbol *s =
            nb_op(&u->b, "SliceChannel", &in.merged, 1,
                  "name=%s;axis=%d;num_outputs=%u;squeeze_axis=1", name, u->axis, length);
        out = (seq){NULL, syms_new(u, length), length};
        for (uint32_t i = 0; out.step && i < length; i++)
            out.step[i] = nb_output(&u->b, s, i);
    } else if (!in.merged && merge == MXKT_RNN_MERGE_TRUE) {
        mxk_symbol **e = syms_new(u, in.n);
        for (uint32_t i = 0; e && i < in.n; i++)
            e[i] = nb_op(&u->b, "expand_dims", &in.step[i], 1, "axis=%d", u->axis);
        out = (seq){NULL, NULL, 0};
        if (e)
            out.merged = nb_op(&u->b, "Concat", e, in.n, "dim=%d;num_args=%u", u->axis, in.n);
    }
    return out;
}

/** FullyConnected(data, w, b, num_hidden) named `name`. */
static mxk_symbol *fc(ur *u, mxk_symbol *x, mxk_symbol *w, mxk_symbol *bias, int32_t h,
                      const char *name) {
    mxk_symbol *in[3] = {x, w, bias};
    return nb_op(&u->b, "FullyConnected", in, 3, "name=%s;num_hidden=%d", name, h);
}

/** a * b as upstream's Symbol.__mul__ (elemwise_mul "_mulN"), or named `name`. */
static mxk_symbol *mul(ur *u, mxk_symbol *a, mxk_symbol *b, const char *name) {
    char auto_name[48];
    mxk_symbol *in[2] = {a, b};
    if (name == NULL)
        nb_auto_name(&u->b, "_mul", auto_name, sizeof auto_name);
    return nb_op(&u->b, "elemwise_mul", in, 2, "name=%s", name ? name : auto_name);
}

/** Activation named <t>suffix. */
static mxk_symbol *act(ur *u, mxk_symbol *x, const char *type, const char *t, const char *sfx) {
    return nb_op(&u->b, "Activation", &x, 1, "name=%s%s;act_type=%s", t, sfx, type);
}

static void call(ur *u, mxkt_rnn_cell *c, mxk_symbol *x, mxk_symbol **states, mxk_symbol **out);

/** where(Dropout(ones_like(now), p), now, before): ZoneoutCell's mask. */
static mxk_symbol *zoneout(ur *u, float p, mxk_symbol *now, mxk_symbol *before) {
    mxk_symbol *ones = nb_op(&u->b, "ones_like", &now, 1, "%s", "");
    mxk_symbol *in[3] = {nb_op(&u->b, "Dropout", &ones, 1, "p=%g", (double)p), now, before};
    return nb_op(&u->b, "where", in, 3, "%s", "");
}

/** ZoneoutCell.__call__: the base cell's step, outputs and states zoned out. */
static void call_zoneout(ur *u, mxkt_rnn_cell *c, mxk_symbol *x, mxk_symbol **states,
                         mxk_symbol **out) {
    mxk_symbol *old[2] = {states[0], num_states(c) > 1 ? states[1] : NULL};
    call(u, c->cells[0], x, states, out);
    mxk_symbol *prev = c->prev_output;
    if (prev == NULL)
        prev = nb_op(&u->b, "_zeros", NULL, 0, "%s", "shape=(0, 0);dtype=float32");
    if (c->dropout != 0.0f)
        *out = zoneout(u, c->dropout, *out, prev);
    for (uint32_t k = 0; c->zoneout_states != 0.0f && k < num_states(c); k++)
        states[k] = zoneout(u, c->zoneout_states, states[k], old[k]);
    c->prev_output = *out;
}

/** One step of a leaf cell (upstream __call__): *out and next states from x and states. */
static void call(ur *u, mxkt_rnn_cell *c, mxk_symbol *x, mxk_symbol **states, mxk_symbol **out) {
    nb *b = &u->b;
    char t[160], name[192];
    if (c->kind == ZONEOUT) {
        call_zoneout(u, c, x, states, out);
        return;
    }
    if (c->kind == DROPOUT) {
        *out = c->dropout > 0 ? nb_op(b, "Dropout", &x, 1, "p=%g", (double)c->dropout) : x;
        return;
    }
    int32_t h = c->num_hidden;
    snprintf(t, sizeof t, "%st%d_", c->prefix, ++c->counter);
    if (c->kind == RNN) {
        snprintf(name, sizeof name, "%si2h", t);
        mxk_symbol *i2h = fc(u, x, c->iw, c->ib, h, name);
        snprintf(name, sizeof name, "%sh2h", t);
        mxk_symbol *h2h = fc(u, states[0], c->hw, c->hb, h, name);
        *out = states[0] = act(u, nb_plus(b, i2h, h2h), c->activation, t, "out");
    } else if (c->kind == LSTM) {
        snprintf(name, sizeof name, "%si2h", t);
        mxk_symbol *i2h = fc(u, x, c->iw, c->ib, 4 * h, name);
        snprintf(name, sizeof name, "%sh2h", t);
        mxk_symbol *h2h = fc(u, states[0], c->hw, c->hb, 4 * h, name);
        mxk_symbol *gates = nb_plus(b, i2h, h2h);
        mxk_symbol *sl = nb_op(b, "SliceChannel", &gates, 1, "name=%sslice;num_outputs=4", t);
        mxk_symbol *ig = act(u, nb_output(b, sl, 0), "sigmoid", t, "i");
        mxk_symbol *fg = act(u, nb_output(b, sl, 1), "sigmoid", t, "f");
        mxk_symbol *cg = act(u, nb_output(b, sl, 2), "tanh", t, "c");
        mxk_symbol *og = act(u, nb_output(b, sl, 3), "sigmoid", t, "o");
        mxk_symbol *fc_ = mul(u, fg, states[1], NULL);
        mxk_symbol *ic = mul(u, ig, cg, NULL);
        mxk_symbol *sum[2] = {fc_, ic};
        mxk_symbol *next_c = nb_op(b, "elemwise_add", sum, 2, "name=%sstate", t);
        mxk_symbol *tc = nb_op(b, "Activation", &next_c, 1, "act_type=tanh");
        snprintf(name, sizeof name, "%sout", t);
        *out = states[0] = mul(u, og, tc, name);
        states[1] = next_c;
    } else { /* GRU */
        snprintf(name, sizeof name, "%s_i2h", t);
        mxk_symbol *i2h = fc(u, x, c->iw, c->ib, 3 * h, name);
        snprintf(name, sizeof name, "%s_h2h", t);
        mxk_symbol *h2h = fc(u, states[0], c->hw, c->hb, 3 * h, name);
        mxk_symbol *is = nb_op(b, "SliceChannel", &i2h, 1, "name=%s_i2h_slice;num_outputs=3", t);
        mxk_symbol *hs = nb_op(b, "SliceChannel", &h2h, 1, "name=%s_h2h_slice;num_outputs=3", t);
        mxk_symbol *r =
            act(u, nb_plus(b, nb_output(b, is, 0), nb_output(b, hs, 0)), "sigmoid", t, "_r_act");
        mxk_symbol *z =
            act(u, nb_plus(b, nb_output(b, is, 1), nb_output(b, hs, 1)), "sigmoid", t, "_z_act");
        mxk_symbol *rh = mul(u, r, nb_output(b, hs, 2), NULL);
        mxk_symbol *ht = act(u, nb_plus(b, nb_output(b, is, 2), rh), "tanh", t, "_h_act");
        char rm[48];
        nb_auto_name(b, "_rminusscalar", rm, sizeof rm);
        mxk_symbol *one_z = nb_op(b, "_rminus_scalar", &z, 1, "name=%s;scalar=1.0", rm);
        mxk_symbol *sum[2] = {mul(u, one_z, ht, NULL), mul(u, z, states[0], NULL)};
        *out = states[0] = nb_op(b, "elemwise_add", sum, 2, "name=%sout", t);
    }
}

static void unroll(ur *u, mxkt_rnn_cell *c, uint32_t length, seq in, mxk_symbol **begin,
                   mxkt_rnn_merge merge, seq *out, mxk_symbol **states);

/** BaseRNNCell.unroll: the step cell called `length` times. */
static void unroll_steps(ur *u, mxkt_rnn_cell *c, uint32_t length, seq in, mxk_symbol **begin,
                         mxkt_rnn_merge merge, seq *out, mxk_symbol **states) {
    in = normalize(u, length, in, MXKT_RNN_MERGE_FALSE);
    uint32_t ns = num_states(c);
    if (begin == NULL && ns > 0 && (begin = syms_new(u, ns)) != NULL)
        begin_state(u, c, begin);
    for (uint32_t k = 0; k < ns && begin; k++)
        states[k] = begin[k];
    seq o = {NULL, syms_new(u, length), length};
    for (uint32_t i = 0; o.step && in.step && i < length; i++)
        call(u, c, in.step[i], states, &o.step[i]);
    *out = normalize(u, length, o, merge);
}

/** SequentialRNNCell.unroll: each cell over the previous one's outputs. */
static void unroll_sequential(ur *u, mxkt_rnn_cell *c, uint32_t length, seq in, mxk_symbol **begin,
                              mxkt_rnn_merge merge, seq *out, mxk_symbol **states) {
    if (begin == NULL && (begin = syms_new(u, num_states(c))) != NULL)
        begin_state(u, c, begin);
    for (uint32_t i = 0; begin && i < c->num_cells; i++) {
        uint32_t n = num_states(c->cells[i]);
        unroll(u, c->cells[i], length, in, begin,
               i + 1 < c->num_cells ? MXKT_RNN_MERGE_NONE : merge, &in, states);
        begin += n;
        states += n;
    }
    *out = in;
}

/** Splits a merged sequence into steps (BidirectionalCell's SliceChannel). */
static seq split_steps(ur *u, seq s, uint32_t length) {
    if (s.merged == NULL)
        return s;
    mxk_symbol *sl = nb_op(&u->b, "SliceChannel", &s.merged, 1,
                           "axis=%d;num_outputs=%u;squeeze_axis=1", u->axis, length);
    seq o = {NULL, syms_new(u, length), length};
    for (uint32_t i = 0; o.step && i < length; i++)
        o.step[i] = nb_output(&u->b, sl, i);
    return o;
}

/** BidirectionalCell.unroll: l forwards, r over the reversed steps, outputs concatenated. */
static void unroll_bidirectional(ur *u, mxkt_rnn_cell *c, uint32_t length, seq in,
                                 mxk_symbol **begin, mxkt_rnn_merge merge, seq *out,
                                 mxk_symbol **states) {
    in = normalize(u, length, in, MXKT_RNN_MERGE_FALSE);
    if (begin == NULL && (begin = syms_new(u, num_states(c))) != NULL)
        begin_state(u, c, begin);
    seq rin = {NULL, syms_new(u, length), length}, lo = {0}, ro = {0};
    if (begin == NULL || rin.step == NULL || in.step == NULL)
        return;
    for (uint32_t i = 0; i < length; i++)
        rin.step[i] = in.step[length - 1 - i];
    uint32_t nl = num_states(c->cells[0]);
    unroll(u, c->cells[0], length, in, begin, merge, &lo, states);
    unroll(u, c->cells[1], length, rin, begin + nl, merge, &ro, states + nl);
    int merged = merge == MXKT_RNN_MERGE_TRUE;
    if (merge == MXKT_RNN_MERGE_NONE) {
        merged = lo.merged && ro.merged;
        if (!merged) {
            lo = split_steps(u, lo, length);
            ro = split_steps(u, ro, length);
        }
    }
    if (u->b.st != MXK_OK)
        return;
    if (merged) {
        mxk_symbol *cat[2] = {lo.merged,
                              nb_op(&u->b, "reverse", &ro.merged, 1, "axis=%d", u->axis)};
        *out = (seq){nb_op(&u->b, "Concat", cat, 2, "name=%sout;dim=2;num_args=2", c->prefix), NULL,
                     0};
        return;
    }
    *out = (seq){NULL, syms_new(u, length), length};
    for (uint32_t i = 0; out->step && i < length; i++) {
        mxk_symbol *cat[2] = {lo.step[i], ro.step[length - 1 - i]};
        out->step[i] = nb_op(&u->b, "Concat", cat, 2, "name=%st%u;dim=1;num_args=2", c->prefix, i);
    }
}

/** x + its input named "<x>_plus_residual" (ResidualCell). */
static mxk_symbol *plus_residual(ur *u, mxk_symbol *x, mxk_symbol *in) {
    mxk_symbol *xs[2] = {x, in};
    if (x == NULL || in == NULL)
        return NULL;
    return nb_op(&u->b, "elemwise_add", xs, 2, "name=%s_plus_residual", mxk_symbol_name(x));
}

/** ResidualCell.unroll: the base cell's outputs plus the (re-normalized) inputs. */
static void unroll_residual(ur *u, mxkt_rnn_cell *c, uint32_t length, seq in, mxk_symbol **begin,
                            mxkt_rnn_merge merge, seq *out, mxk_symbol **states) {
    unroll(u, c->cells[0], length, in, begin, merge, out, states);
    int merged = merge == MXKT_RNN_MERGE_NONE ? out->merged != NULL : merge == MXKT_RNN_MERGE_TRUE;
    in = normalize(u, length, in, merged ? MXKT_RNN_MERGE_TRUE : MXKT_RNN_MERGE_FALSE);
    if (u->b.st != MXK_OK)
        return;
    if (merged) {
        out->merged = plus_residual(u, out->merged, in.merged);
        return;
    }
    for (uint32_t i = 0; i < length; i++)
        out->step[i] = plus_residual(u, out->step[i], in.step[i]);
}

/** Dispatches unroll by kind; `states` receives num_states(c) symbols. */
static void unroll(ur *u, mxkt_rnn_cell *c, uint32_t length, seq in, mxk_symbol **begin,
                   mxkt_rnn_merge merge, seq *out, mxk_symbol **states) {
    if (u->b.st != MXK_OK)
        return;
    reset(c);
    switch (c->kind) {
    case SEQUENTIAL:
        unroll_sequential(u, c, length, in, begin, merge, out, states);
        break;
    case BIDIRECTIONAL:
        unroll_bidirectional(u, c, length, in, begin, merge, out, states);
        break;
    case RESIDUAL:
        unroll_residual(u, c, length, in, begin, merge, out, states);
        break;
    case DROPOUT:
        in = normalize(u, length, in, merge);
        if (in.merged) {
            call(u, c, in.merged, NULL, &out->merged);
            out->step = NULL;
            out->n = 0;
            break;
        }
        /* fall through */
    default:
        unroll_steps(u, c, length, in, begin, merge, out, states);
    }
}

/** Cells with no step cell below (an empty sequential anywhere). */
static int has_empty(const mxkt_rnn_cell *c) {
    if (c->kind == SEQUENTIAL && c->num_cells == 0)
        return 1;
    for (uint32_t i = 0; i < c->num_cells; i++)
        if (has_empty(c->cells[i]))
            return 1;
    return 0;
}

uint32_t mxkt_rnn_cell_num_states(const mxkt_rnn_cell *cell) {
    return num_states(cell);
}

/** A new handle of `s` into *out. */
static mxk_status handle(mxk_symbol *s, mxk_symbol **out) {
    mxk_status st = mxk_symbol_get_output(s, 0, out);
    return st == MXK_OK ? MXK_OK : mxkt_kernel_error(st, "rnn cell");
}

mxk_status mxkt_rnn_cell_unroll(mxkt_rnn_cell *cell, uint32_t length, mxk_symbol *inputs,
                                mxk_symbol *const *begin_state, const char *layout,
                                mxkt_rnn_merge merge, mxkt_rnn_unrolled *out) {
    memset(out, 0, sizeof *out);
    const char *l = layout ? layout : "NTC";
    if (length == 0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "rnn cell: length must be positive");
    if (strcmp(l, "NTC") != 0 && strcmp(l, "TNC") != 0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "rnn cell: layout must be NTC or TNC, got '%s'",
                          l);
    if (has_empty(cell))
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "rnn cell: an empty SequentialRNNCell");
    uint32_t ns = num_states(cell);
    for (uint32_t k = 0; begin_state && k < ns; k++)
        if (begin_state[k] == NULL)
            return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "rnn cell: begin_state %u is NULL", k);
    ur u = {.axis = l[0] == 'T' ? 0 : 1};
    seq in = {inputs ? inputs : nb_var(&u.b, "data"), NULL, 0}, o = {0};
    mxk_symbol **states = syms_new(&u, ns), **begin = begin_state ? syms_new(&u, ns) : NULL;
    for (uint32_t k = 0; begin && k < ns; k++)
        begin[k] = begin_state[k];
    if (states && (begin || !begin_state))
        unroll(&u, cell, length, in, begin, merge, &o, states);
    mxk_status st = u.b.st;
    uint32_t no = o.merged ? 1 : o.n;
    if (st == MXK_OK) {
        out->outputs = calloc(no, sizeof *out->outputs);
        out->states = calloc(ns ? ns : 1, sizeof *out->states);
        if (out->outputs == NULL || out->states == NULL)
            st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (uint32_t i = 0; st == MXK_OK && i < no; i++, out->num_outputs++)
        st = handle(o.merged ? o.merged : o.step[i], &out->outputs[i]);
    for (uint32_t i = 0; st == MXK_OK && i < ns; i++, out->num_states++)
        st = handle(states[i], &out->states[i]);
    nb_discard(&u.b);
    for (uint32_t i = 0; i < u.num_allocs; i++)
        free(u.allocs[i]);
    free(u.allocs);
    if (st != MXK_OK)
        mxkt_rnn_unrolled_free(out);
    return st;
}

void mxkt_rnn_unrolled_free(mxkt_rnn_unrolled *u) {
    if (u == NULL)
        return;
    for (uint32_t i = 0; u->outputs && i < u->num_outputs; i++)
        mxk_symbol_free(u->outputs[i]);
    for (uint32_t i = 0; u->states && i < u->num_states; i++)
        mxk_symbol_free(u->states[i]);
    free(u->outputs);
    free(u->states);
    memset(u, 0, sizeof *u);
}
