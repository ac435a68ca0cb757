/*
 * Shared helpers of the training commands of `mxk` (cmd_train.c): the
 * Fashion-MNIST iterators and the data layout a symbol takes.
 */
#ifndef MXK_CLI_TRAIN_OPTS_H
#define MXK_CLI_TRAIN_OPTS_H

#include "cli.h"
#include "mxk_train.h"

/** Default data directory (Debian's dataset-fashion-mnist package). */
#define TRAIN_DEFAULT_DATA_DIR "/usr/share/datasets/fashion-mnist"

/**
 * Creates the kernel iterator `name` (mxk_data_iter_create with n attributes)
 * wrapped as an mxkt_iter into *out. Errors are reported ("creating NAME failed"
 * with the library's message, and a note naming the io-recordio plugin when the
 * iterator is not registered). Returns CLI_OK or CLI_ERROR.
 */
int train_iter_create(const char *name, uint32_t n, const char *const *keys,
                      const char *const *vals, mxkt_iter **out);

/**
 * Opens the train (train != 0) or test set of Fashion-MNIST in `dir` as a MNISTIter
 * (shuffled with `seed` for training) over its part `part_index` of `num_parts`
 * (MNISTIter's partition: 1 and 0 read it all) that gives exactly num_examples
 * examples of the part per epoch (0: all; more than the part holds is MNISTIter's
 * error), the last batch
 * padded (round_batch), the label file named as the iterator's source and its
 * num_batches (the progress bar's total) counted from num_examples, else from the
 * set's size (train_count_examples). A
 * missing data set is reported with the `apt-get install dataset-fashion-mnist`
 * hint, an unreadable file as "Fashion-MNIST file 'PATH' is not readable: ...".
 * Returns CLI_OK or CLI_ERROR (reported).
 */
int train_open_mnist(const char *dir, int train, int64_t batch, int flat, uint64_t seed,
                     int64_t num_examples, int32_t num_parts, int32_t part_index, mxkt_iter **out);

/**
 * The examples of the train (train != 0) or test set of Fashion-MNIST in `dir`,
 * read from its label file's length (an IDX file of 8 header bytes and one byte
 * per label; for a .gz file the length gzip's trailer records), or -1 when the
 * file is missing or unreadable. Never reports.
 */
int64_t train_count_examples(const char *dir, int train);

/** 1 when the symbol's "data" is (batch, 784), 0 for (batch, 1, 28, 28). */
int train_symbol_is_flat(const mxk_symbol *sym, int64_t batch);

/* ------------------------------------------------------------------------- */
/* train_report.c: headers, summaries and --json objects                      */
/* ------------------------------------------------------------------------- */

/** What the header of `mxk train` shows. */
typedef struct train_header {
    const char *network;         /**< --network's name, or the --symbol file */
    const mxk_symbol *sym;       /**< the network */
    const mxk_shape *data_shape; /**< one batch of "data" */
    const mxk_context *ctx;      /**< the contexts */
    uint32_t nctx;
    const char *data_dir;   /**< --data-dir (Fashion-MNIST) */
    const char *data_train; /**< --data-train .rec, or NULL (then data_dir) */
    const char *data_val;   /**< --data-val .rec, or NULL (no validation) */
    int64_t train_examples; /**< examples trained on per epoch */
    int64_t all_train;      /**< examples of the training set (-1: unknown) */
    int64_t val_examples;   /**< examples of the validation (test) set */
    const char *data_line;  /**< the text networks' data description, or NULL */
} train_header;

/**
 * Prints the header of `mxk train` on `log`, one fact a line:
 *   Config dir: DIR                      (mxk_config_dir; "(none found)")
 *   Plugins: cpu-blas 0.1.0, io-recordio 0.1.0   (mxk_plugin_get; "none")
 *   Backend cpu: cpu-blas (FullyConnected, Activation, SoftmaxOutput)
 *                              (per device type of the contexts: the backend
 *                               mxk_resolve_backend picks for each operator now)
 *   Network: mlp, data (100,784), 109386 parameters   (parameters and aux states)
 *   Data: Fashion-MNIST in DIR: 6000 training examples (of 60000), 10000 validation examples
 *   Data: RecordIO train.rec: 60000 training examples, val.rec: 10000 validation examples
 *                              (with --data-train; "no validation" without --data-val)
 *   Data: text FILE, N chars (char level), A training sequences, B validation
 *                              (a text network: data_line after "Data: text ")
 * Cannot fail (what cannot be found is said so).
 */
void train_print_header(FILE *log, const train_header *h);

/** What the summary line of `mxk train` adds up. */
typedef struct train_summary {
    int32_t first_epoch, epochs;         /**< the epochs run: first_epoch .. + epochs - 1 */
    double wall_seconds;                 /**< the whole fit, validation and checkpoints too */
    double train_samples, train_seconds; /**< rows and seconds of the training passes */
} train_summary;

/**
 * Prints "Summary: N epochs (A to B) in T s, S samples/s; Train-NAME=V ...
 * Validation-NAME=V ..." (no validation values when it validated nothing) on `log`: S is the
 * training passes' rows (pad rows too) over their seconds; the metrics are the last epoch's
 * (fo->last_train, last_val).
 */
void train_print_summary(FILE *log, const train_summary *s, const mxkt_metric *metrics, uint32_t nm,
                         const mxkt_fit_options *fo);

/**
 * Prints `mxk score --json`'s object on stdout: {"examples": N, "metrics": {NAME:
 * V, ...}}, the values in their shortest exact form (mxkt_format_shortest).
 * Returns CLI_OK, or CLI_ERROR when writing failed (reported).
 */
int train_print_score_json(const mxkt_metric *metrics, uint32_t nm, int64_t examples);

/**
 * Prints `mxk predict --json`'s object on stdout: {"examples": ROWS, "outputs":
 * WIDTH, "file": FILE, "key": KEY} when the outputs went to FILE, else
 * {"examples": ROWS, "outputs": WIDTH, "classes": [argmax per row], "probabilities":
 * [its output, shortest float32 form]}. Returns CLI_OK, or CLI_ERROR when writing
 * failed (reported).
 */
int train_print_predict_json(const float *out, int64_t rows, int64_t width, const char *file,
                             const char *key);

/** The index of the largest of v[0..n), the first of equal ones (n >= 1). */
int64_t train_argmax(const float *v, int64_t n);

#endif
