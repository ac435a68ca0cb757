/*
 * The recurrent language model of mxk_rnn.h: upstream
 * example/rnn/bucketing/lstm_bucketing.py's sym_gen built from the cells of
 * rnn_cell.c (or the RNN operator as FusedRNNCell.unroll builds it,
 * python/mxnet/rnn/rnn_cell.py), its one-step form for sampling, the model's
 * description file PREFIX-lm.json, and the sampler's draw.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_rnn.h"
#include "net_build.h"

/** Gates of a mode (lstm 4, gru 3, rnn 1), 0 for an unknown mode. */
static int mode_gates(const char *mode) {
    static const char *const modes[4] = {"rnn_relu", "rnn_tanh", "lstm", "gru"};
    static const int gates[4] = {1, 1, 4, 3};
    for (int i = 0; i < 4; i++)
        if (strcmp(mode, modes[i]) == 0)
            return gates[i];
    return 0;
}

mxk_status mxkt_rnn_lm_check(const mxkt_rnn_lm_config *c) {
    if (memchr(c->mode, '\0', sizeof c->mode) == NULL || mode_gates(c->mode) == 0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "rnn lm: unknown mode '%.*s' (lstm, gru, rnn_tanh or rnn_relu)",
                          (int)sizeof c->mode, c->mode);
    const char *names[4] = {"num_layers", "num_hidden", "num_embed", "vocab_size"};
    const int32_t vals[4] = {c->num_layers, c->num_hidden, c->num_embed, c->vocab_size};
    for (int i = 0; i < 4; i++)
        if (vals[i] < 1)
            return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "rnn lm: %s must be >= 1, got %d", names[i],
                              vals[i]);
    if (!(c->dropout >= 0.0f && c->dropout < 1.0f))
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "rnn lm: dropout must be in [0, 1), got %g",
                          (double)c->dropout);
    if (memchr(c->level, '\0', sizeof c->level) == NULL ||
        (strcmp(c->level, "char") != 0 && strcmp(c->level, "word") != 0))
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "rnn lm: level must be char or word, got '%.*s'", (int)sizeof c->level,
                          c->level);
    return MXK_OK;
}

mxk_shape mxkt_rnn_lm_state_shape(const mxkt_rnn_lm_config *c, int64_t batch) {
    mxk_shape s = {0};
    if (c->fused) {
        s.ndim = 3;
        s.dims[0] = c->num_layers;
        s.dims[1] = batch;
        s.dims[2] = c->num_hidden;
    } else {
        s.ndim = 2;
        s.dims[0] = batch;
        s.dims[1] = c->num_hidden;
    }
    return s;
}

/** Number of states: per layer (unrolled) or in all (fused), two for an LSTM. */
static uint32_t lm_num_states(const mxkt_rnn_lm_config *c) {
    uint32_t per = strcmp(c->mode, "lstm") == 0 ? 2 : 1;
    return c->fused ? per : per * (uint32_t)c->num_layers;
}

/** Name k of the step symbol's state inputs (see mxk_rnn.h). */
static void state_name(const mxkt_rnn_lm_config *c, uint32_t k, char *buf, size_t size) {
    uint32_t per = strcmp(c->mode, "lstm") == 0 ? 2 : 1;
    if (c->fused)
        snprintf(buf, size, "%s_begin_state_%u", c->mode, k);
    else
        snprintf(buf, size, "%s_l%u_begin_state_%u", c->mode, k / per, k % per);
}

/**
 * FusedRNNCell(H, L, mode, dropout, prefix "<mode>_").unroll over `x` (N, T, E),
 * layout NTC: swapaxes, RNN, swapaxes. begin: state variables (state_outputs
 * True, their next values into next[]) or NULL (`_zeros` begin states).
 */
