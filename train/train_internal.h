/*
 * Internal helpers of mxk_train shared by its source files.
 */
#ifndef MXK_TRAIN_INTERNAL_H
#define MXK_TRAIN_INTERNAL_H

#include "mxk_rnn.h"

/**
 * Records a message of this library and returns `st`: the kernel's one error
 * channel (mxk.h mxk_set_error), so mxk_get_last_error and mxkt_last_error give it.
 */
#define mxkt_error(...) mxk_set_error(__VA_ARGS__)
/**
 * Prefixes the failed kernel call's message with "<what>: " (mxk.h
 * mxk_error_add_context) and returns `st` (for failed kernel calls).
 */
mxk_status mxkt_kernel_error(mxk_status st, const char *what);
/** Number of elements of a shape. */
int64_t mxkt_shape_size(const mxk_shape *s);
/** A 64-bit FNV-1a hash of a string (counter range of a parameter's random stream). */
uint64_t mxkt_hash(const char *s);
/** True when `s` ends with `suffix`. */
int mxkt_ends_with(const char *s, const char *suffix);
/** Uniform float in [0,1) number i of stream (seed, stream). */
double mxkt_rand_unit(uint64_t seed, uint64_t stream, uint64_t i);
/**
 * Fisher-Yates over a[0..n), the draw for position i being mxkt_rand_unit(seed,
 * stream, base + i): the permutation depends only on (seed, stream, base).
 */
void mxkt_shuffle(int64_t *a, int64_t n, uint64_t seed, uint64_t stream, uint64_t base);
/** Python's repr of a float (shortest round trip, ".0" for integers), as json.dumps writes it. */
void mxkt_py_float(double v, char *buf, size_t size);
/** True when sentence offsets (n + 1 entries) start at 0 and never decrease. */
int mxkt_offsets_valid(const int64_t *offsets, int64_t n);

/**
 * fit's JSON line of an epoch (mxkt_fit_options.metrics_log describes it; vmetrics
 * NULL: "validation": null), without a newline, malloc'd; NULL when out of memory.
 */
char *mxkt_epoch_json(const mxkt_fit_options *o, int32_t epoch, const mxkt_metric *metrics,
                      const mxkt_metric *vmetrics, uint32_t nm);
/**
 * Appends `line` and a newline to the metrics log `path`: the log (a regular file;
 * absent: empty) is read and rewritten whole (mxk_file_write), so a full disk or a
 * kill leaves the previous log, never a cut line. Errors: MXK_ERR_IO "metrics log:
 * cannot write 'PATH': <strerror>", the other errors of mxk_file_read /
 * mxk_file_write with "metrics log: ", MXK_ERR_OUT_OF_MEMORY.
 */
mxk_status mxkt_metrics_log_append(const char *path, const char *line);

#define MXKT_CHECK(expr)                                                                           \
    do {                                                                                           \
        mxk_status st_ = (expr);                                                                   \
        if (st_ != MXK_OK)                                                                         \
            return st_;                                                                            \
    } while (0)

#endif
