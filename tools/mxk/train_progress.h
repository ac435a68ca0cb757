/*
 * The progress bar of `mxk train`, `mxk score` and `mxk predict` (train_progress.c):
 * one line on stderr redrawn in place while a pass runs, only when stderr is a
 * terminal and --no-progress was not given; log lines written through the bar's
 * log stream clear it first.
 */
#ifndef MXK_CLI_TRAIN_PROGRESS_H
#define MXK_CLI_TRAIN_PROGRESS_H

#include <stdio.h>

#include "mxk_train.h"

/** A progress bar. Zero-fill, then train_progress_open. One thread. */
typedef struct train_progress {
    int on;         /**< drawing (stderr is a terminal, --no-progress not given) */
    int shown;      /**< a bar is on stderr's current line */
    double drawn_s; /**< when it was last drawn (CLOCK_MONOTONIC seconds) */
    FILE *log;      /**< stream for log lines: stderr, or one that clears the bar first */
} train_progress;

/**
 * Starts the bar: on when `wanted` and stderr is a terminal; then p->log is a
 * line-buffered stream onto stderr that clears the bar before each write, else
 * stderr itself. Cannot fail (without memory for the stream the bar stays off).
 */
void train_progress_open(train_progress *p, int wanted);

/**
 * mxkt_progress_cb for mxkt_module_set_progress(m, train_progress_cb, p): redraws
 * the line (mxkt_progress_format, cut to the terminal's width) at most every 0.1 s
 * and at the pass's last batch; clears it when the pass is done.
 */
void train_progress_cb(const mxkt_progress *prog, void *user);

/** Seconds of CLOCK_MONOTONIC (for durations). */
double train_now_s(void);

/** Clears the bar and closes p->log when it is not stderr. */
void train_progress_close(train_progress *p);

#endif
