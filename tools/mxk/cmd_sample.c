/*
 * `mxk sample --model-prefix P --load-epoch N --prefix-text TEXT`: text from a
 * recurrent language model (mxk_rnn.h), as the char-LSTM tutorial's sampler
 * (julia/docs/src/tutorial/char-lstm.md, julia/examples/char-lstm/sampler.jl):
 * the model's one-step symbol (mxkt_rnn_lm_step_symbol) is bound for K samples,
 * the prefix is fed token by token carrying the states, then each next token
 * is drawn from the softmax tempered by --temperature (mxkt_rnn_lm_draw: draw
 * g of sample k is number g of the Philox stream (seed, k)), fed back, and so
 * on for --length tokens. Everything is checked (options, the description
 * P-lm.json, the prefix's tokens, the checkpoint's parameters and shapes)
 * before the first step.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mxk_rnn.h"

/** Most samples drawn side by side. */
#define SAMPLE_MAX_BATCH 4096
/** Most tokens generated per sample. */
#define SAMPLE_MAX_LENGTH 1000000
/** Most tokens generated in all (the ids are kept until the samples are printed). */
#define SAMPLE_MAX_TOKENS 100000000

/** The command line of `mxk sample`. */
typedef struct sample_args {
    const char *model_prefix, *prefix_text, *ctx;
    int64_t load_epoch, length, batch;
    uint64_t seed;
    double temperature;
} sample_args;

/** Parses the options. Returns CLI_OK or CLI_USAGE (reported). */
static int parse_args(sample_args *a, int argc, char **argv) {
    *a = (sample_args){.load_epoch = -1, .length = 200, .batch = 1, .temperature = 1.0};
    const cli_command *cmd = &cli_cmd_sample;
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        uint64_t u = 0;
        int r;
        if (strcmp(argv[i], "--") == 0)
            continue;
        CLI_STR_OPT(cmd, "--model-prefix", a->model_prefix)
        CLI_STR_OPT(cmd, "--prefix-text", a->prefix_text)
        CLI_STR_OPT(cmd, "--ctx", a->ctx)
        CLI_UINT_OPT(cmd, "--load-epoch", a->load_epoch, 100000)
        CLI_UINT_OPT(cmd, "--length", a->length, SAMPLE_MAX_LENGTH)
        CLI_UINT_OPT(cmd, "--batch", a->batch, SAMPLE_MAX_BATCH)
        CLI_UINT_OPT(cmd, "--seed", a->seed, UINT64_MAX)
        if ((r = cli_option_value(argc, argv, &i, "--temperature", &v)) != 0) {
            if (r < 0 || !cli_parse_real(v, &a->temperature))
                return cli_usage_error(cmd, "option '--temperature' needs a number");
            continue;
        }
        return cli_reject_argument(cmd, argv[i]);
    }
    if (a->model_prefix == NULL || a->load_epoch < 0)
        return cli_usage_error(cmd, "--model-prefix and --load-epoch are required");
    if (a->prefix_text == NULL || a->prefix_text[0] == '\0')
        return cli_usage_error(cmd, "--prefix-text is required (at least one token to start from)");
    if (!(a->temperature > 0.0))
        return cli_usage_error(cmd, "--temperature must be > 0, got %g", a->temperature);
    if (a->length < 1)
        return cli_usage_error(cmd, "--length must be >= 1, got %lld", (long long)a->length);
    if (a->batch < 1)
        return cli_usage_error(cmd, "--batch must be >= 1, got %lld", (long long)a->batch);
    if (a->batch * a->length > SAMPLE_MAX_TOKENS)
        return cli_usage_error(cmd, "--batch times --length must be at most %d tokens",
                               SAMPLE_MAX_TOKENS);
    return CLI_OK;
}

/** What a run holds: the model, its bound step and the samples' token ids. */
typedef struct sampler {
    mxkt_rnn_lm_config c;
    mxkt_vocab *vocab;
    const char **tokens; /**< id -> token (owned by vocab), NULL for ids without one */
    uint8_t *allowed;    /**< id has a token */
    mxk_symbol *step;
    char **states;
    uint32_t num_states;
    mxk_executor *ex;
    int32_t *prefix; /**< the prefix's ids */
    int64_t prefix_len;
    int32_t *out; /**< batch x length generated ids */
} sampler;

