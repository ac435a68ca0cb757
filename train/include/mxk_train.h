/*
 * mxk_train: the reference trainer of mxk, a library above libmxk (the kernel stays
 * free of training policy, design brief "Layout"). It mirrors MXNet's Python
 * front end (1.9.1):
 *   - Module (python/mxnet/module/module.py, base_module.py, executor_group.py):
 *     bind, init_params, init_optimizer, forward/backward/update, fit, score,
 *     predict, get/set_params, checkpoints with optimizer states;
 *   - optimizers SGD / Adam run through the update operators sgd_update,
 *     sgd_mom_update and adam_update (python/mxnet/optimizer/optimizer.py), with
 *     the factor and multi-factor schedulers (python/mxnet/lr_scheduler.py);
 *   - initializers Uniform / Normal / Xavier (python/mxnet/initializer.py);
 *   - metrics (python/mxnet/metric.py) and callbacks (python/mxnet/callback.py);
 *   - an in-memory NDArrayIter (python/mxnet/io/io.py).
 * Data parallelism follows python/mxnet/executor_manager.py (_split_input_slice)
 * and the module update path (digest executor-bucketing.md §10-11): one executor
 * per context, gradients summed through the KVStore, every context applying the
 * same update so that parameters stay identical.
 *
 * Errors: functions return mxk_status; the message is mxk_get_last_error() when the
 * kernel failed, or mxkt_last_error() for errors of this library.
 * Randomness (initialisation, shuffling) is drawn from Philox-4x32-10 streams keyed
 * by explicit seeds, so runs are reproducible.
 */
#ifndef MXK_TRAIN_H
#define MXK_TRAIN_H

#include <stdint.h>
#include <stdio.h>

#include "mxk.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The last error message of this library on the calling thread (falls back to the kernel's). */
const char *mxkt_last_error(void);

/* ------------------------------------------------------------------------- */
/* Learning-rate schedulers (python/mxnet/lr_scheduler.py)                   */
/* ------------------------------------------------------------------------- */

/** Kinds of scheduler. */
typedef enum mxkt_sched_kind {
    MXKT_SCHED_NONE = 0,
    MXKT_SCHED_FACTOR,
    MXKT_SCHED_MULTIFACTOR
} mxkt_sched_kind;

/** Most steps of a multi-factor scheduler. */
#define MXKT_MAX_STEPS 16

/**
 * A learning-rate scheduler. FactorScheduler(step, factor, stop_factor_lr):
 * multiplies the rate by `factor` each time num_update exceeds count + step;
 * MultiFactorScheduler(steps, factor): at each listed step. Stateful like upstream
 * (count, cur_step_ind), so it must see non-decreasing num_update values.
 */
typedef struct mxkt_lr_scheduler {
    int32_t kind; /**< mxkt_sched_kind */
    double base_lr, factor, stop_factor_lr;
    int64_t step;                  /**< factor: step in updates */
    int64_t steps[MXKT_MAX_STEPS]; /**< multi-factor: increasing update counts */
    int32_t num_steps;
    /* state */
    int64_t count;
    int32_t cur_step_ind;
    double lr;
} mxkt_lr_scheduler;

/** FactorScheduler(step, factor, stop_factor_lr = 1e-8, base_lr). */
void mxkt_lr_factor(mxkt_lr_scheduler *s, int64_t step, double factor, double base_lr);
/** MultiFactorScheduler(steps, factor, base_lr); steps must be increasing and >= 1. */
mxk_status mxkt_lr_multifactor(mxkt_lr_scheduler *s, const int64_t *steps, int32_t n, double factor,
                               double base_lr);
/** The rate at num_update (upstream __call__). */
double mxkt_lr_get(mxkt_lr_scheduler *s, int64_t num_update);

/* ------------------------------------------------------------------------- */
/* Optimizers (python/mxnet/optimizer/optimizer.py)                          */
/* ------------------------------------------------------------------------- */

/** Optimizer kinds. */
typedef enum mxkt_opt_kind { MXKT_OPT_SGD = 0, MXKT_OPT_ADAM = 1 } mxkt_opt_kind;

/** Most parameter indices an optimizer tracks (update counts). */
#define MXKT_MAX_PARAMS 1024

