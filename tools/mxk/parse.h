/*
 * Option-value parsers of the `mxk` command line: numbers, --shape, --ctx,
 * --metrics, --lr-step-epochs and --image-shape. They only read the string they are given and
 * write their results and, on failure, a message; they print nothing and keep no
 * state, so they are thread-safe and the fuzz target tests/fuzz/fuzz_cli_parse.c
 * links this file alone (with mxk_train for the metric names).
 *
 * Every number is decimal digits only (no sign, spaces or suffix) and range
 * checked: a value out of range is an error, never wrapped or cut. The option
 * syntax is that of MXNet's example/image-classification/common/fit.py
 * (--lr-step-epochs "30,60", --metrics) and tools like print_summary's shapes.
 */
#ifndef MXK_CLI_PARSE_H
#define MXK_CLI_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "mxk.h"
#include "mxk_train.h"

/** Most --metrics entries (the size of the commands' metric arrays). */
#define CLI_MAX_METRICS 8
/** Largest device id of a --ctx entry. */
#define CLI_MAX_DEV_ID 1024
/** Largest epoch of --num-epochs and of an --lr-step-epochs entry. */
#define CLI_MAX_EPOCHS 1000000
/** Largest dim of --image-shape (mxkt_net_config's MXKT_NET_MAX_DIM). */
#define CLI_MAX_IMAGE_DIM 65536

/**
 * Parses a decimal unsigned integer in [0, max]: one or more digits and nothing
 * else. Returns 1 and sets *out on success, 0 otherwise (*out unchanged).
 */
int cli_parse_uint(const char *s, uint64_t max, uint64_t *out);

/**
 * Parses a finite real number in strtod's syntax (the whole string). Returns 1
 * and sets *out on success, 0 for an empty, partial, infinite or NaN value.
 */
int cli_parse_real(const char *s, double *out);

/**
 * Parses a --shape value "NAME=d1,d2,..." (the dims optionally in parentheses,
 * as MXNet prints shapes): at most MXK_MAX_NDIM dims, each in [1, INT64_MAX].
 * Sets *name_len to the length of NAME (not terminated: it points into s) and
 * *shape. Returns 1 on success, 0 for a missing or empty NAME, no dims, an empty
 * or non-decimal dim, a dim of 0, too many dims or a value longer than 255 bytes.
 */
int cli_parse_shape_option(const char *s, size_t *name_len, mxk_shape *shape);

/**
 * Parses a --ctx list "cpu:0,cpu:1" (also "cpu", "gpu:0", "cpu(1)", MXNet's
 * printed form) into at most MXKT_MAX_CTX contexts of ctx; device ids in
 * [0, CLI_MAX_DEV_ID]. Returns 1 and sets *n on success; 0 for an empty list or
 * entry, an unknown device type, a bad id or too many entries (*n undefined).
 */
int cli_parse_ctx(const char *s, mxk_context *ctx, uint32_t *n);

/**
 * Parses a --metrics list "acc,ce,top_k_accuracy_5" into at most CLI_MAX_METRICS
 * metrics (mxkt_metric_create, python/mxnet/metric.py create), K of
 * top_k_accuracy_K in [0, INT32_MAX]. Returns 1 and sets *n on success; else 0
 * with one of these messages in msg (size bytes, always terminated):
 * "--metrics is empty", "empty --metrics entry in 'LIST'",
 * "bad --metrics entry 'E': K must be an integer up to 2147483647",
 * "at most 8 --metrics entries", or mxkt_metric_create's message for an unknown
 * name or K < 2.
 */
int cli_parse_metrics(const char *s, mxkt_metric *ms, uint32_t *n, char *msg, size_t size);

/**
 * Parses an --lr-step-epochs list "6,9" (fit.py's _get_lr_scheduler) into at
 * most MXKT_MAX_STEPS epochs, each in [1, CLI_MAX_EPOCHS]. "" gives none.
 * Returns 1 and sets *n on success; else 0 with the message
 * "bad --lr-step-epochs entry 'E' (an epoch from 1 to 1000000)" or
 * "at most 16 --lr-step-epochs entries" in msg (size bytes, always terminated).
 */
int cli_parse_step_epochs(const char *s, int64_t *epochs, int32_t *n, char *msg, size_t size);

/**
 * Parses an --image-shape value "C,H,W" (train_cifar10.py / train_imagenet.py's
 * "3,28,28"): exactly three decimal dims, each in [1, CLI_MAX_IMAGE_DIM], into
 * dims. Returns 1 on success, 0 otherwise (dims partly written).
 */
int cli_parse_image_shape(const char *s, int64_t dims[3]);

#endif /* MXK_CLI_PARSE_H */