static void sampler_free(sampler *s) {
    mxk_executor_free(s->ex);
    mxk_string_list_free(s->states);
    mxk_symbol_free(s->step);
    mxkt_vocab_free(s->vocab);
    free(s->tokens);
    free(s->allowed);
    free(s->prefix);
    free(s->out);
}

/** The prefix's tokens as ids (tokenized as the model's level says). */
static int encode_prefix(sampler *s, const sample_args *a) {
    mxkt_tokens t;
    size_t len = strlen(a->prefix_text);
    mxk_status st = strcmp(s->c.level, "word") == 0 ? mxkt_tokenize_words(a->prefix_text, len, &t)
                                                    : mxkt_tokenize_chars(a->prefix_text, len, &t);
    if (st != MXK_OK)
        return cli_error("--prefix-text: %s", mxk_get_last_error());
    int64_t n = t.offsets[t.num_sentences];
    s->prefix = malloc((size_t)(n ? n : 1) * sizeof *s->prefix);
    int rc = s->prefix ? CLI_OK : cli_error("out of memory");
    if (rc == CLI_OK && n == 0)
        rc = cli_error("--prefix-text has no %s token", s->c.level);
    for (int64_t i = 0; rc == CLI_OK && i < n; i++)
        if (!mxkt_vocab_find(s->vocab, t.tokens[i], &s->prefix[i]))
            rc = cli_error("--prefix-text: the token '%s' is not in the vocabulary of %s-lm.json",
                           t.tokens[i], a->model_prefix);
    s->prefix_len = n;
    mxkt_tokens_free(&t);
    return rc;
}

/** Copies the checkpoint's "arg:NAME" arrays into the step's parameters, checking each. */
static int load_params(sampler *s, const sample_args *a) {
    char path[4096];
    mxkt_checkpoint_name(path, sizeof path, a->model_prefix, (int32_t)a->load_epoch, "params");
    uint32_t n = 0, na = 0;
    mxk_ndarray **arrays = NULL;
    char **names = NULL, **args = NULL;
    if (mxk_ndarray_load(path, &n, &arrays, &names) != MXK_OK)
        return cli_error("%s", mxk_get_last_error());
    int rc = mxk_symbol_list_names(s->step, MXK_SYMBOL_ARGUMENTS, &na, &args) == MXK_OK
                 ? CLI_OK
                 : cli_error("%s", mxk_get_last_error());
    for (uint32_t i = 0; rc == CLI_OK && i < na; i++) {
        int is_input = strcmp(args[i], "data") == 0;
        for (uint32_t k = 0; k < s->num_states; k++)
            is_input |= strcmp(args[i], s->states[k]) == 0;
        if (is_input)
            continue;
        mxk_ndarray *from = NULL, *to = mxk_executor_arg(s->ex, args[i]);
        for (uint32_t k = 0; names && k < n; k++)
            if (strncmp(names[k], "arg:", 4) == 0 && strcmp(names[k] + 4, args[i]) == 0)
                from = arrays[k];
        if (from == NULL) {
            rc = cli_error("%s has no parameter '%s' (not a checkpoint of the model of %s-lm.json)",
                           path, args[i], a->model_prefix);
            break;
        }
        mxk_shape fs = mxk_ndarray_shape(from), ts = mxk_ndarray_shape(to);
        if (fs.ndim != ts.ndim || memcmp(fs.dims, ts.dims, (size_t)ts.ndim * sizeof *ts.dims)) {
            char got[64], want[64];
            cli_format_shape(&fs, got, sizeof got);
            cli_format_shape(&ts, want, sizeof want);
            rc = cli_error("%s: parameter '%s' has shape %s, the model of %s-lm.json needs %s",
                           path, args[i], got, a->model_prefix, want);
        } else if (mxk_ndarray_copy_to(from, to) != MXK_OK) {
            rc = cli_error("%s", mxk_get_last_error());
        }
    }
    if (rc == CLI_OK && mxk_wait_all() != MXK_OK)
        rc = cli_error("%s", mxk_get_last_error());
    mxk_string_list_free(args);
    mxk_ndarray_list_free(n, arrays, names);
    return rc;
}

