/*
 * The mxk side of lm_conformance.py, and the maker of the tiny models of the
 * `mxk sample` tests (tests/cli/sample_test.sh):
 *
 *   lm_tool symbol MODE FUSED LAYERS HIDDEN EMBED VOCAB DROPOUT SEQ_LEN BATCH DIR
 *       mxkt_rnn_lm_symbol into DIR/mxk.json, its argument shapes for data and
 *       softmax_label (BATCH, SEQ_LEN) into DIR/mxk_shapes.txt ("name d0,d1,..."
 *       per line); with DIR/inputs.params (every argument by name) the forward
 *       output (is_train 0) into DIR/mxk_out.params (key out0)
 *   lm_tool model PREFIX MODE FUSED LEVEL TEXT SEED
 *       a model of 2 layers, 8 hidden, 6 embedding over the tokens of TEXT
 *       (characters or space-separated words, ids in order of appearance from
 *       0): PREFIX-lm.json and PREFIX-0001.params ("arg:NAME"), the parameters
 *       uniform(-1, 1) from an LCG seeded with SEED
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_rnn.h"
#include "train_test_util.h"

#ifndef BUILD_CONFDIR
#error "BUILD_CONFDIR must name the build tree's config dir"
#endif

#define OK(x)                                                                                      \
    do {                                                                                           \
        if ((x) != MXK_OK) {                                                                       \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, mxk_get_last_error());              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const mxk_context cpu = {MXK_DEV_CPU, 0};

static mxkt_rnn_lm_config config(const char *mode, const char *fused, const char *level) {
    mxkt_rnn_lm_config c = {.num_layers = 2, .num_hidden = 8, .num_embed = 6};
    snprintf(c.mode, sizeof c.mode, "%s", mode);
    snprintf(c.level, sizeof c.level, "%s", level);
    c.fused = atoi(fused);
    return c;
}

/** The `symbol` command (see the file comment). */
static int symbol_cmd(char **argv) {
    mxkt_rnn_lm_config c = config(argv[2], argv[3], "char");
    c.num_layers = atoi(argv[4]);
    c.num_hidden = atoi(argv[5]);
    c.num_embed = atoi(argv[6]);
    c.vocab_size = atoi(argv[7]);
    c.dropout = strtof(argv[8], NULL);
    int64_t t = atoi(argv[9]), n = atoi(argv[10]);
    const char *dir = argv[11];
    mxk_symbol *s = NULL;
    OK(mxkt_rnn_lm_symbol(&c, (uint32_t)t, &s));
    char path[4096];
    snprintf(path, sizeof path, "%s/mxk.json", dir);
    OK(mxk_symbol_save(s, path));
    uint32_t na = 0;
    char **args = NULL;
    OK(mxk_symbol_list_names(s, MXK_SYMBOL_ARGUMENTS, &na, &args));
    const char *known[2] = {"data", "softmax_label"};
    mxk_shape ks[2] = {{.ndim = 2, .dims = {n, t}}, {.ndim = 2, .dims = {n, t}}};
    mxk_shape *shapes = calloc(na, sizeof *shapes), out;
    int32_t complete = 0;
    OK(mxk_symbol_infer_shape(s, 2, known, ks, shapes, &out, NULL, &complete));
    snprintf(path, sizeof path, "%s/mxk_shapes.txt", dir);
    FILE *f = fopen(path, "w");
    for (uint32_t i = 0; f && i < na; i++) {
        fprintf(f, "%s ", args[i]);
        for (int32_t d = 0; d < shapes[i].ndim; d++)
            fprintf(f, "%s%lld", d ? "," : "", (long long)shapes[i].dims[d]);
        fputc('\n', f);
    }
    if (f == NULL || fclose(f) != 0)
        return 1;
    snprintf(path, sizeof path, "%s/inputs.params", dir);
    FILE *in = fopen(path, "rb");
    if (in != NULL) {
        fclose(in);
        uint32_t num = 0;
        mxk_ndarray **arrays = NULL;
        char **names = NULL;
        OK(mxk_ndarray_load(path, &num, &arrays, &names));
        mxk_ndarray **bound = calloc(na, sizeof *bound);
        for (uint32_t i = 0; i < na; i++)
            for (uint32_t k = 0; k < num; k++)
                if (!strcmp(args[i], names[k]))
                    bound[i] = arrays[k];
        mxk_executor *ex = NULL;
        OK(mxk_executor_bind(s, cpu, na, bound, NULL, NULL, 0, NULL, NULL, &ex));
        OK(mxk_executor_forward(ex, 0));
        mxk_ndarray *o = mxk_executor_output(ex, 0);
        const char *key = "out0";
        snprintf(path, sizeof path, "%s/mxk_out.params", dir);
        OK(mxk_ndarray_save(path, 1, &o, &key));
        mxk_executor_free(ex);
        free(bound);
        mxk_ndarray_list_free(num, arrays, names);
    }
    free(shapes);
    mxk_string_list_free(args);
    mxk_symbol_free(s);
    return 0;
}

