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
 * Opens the train (train != 0) or test set of Fashion-MNIST in `dir` as a MNISTIter
 * (shuffled with `seed` for training) that gives exactly num_examples examples per
 * epoch (0: all; more than the file holds is MNISTIter's error), the last batch
 * padded (round_batch) and the label file named as the iterator's source. A
 * missing data set is reported with the `apt-get install dataset-fashion-mnist`
 * hint, an unreadable file as "Fashion-MNIST file 'PATH' is not readable: ...".
 * Returns CLI_OK or CLI_ERROR (reported).
 */
int train_open_mnist(const char *dir, int train, int64_t batch, int flat, uint64_t seed,
                     int64_t num_examples, mxkt_iter **out);

/** 1 when the symbol's "data" is (batch, 784), 0 for (batch, 1, 28, 28). */
int train_symbol_is_flat(const mxk_symbol *sym, int64_t batch);

#endif