/**
 * An optimizer. Fields follow upstream's Optimizer base: learning_rate (when no
 * scheduler), wd, rescale_grad, clip_gradient (< 0: off), momentum (SGD),
 * beta1/beta2/epsilon (Adam). Per-index update counts give num_update and
 * Adam's bias correction (lr_t = lr * sqrt(1 - b2^t) / (1 - b1^t)).
 * wd_mult: with parameter names known (set by the Module), weight decay is 0 for
 * names not ending in "_weight" or "_gamma", as upstream's set_wd_mult.
 */
typedef struct mxkt_optimizer {
    int32_t kind; /**< mxkt_opt_kind */
    double lr, wd, rescale_grad, clip_gradient, momentum, beta1, beta2, epsilon;
    mxkt_lr_scheduler sched; /**< kind NONE: fixed lr */
    int64_t num_update;
    int64_t counts[MXKT_MAX_PARAMS];
} mxkt_optimizer;

/** SGD defaults (lr 0.01, momentum 0, wd 0, rescale 1, no clipping). */
void mxkt_optimizer_sgd(mxkt_optimizer *o, double lr, double momentum, double wd);
/** Adam defaults (lr 0.001, beta1 0.9, beta2 0.999, epsilon 1e-8, wd 0). */
void mxkt_optimizer_adam(mxkt_optimizer *o, double lr, double wd);
/** Number of state arrays per parameter: SGD 0 (momentum 0) or 1, Adam 2. */
uint32_t mxkt_optimizer_num_states(const mxkt_optimizer *o);
/** Effective weight-decay multiplier of a parameter name (0 or 1, upstream set_wd_mult). */
double mxkt_optimizer_wd_mult(const char *name);
/**
 * Counts an update of `index` (upstream _update_count) and returns the learning
 * rate to use for it (scheduler, Adam bias correction applied).
 */
double mxkt_optimizer_step(mxkt_optimizer *o, int32_t index);
/**
 * Applies one update of `weight` in place with gradient `grad` and the states
 * (zero-initialised arrays of weight's shape, mxkt_optimizer_num_states of them)
 * through the update operators, using learning rate `lr` (from
 * mxkt_optimizer_step) and weight decay wd * wd_mult.
 */
mxk_status mxkt_optimizer_apply(const mxkt_optimizer *o, double lr, double wd_mult,
                                mxk_ndarray *weight, mxk_ndarray *grad, mxk_ndarray *const *states);

/* ------------------------------------------------------------------------- */
/* Initializers (python/mxnet/initializer.py)                                */
/* ------------------------------------------------------------------------- */

/** Initializer kinds. */
typedef enum mxkt_init_kind {
    MXKT_INIT_UNIFORM = 0,
    MXKT_INIT_NORMAL,
    MXKT_INIT_XAVIER,
    MXKT_INIT_CONSTANT
} mxkt_init_kind;

/**
 * An initializer. Uniform(scale): U(-scale, scale); Normal(sigma): N(0, sigma);
 * Xavier(rnd_type "uniform"|"gaussian", factor_type "avg"|"in"|"out", magnitude).
 * Random numbers: Philox stream keyed by `seed`, one counter range per parameter
 * name (hash), so a parameter's values do not depend on the order of the others.
 */
typedef struct mxkt_initializer {
    int32_t kind;
    double scale;        /**< Uniform */
    double sigma;        /**< Normal */
    int32_t gaussian;    /**< Xavier rnd_type: 0 uniform, 1 gaussian */
    int32_t factor_type; /**< Xavier: 0 avg, 1 in, 2 out */
    double magnitude;    /**< Xavier */
    double value;        /**< Constant (One: 1, Zero: 0) */
    uint64_t seed;
} mxkt_initializer;

/**
 * Parses an initializer spec NAME or NAME(ARG, KEY=VALUE, ...) with upstream's
 * parameters in their positional order (python/mxnet/initializer.py; names are
 * case-insensitive, values may be quoted):
 *   - uniform(scale=0.07), normal(sigma=0.01), constant(value=0), one, zero;
 *   - xavier(rnd_type="uniform"|"gaussian", factor_type="avg"|"in"|"out", magnitude=3);
 *   - glorot: xavier(magnitude=1); he and fit.py's "default": xavier("gaussian", "in", 2);
 *   - msra / msraprelu(factor_type="avg", slope=0.25): xavier("gaussian", factor_type,
 *     2 / (1 + slope^2)).
 * `seed` keys the random streams. Errors (MXK_ERR_INVALID_ARGUMENT, message in
 * mxkt_last_error): "malformed initializer 'S' ...", "unknown initializer 'S' ...",
 * "initializer 'S': too many arguments", "... unknown argument 'K'", "... bad K 'V'".
 * Orthogonal is not provided (it needs an SVD). Thread-safe.
 */