static mxk_symbol *fused_unroll(nb *b, const mxkt_rnn_lm_config *c, mxk_symbol *x,
                                mxk_symbol *const *begin, mxk_symbol **next) {
    uint32_t ns = lm_num_states(c);
    mxk_symbol *in[4] = {nb_op(b, "swapaxes", &x, 1, "dim1=0;dim2=1")};
    char name[64], shortest[32], p[40];
    snprintf(name, sizeof name, "%s_parameters", c->mode);
    in[1] = nb_var(b, name);
    /* FusedRNNCell's parameter: init=FusedRNN(None, H, L, mode, False, forget_bias=1) */
    char init[256];
    snprintf(init, sizeof init,
             "[\"fusedrnn\", {\"init\": null, \"num_hidden\": %d, \"num_layers\": %d, "
             "\"mode\": \"%s\", \"bidirectional\": false, \"forget_bias\": 1.0}]",
             c->num_hidden, c->num_layers, c->mode);
    if (in[1] != NULL && b->st == MXK_OK)
        b->st = mxk_symbol_set_attr(in[1], "__init__", init);
    for (uint32_t k = 0; k < ns; k++)
        in[2 + k] = begin ? begin[k]
                          : nb_op(b, "_zeros", NULL, 0,
                                  "name=%s_begin_state_%u;shape=(%d, 0, %d);dtype=float32;"
                                  "__layout__=LNC",
                                  c->mode, k, c->num_layers, c->num_hidden);
    mxkt_format_shortest(c->dropout, 1, shortest, sizeof shortest);
    mxkt_py_float(strtod(shortest, NULL), p, sizeof p);
    mxk_symbol *rnn =
        nb_op(b, "RNN", in, 2 + ns,
              "name=%s_rnn;state_size=%d;num_layers=%d;bidirectional=False;p=%s;"
              "state_outputs=%s;mode=%s",
              c->mode, c->num_hidden, c->num_layers, p, begin ? "True" : "False", c->mode);
    for (uint32_t k = 0; begin && k < ns; k++)
        next[k] = nb_output(b, rnn, 1 + k);
    mxk_symbol *out = begin ? nb_output(b, rnn, 0) : rnn;
    return nb_op(b, "swapaxes", &out, 1, "dim1=0;dim2=1");
}

/**
 * The network up to the prediction (N*T, V): "data" -> embed -> the layers over
 * `length` steps -> Reshape(-1, H) -> pred. begin NULL: the begin states of
 * upstream's begin_state(); else the state variables, and next[] receives the
 * last states. `u` keeps the unrolled cells' symbols (freed by the caller).
 */
static mxk_symbol *lm_pred(nb *b, const mxkt_rnn_lm_config *c, uint32_t length,
                           mxk_symbol *const *begin, mxk_symbol **next, mxkt_rnn_unrolled *u) {
    mxk_symbol *data = nb_var(b, "data");
    mxk_symbol *embed = nb_op(b, "Embedding", &data, 1, "name=embed;input_dim=%d;output_dim=%d",
                              c->vocab_size, c->num_embed);
    mxk_symbol *seq = NULL;
    if (embed != NULL && c->fused) {
        seq = fused_unroll(b, c, embed, begin, next);
    } else if (embed != NULL) {
        mxkt_fused_rnn f = {c->mode, c->num_hidden, c->num_layers, 0, c->dropout, NULL};
        mxkt_rnn_cell *cell = NULL;
        mxk_status st = mxkt_fused_rnn_unfuse(&f, &cell);
        if (st == MXK_OK)
            st = mxkt_rnn_cell_unroll(cell, length, embed, begin, "NTC", MXKT_RNN_MERGE_TRUE, u);
        mxkt_rnn_cell_free(cell);
        if (st != MXK_OK && b->st == MXK_OK)
            b->st = st;
        if (st == MXK_OK) {
            seq = u->outputs[0];
            for (uint32_t k = 0; begin && k < u->num_states; k++)
                next[k] = u->states[k];
        }
    }
    mxk_symbol *pred = nb_op(b, "Reshape", &seq, 1, "shape=(-1, %d)", c->num_hidden);
    return nb_op(b, "FullyConnected", &pred, 1, "name=pred;num_hidden=%d", c->vocab_size);
}

mxk_status mxkt_rnn_lm_symbol(const mxkt_rnn_lm_config *c, uint32_t seq_len, mxk_symbol **out) {
    *out = NULL;
    MXKT_CHECK(mxkt_rnn_lm_check(c));
    if (seq_len < 1)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "rnn lm: seq_len must be >= 1");
    nb b = {0};
    mxkt_rnn_unrolled u = {0};
    mxk_symbol *in[2] = {lm_pred(&b, c, seq_len, NULL, NULL, &u), NULL};
    mxk_symbol *label = nb_var(&b, "softmax_label");
    in[1] = nb_op(&b, "Reshape", &label, 1, "shape=(-1,)");
    mxk_status st = nb_finish(&b, nb_op(&b, "SoftmaxOutput", in, 2, "name=softmax"), out);
    mxkt_rnn_unrolled_free(&u);
    return st;
}

