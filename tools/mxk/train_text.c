/*
 * `mxk train --network char-lstm`: text data, vocabulary and network (train_text.h).
 *
 * Character level (the default) follows MXNet's char-LSTM tutorial
 * (julia/docs/src/tutorial/char-lstm.md; julia/examples/char-lstm/train.jl,
 * seq-data.jl and config.jl): the text
 * is cut at 90% into a training and a validation part; each part is read as
 * consecutive sequences of seq_len characters whose labels are the characters one
 * step later, in order (no shuffle), the tail that does not fill a batch dropped.
 * Word level (--buckets) follows example/rnn/bucketing/lstm_bucketing.py: one
 * sentence per line (mxkt_tokenize_words), the first 90% of the lines for training,
 * BucketSentenceIter (invalid label 0, shuffled by --seed) and a BucketingModule. Both
 * encode with encode_sentences(invalid_label 0, invalid_key "\n", start_label 1), as
 * lstm_bucketing.py, so the newline is id 0.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parse.h"
#include "train_text.h"

void train_text_defaults(train_text_args *t) {
    memset(t, 0, sizeof *t);
    t->rnn_mode = "lstm";
    t->num_hidden = 256;
    t->num_embed = 256;
    t->seq_len = 32;
}

int train_text_network(const char *network) {
    return network != NULL && strcmp(network, "char-lstm") == 0;
}

/** Parses "L1,L2,..." (each 1 to 4096) into t->buckets. Returns 1 on success. */
static int parse_buckets(train_text_args *t, const char *s) {
    t->num_buckets = 0;
    const char *p = s;
    while (*p) {
        char *end = NULL;
        if (*p < '0' || *p > '9' || t->num_buckets == TRAIN_TEXT_MAX_BUCKETS)
            return 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (v < 1 || v > 4096 || (*end != ',' && *end != '\0'))
            return 0;
        t->buckets[t->num_buckets++] = (int64_t)v;
        p = *end == ',' ? end + 1 : end;
        if (*end == ',' && *p == '\0')
            return 0;
    }
    return t->num_buckets > 0;
}

int train_text_option(train_text_args *t, const cli_command *cmd, int argc, char **argv, int *i) {
    static const struct {
        const char *flag;
        size_t off;
        uint64_t max;
    } ints[] = {
        {"--seq-len", offsetof(train_text_args, seq_len), 4096},
        {"--num-hidden", offsetof(train_text_args, num_hidden), 65536},
        {"--num-embed", offsetof(train_text_args, num_embed), 65536},
    };
    const char *v = NULL;
    int k;
    if (strcmp(argv[*i], "--fused") == 0) {
        t->fused = 1;
        return 1;
    }
    if ((k = cli_option_value(argc, argv, i, "--data-text", &v)) != 0) {
        if (k < 0)
            return cli_usage_error(cmd, "option '--data-text' needs a value"), -1;
        t->data_text = v;
        return 1;
    }
    if ((k = cli_option_value(argc, argv, i, "--rnn-mode", &v)) != 0) {
        if (k < 0 || (strcmp(v, "lstm") != 0 && strcmp(v, "gru") != 0 &&
                      strcmp(v, "rnn_tanh") != 0 && strcmp(v, "rnn_relu") != 0))
            return cli_usage_error(cmd, "unknown --rnn-mode '%s' (lstm, gru, rnn_tanh, rnn_relu)",
                                   k < 0 ? "" : v),
                   -1;
        t->rnn_mode = v;
        return 1;
    }
    if ((k = cli_option_value(argc, argv, i, "--dropout", &v)) != 0) {
        if (k < 0 || !cli_parse_real(v, &t->dropout) || t->dropout < 0 || t->dropout >= 1)
            return cli_usage_error(cmd, "option '--dropout' needs a number in [0, 1)"), -1;
        return 1;
    }
    if ((k = cli_option_value(argc, argv, i, "--buckets", &v)) != 0) {
        if (k < 0 || !parse_buckets(t, v))
            return cli_usage_error(cmd,
                                   "--buckets: a list of 1 to %d lengths from 1 to 4096, e.g. "
                                   "10,20,30",
                                   TRAIN_TEXT_MAX_BUCKETS),
                   -1;
        return 1;
    }
    for (size_t j = 0; j < sizeof ints / sizeof ints[0]; j++)
        if ((k = cli_option_value(argc, argv, i, ints[j].flag, &v)) != 0) {
            uint64_t u = 0;
            if (k < 0 || !cli_parse_uint(v, ints[j].max, &u) || u < 1)
                return cli_usage_error(cmd, "option '%s' needs an integer from 1 to %llu",
                                       ints[j].flag, (unsigned long long)ints[j].max),
                       -1;
            *(int64_t *)((char *)t + ints[j].off) = (int64_t)u;
            return 1;
        }
    return 0;
}