mxk_status mxkt_initializer_parse(const char *spec, uint64_t seed, mxkt_initializer *out);
/**
 * Xavier scale for a shape: sqrt(magnitude / factor) with fan_in = shape[1]*hw,
 * fan_out = shape[0]*hw. Fewer than 2 dims: MXK_ERR_INVALID_ARGUMENT.
 */
mxk_status mxkt_xavier_scale(const mxkt_initializer *init, const mxk_shape *shape, double *scale);
/**
 * Fills host values of parameter `name` (float32, `shape`) by the name's suffix:
 * *_weight → the initializer, *_bias / *_beta / *_moving_mean / *_moving_inv_var /
 * *_moving_avg / *_min → 0, *_gamma / *_moving_var / *_max → 1, else
 * "Unknown initialization pattern for NAME" (MXK_ERR_INVALID_ARGUMENT).
 */
mxk_status mxkt_initializer_fill(const mxkt_initializer *init, const char *name,
                                 const mxk_shape *shape, float *values);

/* ------------------------------------------------------------------------- */
/* Metrics (python/mxnet/metric.py)                                          */
/* ------------------------------------------------------------------------- */

/** Metric kinds. */
typedef enum mxkt_metric_kind {
    MXKT_METRIC_ACC = 0,
    MXKT_METRIC_TOPK,
    MXKT_METRIC_CE,
    MXKT_METRIC_NLL,
    MXKT_METRIC_PERPLEXITY,
    MXKT_METRIC_MSE,
    MXKT_METRIC_MAE,
    MXKT_METRIC_RMSE
} mxkt_metric_kind;

/** An evaluation metric: value = sum_metric / num_inst (perplexity: exp of it). */
typedef struct mxkt_metric {
    int32_t kind;
    int32_t top_k;        /**< TopK */
    int32_t ignore_label; /**< Perplexity; has_ignore selects it */
    int32_t has_ignore;
    double sum_metric;
    double num_inst;
    char name[32]; /**< "accuracy", "top_k_accuracy_5", "cross-entropy", ... */
} mxkt_metric;

/**
 * Creates a metric by name: "acc"/"accuracy", "top_k_accuracy" (k given),
 * "ce"/"cross-entropy", "nll_loss"/"nll-loss", "perplexity", "mse", "mae", "rmse".
 * TopK with k < 2 is refused as upstream.
 */
mxk_status mxkt_metric_create(const char *name, int32_t top_k, mxkt_metric *out);
/** Clears the accumulators. */
void mxkt_metric_reset(mxkt_metric *m);
/**
 * Accumulates one batch: `labels` (n values) and predictions `preds` (n rows of
 * `width` values). Classification metrics read the label as a class index into
 * the row; MAE / MSE / RMSE compare each row's `width` values with its label
 * (upstream's (B,) label reshaped to (B, 1) broadcasts) and add the batch's mean
 * (RMSE: its square root) as one instance. An out-of-range class label counts
 * as wrong (CE / NLL: probability 0); Perplexity skips its ignore_label.
 */
void mxkt_metric_update(mxkt_metric *m, const float *labels, const float *preds, int64_t n,
                        int64_t width);
/** The current value (NaN with no instances). */
double mxkt_metric_get(const mxkt_metric *m);

/* ------------------------------------------------------------------------- */
/* Data parallelism, callbacks, names                                        */
/* ------------------------------------------------------------------------- */

/**
 * upstream _split_input_slice(batch_size, work_load_list): device i gets
 * round(w_i * batch / sum w) (Python 3 round half to even), the shortfall goes to
 * the last device, slices are cumulative and clamped to batch_size. Writes n
 * begin/end pairs. An empty slice: MXK_ERR_INVALID_ARGUMENT ("Too many slices.
 * Some splits are empty.").
 */
mxk_status mxkt_split_input_slice(int64_t batch_size, const double *work_load, int32_t n,
                                  int64_t *begin, int64_t *end);