mxk_status mxkt_rnn_lm_sym_gen(int64_t bucket_key, void *user, mxk_symbol **out) {
    return mxkt_rnn_lm_symbol(
        user, bucket_key > 0 && bucket_key <= UINT32_MAX ? (uint32_t)bucket_key : 0, out);
}

mxk_status mxkt_rnn_lm_step_symbol(const mxkt_rnn_lm_config *c, mxk_symbol **out,
                                   uint32_t *num_states, char ***state_inputs) {
    *out = NULL;
    *num_states = 0;
    *state_inputs = NULL;
    MXKT_CHECK(mxkt_rnn_lm_check(c));
    uint32_t ns = lm_num_states(c);
    char **names = calloc(ns + 1, sizeof *names);
    mxk_symbol **begin = calloc(ns, sizeof *begin), **group = calloc(ns + 1, sizeof *group);
    nb b = {0};
    if (names == NULL || begin == NULL || group == NULL)
        b.st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "rnn lm: out of memory");
    for (uint32_t k = 0; b.st == MXK_OK && k < ns; k++) {
        char name[64];
        state_name(c, k, name, sizeof name);
        names[k] = strdup(name);
        begin[k] = nb_var(&b, name);
        if (names[k] == NULL)
            b.st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "rnn lm: out of memory");
    }
    mxkt_rnn_unrolled u = {0};
    mxk_symbol *pred = lm_pred(&b, c, 1, begin, group + 1, &u);
    group[0] = nb_op(&b, "softmax", &pred, 1, "name=softmax");
    mxk_symbol *g = NULL;
    if (b.st == MXK_OK) {
        mxk_status st = mxk_symbol_group(ns + 1, group, &g);
        if (st != MXK_OK)
            b.st = mxkt_kernel_error(st, "rnn lm");
    }
    mxk_status st = b.st;
    nb_discard(&b);
    mxkt_rnn_unrolled_free(&u);
    free(begin);
    free(group);
    if (st != MXK_OK) {
        mxk_symbol_free(g);
        for (uint32_t k = 0; names && k < ns; k++)
            free(names[k]);
        free(names);
        return st;
    }
    *out = g;
    *num_states = ns;
    *state_inputs = names;
    return MXK_OK;
}

/** PREFIX-lm.json into buf. */
static mxk_status lm_path(const char *prefix, char *buf, size_t size) {
    if ((size_t)snprintf(buf, size, "%s-lm.json", prefix) >= size)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "rnn lm: the prefix is too long");
    return MXK_OK;
}

/**
 * Checks the vocabulary's ids against V: each in 0..V-1, none twice. `where` prefixes
 * the messages ("rnn lm: " or "rnn lm: PATH: ").
 */
static mxk_status check_vocab(const mxkt_vocab *v, int32_t vsize, const char *where) {
    int64_t n = mxkt_vocab_size(v);
    if (n == 0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "%sthe vocabulary is empty", where);
    int64_t *owner = malloc((size_t)vsize * sizeof *owner);
    if (owner == NULL)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "rnn lm: out of memory");
    for (int32_t i = 0; i < vsize; i++)
        owner[i] = -1;
    mxk_status st = MXK_OK;
    for (int64_t i = 0; st == MXK_OK && i < n; i++) {
        int32_t id, other;
        const char *tok = mxkt_vocab_entry(v, i, &id);
        if (id < 0 || id >= vsize)
            st = mxkt_error(MXK_ERR_INVALID_ARGUMENT, "%sid %d of token '%s' is outside 0..%d",
                            where, id, tok, vsize - 1);
        else if (owner[id] >= 0)
            st = mxkt_error(MXK_ERR_INVALID_ARGUMENT, "%sid %d is given to both '%s' and '%s'",
                            where, id, mxkt_vocab_entry(v, owner[id], &other), tok);
        else
            owner[id] = i;
    }
    free(owner);
    return st;
}

