/*
 * The mxk side of rnn_cells_conformance.py: builds the named cell case with
 * mxk_rnn.h and writes its unrolled JSON and forward outputs, or converts fused
 * RNN parameters with mxkt_fused_rnn_pack_weights / unpack_weights.
 *
 *   rnn_cells_tool cell CASE DIR   DIR/mxk.json; with DIR/inputs.params (every
 *                                  argument by name) also DIR/mxk_out.params
 *                                  (outputs then states, named out<i>)
 *   rnn_cells_tool unpack MODE LAYERS HIDDEN BIDIR IN.params OUT.params
 *   rnn_cells_tool unpack_gates MODE LAYERS HIDDEN BIDIR IN.params OUT.params
 *   rnn_cells_tool pack   MODE LAYERS HIDDEN BIDIR IN.params OUT.params
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_rnn.h"
#include "train_test_util.h"

#ifndef BUILD_CONFDIR
#error "BUILD_CONFDIR must name the build tree's config dir"
#endif

/** One unroll configuration (the Python script has the same table). */
typedef struct spec {
    const char *name;
    uint32_t length;
    const char *layout;
    mxkt_rnn_merge merge;
} spec;

static const spec SPECS[] = {
    {"lstm", 3, "NTC", MXKT_RNN_MERGE_TRUE},
    {"lstm_forget_bias", 2, "TNC", MXKT_RNN_MERGE_FALSE},
    {"gru", 3, "NTC", MXKT_RNN_MERGE_TRUE},
    {"gru_tnc", 2, "TNC", MXKT_RNN_MERGE_FALSE},
    {"rnn_relu", 3, "NTC", MXKT_RNN_MERGE_FALSE},
    {"rnn_tanh", 2, "TNC", MXKT_RNN_MERGE_TRUE},
    {"stack", 3, "NTC", MXKT_RNN_MERGE_TRUE},
    {"stack_dropout", 3, "TNC", MXKT_RNN_MERGE_FALSE},
    {"bi", 3, "NTC", MXKT_RNN_MERGE_TRUE},
    {"bi_none", 2, "TNC", MXKT_RNN_MERGE_NONE},
    {"bi_false", 2, "NTC", MXKT_RNN_MERGE_FALSE},
    {"residual", 3, "NTC", MXKT_RNN_MERGE_TRUE},
    {"residual_false", 2, "TNC", MXKT_RNN_MERGE_FALSE},
    {"dropout_first", 2, "NTC", MXKT_RNN_MERGE_TRUE},
    {"fused_lstm_bi", 3, "NTC", MXKT_RNN_MERGE_TRUE},
    {"fused_gru", 2, "TNC", MXKT_RNN_MERGE_FALSE},
    {"zoneout_lstm", 3, "NTC", MXKT_RNN_MERGE_TRUE},
    {"zoneout_gru_outputs", 2, "TNC", MXKT_RNN_MERGE_FALSE},
};