/**
 * Speedometer's log line (python/mxnet/callback.py of MXNet 1.0-1.2, the form the
 * image-classification examples print): writes
 * "Epoch[E] Batch [B]\tSpeed: S samples/sec\tname=value..." into buf, with
 * speed = frequent * batch_size / elapsed ("%.2f") and metric values "%f".
 * Without metrics: "Iter[E] Batch [B]\tSpeed: S samples/sec".
 */
void mxkt_speedometer_line(char *buf, size_t size, int32_t epoch, int64_t nbatch, double speed,
                           const mxkt_metric *metrics, uint32_t num_metrics);
/** "prefix-%04d.params" (kind "params"), ".states", or "prefix-symbol.json" (kind "symbol"). */
void mxkt_checkpoint_name(char *buf, size_t size, const char *prefix, int32_t epoch,
                          const char *kind);

/* ------------------------------------------------------------------------- */
/* Data: a small iterator interface, NDArrayIter, kernel iterators           */
/* ------------------------------------------------------------------------- */

/**
 * A data source for the Module: a vtable over either an in-memory NDArrayIter or a
 * kernel iterator (mxk_data_iter, e.g. MNISTIter from plugins/io-recordio).
 * Batches: one data and one label CPU array (owned by the source), pad rows at
 * the end of the last batch.
 */
typedef struct mxkt_iter mxkt_iter;
struct mxkt_iter {
    mxk_status (*reset)(mxkt_iter *it);
    mxk_status (*next)(mxkt_iter *it, int32_t *has_next);
    mxk_status (*batch)(mxkt_iter *it, mxk_ndarray **data, mxk_ndarray **label, uint32_t *pad);
    void (*destroy)(mxkt_iter *it);
    mxk_shape data_shape;  /**< batch shape of the data */
    mxk_shape label_shape; /**< batch shape of the label */
    int64_t batch_size;
    int64_t max_batches; /**< > 0: an epoch ends after this many batches (--num-examples) */
    int64_t cur_batches;
};

/**
 * NDArrayIter over host arrays (copied): data (num, sample dims...) and label
 * (num; NULL: zeros); last_batch_handle "pad" (the last batch filled from the
 * start, pad reported). shuffle: a permutation drawn at creation and a new one at
 * every reset (MXNet 1.9.1 python/mxnet/io/io.py), the k-th drawn from the
 * Philox stream of `seed` alone, so two iterators with one seed agree.
 * Errors: MXK_ERR_INVALID_ARGUMENT (no samples, batch_size < 1),
 * MXK_ERR_OUT_OF_MEMORY, or the kernel's status creating the batch arrays.
 */
mxk_status mxkt_ndarray_iter_create(const float *data, const mxk_shape *data_shape,
                                    const float *label, int64_t batch_size, int32_t shuffle,
                                    uint64_t seed, mxkt_iter **out);
/** Wraps a kernel iterator (taken over: freed with the wrapper). */
mxk_status mxkt_kernel_iter_wrap(mxk_data_iter *kit, mxkt_iter **out);
/** Destroys an iterator. NULL: no-op. */
void mxkt_iter_free(mxkt_iter *it);
/** reset / next / batch with the max_batches cap applied. */
mxk_status mxkt_iter_reset(mxkt_iter *it);
mxk_status mxkt_iter_next(mxkt_iter *it, int32_t *has_next);

/* ------------------------------------------------------------------------- */
/* Module (python/mxnet/module/module.py)                                    */
/* ------------------------------------------------------------------------- */

/** Most contexts of a Module. */
#define MXKT_MAX_CTX 16

typedef struct mxkt_module mxkt_module;

/**
 * Module(symbol, data_names=("data",), label_names=("softmax_label",), context).
 * The symbol is copied. `num_ctx` contexts (data parallel).
 */
mxk_status mxkt_module_create(const mxk_symbol *sym, const char *data_name, const char *label_name,
                              const mxk_context *ctx, uint32_t num_ctx, mxkt_module **out);
/** Frees a module (executors, states, kvstore). NULL: no-op. */
void mxkt_module_free(mxkt_module *m);

/**
 * bind(data_shapes, label_shapes, for_training): one simple_bind per context on
 * the slice of the batch given by mxkt_split_input_slice (equal work loads).
 * Binding twice logs "Already bound, ignoring bind()" and changes nothing.
 */