mxk_status mxkt_rnn_lm_save(const char *prefix, const mxkt_rnn_lm_config *c,
                            const mxkt_vocab *vocab) {
    char path[4096];
    MXKT_CHECK(lm_path(prefix, path, sizeof path));
    MXKT_CHECK(mxkt_rnn_lm_check(c));
    MXKT_CHECK(check_vocab(vocab, c->vocab_size, "rnn lm: "));
    char shortest[32];
    mxkt_format_shortest(c->dropout, 1, shortest, sizeof shortest);
    json_t *voc = json_object();
    json_t *root =
        json_pack("{s:s, s:i, s:s, s:i, s:i, s:i, s:i, s:b, s:f, s:s}", "format", "mxk-rnn-lm",
                  "version", 1, "mode", c->mode, "num_layers", c->num_layers, "num_hidden",
                  c->num_hidden, "num_embed", c->num_embed, "vocab_size", c->vocab_size, "fused",
                  c->fused != 0, "dropout", strtod(shortest, NULL), "level", c->level);
    int bad = voc == NULL || root == NULL;
    for (int64_t i = 0; !bad && i < mxkt_vocab_size(vocab); i++) {
        int32_t id;
        const char *tok = mxkt_vocab_entry(vocab, i, &id);
        bad = json_object_set_new(voc, tok, json_integer(id)) != 0;
    }
    char *text = NULL;
    if (!bad && json_object_set(root, "vocab", voc) == 0)
        text = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
    json_decref(voc);
    json_decref(root);
    if (text == NULL)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "rnn lm: out of memory");
    size_t len = strlen(text);
    text[len] = '\n';
    mxk_status st = mxk_file_write(path, text, len + 1);
    free(text);
    return st == MXK_OK ? st : mxkt_kernel_error(st, "rnn lm");
}

/** The integer member `key` of `o` into *v (int32 range). */
static mxk_status get_int(json_t *o, const char *key, const char *path, int32_t *v) {
    json_t *j = json_object_get(o, key);
    if (!json_is_integer(j))
        return mxkt_error(MXK_ERR_FORMAT, "rnn lm: %s: \"%s\" must be an integer", path, key);
    json_int_t x = json_integer_value(j);
    if (x < INT32_MIN || x > INT32_MAX)
        return mxkt_error(MXK_ERR_FORMAT, "rnn lm: %s: \"%s\" is out of range", path, key);
    *v = (int32_t)x;
    return MXK_OK;
}

/** The string member `key` of `o` into buf (size bytes; a longer one is cut, then rejected). */
static mxk_status get_str(json_t *o, const char *key, const char *path, char *buf, size_t size) {
    json_t *j = json_object_get(o, key);
    if (!json_is_string(j))
        return mxkt_error(MXK_ERR_FORMAT, "rnn lm: %s: \"%s\" must be a string", path, key);
    snprintf(buf, size, "%s", json_string_value(j));
    return MXK_OK;
}

/** The description in `root` into *c and *vocab. */
static mxk_status parse(json_t *root, const char *path, mxkt_rnn_lm_config *c, mxkt_vocab **vocab) {
    json_t *fmt = json_object_get(root, "format");
    if (!json_is_string(fmt) || strcmp(json_string_value(fmt), "mxk-rnn-lm") != 0)
        return mxkt_error(MXK_ERR_FORMAT,
                          "rnn lm: %s: not an mxk language model description (\"format\" must "
                          "be \"mxk-rnn-lm\")",
                          path);
    int32_t version = 0;
    MXKT_CHECK(get_int(root, "version", path, &version));
    if (version != 1)
        return mxkt_error(MXK_ERR_FORMAT, "rnn lm: %s: version %d is not supported (1)", path,
                          version);
    MXKT_CHECK(get_str(root, "mode", path, c->mode, sizeof c->mode));
    MXKT_CHECK(get_int(root, "num_layers", path, &c->num_layers));
    MXKT_CHECK(get_int(root, "num_hidden", path, &c->num_hidden));
    MXKT_CHECK(get_int(root, "num_embed", path, &c->num_embed));
    MXKT_CHECK(get_int(root, "vocab_size", path, &c->vocab_size));
    json_t *fused = json_object_get(root, "fused");
    if (!json_is_boolean(fused))
        return mxkt_error(MXK_ERR_FORMAT, "rnn lm: %s: \"fused\" must be true or false", path);
    c->fused = json_is_true(fused);
    json_t *p = json_object_get(root, "dropout");
    if (!json_is_number(p))
        return mxkt_error(MXK_ERR_FORMAT, "rnn lm: %s: \"dropout\" must be a number", path);
    c->dropout = (float)json_number_value(p);
    MXKT_CHECK(get_str(root, "level", path, c->level, sizeof c->level));
    char where[4200];
    snprintf(where, sizeof where, "rnn lm: %s: ", path);
    if (mxkt_rnn_lm_check(c) != MXK_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", mxkt_last_error() + strlen("rnn lm: "));
        return mxkt_error(MXK_ERR_FORMAT, "%s%s", where, msg);
    }
    json_t *voc = json_object_get(root, "vocab");
    if (!json_is_object(voc))
        return mxkt_error(MXK_ERR_FORMAT, "rnn lm: %s: \"vocab\" must be an object of token -> id",
                          path);
    MXKT_CHECK(mxkt_vocab_create(vocab));
    const char *tok;
    json_t *id;
    json_object_foreach(voc, tok, id) {
        json_int_t x = json_integer_value(id);
        if (!json_is_integer(id) || x < INT32_MIN || x > INT32_MAX)
            return mxkt_error(MXK_ERR_FORMAT,
                              "rnn lm: %s: \"vocab\" must be an object of token -> id", path);
        MXKT_CHECK(mxkt_vocab_add(*vocab, tok, (int32_t)x));
    }
    mxk_status st = check_vocab(*vocab, c->vocab_size, where);
    return st == MXK_OK || st == MXK_ERR_OUT_OF_MEMORY ? st : MXK_ERR_FORMAT;
}