/** The `model` command (see the file comment). */
static int model_cmd(char **argv) {
    mxkt_rnn_lm_config c = config(argv[3], argv[4], argv[5]);
    const char *prefix = argv[2];
    uint64_t state = strtoull(argv[7], NULL, 10);
    char *text = NULL;
    size_t len = 0;
    OK(mxk_file_read(argv[6], "text", 1u << 20, &text, &len));
    mxkt_tokens toks;
    if (!strcmp(c.level, "char"))
        OK(mxkt_tokenize_chars(text, len, &toks));
    else
        OK(mxkt_tokenize_words(text, len, &toks));
    mxk_free(text);
    mxkt_vocab *v = NULL;
    OK(mxkt_vocab_create(&v));
    for (int64_t i = 0; i < toks.offsets[toks.num_sentences]; i++) {
        int32_t id;
        if (!mxkt_vocab_find(v, toks.tokens[i], &id))
            OK(mxkt_vocab_add(v, toks.tokens[i], (int32_t)mxkt_vocab_size(v)));
    }
    mxkt_tokens_free(&toks);
    c.vocab_size = (int32_t)mxkt_vocab_size(v);
    OK(mxkt_rnn_lm_save(prefix, &c, v));
    mxkt_vocab_free(v);

    mxk_symbol *s = NULL;
    OK(mxkt_rnn_lm_symbol(&c, 4, &s));
    const char *known[2] = {"data", "softmax_label"};
    mxk_shape ks[2] = {{.ndim = 2, .dims = {1, 4}}, {.ndim = 2, .dims = {1, 4}}};
    uint32_t na = 0, np = 0;
    char **args = NULL;
    OK(mxk_symbol_list_names(s, MXK_SYMBOL_ARGUMENTS, &na, &args));
    mxk_shape *shapes = calloc(na, sizeof *shapes), out;
    int32_t complete = 0;
    OK(mxk_symbol_infer_shape(s, 2, known, ks, shapes, &out, NULL, &complete));
    mxk_ndarray **arrays = calloc(na, sizeof *arrays);
    char **names = calloc(na, sizeof *names);
    for (uint32_t i = 0; i < na; i++) {
        if (!strcmp(args[i], "data") || !strcmp(args[i], "softmax_label"))
            continue;
        OK(mxk_ndarray_create(&shapes[i], MXK_FLOAT32, cpu, &arrays[np]));
        float *d = NULL;
        OK(mxk_ndarray_data(arrays[np], (void **)&d));
        for (uint64_t k = 0; k < mxk_ndarray_size(arrays[np]); k++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            d[k] = (float)((double)(state >> 40) / 8388608.0 - 1.0);
        }
        names[np] = malloc(strlen(args[i]) + 5);
        sprintf(names[np++], "arg:%s", args[i]);
    }
    char path[4096];
    mxkt_checkpoint_name(path, sizeof path, prefix, 1, "params");
    OK(mxk_ndarray_save(path, np, arrays, (const char *const *)names));
    for (uint32_t i = 0; i < np; i++) {
        mxk_ndarray_free(arrays[i]);
        free(names[i]);
    }
    free(arrays);
    free(names);
    free(shapes);
    mxk_string_list_free(args);
    mxk_symbol_free(s);
    return 0;
}

int main(int argc, char **argv) {
    int init = tt_init();
    if (init != 0)
        return init;
    int rc = 2;
    if (argc == 12 && !strcmp(argv[1], "symbol"))
        rc = symbol_cmd(argv);
    else if (argc == 8 && !strcmp(argv[1], "model"))
        rc = model_cmd(argv);
    else
        fprintf(stderr, "usage: see the comment of tests/train/lm_tool.c\n");
    mxk_shutdown();
    return rc;
}