mxk_status mxkt_module_bind(mxkt_module *m, const mxk_shape *data_shape,
                            const mxk_shape *label_shape, int32_t for_training);
/**
 * init_params(initializer, arg_params, aux_params, allow_missing, force_init):
 * parameters visited in sorted name order; given values are copied, missing ones
 * drawn from `init` when allow_missing, else "NAME is not presented". A second
 * call without force_init warns and does nothing.
 */
mxk_status mxkt_module_init_params(mxkt_module *m, const mxkt_initializer *init, uint32_t num_given,
                                   const char *const *names, mxk_ndarray *const *values,
                                   int32_t allow_missing, int32_t force_init);
/**
 * init_optimizer(kvstore, optimizer): copies `opt`, sets rescale_grad =
 * 1/batch_size unless `keep_rescale`, allocates states, creates the KVStore
 * ("local"/"device"; only with several contexts, as upstream). A second call warns
 * "optimizer already initialized, ignoring..." and changes nothing.
 */
mxk_status mxkt_module_init_optimizer(mxkt_module *m, const char *kvstore,
                                      const mxkt_optimizer *opt, int32_t keep_rescale);
/** forward(data batch, is_train): data/label sliced over the contexts. label may be NULL. */
mxk_status mxkt_module_forward(mxkt_module *m, mxk_ndarray *data, mxk_ndarray *label,
                               int32_t is_train);
/** backward(): loss outputs need no head gradients. */
mxk_status mxkt_module_backward(mxkt_module *m);
/** forward(is_train=1) + backward. */
mxk_status mxkt_module_forward_backward(mxkt_module *m, mxk_ndarray *data, mxk_ndarray *label);
/** update(): gradients summed over contexts through the KVStore, then the optimizer on each. */
mxk_status mxkt_module_update(mxkt_module *m);
/**
 * Copies output 0 merged over contexts into `out` (batch x width host floats,
 * room for batch_size * width). *width is set.
 */
mxk_status mxkt_module_get_output(mxkt_module *m, float *out, int64_t *width);
/** update_metric(metric, labels): host labels of the current batch, `n` valid rows. */
mxk_status mxkt_module_update_metric(mxkt_module *m, mxkt_metric *metrics, uint32_t num_metrics,
                                     const float *labels, int64_t n);

/** Parameter names (arguments minus data and label), in list_arguments order. */
uint32_t mxkt_module_num_params(const mxkt_module *m);
const char *mxkt_module_param_name(const mxkt_module *m, uint32_t i);
/** Aux state names. */
uint32_t mxkt_module_num_aux(const mxkt_module *m);
const char *mxkt_module_aux_name(const mxkt_module *m, uint32_t i);
/** Context 0's array of parameter i / aux i (owned by the module). */
mxk_ndarray *mxkt_module_param(const mxkt_module *m, uint32_t i);
mxk_ndarray *mxkt_module_aux(const mxkt_module *m, uint32_t i);
/** Context c's array of parameter i (to check that contexts agree). */
mxk_ndarray *mxkt_module_param_on(const mxkt_module *m, uint32_t c, uint32_t i);
/** Number of contexts. */
uint32_t mxkt_module_num_ctx(const mxkt_module *m);

/**
 * get_params(): new CPU copies of every parameter ("arg:NAME", list_arguments
 * order) and aux state ("aux:NAME"), averaged over the contexts as upstream's
 * DataParallelExecutorGroup.get_params (equal to every context's value after an
 * update). On success *names and *values hold *num entries the caller frees with
 * mxk_ndarray_list_free (as mxk_ndarray_load's). Waits for pending work.
 * Errors: MXK_ERR_STATE before bind and init_params, MXK_ERR_OUT_OF_MEMORY, or the
 * kernel's status of a copy (including errors of pending work); nothing is
 * returned then.
 */
mxk_status mxkt_module_get_params(const mxkt_module *m, uint32_t *num, char ***names,
                                  mxk_ndarray ***values);

/**
 * set_params: copies named arrays into every context's parameters / aux states
 * (names "arg:x"/"aux:x" or bare). Unknown names are ignored when allow_extra.
 */
mxk_status mxkt_module_set_params(mxkt_module *m, uint32_t num, const char *const *names,
                                  mxk_ndarray *const *values, int32_t allow_extra);