/** Loads the model, builds and binds its step for a->batch samples, loads its parameters. */
static int sampler_open(sampler *s, const sample_args *a) {
    mxk_context ctx[MXKT_MAX_CTX];
    uint32_t nctx = 0;
    if (!cli_parse_ctx(a->ctx ? a->ctx : "cpu:0", ctx, &nctx) || nctx != 1)
        return cli_usage_error(&cli_cmd_sample, "--ctx needs one context such as cpu:0");
    if (cli_check_ctx(ctx, nctx) != CLI_OK)
        return CLI_ERROR;
    if (mxkt_rnn_lm_load(a->model_prefix, &s->c, &s->vocab) != MXK_OK)
        return cli_error("%s", mxk_get_last_error());
    int32_t v = s->c.vocab_size;
    s->tokens = calloc((size_t)v, sizeof *s->tokens);
    s->allowed = calloc((size_t)v, 1);
    s->out = malloc((size_t)a->batch * (size_t)a->length * sizeof *s->out);
    if (s->tokens == NULL || s->allowed == NULL || s->out == NULL)
        return cli_error("out of memory");
    for (int64_t i = 0; i < mxkt_vocab_size(s->vocab); i++) {
        int32_t id;
        const char *tok = mxkt_vocab_entry(s->vocab, i, &id);
        s->tokens[id] = tok;
        s->allowed[id] = 1;
    }
    int rc = encode_prefix(s, a);
    if (rc != CLI_OK)
        return rc;
    if (mxkt_rnn_lm_step_symbol(&s->c, &s->step, &s->num_states, &s->states) != MXK_OK)
        return cli_error("%s", mxk_get_last_error());
    const char **names = calloc(s->num_states + 1, sizeof *names);
    mxk_shape *shapes = calloc(s->num_states + 1, sizeof *shapes);
    if (names == NULL || shapes == NULL)
        rc = cli_error("out of memory");
    for (uint32_t k = 0; rc == CLI_OK && k <= s->num_states; k++) {
        names[k] = k ? s->states[k - 1] : "data";
        shapes[k] = k ? mxkt_rnn_lm_state_shape(&s->c, a->batch)
                      : (mxk_shape){.ndim = 2, .dims = {a->batch, 1}};
    }
    if (rc == CLI_OK && mxk_executor_simple_bind(s->step, ctx[0], s->num_states + 1, names, shapes,
                                                 "null", 0, NULL, NULL, NULL, &s->ex) != MXK_OK)
        rc = cli_error("%s", mxk_get_last_error());
    free(names);
    free(shapes);
    return rc == CLI_OK ? load_params(s, a) : rc;
}

/** Feeds `ids` (one per sample) and carries the states; the softmax is then in probs. */
static int step(sampler *s, const float *ids, int64_t batch, float *probs) {
    mxk_status st = mxk_ndarray_copy_from_host(mxk_executor_arg(s->ex, "data"), ids,
                                               (uint64_t)batch * sizeof *ids);
    if (st == MXK_OK)
        st = mxk_executor_forward(s->ex, 0);
    for (uint32_t k = 0; st == MXK_OK && k < s->num_states; k++)
        st = mxk_ndarray_copy_to(mxk_executor_output(s->ex, 1 + k),
                                 mxk_executor_arg(s->ex, s->states[k]));
    if (st == MXK_OK)
        st = mxk_ndarray_copy_to_host(mxk_executor_output(s->ex, 0), probs,
                                      (uint64_t)batch * (uint64_t)s->c.vocab_size * sizeof *probs);
    return st == MXK_OK ? CLI_OK : cli_error("%s", mxk_get_last_error());
}

/** Runs the prefix, then draws a->length tokens per sample into s->out. */
static int generate(sampler *s, const sample_args *a) {
    int64_t k = a->batch;
    float *ids = malloc((size_t)k * sizeof *ids);
    float *probs = malloc((size_t)k * (size_t)s->c.vocab_size * sizeof *probs);
    int rc = ids && probs ? CLI_OK : cli_error("out of memory");
    for (int64_t i = 0; rc == CLI_OK && i < s->prefix_len; i++) {
        for (int64_t r = 0; r < k; r++)
            ids[r] = (float)s->prefix[i];
        rc = step(s, ids, k, probs);
    }
    for (int64_t g = 0; rc == CLI_OK && g < a->length; g++) {
        for (int64_t r = 0; rc == CLI_OK && r < k; r++) {
            int32_t *id = &s->out[r * a->length + g];
            if (mxkt_rnn_lm_draw(probs + r * s->c.vocab_size, s->c.vocab_size, s->allowed,
                                 a->temperature, a->seed, (uint64_t)r, (uint64_t)g, id) != MXK_OK)
                rc = cli_error("%s", mxk_get_last_error());
            ids[r] = (float)*id;
        }
        if (rc == CLI_OK && g + 1 < a->length)
            rc = step(s, ids, k, probs);
    }
    free(ids);
    free(probs);
    return rc;
}

