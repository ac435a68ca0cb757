/*
 * `mxk train --network char-lstm` (train_text.c): recurrent language models on
 * text. Character level by default, as MXNet's char-LSTM tutorial
 * (julia/docs/src/tutorial/char-lstm.md, julia/examples/char-lstm: consecutive
 * sequences of the text, the next character as the label, 90% of the text for
 * training, the rest for validation); word level with --buckets, as
 * example/rnn/bucketing/lstm_bucketing.py (one sentence per line,
 * BucketSentenceIter, a BucketingModule). The network is mxkt_rnn_lm_symbol's
 * (train/include/mxk_rnn.h); PREFIX-lm.json keeps its configuration and
 * vocabulary next to the checkpoints, for `mxk sample` and for resuming.
 */
#ifndef MXK_CLI_TRAIN_TEXT_H
#define MXK_CLI_TRAIN_TEXT_H

#include "cli.h"
#include "mxk_rnn.h"
#include "mxk_train.h"

/** The default corpus: the text files of Debian's `fortunes` package, concatenated. */
#define TRAIN_TEXT_DEFAULT_CORPUS "/usr/share/games/fortunes"
/** Most --buckets entries. */
#define TRAIN_TEXT_MAX_BUCKETS 64

/** The text options of `mxk train`. */
typedef struct train_text_args {
    const char *data_text; /**< --data-text FILE; NULL: TRAIN_TEXT_DEFAULT_CORPUS */
    const char *rnn_mode;  /**< --rnn-mode lstm|gru|rnn_tanh|rnn_relu (lstm) */
    int32_t fused;         /**< --fused: the RNN operator instead of unrolled cells */
    int64_t num_hidden, num_embed, seq_len;  /**< 256, 256, 32 */
    double dropout;                          /**< --dropout between layers (0) */
    int64_t buckets[TRAIN_TEXT_MAX_BUCKETS]; /**< --buckets: word level */
    uint32_t num_buckets;
} train_text_args;

/** The options' help lines (a string literal). */
#define TRAIN_TEXT_HELP                                                                            \
    "Text (--network char-lstm; defaults: batch 32, Adam lr 0.01, wd 1e-5,\n"                      \
    "gradient clip 1, no lr steps, metrics nll-loss,perplexity):\n"                                \
    "  --data-text FILE      UTF-8 text (the files of " TRAIN_TEXT_DEFAULT_CORPUS ",\n"            \
    "                        concatenated); 90% trains, the last 10% validates\n"                  \
    "  --seq-len N           characters per sequence (32)\n"                                       \
    "  --num-hidden N        hidden units per layer (256)\n"                                       \
    "  --num-embed N         embedding size (256)\n"                                               \
    "  --num-layers N        recurrent layers (2)\n"                                               \
    "  --rnn-mode MODE       lstm, gru, rnn_tanh or rnn_relu (lstm)\n"                             \
    "  --fused               the fused RNN operator instead of unrolled cells\n"                   \
    "  --dropout P           dropout between layers (0)\n"                                         \
    "  --buckets L1,L2,...   word level: one sentence per line, bucketed by length\n"              \
    "                        (BucketingModule; e.g. 10,20,30,40,50,60)\n"

/** Sets the defaults (lstm, 256, 256, 32, no buckets). */
void train_text_defaults(train_text_args *t);

/**
 * Takes argv[*i] when it is a text option (advancing *i past its value). Returns 1
 * when taken, 0 for another argument, -1 after a usage error ("option '--seq-len'
 * needs an integer from 1 to 4096", "unknown --rnn-mode 'X' (lstm, gru, rnn_tanh,
 * rnn_relu)", "--buckets: ...").
 */
int train_text_option(train_text_args *t, const cli_command *cmd, int argc, char **argv, int *i);

/** 1 for the networks of this file ("char-lstm"). */
int train_text_network(const char *network);

/** The data, vocabulary and network of a text run. */
typedef struct train_text_data {
    mxkt_rnn_lm_config cfg;       /**< the network (vocab_size from the vocabulary) */
    mxkt_vocab *vocab;            /**< token -> id */
    mxkt_iter *train, *val;       /**< val NULL when the text is too short for one batch */
    int64_t train_seqs, val_seqs; /**< sequences (sentences) of each part */
    int64_t tokens;               /**< tokens of the text */
    char source[4096];            /**< the file, or the corpus directory */
} train_text_data;

/**
 * Reads the text, builds or (resuming: PREFIX-lm.json of `resume_prefix`, NULL: a
 * new run) reads the vocabulary, and opens the iterators with `batch` sequences per
 * batch. Returns CLI_OK or CLI_ERROR (reported: a missing corpus with the
 * `apt-get install fortunes` hint, invalid UTF-8, a text too short for one batch, a
 * token the resumed vocabulary lacks).
 */
int train_text_open(const train_text_args *t, int64_t batch, int32_t num_layers, uint64_t seed,
                    const char *resume_prefix, train_text_data *d);

/**
 * The network's symbol (its largest bucket's) and a bound module: a Module for
 * characters, a BucketingModule (default bucket: the largest) with --buckets.
 * Returns CLI_OK or CLI_ERROR (reported).
 */
int train_text_module(train_text_data *d, const mxk_context *ctx, uint32_t nctx, mxk_symbol **sym,
                      mxkt_module **m);

/** Frees what train_text_open made. */
void train_text_close(train_text_data *d);

#endif
