/*
 * Reading the metrics log that `mxk train --metrics-log FILE` writes (JSON Lines,
 * train/module.c append_metrics_log): one object per epoch,
 *   {"epoch": 0, "train": {"accuracy": 0.81}, "validation": {"accuracy": 0.79} | null,
 *    "lr": 0.1, "samples_per_sec": 5123.4, "seconds": 11.7}
 * with null for a metric that had no value. Used by `mxk plot`.
 */
#ifndef MXK_CLI_METRICS_LOG_H
#define MXK_CLI_METRICS_LOG_H

#include <stdint.h>

/** Most metrics a log may name (mxk train takes at most 8 --metrics entries). */
#define METRICS_LOG_MAX_METRICS 16

/** A metrics log in columns: one row per line (epoch), NAN where a value is null/absent. */
typedef struct metrics_log {
    uint32_t num_epochs;                         /**< lines read */
    uint32_t num_metrics;                        /**< metric names, in order of first appearance */
    char *names[METRICS_LOG_MAX_METRICS];        /**< owned */
    double *epoch;                               /**< num_epochs entries */
    double *train[METRICS_LOG_MAX_METRICS];      /**< num_epochs entries each */
    double *validation[METRICS_LOG_MAX_METRICS]; /**< num_epochs entries each */
    double *lr;                                  /**< num_epochs entries */
    int has_validation;                          /**< some line has a validation value */
    int has_lr;                                  /**< some line has a numeric "lr" */
} metrics_log;

/**
 * Reads and checks the whole log at `path` (at most 64 MiB, a regular file) into
 * *out (zero-filled first; free with metrics_log_free, also after an error).
 * Returns 0, or -1 after printing "mxk: error: " and one of: the file errors of
 * mxk_file_read ("cannot open metrics log 'PATH': No such file or directory", ...);
 * "metrics log 'PATH' line N: not JSON: <Jansson's message>"; "... line N: not a
 * JSON object"; "... line N: \"epoch\" is missing or not an integer";
 * "... line N: \"train\" is missing or not an object"; "... line N:
 * \"validation\" is not an object or null"; "... line N: metric 'NAME' is not a
 * number or null"; "... line N: \"lr\" is not a number or null"; "... line N:
 * more than 16 metrics"; "metrics log 'PATH' has no epochs"; out of memory.
 * Blank lines are skipped.
 */
int metrics_log_read(const char *path, metrics_log *out);

/** Frees what metrics_log_read allocated; the struct may be reused. */
void metrics_log_free(metrics_log *log);

#endif /* MXK_CLI_METRICS_LOG_H */