/** Sample r's text: the prefix as given, then the generated tokens (words after a space). */
static char *sample_text(const sampler *s, const sample_args *a, int64_t r) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return NULL;
    int words = strcmp(s->c.level, "word") == 0;
    fputs(a->prefix_text, f);
    for (int64_t g = 0; g < a->length; g++)
        fprintf(f, "%s%s", words ? " " : "", s->tokens[s->out[r * a->length + g]]);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/** Prints the samples: text, or a JSON object with --json. */
static int print_samples(const sampler *s, const sample_args *a, int json) {
    json_t *list = json ? json_array() : NULL;
    int rc = CLI_OK;
    for (int64_t r = 0; rc == CLI_OK && r < a->batch; r++) {
        char *text = sample_text(s, a, r);
        if (text == NULL)
            rc = cli_error("out of memory");
        else if (json)
            json_array_append_new(list, json_string(text));
        else if (a->batch > 1)
            printf("=== sample %lld ===\n%s\n", (long long)r, text);
        else
            printf("%s\n", text);
        free(text);
    }
    if (json && rc == CLI_OK)
        return cli_json_print(json_pack("{s:s, s:I, s:o}", "level", s->c.level, "seed",
                                        (json_int_t)a->seed, "samples", list),
                              0);
    json_decref(list);
    return rc;
}

/** The body of `mxk sample` with the library initialised. */
static int sample_body(const cli_globals *g, void *arg) {
    const sample_args *a = arg;
    sampler s = {0};
    int rc = sampler_open(&s, a);
    if (rc == CLI_OK)
        rc = generate(&s, a);
    if (rc == CLI_OK)
        rc = print_samples(&s, a, g->json);
    sampler_free(&s);
    return rc;
}

/** `mxk sample`. */
static int run_sample(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    (void)self;
    sample_args a;
    int rc = parse_args(&a, argc, argv);
    return rc == CLI_OK ? cli_with_library(g, sample_body, &a) : rc;
}

const cli_command cli_cmd_sample = {
    "sample",
    "generate text from a recurrent language model (the char-LSTM sampler)",
    "mxk sample --model-prefix P --load-epoch N --prefix-text TEXT [OPTIONS]",
    "Reads the model's description P-lm.json (configuration and vocabulary, written\n"
    "next to the checkpoint by mxk train) and its parameters P-%04d.params, feeds\n"
    "TEXT token by token (characters, or for a word-level model words separated by\n"
    "spaces) carrying the recurrent states, then draws --length tokens, each fed\n"
    "back in: from the softmax p, with weights p^(1/T) renormalized for temperature\n"
    "T. The draws come from a Philox stream of --seed per sample, so one seed gives\n"
    "the same text every run. Prints the prefix and the generated tokens (words\n"
    "joined by spaces), a \"=== sample K ===\" line before each with --batch above 1;\n"
    "with --json one object {\"level\", \"seed\", \"samples\": [TEXT, ...]}.\n"
    "\n"
    "Options:\n"
    "  --model-prefix P      the model: P-lm.json and P-%04d.params\n"
    "  --load-epoch N        checkpoint epoch to load\n"
    "  --prefix-text TEXT    the text to continue (at least one token, each in the\n"
    "                        model's vocabulary)\n"
    "  --length N            tokens to generate per sample (200)\n"
    "  --temperature T       > 0: below 1 sharper, above 1 flatter (1)\n"
    "  --seed N              seed of the draws (0)\n"
    "  --batch N             samples drawn side by side, each its own stream (1)\n"
    "  --ctx CTX             the context, e.g. cpu:0 or gpu:0 (cpu:0)\n",
    run_sample,
};
