/* The one-line progress display of fit, score and predict (mxkt_progress_format). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "train_internal.h"

/** Cells of the bar between the brackets. */
#define BAR_CELLS 10

/** Writes a duration as M:SS, or H:MM:SS from an hour on, into buf. */
static void format_duration(double seconds, char *buf, size_t size) {
    long long s = (long long)(seconds + 0.5);
    if (s >= 3600)
        snprintf(buf, size, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, size, "%lld:%02lld", s / 60, s % 60);
}

/** Formats a progress line (see mxk_train.h). */
size_t mxkt_progress_format(const mxkt_progress *p, char *buf, size_t size) {
    if (size == 0)
        return 0;
    size_t used = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int n_ = snprintf(buf + used, size - used, __VA_ARGS__);                                   \
        used += n_ > 0 ? (size_t)n_ : 0;                                                           \
        if (used >= size)                                                                          \
            used = size - 1;                                                                       \
    } while (0)
    buf[0] = '\0';
    if (p->epoch >= 0)
        PUT("Epoch[%d] ", p->epoch);
    PUT("%s", p->phase);
    int64_t total = p->num_batches;
    if (total > 0) {
        int64_t done = p->batch < total ? p->batch : total;
        int fill = (int)(BAR_CELLS * done / total);
        char bar[BAR_CELLS + 1];
        for (int i = 0; i < BAR_CELLS; i++)
            bar[i] = i < fill ? '=' : (i == fill ? '>' : ' ');
        bar[BAR_CELLS] = '\0';
        PUT(" [%s] %lld/%lld %d%%", bar, (long long)p->batch, (long long)total,
            (int)(100 * done / total));
    } else {
        PUT(" batch %lld", (long long)p->batch);
    }
    if (p->seconds > 0.0)
        PUT(" %.0f samples/s", (double)p->samples / p->seconds);
    if (total > 0 && p->batch > 0 && p->batch < total) {
        char eta[32];
        format_duration(p->seconds / (double)p->batch * (double)(total - p->batch), eta,
                        sizeof eta);
        PUT(" ETA %s", eta);
    }
    if (p->metric && isfinite(p->value))
        PUT(" %s=%.4f", p->metric, p->value);
#undef PUT
    return used;
}
