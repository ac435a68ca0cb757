/* The Speedometer line (python/mxnet/callback.py) and checkpoint names (python/mxnet/model.py). */
#include <stdio.h>
#include <string.h>

#include "train_internal.h"

/** Speedometer's line (callback.py). */
void mxkt_speedometer_line(char *buf, size_t size, int32_t epoch, int64_t nbatch, double speed,
                           const mxkt_metric *metrics, uint32_t num_metrics) {
    int used = snprintf(buf, size, "%s[%d] Batch [%lld]\tSpeed: %.2f samples/sec",
                        num_metrics ? "Epoch" : "Iter", epoch, (long long)nbatch, speed);
    for (uint32_t i = 0; i < num_metrics && used > 0 && (size_t)used < size; i++)
        used += snprintf(buf + used, size - (size_t)used, "\t%s=%f", metrics[i].name,
                         mxkt_metric_get(&metrics[i]));
}

/** Checkpoint file names (model.py save_checkpoint). */
void mxkt_checkpoint_name(char *buf, size_t size, const char *prefix, int32_t epoch,
                          const char *kind) {
    if (strcmp(kind, "symbol") == 0)
        snprintf(buf, size, "%s-symbol.json", prefix);
    else
        snprintf(buf, size, "%s-%04d.%s", prefix, epoch, kind);
}
