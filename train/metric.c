/* Evaluation metrics (python/mxnet/metric.py). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "train_internal.h"

/** Creates a metric by name (metric.py create). */
mxk_status mxkt_metric_create(const char *name, int32_t top_k, mxkt_metric *out) {
    memset(out, 0, sizeof *out);
    if (strcmp(name, "acc") == 0 || strcmp(name, "accuracy") == 0) {
        out->kind = MXKT_METRIC_ACC;
        snprintf(out->name, sizeof out->name, "accuracy");
    } else if (strcmp(name, "top_k_accuracy") == 0 || strcmp(name, "top_k_acc") == 0) {
        if (top_k < 2)
            return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                              "Please use Accuracy if top_k is no more than 1");
        out->kind = MXKT_METRIC_TOPK;
        out->top_k = top_k;
        snprintf(out->name, sizeof out->name, "top_k_accuracy_%d", top_k);
    } else if (strcmp(name, "ce") == 0 || strcmp(name, "cross-entropy") == 0) {
        out->kind = MXKT_METRIC_CE;
        snprintf(out->name, sizeof out->name, "cross-entropy");
    } else if (strcmp(name, "nll_loss") == 0 || strcmp(name, "nll-loss") == 0) {
        out->kind = MXKT_METRIC_NLL;
        snprintf(out->name, sizeof out->name, "nll-loss");
    } else if (strcmp(name, "perplexity") == 0) {
        out->kind = MXKT_METRIC_PERPLEXITY;
        snprintf(out->name, sizeof out->name, "perplexity");
    } else if (strcmp(name, "mse") == 0 || strcmp(name, "mae") == 0 || strcmp(name, "rmse") == 0) {
        out->kind = name[1] == 's'   ? MXKT_METRIC_MSE
                    : name[1] == 'a' ? MXKT_METRIC_MAE
                                     : MXKT_METRIC_RMSE;
        snprintf(out->name, sizeof out->name, "%s", name);
    } else {
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "unknown metric '%s' (acc, top_k_accuracy, ce, nll_loss, perplexity, "
                          "mse, mae, rmse)",
                          name);
    }
    return MXK_OK;
}

/** EvalMetric.reset. */
void mxkt_metric_reset(mxkt_metric *m) {
    m->sum_metric = 0.0;
    m->num_inst = 0.0;
}

/** EvalMetric.update for one batch of host values. */
void mxkt_metric_update(mxkt_metric *m, const float *labels, const float *preds, int64_t n,
                        int64_t width) {
    switch (m->kind) {
    case MXKT_METRIC_ACC:
    case MXKT_METRIC_TOPK:
        for (int64_t i = 0; i < n; i++) {
            const float *p = preds + i * width;
            int64_t label = (int64_t)labels[i];
            if (m->kind == MXKT_METRIC_ACC) {
                int64_t best = 0;
                if (width > 1) {
                    for (int64_t j = 1; j < width; j++)
                        if (p[j] > p[best])
                            best = j;
                } else {
                    best = (int64_t)p[0];
                }
                m->sum_metric += best == label ? 1.0 : 0.0;
            } else if (label >= 0 && label < width) {
                /* rank of the label's score: the label is in the top k when fewer than k
                 * scores are greater (argsort order, ties favour lower indices) */
                int64_t greater = 0;
                for (int64_t j = 0; j < width; j++)
                    if (p[j] > p[label] || (p[j] == p[label] && j > label))
                        greater++;
                m->sum_metric += greater < m->top_k ? 1.0 : 0.0;
            }
            m->num_inst += 1.0;
        }
        break;
    case MXKT_METRIC_CE:
    case MXKT_METRIC_NLL:
    case MXKT_METRIC_PERPLEXITY:
        for (int64_t i = 0; i < n; i++) {
            int64_t label = (int64_t)labels[i];
            if (m->kind == MXKT_METRIC_PERPLEXITY && m->has_ignore && label == m->ignore_label)
                continue;
            double p = label >= 0 && label < width ? preds[i * width + label] : 0.0;
            if (m->kind == MXKT_METRIC_PERPLEXITY)
                m->sum_metric += -log(p > 1e-10 ? p : 1e-10);
            else
                m->sum_metric += -log(p + 1e-12);
            m->num_inst += 1.0;
        }
        break;
    default: {
        /* upstream reshapes a (B,) label to (B, 1), which broadcasts over the
         * prediction's columns */
        double s = 0.0;
        int64_t w = width > 0 ? width : 1, cnt = n * w;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < w; j++) {
                double d = (double)labels[i] - (double)preds[i * w + j];
                s += m->kind == MXKT_METRIC_MAE ? fabs(d) : d * d;
            }
        double mean = cnt > 0 ? s / (double)cnt : 0.0;
        m->sum_metric += m->kind == MXKT_METRIC_RMSE ? sqrt(mean) : mean;
        m->num_inst += 1.0;
        break;
    }
    }
}

/** EvalMetric.get. */
double mxkt_metric_get(const mxkt_metric *m) {
    if (m->num_inst == 0.0)
        return NAN;
    double v = m->sum_metric / m->num_inst;
    return m->kind == MXKT_METRIC_PERPLEXITY ? exp(v) : v;
}