/** Compares file names for qsort. */
static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/** Appends file `path` to the growing buffer. Returns CLI_OK or CLI_ERROR. */
static int append_file(const char *path, char **buf, size_t *len) {
    char *data = NULL;
    uint64_t size = 0;
    if (mxk_file_read(path, "text file", 1u << 30, &data, &size) != MXK_OK)
        return cli_error("%s", mxk_get_last_error());
    char *nb = realloc(*buf, *len + size + 1);
    if (nb == NULL) {
        mxk_free(data);
        return cli_error("out of memory reading '%s'", path);
    }
    memcpy(nb + *len, data, size);
    *len += size;
    nb[*len] = '\0';
    *buf = nb;
    mxk_free(data);
    return CLI_OK;
}

/**
 * The default corpus: the regular files of TRAIN_TEXT_DEFAULT_CORPUS in name order,
 * without the strfile indexes (.dat) and the .u8 links, concatenated.
 */
static int read_corpus(char **buf, size_t *len) {
    DIR *dir = opendir(TRAIN_TEXT_DEFAULT_CORPUS);
    if (dir == NULL)
        return cli_error("no --data-text and the default corpus %s cannot be read (%s): install "
                         "it with `apt-get install fortunes`, or pass --data-text FILE",
                         TRAIN_TEXT_DEFAULT_CORPUS, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = CLI_OK;
    for (struct dirent *e; rc == CLI_OK && (e = readdir(dir)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || (l > 4 && strcmp(e->d_name + l - 4, ".dat") == 0))
            continue;
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", TRAIN_TEXT_DEFAULT_CORPUS, e->d_name);
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (nn == NULL) {
                rc = cli_error("out of memory");
                break;
            }
            names = nn;
        }
        if ((names[n] = strdup(path)) == NULL)
            rc = cli_error("out of memory");
        else
            n++;
    }
    closedir(dir);
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t k = 0; rc == CLI_OK && k < n; k++)
        rc = append_file(names[k], buf, len);
    for (size_t k = 0; k < n; k++)
        free(names[k]);
    free(names);
    if (rc == CLI_OK && *len == 0)
        rc = cli_error("the default corpus %s holds no text: install it with `apt-get install "
                       "fortunes`, or pass --data-text FILE",
                       TRAIN_TEXT_DEFAULT_CORPUS);
    return rc;
}

/**
 * Consecutive sequences of ids[0..n): sequence k is ids[k*T .. k*T+T), its labels
 * one step later; as many as fill whole batches. *it NULL when not one batch.
 */
static int char_iter(const int32_t *ids, int64_t n, int64_t T, int64_t batch, int64_t *nseq,
                     mxkt_iter **it) {
    *it = NULL;
    *nseq = n > 1 ? (n - 1) / T / batch * batch : 0;
    if (*nseq == 0)
        return CLI_OK;
    float *data = malloc((size_t)(*nseq * T) * sizeof(float));
    float *label = malloc((size_t)(*nseq * T) * sizeof(float));
    int rc = CLI_OK;
    if (data == NULL || label == NULL) {
        rc = cli_error("out of memory");
    } else {
        for (int64_t k = 0; k < *nseq * T; k++) {
            data[k] = (float)ids[k];
            label[k] = (float)ids[k + 1];
        }
        mxk_shape s = {.ndim = 2};
        s.dims[0] = *nseq;
        s.dims[1] = T;
        if (mxkt_ndarray_iter_create(data, &s, label, T, batch, 0, 0, it) != MXK_OK)
            rc = cli_error("%s", mxkt_last_error());
    }
    free(data);
    free(label);
    return rc;
}

/** Sentences [b, e) of `enc` as an mxkt_encoded view (offsets rebased into *tmp). */
static int sentence_range(const mxkt_encoded *enc, int64_t b, int64_t e, mxkt_encoded *out,
                          int64_t **tmp) {
    *tmp = malloc((size_t)(e - b + 1) * sizeof(int64_t));
    if (*tmp == NULL)
        return cli_error("out of memory");
    for (int64_t k = b; k <= e; k++)
        (*tmp)[k - b] = enc->offsets[k] - enc->offsets[b];
    out->num_sentences = e - b;
    out->offsets = *tmp;
    out->ids = enc->ids + enc->offsets[b];
    return CLI_OK;
}

/** BucketSentenceIter over sentences [b, e); *it NULL when no bucket holds a batch. */
static int word_iter(const train_text_args *t, const mxkt_encoded *enc, int64_t b, int64_t e,
                     int64_t batch, uint64_t seed, int64_t *nsent, mxkt_iter **it) {
    *it = NULL;
    *nsent = e - b;
    mxkt_encoded part;
    int64_t *tmp = NULL;
    int rc = sentence_range(enc, b, e, &part, &tmp);
    mxkt_bucket_iter_options o = {.batch_size = batch,
                                  .buckets = t->buckets,
                                  .num_buckets = t->num_buckets,
                                  .invalid_label = 0,
                                  .layout = "NT",
                                  .shuffle = 1,
                                  .seed = seed};
    if (rc == CLI_OK && part.num_sentences > 0 &&
        mxkt_bucket_sentence_iter_create(&part, &o, NULL, it) != MXK_OK)
        rc = cli_error("%s", mxkt_last_error());
    if (rc == CLI_OK && *it && (*it)->num_batches == 0) {
        mxkt_iter_free(*it);
        *it = NULL;
    }
    free(tmp);
    return rc;
}