/**
 * save_checkpoint(prefix, epoch, save_optimizer_states): prefix-symbol.json,
 * prefix-%04d.params (arg:/aux: keys, MXNet's NDArray list format) and, when
 * asked, prefix-%04d.states (an NDArray list: "NAME:mom", "NAME:mean", "NAME:var"
 * and "__counts__" holding num_update and each index's update count).
 * Logs 'Saved checkpoint to "prefix-%04d.params"' to `log` (may be NULL).
 */
mxk_status mxkt_module_save_checkpoint(mxkt_module *m, const char *prefix, int32_t epoch,
                                       int32_t save_states, FILE *log);
/** Loads prefix-%04d.params into the (bound, initialised) module. */
mxk_status mxkt_module_load_params(mxkt_module *m, const char *prefix, int32_t epoch);
/** Loads prefix-%04d.states into the module's optimizer (after init_optimizer). */
mxk_status mxkt_module_load_states(mxkt_module *m, const char *prefix, int32_t epoch);

/** Loads prefix-symbol.json (mxk_symbol_load). */
mxk_status mxkt_load_symbol(const char *prefix, mxk_symbol **out);

/** A batch-end callback: (epoch, nbatch, metrics). */
typedef void (*mxkt_batch_cb)(int32_t epoch, int64_t nbatch, const mxkt_metric *metrics,
                              uint32_t num_metrics, void *user);

/** Options of fit (upstream BaseModule.fit arguments). Zero-fill then set. */
typedef struct mxkt_fit_options {
    int32_t begin_epoch, num_epoch;
    const mxkt_metric *metrics; /**< templates (copied); NULL: accuracy */
    uint32_t num_metrics;
    int32_t disp_batches;    /**< Speedometer frequent; 0: none */
    const char *ckpt_prefix; /**< checkpoint every `ckpt_period` epochs when set */
    int32_t ckpt_period;     /**< 0 → 1 */
    FILE *log;               /**< log lines (NULL: stderr) */
    /** One JSON line per epoch appended here (NULL: none): {"epoch": E, "train": {NAME: V},
     * "validation": {NAME: V} or null, "lr": rate of the epoch's last update,
     * "samples_per_sec": S, "seconds": T}; a value that is not finite is null. */
    const char *metrics_log;
    int32_t progress; /**< draw a progress bar on stdout */
    mxkt_batch_cb batch_cb;
    void *batch_cb_user;
    /** filled by fit: last epoch's metric values */
    double last_train[8], last_val[8];
    double last_speed, last_seconds;
} mxkt_fit_options;

/**
 * fit(train, eval): per epoch resets the metrics, runs forward_backward / update /
 * update_metric per batch with the Speedometer, logs "Epoch[E] Train-NAME=V",
 * "Epoch[E] Time cost=T", checkpoints (epoch + 1, with states), scores on `eval`
 * ("Epoch[E] Validation-NAME=V") and resets `train`. The module must be bound,
 * initialised and have its optimizer.
 */
mxk_status mxkt_module_fit(mxkt_module *m, mxkt_iter *train, mxkt_iter *eval,
                           mxkt_fit_options *opt);
/** score(eval, metrics): resets `eval`, runs forward (inference) on each batch. */
mxk_status mxkt_module_score(mxkt_module *m, mxkt_iter *eval, mxkt_metric *metrics,
                             uint32_t num_metrics);
/**
 * predict(eval): output 0 of every batch with pad rows dropped, concatenated into a
 * malloc'd host array (*rows x *width) the caller frees.
 */
mxk_status mxkt_module_predict(mxkt_module *m, mxkt_iter *eval, float **out, int64_t *rows,
                               int64_t *width);

/* ------------------------------------------------------------------------- */
/* Reference networks (operators-kvstore-module.md §5)                       */
/* ------------------------------------------------------------------------- */

/** MLP 784-128-64-10 ReLU: fc1, relu1, fc2, relu2, fc3, softmax. */
mxk_status mxkt_net_mlp(mxk_symbol **out);
/** LeNet of the MXNet.jl tutorial (convolution0 ... fullyconnected1, softmax). */
mxk_status mxkt_net_lenet(mxk_symbol **out);

#ifdef __cplusplus
}
#endif

#endif /* MXK_TRAIN_H */
