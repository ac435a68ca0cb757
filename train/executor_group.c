/* _split_input_slice: a batch split over contexts (python/mxnet/executor_manager.py). */
#include <math.h>

#include "train_internal.h"

/** _split_input_slice with Python 3 semantics (true division, round half to even). */
mxk_status mxkt_split_input_slice(int64_t batch_size, const double *work_load, int32_t n,
                                  int64_t *begin, int64_t *end) {
    double total = 0.0;
    for (int32_t i = 0; i < n; i++)
        total += work_load[i];
    int64_t sum = 0, counts[MXKT_MAX_CTX];
    if (n < 1 || n > MXKT_MAX_CTX || total <= 0.0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "Invalid settings for work load.");
    for (int32_t i = 0; i < n; i++) {
        counts[i] = (int64_t)nearbyint(work_load[i] * (double)batch_size / total);
        sum += counts[i];
    }
    if (sum < batch_size)
        counts[n - 1] += batch_size - sum;
    int64_t start = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t b = start < batch_size ? start : batch_size;
        int64_t e = start + counts[i] < batch_size ? start + counts[i] : batch_size;
        if (b >= e)
            return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "Too many slices. Some splits are empty.");
        begin[i] = b;
        end[i] = e;
        start += counts[i];
    }
    return MXK_OK;
}