/** The vocabulary's largest id + 1. */
static int32_t vocab_classes(const mxkt_vocab *v) {
    int32_t top = -1;
    for (int64_t i = 0; i < mxkt_vocab_size(v); i++) {
        int32_t id = 0;
        mxkt_vocab_entry(v, i, &id);
        if (id > top)
            top = id;
    }
    return top + 1;
}

int train_text_open(const train_text_args *t, int64_t batch, int32_t num_layers, uint64_t seed,
                    const char *resume_prefix, train_text_data *d) {
    memset(d, 0, sizeof *d);
    int word = t->num_buckets > 0;
    char *text = NULL;
    size_t len = 0;
    int rc = t->data_text ? append_file(t->data_text, &text, &len) : read_corpus(&text, &len);
    snprintf(d->source, sizeof d->source, "%s",
             t->data_text ? t->data_text : TRAIN_TEXT_DEFAULT_CORPUS);
    mxkt_tokens tok = {0};
    mxkt_encoded enc = {0};
    if (rc == CLI_OK && (word ? mxkt_tokenize_words(text, len, &tok)
                              : mxkt_tokenize_chars(text, len, &tok)) != MXK_OK)
        rc = cli_error("%s: %s", d->source, mxkt_last_error());
    free(text);
    if (rc == CLI_OK && resume_prefix &&
        mxkt_rnn_lm_load(resume_prefix, &d->cfg, &d->vocab) != MXK_OK)
        rc = cli_error("%s", mxkt_last_error());
    if (rc == CLI_OK && mxkt_encode_sentences(&tok, &d->vocab, 0, "\n", 1, &enc) != MXK_OK)
        rc = cli_error("%s: %s", d->source, mxkt_last_error());
    mxkt_tokens_free(&tok);
    if (rc == CLI_OK) {
        d->tokens = enc.offsets[enc.num_sentences];
        if (word) {
            int64_t cut = enc.num_sentences * 9 / 10;
            rc = word_iter(t, &enc, 0, cut, batch, seed, &d->train_seqs, &d->train);
            if (rc == CLI_OK)
                rc = word_iter(t, &enc, cut, enc.num_sentences, batch, seed + 1, &d->val_seqs,
                               &d->val);
        } else {
            /* julia/examples/char-lstm/train.jl: len_train = round(length(text) * 0.9) */
            int64_t cut = (int64_t)((double)d->tokens * 0.9 + 0.5);
            rc = char_iter(enc.ids, cut, t->seq_len, batch, &d->train_seqs, &d->train);
            if (rc == CLI_OK)
                rc = char_iter(enc.ids + cut, d->tokens - cut, t->seq_len, batch, &d->val_seqs,
                               &d->val);
        }
    }
    mxkt_encoded_free(&enc);
    if (rc == CLI_OK && d->train == NULL)
        rc = cli_error("%s: %lld tokens are too few for one training batch of %lld %s", d->source,
                       (long long)d->tokens, (long long)batch,
                       word ? "sentences" : "sequences (--batch-size, --seq-len)");
    if (rc == CLI_OK) {
        snprintf(d->train->source, sizeof d->train->source, "%s", d->source);
        mxkt_rnn_lm_config *c = &d->cfg;
        snprintf(c->mode, sizeof c->mode, "%s", t->rnn_mode);
        c->num_layers = num_layers;
        c->num_hidden = (int32_t)t->num_hidden;
        c->num_embed = (int32_t)t->num_embed;
        c->vocab_size = vocab_classes(d->vocab);
        c->fused = t->fused;
        c->dropout = (float)t->dropout;
        snprintf(c->level, sizeof c->level, "%s", word ? "word" : "char");
    }
    if (rc != CLI_OK)
        train_text_close(d);
    return rc;
}

int train_text_module(train_text_data *d, const mxk_context *ctx, uint32_t nctx, mxk_symbol **sym,
                      mxkt_module **m) {
    mxkt_iter *it = d->train;
    int64_t T = it->default_bucket_key ? it->default_bucket_key : it->data_shape.dims[1];
    mxk_status st = mxkt_rnn_lm_symbol(&d->cfg, (uint32_t)T, sym);
    if (st == MXK_OK)
        st =
            it->default_bucket_key
                ? mxkt_bucketing_module_create(mxkt_rnn_lm_sym_gen, &d->cfg, it->default_bucket_key,
                                               "data", "softmax_label", ctx, nctx, m)
                : mxkt_module_create(*sym, "data", "softmax_label", ctx, nctx, m);
    if (st == MXK_OK)
        st = mxkt_module_bind(*m, &it->data_shape, &it->label_shape, 1);
    return st == MXK_OK ? CLI_OK : cli_error("%s", mxkt_last_error());
}

void train_text_close(train_text_data *d) {
    mxkt_iter_free(d->train);
    mxkt_iter_free(d->val);
    mxkt_vocab_free(d->vocab);
    d->train = d->val = NULL;
    d->vocab = NULL;
}
