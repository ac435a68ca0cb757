/*
 * Distributed training in `mxk train` (cmd_train.c): the worker's place among
 * the workers of a dist KVStore, as upstream's example/image-classification
 * common/fit.py reads it (kv = mx.kvstore.create(args.kv_store); kv.rank,
 * kv.num_workers for the data partition, logging and checkpoints only on rank 0).
 * See docs/distributed.md.
 */
#ifndef MXK_CLI_TRAIN_DIST_H
#define MXK_CLI_TRAIN_DIST_H

#include <stdint.h>
#include <stdio.h>

#include "mxk.h"

/** The token of --model-prefix replaced by the worker's rank (every rank saves). */
#define TRAIN_DIST_RANK_TOKEN "{rank}"

/** A worker's place: rank 0 of 1 and no store without a dist --kv-store. */
typedef struct train_dist {
    mxk_kvstore *kv;     /**< the dist store (handed to the Module), or NULL */
    int32_t rank;        /**< this worker's rank */
    int32_t num_workers; /**< number of workers */
    int32_t is_server;   /**< this process is a server of the store (dist_async) */
    /** The training log of ranks other than 0: /dev/null unless MXK_LOG_LEVEL=debug
     * (then stderr); NULL on rank 0, which logs as a single process does. */
    FILE *quiet_log;
} train_dist;

/**
 * Opens the store when `kv_store` names a dist type (contains "dist", as
 * upstream's _create_kvstore tests it) and prints "rank R of N" on stderr; else
 * sets rank 0 of 1. Errors of mxk_kvstore_create (e.g. the kvstore-dist plugin's
 * "needs an MPI launch" message) are reported. Returns CLI_OK or CLI_ERROR.
 */
int train_dist_open(const char *kv_store, train_dist *d);

/**
 * On a server of the store (d->is_server: dist_async's last ranks), runs the server
 * (mxkt_kvstore_run_server: the workers send the optimizer) until every worker is
 * done, then prints "server R: every worker is done". CLI_OK, or CLI_ERROR with
 * the error printed.
 */
int train_dist_serve(train_dist *d);

/** Frees the store and closes the quiet log (after the Module using the store is freed). */
void train_dist_close(train_dist *d);

/**
 * The training log of this worker: `log` on rank 0, else its quiet log (see
 * train_dist.quiet_log).
 */
FILE *train_dist_log(const train_dist *d, FILE *log);

/**
 * Writes `prefix` with every TRAIN_DIST_RANK_TOKEN replaced by the rank into
 * buf[n]. Returns 1 when the prefix held the token (every rank saves its own
 * checkpoints), 0 when not (buf is the prefix; only rank 0 saves), -1 when the
 * result does not fit (reported).
 */
int train_dist_prefix(const train_dist *d, const char *prefix, char *buf, size_t n);

#endif /* MXK_CLI_TRAIN_DIST_H */