#define OK(x)                                                                                      \
    do {                                                                                           \
        if ((x) != MXK_OK) {                                                                       \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, mxk_get_last_error());              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static mxkt_rnn_cell *lstm(int32_t h, double fb, const char *prefix) {
    mxkt_rnn_cell *c;
    OK(mxkt_rnn_cell_lstm(h, fb, prefix, &c));
    return c;
}
static mxkt_rnn_cell *gru(int32_t h, const char *prefix) {
    mxkt_rnn_cell *c;
    OK(mxkt_rnn_cell_gru(h, prefix, &c));
    return c;
}
static mxkt_rnn_cell *rnn(int32_t h, const char *act, const char *prefix) {
    mxkt_rnn_cell *c;
    OK(mxkt_rnn_cell_rnn(h, act, prefix, &c));
    return c;
}
static mxkt_rnn_cell *dropout(float p) {
    mxkt_rnn_cell *c;
    OK(mxkt_rnn_cell_dropout(p, NULL, &c));
    return c;
}
static mxkt_rnn_cell *stack(mxkt_rnn_cell *a, mxkt_rnn_cell *b, mxkt_rnn_cell *c) {
    mxkt_rnn_cell *s;
    OK(mxkt_rnn_cell_sequential(&s));
    OK(mxkt_rnn_cell_add(s, a));
    OK(mxkt_rnn_cell_add(s, b));
    if (c)
        OK(mxkt_rnn_cell_add(s, c));
    return s;
}
static mxkt_rnn_cell *bi(mxkt_rnn_cell *l, mxkt_rnn_cell *r) {
    mxkt_rnn_cell *c;
    OK(mxkt_rnn_cell_bidirectional(l, r, NULL, &c));
    return c;
}
static mxkt_rnn_cell *residual(mxkt_rnn_cell *base) {
    mxkt_rnn_cell *c;
    OK(mxkt_rnn_cell_residual(base, &c));
    return c;
}
static mxkt_rnn_cell *unfuse(const char *mode, int32_t layers, int32_t bidir, float p) {
    mxkt_fused_rnn f = {mode, 4, layers, bidir, p, NULL};
    mxkt_rnn_cell *c;
    OK(mxkt_fused_rnn_unfuse(&f, &c));
    return c;
}

static mxkt_rnn_cell *build(const char *name) {
    if (!strcmp(name, "lstm"))
        return lstm(4, 1.0, NULL);
    if (!strcmp(name, "lstm_forget_bias"))
        return lstm(3, 0.5, "lfb_");
    if (!strcmp(name, "gru"))
        return gru(4, NULL);
    if (!strcmp(name, "gru_tnc"))
        return gru(3, "g_");
    if (!strcmp(name, "rnn_relu"))
        return rnn(5, "relu", NULL);
    if (!strcmp(name, "rnn_tanh"))
        return rnn(5, NULL, "tanh_");
    if (!strcmp(name, "stack"))
        return stack(lstm(6, 1.0, "lstm_l0_"), lstm(4, 1.0, "lstm_l1_"), NULL);
    if (!strcmp(name, "stack_dropout"))
        return stack(gru(5, "l0_"), dropout(0.5f), rnn(3, "relu", "l1_"));
    if (!strcmp(name, "bi"))
        return bi(lstm(4, 1.0, "l_"), lstm(4, 1.0, "r_"));
    if (!strcmp(name, "bi_none"))
        return bi(gru(3, "l_"), gru(3, "r_"));
    if (!strcmp(name, "bi_false"))
        return bi(lstm(2, 1.0, "l_"), lstm(2, 1.0, "r_"));
    if (!strcmp(name, "residual"))
        return residual(rnn(4, NULL, NULL));
    if (!strcmp(name, "residual_false"))
        return residual(gru(4, NULL));
    if (!strcmp(name, "dropout_first"))
        return stack(dropout(0.3f), lstm(3, 1.0, NULL), NULL);
    if (!strcmp(name, "fused_lstm_bi"))
        return unfuse("lstm", 2, 1, 0.2f);
    if (!strcmp(name, "fused_gru"))
        return unfuse("gru", 2, 0, 0.0f);
    mxkt_rnn_cell *z = NULL;
    if (!strcmp(name, "zoneout_lstm"))
        OK(mxkt_rnn_cell_zoneout(lstm(3, 1.0, NULL), 0.0f, 0.5f, &z));
    if (!strcmp(name, "zoneout_gru_outputs"))
        OK(mxkt_rnn_cell_zoneout(gru(3, NULL), 0.5f, 0.25f, &z));
    if (z)
        return z;
    fprintf(stderr, "unknown case %s\n", name);
    exit(2);
}

/** Binds the group to inputs.params, runs forward (is_train 0), saves the outputs. */
static void forward(mxk_symbol *g, const char *in_path, const char *out_path) {
    uint32_t n = 0, na = 0;
    mxk_ndarray **arrays = NULL;
    char **names = NULL, **args = NULL;
    OK(mxk_ndarray_load(in_path, &n, &arrays, &names));
    OK(mxk_symbol_list_names(g, MXK_SYMBOL_ARGUMENTS, &na, &args));
    mxk_ndarray **bound = calloc(na, sizeof *bound);
    for (uint32_t i = 0; i < na; i++)
        for (uint32_t k = 0; k < n; k++)
            if (!strcmp(args[i], names[k]))
                bound[i] = arrays[k];
    mxk_executor *ex = NULL;
    OK(mxk_executor_bind(g, (mxk_context){MXK_DEV_CPU, 0}, na, bound, NULL, NULL, 0, NULL, NULL,
                         &ex));
    OK(mxk_executor_forward(ex, 0));
    uint32_t no = mxk_executor_num_outputs(ex);
    mxk_ndarray **outs = calloc(no, sizeof *outs);
    char **onames = calloc(no, sizeof *onames);
    for (uint32_t i = 0; i < no; i++) {
        outs[i] = mxk_executor_output(ex, i);
        onames[i] = malloc(16);
        snprintf(onames[i], 16, "out%u", i);
    }
    OK(mxk_ndarray_save(out_path, no, outs, (const char *const *)onames));
    for (uint32_t i = 0; i < no; i++)
        free(onames[i]);
    free(onames);
    free(outs);
    mxk_executor_free(ex);
    free(bound);
    mxk_string_list_free(args);
    mxk_ndarray_list_free(n, arrays, names);
}

static int cell_case(const char *name, const char *dir) {
    const spec *s = NULL;
    for (size_t i = 0; i < sizeof SPECS / sizeof *SPECS; i++)
        if (!strcmp(SPECS[i].name, name))
            s = &SPECS[i];
    if (s == NULL) {
        fprintf(stderr, "unknown case %s\n", name);
        return 2;
    }
    mxkt_rnn_cell *c = build(name);
    mxkt_rnn_unrolled u;
    OK(mxkt_rnn_cell_unroll(c, s->length, NULL, NULL, s->layout, s->merge, &u));
    mxk_symbol *all[64];
    uint32_t n = 0;
    for (uint32_t i = 0; i < u.num_outputs; i++)
        all[n++] = u.outputs[i];
    for (uint32_t i = 0; i < u.num_states; i++)
        all[n++] = u.states[i];
    mxk_symbol *g = NULL;
    OK(mxk_symbol_group(n, all, &g));
    char path[4096], in[4096];
    snprintf(path, sizeof path, "%s/mxk.json", dir);
    OK(mxk_symbol_save(g, path));
    snprintf(in, sizeof in, "%s/inputs.params", dir);
    FILE *f = fopen(in, "rb");
    if (f) {
        fclose(f);
        snprintf(path, sizeof path, "%s/mxk_out.params", dir);
        forward(g, in, path);
    }
    mxk_symbol_free(g);
    mxkt_rnn_unrolled_free(&u);
    mxkt_rnn_cell_free(c);
    return 0;
}

static int convert(char **argv) {
    mxkt_fused_rnn f = {argv[2], atoi(argv[4]), atoi(argv[3]), atoi(argv[5]), 0.0f, NULL};
    uint32_t n = 0;
    mxk_ndarray **arrays = NULL;
    char **names = NULL;
    OK(mxk_ndarray_load(argv[6], &n, &arrays, &names));
    int32_t per_gate = !strcmp(argv[1], "unpack_gates");
    if (!strncmp(argv[1], "unpack", 6)) {
        uint32_t m = 0;
        mxk_ndarray **out = NULL;
        char **onames = NULL;
        OK(mxkt_fused_rnn_unpack_weights(&f, arrays[0], per_gate, &m, &onames, &out));
        OK(mxk_ndarray_save(argv[7], m, out, (const char *const *)onames));
        mxk_ndarray_list_free(m, out, onames);
    } else {
        mxk_ndarray *p = NULL;
        OK(mxkt_fused_rnn_pack_weights(&f, n, (const char *const *)names, arrays, &p));
        const char *pname = "parameters";
        OK(mxk_ndarray_save(argv[7], 1, &p, &pname));
        mxk_ndarray_free(p);
    }
    mxk_ndarray_list_free(n, arrays, names);
    return 0;
}

int main(int argc, char **argv) {
    int init = tt_init();
    if (init != 0)
        return init;
    int rc = 2;
    if (argc == 4 && !strcmp(argv[1], "cell"))
        rc = cell_case(argv[2], argv[3]);
    else if (argc == 8 && (!strcmp(argv[1], "unpack") || !strcmp(argv[1], "unpack_gates") ||
                           !strcmp(argv[1], "pack")))
        rc = convert(argv);
    else
        fprintf(stderr, "usage: see the comment of tests/train/rnn_cells_tool.c\n");
    mxk_shutdown();
    return rc;
}
