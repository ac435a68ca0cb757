/* fit's per-epoch JSON line (metrics log, epoch callback) with the shortest exact numbers. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "train_internal.h"

/** Writes the shortest "%.Ng" form of v (see mxk_train.h). */
void mxkt_format_shortest(double v, int is_float, char *buf, size_t size) {
    if (!isfinite(v)) {
        snprintf(buf, size, "null");
        return;
    }
    int max = is_float ? 9 : 17;
    for (int digits = 1; digits <= max; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        double back = strtod(buf, NULL);
        if (is_float ? (float)back == (float)v : back == v)
            return;
    }
}

/** Writes one JSON object of metric values ("name": value, ...). */
static void json_metrics(FILE *f, const mxkt_metric *ms, uint32_t n, const double *vals) {
    fputc('{', f);
    for (uint32_t k = 0; k < n; k++) {
        char num[40];
        mxkt_format_shortest(vals[k], 0, num, sizeof num);
        fprintf(f, "%s\"%s\": %s", k ? ", " : "", ms[k].name, num);
    }
    fputc('}', f);
}

/** The epoch's JSON line, malloc'd (see train_internal.h). */
char *mxkt_epoch_json(const mxkt_fit_options *o, int32_t epoch, const mxkt_metric *metrics,
                      const mxkt_metric *vmetrics, uint32_t nm) {
    char *text = NULL, lr[40];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return NULL;
    fprintf(f, "{\"epoch\": %d, \"train\": ", epoch);
    json_metrics(f, metrics, nm, o->last_train);
    fputs(", \"validation\": ", f);
    if (vmetrics)
        json_metrics(f, vmetrics, nm, o->last_val);
    else
        fputs("null", f);
    mxkt_format_shortest(o->last_lr, 1, lr, sizeof lr);
    fprintf(f, ", \"lr\": %s, \"samples_per_sec\": %.1f, \"seconds\": %.3f}", lr, o->last_speed,
            o->last_seconds);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/** Largest metrics log appended to (bytes): about 200 bytes an epoch. */
#define METRICS_LOG_MAX_BYTES (64u << 20)

/** Appends `line` and a newline to the metrics log at `path` (see train_internal.h). */
mxk_status mxkt_metrics_log_append(const char *path, const char *line) {
    char *old = NULL, *text = NULL;
    size_t old_len = 0, len = 0;
    struct stat sb;
    mxk_status st = MXK_OK;
    if (lstat(path, &sb) == 0 || errno != ENOENT)
        st = mxk_file_read(path, NULL, METRICS_LOG_MAX_BYTES, &old, &old_len);
    if (st != MXK_OK)
        return mxkt_kernel_error(st, "metrics log");
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) {
        mxk_free(old);
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "metrics log: out of memory");
    }
    fwrite(old ? old : "", 1, old_len, f);
    mxk_free(old);
    fprintf(f, "%s\n", line);
    if (fclose(f) != 0) {
        free(text);
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "metrics log: out of memory");
    }
    st = mxk_file_write(path, text, len);
    free(text);
    return st == MXK_OK ? st : mxkt_kernel_error(st, "metrics log");
}