/** Largest description read: a vocabulary of a few million tokens. */
#define LM_JSON_MAX_BYTES (256u << 20)

mxk_status mxkt_rnn_lm_load(const char *prefix, mxkt_rnn_lm_config *c, mxkt_vocab **vocab) {
    char path[4096];
    memset(c, 0, sizeof *c);
    *vocab = NULL;
    MXKT_CHECK(lm_path(prefix, path, sizeof path));
    char *data = NULL;
    size_t size = 0;
    mxk_status st = mxk_file_read(path, "model description", LM_JSON_MAX_BYTES, &data, &size);
    if (st != MXK_OK)
        return mxkt_kernel_error(st, "rnn lm");
    json_error_t err;
    json_t *root = json_loadb(data, size, JSON_REJECT_DUPLICATES, &err);
    mxk_free(data);
    if (root == NULL)
        st = mxkt_error(MXK_ERR_FORMAT, "rnn lm: %s: line %d column %d: %s", path, err.line,
                        err.column, err.text);
    else if (!json_is_object(root))
        st = mxkt_error(MXK_ERR_FORMAT,
                        "rnn lm: %s: not an mxk language model description (\"format\" must "
                        "be \"mxk-rnn-lm\")",
                        path);
    else
        st = parse(root, path, c, vocab);
    json_decref(root);
    if (st != MXK_OK) {
        mxkt_vocab_free(*vocab);
        *vocab = NULL;
        memset(c, 0, sizeof *c);
    }
    return st;
}

/** The draw's weight of id k: (p / max p)^(1/temperature), 0 where excluded. */
static double weight(const float *p, const uint8_t *allowed, int32_t k, double top,
                     double temperature) {
    if ((allowed != NULL && !allowed[k]) || !isfinite(p[k]) || !(p[k] > 0.0f))
        return 0.0;
    return exp((log((double)p[k]) - log(top)) / temperature);
}

mxk_status mxkt_rnn_lm_draw(const float *p, int32_t v, const uint8_t *allowed, double temperature,
                            uint64_t seed, uint64_t stream, uint64_t i, int32_t *out) {
    if (!(temperature > 0.0) || !isfinite(temperature))
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "rnn lm: temperature must be > 0, got %g",
                          temperature);
    double top = 0.0, total = 0.0;
    for (int32_t k = 0; k < v; k++)
        if ((allowed == NULL || allowed[k]) && isfinite(p[k]) && p[k] > top)
            top = p[k];
    if (!(top > 0.0))
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "rnn lm: no token can be drawn (every allowed probability is 0 or not "
                          "finite)");
    for (int32_t k = 0; k < v; k++)
        total += weight(p, allowed, k, top, temperature);
    double u = mxkt_rand_unit(seed, stream, i) * total, acc = 0.0;
    int32_t last = 0;
    for (int32_t k = 0; k < v; k++) {
        double w = weight(p, allowed, k, top, temperature);
        if (w <= 0.0)
            continue;
        last = k;
        acc += w;
        if (u < acc)
            break;
    }
    *out = last;
    return MXK_OK;
}
