/*
 * Reading `mxk train --metrics-log` files into columns (metrics_log.h).
 */
#include "metrics_log.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/** Largest metrics log read (bytes), as train/module.c appends to. */
#define METRICS_LOG_MAX_BYTES (64u << 20)

/** Prints "mxk: error: metrics log 'PATH' line N: <detail>". Returns -1. */
static int line_error(const char *path, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int line_error(const char *path, uint32_t line, const char *fmt, ...) {
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    cli_error("metrics log '%s' line %u: %s", path, line, detail);
    return -1;
}

/** A new column of n NANs, or NULL. */
static double *nan_column(uint32_t n) {
    double *c = malloc((n ? n : 1) * sizeof *c);
    for (uint32_t i = 0; c != NULL && i < n; i++)
        c[i] = NAN;
    return c;
}

/** Index of metric `name` in log, adding it (with NAN columns of `cap` rows); -1 when full or OOM.
 */
static int metric_index(metrics_log *log, const char *name, uint32_t cap) {
    for (uint32_t k = 0; k < log->num_metrics; k++)
        if (strcmp(log->names[k], name) == 0)
            return (int)k;
    if (log->num_metrics == METRICS_LOG_MAX_METRICS)
        return -1;
    uint32_t k = log->num_metrics;
    log->names[k] = strdup(name);
    log->train[k] = nan_column(cap);
    log->validation[k] = nan_column(cap);
    if (log->names[k] == NULL || log->train[k] == NULL || log->validation[k] == NULL) {
        free(log->names[k]);
        free(log->train[k]);
        free(log->validation[k]);
        return -2;
    }
    log->num_metrics++;
    return (int)k;
}

/**
 * Stores the metrics of object `obj` ("train" or "validation", `which` 0 / 1) at
 * row `row`. Returns 0 or -1 after the error.
 */
static int read_metrics(metrics_log *log, const json_t *obj, int which, uint32_t row, uint32_t cap,
                        const char *path, uint32_t line) {
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)obj, name, v) {
        if (!json_is_number(v) && !json_is_null(v))
            return line_error(path, line, "metric '%s' is not a number or null", name);
        int k = metric_index(log, name, cap);
        if (k == -1)
            return line_error(path, line, "more than %d metrics", METRICS_LOG_MAX_METRICS);
        if (k < 0)
            return line_error(path, line, "out of memory");
        if (json_is_number(v)) {
            (which ? log->validation : log->train)[k][row] = json_number_value(v);
            log->has_validation |= which;
        }
    }
    return 0;
}

/** Parses line `line` (text, NUL-terminated) into row log->num_epochs. Returns 0 or -1. */
static int read_line(metrics_log *log, const char *text, uint32_t cap, const char *path,
                     uint32_t line) {
    json_error_t jerr;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return line_error(path, line, "not JSON: %s", jerr.text);
    int rc = 0;
    uint32_t row = log->num_epochs;
    const json_t *epoch = json_object_get(root, "epoch");
    const json_t *train = json_object_get(root, "train");
    const json_t *val = json_object_get(root, "validation");
    const json_t *lr = json_object_get(root, "lr");
    if (!json_is_object(root))
        rc = line_error(path, line, "not a JSON object");
    else if (!json_is_integer(epoch))
        rc = line_error(path, line, "\"epoch\" is missing or not an integer");
    else if (!json_is_object(train))
        rc = line_error(path, line, "\"train\" is missing or not an object");
    else if (val != NULL && !json_is_object(val) && !json_is_null(val))
        rc = line_error(path, line, "\"validation\" is not an object or null");
    else if (lr != NULL && !json_is_number(lr) && !json_is_null(lr))
        rc = line_error(path, line, "\"lr\" is not a number or null");
    if (rc == 0)
        rc = read_metrics(log, train, 0, row, cap, path, line);
    if (rc == 0 && json_is_object(val))
        rc = read_metrics(log, val, 1, row, cap, path, line);
    if (rc == 0) {
        log->epoch[row] = (double)json_integer_value(epoch);
        if (json_is_number(lr)) {
            log->lr[row] = json_number_value(lr);
            log->has_lr = 1;
        }
        log->num_epochs++;
    }
    json_decref(root);
    return rc;
}

int metrics_log_read(const char *path, metrics_log *out) {
    memset(out, 0, sizeof *out);
    char *text = NULL;
    size_t size = 0;
    mxk_status st = mxk_file_read(path, "metrics log", METRICS_LOG_MAX_BYTES, &text, &size);
    if (st != MXK_OK) {
        cli_api_error(st, "cannot read metrics log '%s'", path);
        return -1;
    }
    uint32_t cap = 1;
    for (size_t i = 0; i < size; i++)
        cap += text[i] == '\n';
    out->epoch = nan_column(cap);
    out->lr = nan_column(cap);
    int rc = 0;
    if (out->epoch == NULL || out->lr == NULL)
        rc = line_error(path, 0, "out of memory");
    uint32_t line = 0;
    for (char *p = text; rc == 0 && p < text + size;) {
        char *nl = memchr(p, '\n', (size_t)(text + size - p));
        char *end = nl ? nl : text + size;
        *end = '\0';
        line++;
        if (strspn(p, " \t\r") != (size_t)(end - p))
            rc = read_line(out, p, cap, path, line);
        p = end + 1;
    }
    free(text);
    if (rc == 0 && out->num_epochs == 0) {
        cli_error("metrics log '%s' has no epochs", path);
        rc = -1;
    }
    return rc;
}

void metrics_log_free(metrics_log *log) {
    for (uint32_t k = 0; k < log->num_metrics; k++) {
        free(log->names[k]);
        free(log->train[k]);
        free(log->validation[k]);
    }
    free(log->epoch);
    free(log->lr);
    memset(log, 0, sizeof *log);
}
