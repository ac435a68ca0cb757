/*
 * mxk_train: the reference trainer of mxk, a library above libmxk (the kernel stays
 * free of training policy; README.md "Layout"). It mirrors MXNet's Python
 * front end (1.9.1):
 *   - Module (python/mxnet/module/module.py, base_module.py, executor_group.py):
 *     bind, init_params, init_optimizer, forward/backward/update, fit, score,
 *     predict, get/set_params, checkpoints with optimizer states;
 *   - optimizers SGD / Adam run through the update operators sgd_update,
 *     sgd_mom_update and adam_update (python/mxnet/optimizer/optimizer.py), with
 *     the factor and multi-factor schedulers (python/mxnet/lr_scheduler.py);
 *   - initializers Uniform / Normal / Xavier (python/mxnet/initializer.py);
 *   - metrics (python/mxnet/metric.py) and callbacks (python/mxnet/callback.py);
 *   - an in-memory NDArrayIter (python/mxnet/io/io.py);
 *   - text for recurrent networks (python/mxnet/rnn/io.py): character and word
 *     tokenizers, encode_sentences and BucketSentenceIter.
 * Data parallelism follows python/mxnet/executor_manager.py (_split_input_slice)
 * and the module update path (python/mxnet/module/module.py, model.py): one executor
 * per context, gradients summed through the KVStore, every context applying the
 * same update so that parameters stay identical.
 *
 * Errors: functions return mxk_status. After a failure mxk_get_last_error() (or its
 * alias mxkt_last_error()) gives the message: this library records its errors in
 * libmxk's one thread-local channel (mxk_set_error) and wraps failing kernel calls
 * as "WHAT: <kernel message>" (mxk_error_add_context; WHAT names the step, the
 * operator or the file); the few paths documented as returning a kernel status
 * "unwrapped" leave the kernel's message as it is.
 * Randomness (initialisation, shuffling) is drawn from Philox-4x32-10 streams keyed
 * by explicit seeds, so runs are reproducible.
 * Thread safety: functions that only read their arguments and write outputs the
 * caller passes (parsers, schedulers and metrics on caller-owned structs, names,
 * networks) may run concurrently on distinct objects; an object (scheduler,
 * optimizer, metric, iterator, Module) must not be used by two threads at once.
 */
#ifndef MXK_TRAIN_H
#define MXK_TRAIN_H

#include <stdint.h>
#include <stdio.h>

#include "mxk.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The calling thread's last error message: an alias of mxk_get_last_error() (the
 * one channel of libmxk, where this library records its messages), kept for
 * existing callers. Thread-local, valid until the thread's next failing call of
 * mxk or mxk_train; not cleared by successful calls. Never NULL.
 */
MXK_API const char *mxkt_last_error(void);

/* ------------------------------------------------------------------------- */
/* Learning-rate schedulers (python/mxnet/lr_scheduler.py)                   */
/* ------------------------------------------------------------------------- */

/** Kinds of scheduler (MXKT_SCHED_NONE: a fixed rate). */
typedef enum mxkt_sched_kind {
    MXKT_SCHED_NONE = 0,
    MXKT_SCHED_FACTOR,
    MXKT_SCHED_MULTIFACTOR
} mxkt_sched_kind;

/** Most steps of a multi-factor scheduler. */
#define MXKT_MAX_STEPS 16

/**
 * A learning-rate scheduler (python/mxnet/lr_scheduler.py). FactorScheduler(step,
 * factor, stop_factor_lr): multiplies the rate by `factor` each time num_update
 * exceeds count + step, never below stop_factor_lr; MultiFactorScheduler(steps,
 * factor): once at each listed step. Stateful like upstream (count, cur_step_ind,
 * lr), so it must see non-decreasing num_update values. Caller-owned plain data
 * (copied by value); set up with mxkt_lr_factor / mxkt_lr_multifactor, or zero-fill
 * for MXKT_SCHED_NONE. Not thread-safe: mxkt_lr_get updates it.
 */
typedef struct mxkt_lr_scheduler {
    int32_t kind; /**< mxkt_sched_kind */
    /** initial rate; multiplier per change; factor kind: floor of the rate (1e-8) */
    double base_lr, factor, stop_factor_lr;
    int64_t step;                  /**< factor: step in updates */
    int64_t steps[MXKT_MAX_STEPS]; /**< multi-factor: increasing update counts */
    int32_t num_steps;             /**< multi-factor: entries of steps */
    /* state */
    int64_t count;        /**< update count of the last change */
    int32_t cur_step_ind; /**< multi-factor: next entry of steps */
    double lr;            /**< current rate (base_lr after set-up) */
} mxkt_lr_scheduler;

/**
 * Sets `*s` to FactorScheduler(step, factor, stop_factor_lr = 1e-8, base_lr)
 * (lr_scheduler.py), state cleared. Errors (MXK_ERR_INVALID_ARGUMENT, *s
 * untouched), as upstream's ValueErrors: "Schedule step must be greater or equal
 * than 1 round" (step < 1), "Factor must be no more than 1 to make lr reduce"
 * (factor > 1). Thread-safe for distinct `s`.
 */
MXK_API mxk_status mxkt_lr_factor(mxkt_lr_scheduler *s, int64_t step, double factor,
                                  double base_lr);
/**
 * Sets `*s` to MultiFactorScheduler(steps, factor, base_lr) (lr_scheduler.py;
 * stop_factor_lr set to 1e-8 but unused); `steps` (n values) is copied. Errors
 * (MXK_ERR_INVALID_ARGUMENT, *s untouched): "MultiFactorScheduler: 1 to 16 steps
 * needed" (n < 1 or n > MXKT_MAX_STEPS), "Schedule step must be an increasing
 * integer list", "Schedule step must be greater or equal than 1 round" (a step
 * < 1), "Factor must be no more than 1 to make lr reduce" (factor > 1).
 * Thread-safe for distinct `s`.
 */
MXK_API mxk_status mxkt_lr_multifactor(mxkt_lr_scheduler *s, const int64_t *steps, int32_t n,
                                       double factor, double base_lr);
/**
 * The rate at num_update (upstream __call__): applies every change due up to
 * num_update to the state and returns s->lr (kind NONE: s->lr unchanged). Cannot
 * fail. Updates `*s`: not thread-safe on one scheduler.
 */
MXK_API double mxkt_lr_get(mxkt_lr_scheduler *s, int64_t num_update);

/* ------------------------------------------------------------------------- */
/* Optimizers (python/mxnet/optimizer/optimizer.py)                          */
/* ------------------------------------------------------------------------- */

/** Optimizer kinds. */
typedef enum mxkt_opt_kind { MXKT_OPT_SGD = 0, MXKT_OPT_ADAM = 1 } mxkt_opt_kind;

/** Most parameter indices an optimizer tracks (update counts). */
#define MXKT_MAX_PARAMS 1024

/**
 * An optimizer (python/mxnet/optimizer/optimizer.py). Fields follow upstream's
 * Optimizer base: learning_rate (when no scheduler), wd, rescale_grad,
 * clip_gradient (< 0: off), momentum (SGD), beta1/beta2/epsilon (Adam). Per-index
 * update counts give num_update and Adam's bias correction (lr_t = lr * sqrt(1 -
 * b2^t) / (1 - b1^t)). Weight decay is wd times mxkt_optimizer_wd_mult(name) where
 * the parameter names are known (the Module passes them), as upstream's
 * set_wd_mult. Caller-owned plain data (the Module keeps its own copy); set up with
 * mxkt_optimizer_sgd / mxkt_optimizer_adam, then adjust fields. Not thread-safe:
 * mxkt_optimizer_step updates it.
 */
typedef struct mxkt_optimizer {
    int32_t kind; /**< mxkt_opt_kind */
    /** hyper-parameters, upstream's meanings */
    double lr, wd, rescale_grad, clip_gradient, momentum, beta1, beta2, epsilon;
    mxkt_lr_scheduler sched;         /**< kind NONE: fixed lr */
    int64_t num_update;              /**< largest update count of any index (upstream num_update) */
    int64_t counts[MXKT_MAX_PARAMS]; /**< update count per index (_index_update_count) */
} mxkt_optimizer;

/**
 * Sets `*o` to SGD(learning_rate = lr, momentum, wd) (optimizer.py SGD; upstream
 * defaults are lr 0.01, momentum 0, wd 0): rescale_grad 1, clip_gradient -1 (off),
 * no scheduler, counts zero. Cannot fail. Thread-safe for distinct `o`.
 */
MXK_API void mxkt_optimizer_sgd(mxkt_optimizer *o, double lr, double momentum, double wd);
/**
 * Sets `*o` to Adam(learning_rate = lr, wd) (optimizer.py Adam; upstream default lr
 * 0.001) with beta1 0.9, beta2 0.999, epsilon 1e-8, rescale_grad 1, clip_gradient
 * -1 (off), no scheduler, counts zero. Cannot fail. Thread-safe for distinct `o`.
 */
MXK_API void mxkt_optimizer_adam(mxkt_optimizer *o, double lr, double wd);
/**
 * Checks that the hyper-parameters of `o` are in the ranges where the update
 * rules of optimizer.py (sgd_mom_update, adam_update) make sense (upstream leaves
 * them unchecked): learning_rate > 0, wd >= 0, rescale_grad > 0, clip_gradient > 0
 * or negative (off), all finite; SGD momentum in [0, 1) (1 or more never forgets
 * a gradient and diverges); Adam beta1, beta2 in [0, 1), epsilon > 0. Errors:
 * MXK_ERR_INVALID_ARGUMENT "SGD: momentum must be in [0, 1), not 2" (the first
 * bad field: "learning_rate must be positive", "wd must be at least 0",
 * "rescale_grad must be positive", "clip_gradient must be positive (negative:
 * off)", "beta1 must be in [0, 1)", "beta2 ...", "epsilon must be positive";
 * "Adam: ..." for Adam), "optimizer: kind must be SGD (0) or Adam (1), not K".
 * Pure, thread-safe.
 */
MXK_API mxk_status mxkt_optimizer_check(const mxkt_optimizer *o);
/**
 * Number of state arrays per parameter: Adam 2 (mean, var); otherwise SGD, 1 (mom)
 * when momentum != 0, else 0. Pure, thread-safe.
 */
MXK_API uint32_t mxkt_optimizer_num_states(const mxkt_optimizer *o);
/**
 * Weight-decay multiplier of a parameter name (upstream Optimizer.set_wd_mult): 1
 * for names ending in "_weight" or "_gamma", 0 otherwise; NULL (name unknown): 1.
 * Pure, thread-safe.
 */
MXK_API double mxkt_optimizer_wd_mult(const char *name);
/**
 * Counts an update of `index` (upstream _update_count: counts[index] + 1,
 * num_update = max) and returns the learning rate to use for it (upstream
 * _get_lr: the scheduler at num_update, else lr; Adam: times its bias correction
 * for this index's count). An index outside [0, MXKT_MAX_PARAMS) is not counted
 * (t = 1). Cannot fail. Updates `*o` (and its scheduler): not thread-safe on one
 * optimizer.
 */
MXK_API double mxkt_optimizer_step(mxkt_optimizer *o, int32_t index);
/**
 * Applies one update of `weight` in place with gradient `grad` and the states
 * (arrays of weight's shape, zero-initialised before the first update,
 * mxkt_optimizer_num_states of them: SGD momentum {mom}, Adam {mean, var}; NULL
 * when none) through the update operators sgd_update / sgd_mom_update /
 * adam_update (optimizer.py update), using learning rate `lr` (from
 * mxkt_optimizer_step), weight decay wd * wd_mult, o's rescale_grad and
 * clip_gradient. The caller keeps all arrays; the work is pushed asynchronously
 * (its own errors surface at the next wait on the arrays). Errors: the kernel's
 * status of mxk_imperative_invoke, recorded as "OP: ..." (e.g. MXK_ERR_NOT_FOUND
 * when the operator is not registered, MXK_ERR_SHAPE for mismatched shapes). `o`
 * is only read: thread-safe as the kernel's imperative calls.
 */
MXK_API mxk_status mxkt_optimizer_apply(const mxkt_optimizer *o, double lr, double wd_mult,
                                        mxk_ndarray *weight, mxk_ndarray *grad,
                                        mxk_ndarray *const *states);

/* ------------------------------------------------------------------------- */
/* The optimizer on KVStore servers (python/mxnet/kvstore/kvstore.py,          */
/* kvstore_server.py)                                                        */
/* ------------------------------------------------------------------------- */

/** The command that sets the servers' optimizer (upstream's kSetOptimizer, command 0). */
#define MXKT_KV_SET_OPTIMIZER 0

/**
 * KVStore.set_optimizer on a store with servers (dist_async): sends `opt` (its
 * name and hyper-parameters, as JSON; docs/distributed.md) with the n keys
 * `names` and their learning-rate and weight-decay multipliers (NULL: all 1) to the
 * servers, which from then on apply every push with this optimizer. Every worker
 * calls it alike (rank 0's is sent; see mxk_kvstore_send_command_to_servers).
 * Synchronous. Errors: MXK_ERR_INVALID_ARGUMENT (kv, opt or names NULL, or
 * mxkt_optimizer_check's); MXK_ERR_OUT_OF_MEMORY; "set_optimizer: ..." with the
 * kernel's status of the command (MXK_ERR_UNSUPPORTED for a store without servers,
 * the servers' error). Thread-safe as the KVStore.
 */
MXK_API mxk_status mxkt_kvstore_set_optimizer(mxk_kvstore *kv, const mxkt_optimizer *opt,
                                              uint32_t n, const char *const *names,
                                              const double *lr_mult, const double *wd_mult);
/**
 * Runs a KVStore server (upstream KVStoreServer.run, kvstore_server.py) on a process
 * where mxk_kvstore_is_server(kv): until every worker has freed its store, command
 * MXKT_KV_SET_OPTIMIZER sets the updater to the optimizer it carries (optimizer
 * states per key, created at a key's first update, in host memory; a new command
 * drops them), and every push is applied at once. Errors:
 * MXK_ERR_INVALID_ARGUMENT (kv NULL); "run_server: ..." with
 * mxk_kvstore_run_server's. A malformed or unknown optimizer is the command's
 * error, returned to the workers ("set_optimizer: unknown optimizer 'x' (sgd,
 * adam)"). Blocks the calling thread.
 */
MXK_API mxk_status mxkt_kvstore_run_server(mxk_kvstore *kv);

/* ------------------------------------------------------------------------- */
/* Initializers (python/mxnet/initializer.py)                                */
/* ------------------------------------------------------------------------- */

/** Initializer kinds. */
typedef enum mxkt_init_kind {
    MXKT_INIT_UNIFORM = 0,
    MXKT_INIT_NORMAL,
    MXKT_INIT_XAVIER,
    MXKT_INIT_CONSTANT,
    MXKT_INIT_LSTMBIAS
} mxkt_init_kind;

/**
 * An initializer. Uniform(scale): U(-scale, scale); Normal(sigma): N(0, sigma);
 * Xavier(rnd_type "uniform"|"gaussian", factor_type "avg"|"in"|"out", magnitude);
 * Constant(value): weights set to value. LSTMBias(forget_bias, kept in `value`):
 * zeros but the forget gate's quarter [n/4, n/2) of a 4H bias (LSTMCell's
 * i2h_bias, gates i, f, c, o), set to forget_bias (initializer.py LSTMBias).
 * Random numbers: Philox stream keyed by `seed`, one counter range per parameter
 * name (hash), so a parameter's values do not depend on the order of the others.
 * Caller-owned plain data, only read by the functions below.
 */
typedef struct mxkt_initializer {
    int32_t kind;        /**< mxkt_init_kind */
    double scale;        /**< Uniform */
    double sigma;        /**< Normal */
    int32_t gaussian;    /**< Xavier rnd_type: 0 uniform, 1 gaussian */
    int32_t factor_type; /**< Xavier: 0 avg, 1 in, 2 out */
    double magnitude;    /**< Xavier */
    double value;        /**< Constant (One: 1, Zero: 0) */
    uint64_t seed;       /**< key of the random streams */
} mxkt_initializer;

/**
 * Parses an initializer spec NAME or NAME(ARG, KEY=VALUE, ...) with upstream's
 * parameters in their positional order (python/mxnet/initializer.py; names are
 * case-insensitive, values may be quoted):
 *   - uniform(scale=0.07), normal(sigma=0.01), constant(value=0), one, zero,
 *     lstmbias(forget_bias=1);
 *   - xavier(rnd_type="uniform"|"gaussian", factor_type="avg"|"in"|"out", magnitude=3);
 *   - glorot: xavier(magnitude=1); he and fit.py's "default": xavier("gaussian", "in", 2);
 *   - msra / msraprelu(factor_type="avg", slope=0.25): xavier("gaussian", factor_type,
 *     2 / (1 + slope^2)).
 * `seed` keys the random streams. Errors (MXK_ERR_INVALID_ARGUMENT, message in
 * mxkt_last_error): "malformed initializer 'S' ..." (also more than 4 arguments),
 * "unknown initializer 'S' ...", "initializer 'S': too many arguments",
 * "... unknown argument 'K'", "... bad K 'V'"; *out is then not usable.
 * Orthogonal is not provided (it needs an SVD). Thread-safe.
 */
MXK_API mxk_status mxkt_initializer_parse(const char *spec, uint64_t seed, mxkt_initializer *out);
/**
 * Xavier scale for a shape (initializer.py Xavier._init_weight): sqrt(magnitude /
 * factor) with fan_in = shape[1]*hw, fan_out = shape[0]*hw (hw: product of the
 * dims after the second), factor by factor_type. Error: fewer than 2 dims,
 * MXK_ERR_INVALID_ARGUMENT "Xavier initializer cannot be applied to vector. It
 * requires at least 2D.". Pure, thread-safe.
 */
MXK_API mxk_status mxkt_xavier_scale(const mxkt_initializer *init, const mxk_shape *shape,
                                     double *scale);
/**
 * Fills host values of parameter `name` (float32, `shape`; `values` has room for
 * its element count) by the name's suffix (initializer.py Initializer.__call__,
 * legacy rules): ending in weight → the initializer (Constant: its value);
 * bias / beta / moving_mean / moving_inv_var / moving_avg / min → 0;
 * gamma / moving_var / max → 1. Errors (MXK_ERR_INVALID_ARGUMENT): any other
 * name, upstream's "Unknown initialization pattern for NAME. Default
 * initialization is now limited to "weight", "bias", "gamma" (1.0), and "beta"
 * (0.0)" followed by how to fix it (a suffix, or an __init__ attribute such as
 * ["zero", {}]); a Xavier weight of fewer than 2 dims (mxkt_xavier_scale's
 * message). Pure, thread-safe.
 */
MXK_API mxk_status mxkt_initializer_fill(const mxkt_initializer *init, const char *name,
                                         const mxk_shape *shape, float *values);
/**
 * Initializer.__call__(InitDesc(name, attrs), arr) (initializer.py): when the
 * variable's `__init__` attribute `init_attr` is given (MXNet's dumps() form,
 * ["xavier", {"magnitude": 2}], ["one", {}], ["constant", {"value": 0.5}]: a name
 * of mxkt_initializer_parse and its keyword arguments, strings or numbers), that
 * initializer's _init_weight fills the values whatever the name (random ones
 * keyed by init->seed and the name); ["fusedrnn", {"init": null, "num_hidden",
 * "num_layers", "mode", "bidirectional", "forget_bias"}] (init.FusedRNN, the
 * attribute of FusedRNNCell's parameter vector): the vector unpacked per gate
 * (upstream's prefix-less names "l0_i2h_i_weight", ...), each array filled by
 * `init`'s name rules, an LSTM's forget-gate biases (i2h and h2h) set to
 * forget_bias, packed back (mxkt_fused_rnn_init_fill of mxk_rnn.h); else (NULL or
 * "") mxkt_initializer_fill.
 * Errors (MXK_ERR_INVALID_ARGUMENT): "NAME: malformed __init__ 'V' (MXNet's
 * ["name", {"key": value}])", "NAME: __init__ 'V': <mxkt_initializer_parse's
 * message>" (e.g. an initializer mxk lacks, such as orthogonal), "NAME: __init__
 * 'V': fusedrnn takes init null, num_hidden, num_layers, mode, bidirectional and
 * forget_bias", the fused parameter layout's (a vector no input size fits), and those of
 * mxkt_initializer_fill / mxkt_xavier_scale. Pure, thread-safe.
 */
MXK_API mxk_status mxkt_initializer_fill_desc(const mxkt_initializer *init, const char *name,
                                              const char *init_attr, const mxk_shape *shape,
                                              float *values);

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

/**
 * An evaluation metric (python/mxnet/metric.py EvalMetric): value = sum_metric /
 * num_inst (perplexity: exp of it). Caller-owned plain data (copied by value);
 * not thread-safe on one metric.
 */
typedef struct mxkt_metric {
    int32_t kind;         /**< mxkt_metric_kind */
    int32_t top_k;        /**< TopK */
    int32_t ignore_label; /**< Perplexity; has_ignore selects it */
    int32_t has_ignore;
    double sum_metric; /**< accumulated metric */
    double num_inst;   /**< accumulated instances */
    char name[32];     /**< "accuracy", "top_k_accuracy_5", "cross-entropy", ... */
} mxkt_metric;

/**
 * Creates a metric by name (metric.py create): "acc"/"accuracy",
 * "top_k_accuracy"/"top_k_acc" (k = top_k), "ce"/"cross-entropy",
 * "nll_loss"/"nll-loss", "perplexity" (no ignore_label; set has_ignore and
 * ignore_label after), "mse", "mae", "rmse"; accumulators zero. Errors
 * (MXK_ERR_INVALID_ARGUMENT): top_k < 2 for TopK, "Please use Accuracy if top_k is
 * no more than 1" (as upstream); any other name, "unknown metric 'NAME' (...)".
 * Thread-safe.
 */
MXK_API mxk_status mxkt_metric_create(const char *name, int32_t top_k, mxkt_metric *out);
/** Clears the accumulators (EvalMetric.reset). Cannot fail. */
MXK_API void mxkt_metric_reset(mxkt_metric *m);
/**
 * Accumulates one batch (EvalMetric.update): `labels` (n host values) and
 * predictions `preds` (n rows of `width` host values, row-major). Classification
 * metrics read the label as a class index into the row (Accuracy: argmax, first
 * of ties; width 1: the prediction itself is the class) and count n instances;
 * MAE / MSE / RMSE compare each row's `width` values with its label (upstream's
 * (B,) label reshaped to (B, 1) broadcasts) and add the batch's mean (RMSE: its
 * square root) as one instance. An out-of-range class label counts as wrong
 * (CE / NLL: probability 0, -log(0 + 1e-12)); Perplexity skips its ignore_label
 * and clips probabilities at 1e-10. Cannot fail.
 */
MXK_API void mxkt_metric_update(mxkt_metric *m, const float *labels, const float *preds, int64_t n,
                                int64_t width);
/** The current value (EvalMetric.get; NaN with no instances). Pure. */
MXK_API double mxkt_metric_get(const mxkt_metric *m);

/* ------------------------------------------------------------------------- */
/* Data parallelism, callbacks, names                                        */
/* ------------------------------------------------------------------------- */

/**
 * upstream _split_input_slice(batch_size, work_load_list)
 * (python/mxnet/executor_manager.py): device i gets round(w_i * batch / sum w)
 * (Python 3 round half to even), the shortfall goes to the last device, slices are
 * cumulative and clamped to batch_size. Writes n begin/end pairs (rows [begin,
 * end)) into the caller's arrays of n entries. Errors (MXK_ERR_INVALID_ARGUMENT):
 * n < 1, n > MXKT_MAX_CTX or a work-load sum <= 0, "Invalid settings for work
 * load."; an empty slice, "Too many slices. Some splits are empty.". Pure,
 * thread-safe.
 */
MXK_API mxk_status mxkt_split_input_slice(int64_t batch_size, const double *work_load, int32_t n,
                                          int64_t *begin, int64_t *end);

/**
 * Speedometer's log line (python/mxnet/callback.py of MXNet 1.0-1.2, the form the
 * image-classification examples print): writes
 * "Epoch[E] Batch [B]\tSpeed: S samples/sec\tname=value..." into buf (truncated
 * to `size`, NUL-terminated), with `speed` in samples/sec ("%.2f"; callers compute
 * frequent * batch_size / elapsed seconds) and metric values "%f" (mxkt_metric_get).
 * Without metrics (num_metrics 0): "Iter[E] Batch [B]\tSpeed: S samples/sec".
 * Cannot fail. Thread-safe.
 */
MXK_API void mxkt_speedometer_line(char *buf, size_t size, int32_t epoch, int64_t nbatch,
                                   double speed, const mxkt_metric *metrics, uint32_t num_metrics);
/**
 * Checkpoint file names (python/mxnet/model.py save_checkpoint, module.py): kind
 * "symbol" → "prefix-symbol.json" (epoch unused), any other kind →
 * "prefix-%04d.KIND" ("params", "states"). Truncated to `size`. Cannot fail.
 * Thread-safe.
 */
MXK_API void mxkt_checkpoint_name(char *buf, size_t size, const char *prefix, int32_t epoch,
                                  const char *kind);

/* ------------------------------------------------------------------------- */
/* Data: a small iterator interface, NDArrayIter, kernel iterators           */
/* ------------------------------------------------------------------------- */

/**
 * A data source for the Module (python/mxnet/io/io.py DataIter): a vtable over
 * an in-memory NDArrayIter, a kernel iterator (mxk_data_iter, e.g. MNISTIter from
 * plugins/io-recordio) or a BucketSentenceIter. reset rewinds; next advances (*has_next 0
 * at the end of the epoch); batch gives the current batch: one data and one label
 * CPU array (owned by the source, valid until its next next/reset/destroy; label
 * may be NULL for a kernel iterator without labels) and the pad rows at the end of
 * the last batch. Call reset and next through mxkt_iter_reset / mxkt_iter_next,
 * batch directly. Created by mxkt_ndarray_iter_create /
 * mxkt_kernel_iter_wrap / mxkt_bucket_sentence_iter_create, freed by mxkt_iter_free.
 * Not thread-safe.
 */
typedef struct mxkt_iter mxkt_iter;
struct mxkt_iter {
    mxk_status (*reset)(mxkt_iter *it);
    mxk_status (*next)(mxkt_iter *it, int32_t *has_next);
    mxk_status (*batch)(mxkt_iter *it, mxk_ndarray **data, mxk_ndarray **label, uint32_t *pad);
    void (*destroy)(mxkt_iter *it);
    mxk_shape data_shape;  /**< batch shape of the data */
    mxk_shape label_shape; /**< batch shape of the label (ndim 0: none) */
    int64_t batch_size;    /**< rows per batch (data_shape.dims[0]) */
    /** batches per epoch when known (the progress bar's total), else 0: NDArrayIter sets
     * ceil(num / batch_size); a wrapped kernel iterator leaves it to the caller */
    int64_t num_batches;
    /** what the data is, e.g. its label file, named in errors about its labels ("" by
     * default; the caller may set it) */
    char source[1024];
    /** bucketing (python/mxnet/module/bucketing_module.py reads DataIter.default_bucket_key
     * and DataBatch.bucket_key / provide_data): 0 for an iterator without buckets; else
     * the key whose shapes data_shape / label_shape are (BucketSentenceIter: the largest
     * bucket) */
    int64_t default_bucket_key;
    /** the current batch's bucket key (0 without buckets), set by next */
    int64_t bucket_key;
    /** the current batch's data and label shapes (provide_data / provide_label of the
     * DataBatch), set by next; valid when default_bucket_key is not 0 */
    mxk_shape batch_data_shape, batch_label_shape;
};

/**
 * NDArrayIter over host arrays (copied; the caller keeps its buffers): data (num,
 * sample dims...) float32 and label (num * label_width values, row-major; NULL:
 * zeros); batches of `batch_size` rows as float32 CPU arrays of shape (batch_size,
 * sample dims...) and (batch_size) (label_width 1) or (batch_size, label_width) (e.g.
 * a language model's next-token labels, one per time step); last_batch_handle "pad" (the last batch
 * filled from the start, pad reported). shuffle: a permutation drawn at creation and a new one at
 * every reset (MXNet 1.9.1 python/mxnet/io/io.py), the k-th drawn from the Philox stream of `seed`
 * alone, so two iterators with one seed agree. On success the caller owns *out (mxkt_iter_free).
 * Errors: MXK_ERR_INVALID_ARGUMENT "NDArrayIter: empty data or batch size" (ndim < 1, no samples,
 * batch_size < 1, label_width < 1), MXK_ERR_OUT_OF_MEMORY "NDArrayIter: out of memory", or the
 * kernel's status creating the batch arrays
 * ("NDArrayIter: ..."). Its reset cannot fail; its next returns the kernel's status
 * of copying the batch into those arrays ("NDArrayIter: ..."); its batch cannot fail.
 */
MXK_API mxk_status mxkt_ndarray_iter_create(const float *data, const mxk_shape *data_shape,
                                            const float *label, int64_t label_width,
                                            int64_t batch_size, int32_t shuffle, uint64_t seed,
                                            mxkt_iter **out);
/**
 * Wraps a kernel iterator: shapes from mxk_data_iter_describe (first data and
 * first label), batch_size = the data's dims[0]. On success `kit` is taken over
 * (freed with the wrapper by mxkt_iter_free) and the caller owns *out; on failure
 * the caller keeps `kit`. Errors: the kernel's status of mxk_data_iter_describe
 * ("data iterator describe: ..."), MXK_ERR_STATE "data iterator provides no data",
 * MXK_ERR_OUT_OF_MEMORY "out of memory". The wrapper's reset / next / batch return
 * the kernel's status of mxk_data_iter_reset / next / batch ("data iterator
 * reset: ...", "data iterator: ...", "data iterator batch: ...") and batch
 * MXK_ERR_STATE "data iterator gave no data array".
 */
MXK_API mxk_status mxkt_kernel_iter_wrap(mxk_data_iter *kit, mxkt_iter **out);
/**
 * Destroys an iterator and what it owns (its batch arrays; a wrapped kernel
 * iterator). NULL: no-op.
 */
MXK_API void mxkt_iter_free(mxkt_iter *it);
/**
 * Rewinds `it` (DataIter.reset). Errors: those of the source's reset (NDArrayIter:
 * none; kernel iterator: mxk_data_iter_reset's, e.g. a sticky producer error).
 */
MXK_API mxk_status mxkt_iter_reset(mxkt_iter *it);
/**
 * Advances `it` (DataIter.next): *has_next 0 at the end of the epoch, else 1 with
 * a current batch (it->batch). Errors: those of the source's next (see
 * mxkt_ndarray_iter_create, mxkt_kernel_iter_wrap).
 */
MXK_API mxk_status mxkt_iter_next(mxkt_iter *it, int32_t *has_next);

/* ------------------------------------------------------------------------- */
/* Text: tokenizers, encode_sentences, BucketSentenceIter                    */
/* (python/mxnet/rnn/io.py)                                                  */
/* ------------------------------------------------------------------------- */

/**
 * Sentences of string tokens (the `list of list of str` of python/mxnet/rnn/io.py):
 * sentence i is tokens[offsets[i] .. offsets[i+1]) (offsets has num_sentences + 1
 * entries, offsets[0] = 0); each token a NUL-terminated UTF-8 string. Filled by the
 * tokenizers, which own every array (mxkt_tokens_free); a caller building its own
 * passes its arrays to mxkt_encode_sentences and frees them itself.
 */
typedef struct mxkt_tokens {
    int64_t num_sentences;
    int64_t *offsets;
    char **tokens;
    char *storage; /**< the tokens' bytes (tokenizers); NULL when the caller owns them */
} mxkt_tokens;

/**
 * Splits text into one sentence of its characters (Unicode code points, each token
 * the code point's UTF-8 bytes, as Python's list(str) of the char-LSTM examples);
 * nothing is dropped (spaces and newlines are tokens). On success the caller owns
 * *out (mxkt_tokens_free). Errors: MXK_ERR_INVALID_ARGUMENT "tokenize_chars:
 * invalid UTF-8 at byte N" (Python's decode would fail there), "tokenize_chars: NUL
 * byte at byte N" (tokens are C strings; Python would keep it), MXK_ERR_OUT_OF_MEMORY
 * "tokenize_chars: out of memory". Thread-safe.
 */
MXK_API mxk_status mxkt_tokenize_chars(const char *text, size_t len, mxkt_tokens *out);
/**
 * Splits text into one sentence per line as upstream's word-level bucketing example
 * (example/rnn/bucketing/lstm_bucketing.py tokenize_text: readlines, split(' '),
 * empty strings dropped): tokens are separated by single spaces only, and a line's
 * end stays on its last token, so the usual " \n" line end gives a "\n" token,
 * encode_sentences' default invalid_key (the end of sentence); the last line may
 * lack the newline; "\r\n" and "\r" end lines as "\n" (Python's universal newlines).
 * On success the caller owns *out (mxkt_tokens_free). Errors: MXK_ERR_INVALID_ARGUMENT
 * "tokenize_words: NUL byte at byte N" (tokens are C strings; Python would keep it),
 * MXK_ERR_OUT_OF_MEMORY "tokenize_words: out of memory". Thread-safe.
 */
MXK_API mxk_status mxkt_tokenize_words(const char *raw, size_t raw_len, mxkt_tokens *out);
/** Frees what a tokenizer filled and zeroes *t. NULL or zeroed: no-op. */
MXK_API void mxkt_tokens_free(mxkt_tokens *t);

/**
 * A vocabulary, token -> integer id (the `dict of str -> int` of encode_sentences),
 * kept in insertion order. Created by mxkt_vocab_create or by mxkt_encode_sentences,
 * freed by mxkt_vocab_free. Not thread-safe while it is being written.
 */
typedef struct mxkt_vocab mxkt_vocab;
/** An empty vocabulary in *out. Errors: MXK_ERR_OUT_OF_MEMORY "vocab: out of memory". */
MXK_API mxk_status mxkt_vocab_create(mxkt_vocab **out);
/**
 * Adds `token` (copied) with `id`. Errors: MXK_ERR_INVALID_ARGUMENT "vocab: token
 * 'T' already present", MXK_ERR_OUT_OF_MEMORY "vocab: out of memory".
 */
MXK_API mxk_status mxkt_vocab_add(mxkt_vocab *v, const char *token, int32_t id);
/** 1 and *id when `token` is present, else 0 (*id untouched). */
MXK_API int32_t mxkt_vocab_find(const mxkt_vocab *v, const char *token, int32_t *id);
/** Number of tokens. */
MXK_API int64_t mxkt_vocab_size(const mxkt_vocab *v);
/** Entry i (0 <= i < size) in insertion order: its token (owned by v) and *id. */
MXK_API const char *mxkt_vocab_entry(const mxkt_vocab *v, int64_t i, int32_t *id);
/** Frees a vocabulary. NULL: no-op. */
MXK_API void mxkt_vocab_free(mxkt_vocab *v);

/**
 * Sentences of integer ids: sentence i is ids[offsets[i] .. offsets[i+1]). Filled by
 * mxkt_encode_sentences (caller owns, mxkt_encoded_free).
 */
typedef struct mxkt_encoded {
    int64_t num_sentences;
    int64_t *offsets;
    int32_t *ids;
} mxkt_encoded;

/**
 * encode_sentences (python/mxnet/rnn/io.py): maps every token to its id. *vocab NULL:
 * a new vocabulary {invalid_key: invalid_label} is built and returned in *vocab
 * (caller owns), unknown tokens taking ids start_label, start_label + 1, ... in
 * order of appearance, skipping invalid_label; *vocab given: it is used unchanged.
 * upstream's unknown_token (which can give an existing id to a new token) is not
 * offered. On success the caller owns *out (mxkt_encoded_free); on failure *out is
 * zeroed and *vocab as on entry. Errors: MXK_ERR_INVALID_ARGUMENT "encode_sentences:
 * unknown token 'T'" (a given vocabulary lacks it; upstream's assertion),
 * "encode_sentences: bad sentence offsets" (not starting at 0 or decreasing),
 * MXK_ERR_OUT_OF_MEMORY "encode_sentences: out of memory" or mxkt_vocab_add's.
 * Thread-safe on distinct vocabularies.
 */
MXK_API mxk_status mxkt_encode_sentences(const mxkt_tokens *sentences, mxkt_vocab **vocab,
                                         int32_t invalid_label, const char *invalid_key,
                                         int32_t start_label, mxkt_encoded *out);
/** Frees what mxkt_encode_sentences filled and zeroes *e. NULL: no-op. */
MXK_API void mxkt_encoded_free(mxkt_encoded *e);

/** Options of mxkt_bucket_sentence_iter_create (upstream's defaults in brackets). */
typedef struct mxkt_bucket_iter_options {
    int64_t batch_size;     /**< sentences per batch (>= 1) */
    const int64_t *buckets; /**< bucket lengths (any order, each >= 1), or NULL */
    uint32_t num_buckets;   /**< 0: every length held by >= batch_size sentences */
    float invalid_label;    /**< padding and the label after the last step [-1] */
    const char *layout;     /**< "NT" (batch, time) or "TN" (time, batch); NULL: "NT" */
    int32_t shuffle;        /**< nonzero: shuffle at creation and every reset [always] */
    uint64_t seed;          /**< the shuffles' Philox seed */
} mxkt_bucket_iter_options;

/**
 * BucketSentenceIter (python/mxnet/rnn/io.py) over encoded sentences (copied): each
 * sentence goes to the smallest bucket at least as long, padded with invalid_label;
 * sentences longer than the largest bucket are discarded, counted in *discarded (may
 * be NULL) and reported on stderr as upstream ("WARNING: discarded N sentences longer
 * than the largest bucket."); buckets that receive no sentence are dropped. Batches
 * are batch_size consecutive sentences of one bucket (a bucket's remainder is not
 * served); the label is the data shifted left by one step, invalid_label after the
 * last. Batches are float32 CPU arrays (batch_size, bucket) for "NT", (bucket,
 * batch_size) for "TN"; bucket_key is the bucket's length, batch_data_shape /
 * batch_label_shape its shapes, default_bucket_key the largest bucket and
 * data_shape / label_shape its shapes (provide_data / provide_label), num_batches the
 * batches per epoch, pad always 0. shuffle: as upstream's reset, the order of the
 * batches and the sentences within each bucket are permuted at creation and at every
 * reset (permutations compose), the k-th drawn from the Philox stream of `seed`
 * alone, so equal seeds give equal epochs (upstream uses Python's and NumPy's global
 * generators; its shuffle cannot be turned off). Differences from upstream: chosen
 * buckets never include length 0 (empty sentences go to the smallest bucket, padded).
 * On success the caller owns *out (mxkt_iter_free). Errors:
 * MXK_ERR_INVALID_ARGUMENT "BucketSentenceIter: batch size must be >= 1",
 * "BucketSentenceIter: bucket lengths must be >= 1", "BucketSentenceIter: invalid
 * layout 'L': must be NT (batch major) or TN (time major)", "BucketSentenceIter: bad
 * sentence offsets", "BucketSentenceIter: no bucket holds a sentence (N discarded)"
 * (upstream fails on max() of no buckets), MXK_ERR_OUT_OF_MEMORY
 * "BucketSentenceIter: out of memory", or the kernel's status creating the batch
 * arrays ("BucketSentenceIter: ..."). Its reset cannot fail; its next returns the
 * kernel's status copying a batch ("BucketSentenceIter: ..."); its batch cannot fail.
 */
MXK_API mxk_status mxkt_bucket_sentence_iter_create(const mxkt_encoded *sentences,
                                                    const mxkt_bucket_iter_options *o,
                                                    int64_t *discarded, mxkt_iter **out);

/* ------------------------------------------------------------------------- */
/* Module (python/mxnet/module/module.py)                                    */
/* ------------------------------------------------------------------------- */

/** Most contexts of a Module. */
#define MXKT_MAX_CTX 16

/**
 * A Module (python/mxnet/module/module.py): one symbol bound on up to
 * MXKT_MAX_CTX contexts with its parameters, optimizer states and KVStore. Opaque;
 * created by mxkt_module_create, freed by mxkt_module_free. Not thread-safe: calls
 * on one module must not overlap.
 */
typedef struct mxkt_module mxkt_module;

/**
 * Module(symbol, data_names=(data_name,), label_names=(label_name,), context)
 * (module.py): data_name NULL → "data", label_name NULL → "softmax_label"; the
 * parameters are the symbol's arguments minus those two. The symbol and the `ctx`
 * array (`num_ctx` contexts, data parallel) are copied; the caller keeps both and
 * owns *out (mxkt_module_free). Logical contexts cpu(i) beyond the CPU devices
 * use cpu(0) memory. The variables' attributes are read here as MXNet's Module and
 * optimizer read attr_dict(): `__init__` (parameters and aux states, used by
 * init_params), `__lr_mult__` and `__wd_mult__` (parameters, used by update; the
 * plain "lr_mult" key of a loaded JSON is ignored, as MXNet's optimizer ignores it;
 * mxk_symbol_set_attr stores "lr_mult" as "__lr_mult__"); `__shape__` / `__dtype__`
 * seed bind's inference (kernel). Errors: MXK_ERR_INVALID_ARGUMENT "Module: 1 to
 * 16 contexts", "NAME: __lr_mult__ 'V' is not a number" (also __wd_mult__; a
 * finite number is needed), MXK_ERR_OUT_OF_MEMORY "out of memory", or the
 * kernel's status of copying the symbol or listing its names or attributes
 * ("Module: ...").
 */
MXK_API mxk_status mxkt_module_create(const mxk_symbol *sym, const char *data_name,
                                      const char *label_name, const mxk_context *ctx,
                                      uint32_t num_ctx, mxkt_module **out);
/**
 * Frees a module after waiting for all pending work (mxk_wait_all; its errors are
 * dropped): KVStore, optimizer states, executors (so every array from
 * mxkt_module_param / aux / param_on), names and the symbol copy. NULL: no-op.
 */
MXK_API void mxkt_module_free(mxkt_module *m);

/**
 * A BucketingModule's symbol generator (python/mxnet/module/bucketing_module.py
 * sym_gen): sets *out to a new symbol for `bucket_key` (the module frees it) and
 * returns MXK_OK, or returns an error status with a message recorded through
 * mxk_set_error. Called from the module's thread only.
 */
typedef mxk_status (*mxkt_sym_gen)(int64_t bucket_key, void *user, mxk_symbol **out);

/**
 * BucketingModule(sym_gen, default_bucket_key, context)
 * (python/mxnet/module/bucketing_module.py): a module whose symbol depends on the
 * batch's bucket key. sym_gen(default_bucket_key) gives the default bucket's symbol,
 * whose parameters are the module's (as mxkt_module_create with data_name /
 * label_name; every bucket uses these names). Everything a Module does works on it:
 * bind binds the default bucket (bind it with the largest bucket's shapes, as
 * BucketSentenceIter's provide_data, so that the other buckets need no new memory);
 * fit / score / predict switch to each batch's bucket (mxkt_iter.bucket_key and
 * batch_data_shape, when the iterator has default_bucket_key != 0) through
 * mxkt_module_switch_bucket; update, get/set_params and checkpoints use the shared
 * parameters (the default bucket's symbol is the one saved). `user` is passed to
 * sym_gen and must outlive the module. On success the caller owns *out
 * (mxkt_module_free). Errors: MXK_ERR_INVALID_ARGUMENT "BucketingModule: sym_gen is
 * NULL", "BucketingModule: the default bucket key must not be 0" (0 means "no
 * bucket" in mxkt_iter), sym_gen's own ("BucketingModule: sym_gen(K): ..."), those of
 * mxkt_module_create, MXK_ERR_OUT_OF_MEMORY "BucketingModule: out of memory".
 */
MXK_API mxk_status mxkt_bucketing_module_create(mxkt_sym_gen sym_gen, void *user,
                                                int64_t default_bucket_key, const char *data_name,
                                                const char *label_name, const mxk_context *ctx,
                                                uint32_t num_ctx, mxkt_module **out);
/**
 * switch_bucket(bucket_key, data_shapes, label_shapes) (bucketing_module.py): makes
 * the bucket current, binding it the first time: sym_gen(bucket_key), then on each
 * context simple_bind with shared_exec = the default bucket's executor, so its
 * parameters, gradients and aux states are views of the default bucket's arrays (the
 * same memory) and its internal arrays reuse the default bucket's memory pool (a
 * bucket larger than the default adds what it lacks to the pool, once). data_shape's
 * first dimension must be the bound batch size; label_shape may be NULL (no label).
 * Later calls with the key reuse its executors (the shapes given then are ignored, as
 * upstream). Errors: MXK_ERR_STATE "switch_bucket: not a BucketingModule", "call
 * bind before switching bucket"; MXK_ERR_INVALID_ARGUMENT "switch_bucket: bucket K:
 * the data must have the bound batch size B as its first dimension", "bucket K:
 * parameter 'P' is not a parameter of the default bucket"; sym_gen's
 * ("BucketingModule: sym_gen(K): ..."); the kernel's bind errors ("bucket K: bind:
 * ..."); MXK_ERR_OUT_OF_MEMORY. On failure the current bucket is unchanged.
 */
MXK_API mxk_status mxkt_module_switch_bucket(mxkt_module *m, int64_t bucket_key,
                                             const mxk_shape *data_shape,
                                             const mxk_shape *label_shape);
/** The current bucket's key (bucketing_module.py _curr_bucket_key); 0 for a plain Module. */
MXK_API int64_t mxkt_module_bucket_key(const mxkt_module *m);
/** Buckets bound so far, the default one included (0 for a plain Module or before bind). */
MXK_API uint32_t mxkt_module_num_buckets(const mxkt_module *m);

/**
 * bind(data_shapes, label_shapes, for_training) (module.py): one simple_bind per
 * context on its slice of the batch (data_shape->dims[0] rows) given by
 * mxkt_split_input_slice with equal work loads; the label is bound with
 * `label_shape` when the symbol has the label argument and label_shape is not
 * NULL. for_training: gradient "write" for every parameter ("null" for data and
 * label), else no gradients. Binding twice prints "WARNING: Already bound,
 * ignoring bind()" on stderr and changes nothing (MXK_OK). Errors:
 * MXK_ERR_INVALID_ARGUMENT "Too many slices. Some splits are empty." (batch
 * smaller than the number of contexts), MXK_ERR_OUT_OF_MEMORY "out of memory", the
 * kernel's status of mxk_executor_simple_bind ("bind: ...", e.g. MXK_ERR_SHAPE).
 */
MXK_API mxk_status mxkt_module_bind(mxkt_module *m, const mxk_shape *data_shape,
                                    const mxk_shape *label_shape, int32_t for_training);
/**
 * init_params(initializer, arg_params, aux_params, allow_missing, force_init)
 * (module.py): parameters and aux states visited in sorted name order, set on
 * every context. With `values` (num_given arrays named bare, "arg:NAME" or
 * "aux:NAME"; copied, the caller keeps them; extra names ignored) a given value is
 * copied and a missing one drawn from `init` when allow_missing; with `values`
 * NULL every one is drawn from `init` (mxkt_initializer_fill_desc with the
 * variable's `__init__` attribute: that initializer first, else the name-suffix
 * rules; random values keyed by init->seed); `init` must be
 * non-NULL whenever a value is drawn. A second call without force_init prints
 * "WARNING: Parameters already initialized and force_init=False. init_params call
 * ignored." on stderr and does nothing (MXK_OK). Errors: MXK_ERR_STATE "call bind
 * before initializing the parameters", MXK_ERR_NOT_FOUND "NAME is not presented"
 * (missing without allow_missing), MXK_ERR_OUT_OF_MEMORY "out of memory",
 * mxkt_initializer_fill_desc's MXK_ERR_INVALID_ARGUMENT ("Unknown initialization
 * pattern for NAME. ..." for a parameter no rule covers), the kernel's status of copying
 * a given value ("NAME: ...") or drawn values ("init_params: ..."),
 * MXK_ERR_INTERNAL when the wait after drawing reports an error ("NAME: ...").
 * Parameters visited before a failure keep their new values; a failed first call
 * leaves the parameters marked uninitialised.
 */
MXK_API mxk_status mxkt_module_init_params(mxkt_module *m, const mxkt_initializer *init,
                                           uint32_t num_given, const char *const *names,
                                           mxk_ndarray *const *values, int32_t allow_missing,
                                           int32_t force_init);
/**
 * init_optimizer(kvstore, optimizer) (module.py): copies `opt` (the caller keeps
 * it), sets rescale_grad = 1/batch_size unless `keep_rescale`, allocates
 * zero-filled states (mxkt_optimizer_num_states per parameter and context),
 * creates and initialises the KVStore `kvstore` ("local"/"device"; NULL, "" or
 * "none" → "local") only with several contexts or a dist type (upstream
 * _create_kvstore: none for one device without "dist"). A dist store's init
 * broadcasts rank 0's parameters, which are then pulled into every context; with a
 * "dist" and "_sync" type, rescale_grad is 1/(batch_size * num_workers) unless
 * `keep_rescale` (module.py init_optimizer), so the summed gradients of all
 * workers are averaged over the total batch. The update after the exchange runs
 * on every worker (see docs/distributed.md). A second call prints "WARNING: optimizer already
 * initialized, ignoring..." on stderr and changes nothing (MXK_OK). Errors: MXK_ERR_STATE "bind and
 * init_params before init_optimizer", MXK_ERR_UNSUPPORTED "more than 1024 parameters",
 * mxkt_optimizer_check's (after rescale_grad is set; nothing changed), MXK_ERR_OUT_OF_MEMORY "out
 * of memory", the kernel's status creating a state ("optimizer state:
 * ...") or of mxk_kvstore_create / mxk_kvstore_init
 * ("kvstore: ...", e.g. MXK_ERR_NOT_FOUND for an unknown type).
 */
MXK_API mxk_status mxkt_module_init_optimizer(mxkt_module *m, const char *kvstore,
                                              const mxkt_optimizer *opt, int32_t keep_rescale);
/**
 * init_optimizer with a KVStore object (upstream fit(kvstore=kv) with a store made
 * by mx.kvstore.create, as fit.py does to read kv.rank first): as
 * mxkt_module_init_optimizer with `kv` used whatever the number of contexts. `kv`
 * must hold no keys yet; it is borrowed: the caller frees it after mxkt_module_free.
 * Errors: MXK_ERR_INVALID_ARGUMENT "init_optimizer: the kvstore is NULL", else those
 * of mxkt_module_init_optimizer.
 */
MXK_API mxk_status mxkt_module_init_optimizer_kv(mxkt_module *m, mxk_kvstore *kv,
                                                 const mxkt_optimizer *opt, int32_t keep_rescale);
/**
 * forward(data batch, is_train) (module.py): copies rows [begin, end) of `data`
 * (and `label`, when not NULL and the symbol has the label) into each context's
 * executor and pushes its forward pass. The arrays hold the bound batch and stay
 * the caller's. Asynchronous: errors of the pushed work surface at the next
 * synchronisation (mxkt_module_get_output, waits). Errors: MXK_ERR_STATE "call
 * bind before forward", the kernel's status of the copies or of
 * mxk_executor_forward ("forward: ...", e.g. MXK_ERR_SHAPE for a batch of another
 * shape).
 */
MXK_API mxk_status mxkt_module_forward(mxkt_module *m, mxk_ndarray *data, mxk_ndarray *label,
                                       int32_t is_train);
/**
 * backward() (module.py): pushes every context's backward pass; loss outputs need
 * no head gradients. Errors: MXK_ERR_STATE "re-bind with for_training=True to run
 * backward" (also before bind), the kernel's status of mxk_executor_backward
 * ("backward: ...", e.g. MXK_ERR_INVALID_ARGUMENT for an output that is not a loss).
 */
MXK_API mxk_status mxkt_module_backward(mxkt_module *m);
/**
 * forward_backward(data batch) (base_module.py): mxkt_module_forward with
 * is_train 1, then mxkt_module_backward; their errors.
 */
MXK_API mxk_status mxkt_module_forward_backward(mxkt_module *m, mxk_ndarray *data,
                                                mxk_ndarray *label);
/**
 * update() (module.py, update_on_kvstore False): for each parameter with a
 * gradient, the gradients are summed over contexts through the KVStore (push and
 * pull, priority -index), then mxkt_optimizer_step (one count per parameter) and
 * mxkt_optimizer_apply on every context, so contexts stay identical; the rate is
 * times the parameter's __lr_mult__ and the decay multiplier its __wd_mult__, else
 * mxkt_optimizer_wd_mult (optimizer.py _get_lr / _get_wd). Asynchronous.
 * Errors: MXK_ERR_STATE "call init_optimizer before update" or "several contexts
 * need a kvstore", the kernel's status of the push / pull ("gradient aggregation:
 * ...") or mxkt_optimizer_apply's.
 */
MXK_API mxk_status mxkt_module_update(mxkt_module *m);
/**
 * get_outputs()[0] merged over contexts (module.py, merge_multi_context): copies
 * output 0 into `out` as its rows of *width host floats, context after context
 * (width: product of output 0's dims after the first; rows: the sum of the
 * contexts' first dims, batch_size for a classifier, batch_size * T for a language
 * model's (N*T, V) output; `out` has room for rows * width), waiting for the
 * forward pass. Errors: the kernel's status of mxk_ndarray_copy_to_host
 * ("output: ...", including errors of pending work); not bound:
 * MXK_ERR_INVALID_ARGUMENT ("output: ...: arr is NULL").
 */
MXK_API mxk_status mxkt_module_get_output(mxkt_module *m, float *out, int64_t *width);
/**
 * update_metric(metric, labels) (module.py): output 0 (mxkt_module_get_output,
 * into the module's own buffer) and `labels`, the current batch's host labels
 * (one per output row: a language model's (N, T) labels row-major against its
 * (N*T, V) output), of which the first `n` (at most the output's rows) are used,
 * update each of the `num_metrics` metrics (mxkt_metric_update). Errors: mxkt_module_get_output's.
 */
MXK_API mxk_status mxkt_module_update_metric(mxkt_module *m, mxkt_metric *metrics,
                                             uint32_t num_metrics, const float *labels, int64_t n);

/**
 * Number of parameters (the symbol's arguments minus data and label). Valid from
 * mxkt_module_create on.
 */
MXK_API uint32_t mxkt_module_num_params(const mxkt_module *m);
/**
 * Name of parameter i in list_arguments order, or NULL when i is out of range.
 * Owned by the module, valid until mxkt_module_free.
 */
MXK_API const char *mxkt_module_param_name(const mxkt_module *m, uint32_t i);
/** Number of aux states (list_auxiliary_states). Valid from mxkt_module_create on. */
MXK_API uint32_t mxkt_module_num_aux(const mxkt_module *m);
/**
 * Name of aux state i in list_auxiliary_states order, or NULL when i is out of
 * range. Owned by the module, valid until mxkt_module_free.
 */
MXK_API const char *mxkt_module_aux_name(const mxkt_module *m, uint32_t i);
/**
 * Context 0's array of parameter i (owned by the module's executor, valid until
 * mxkt_module_free; do not free). NULL before bind or when i is out of range.
 * Pending work may write it: read through waiting calls (mxk_ndarray_copy_to_host).
 */
MXK_API mxk_ndarray *mxkt_module_param(const mxkt_module *m, uint32_t i);
/** Context 0's array of aux state i; as mxkt_module_param. */
MXK_API mxk_ndarray *mxkt_module_aux(const mxkt_module *m, uint32_t i);
/**
 * Context c's array of parameter i (to check that contexts agree); as
 * mxkt_module_param, NULL also when c is out of range.
 */
MXK_API mxk_ndarray *mxkt_module_param_on(const mxkt_module *m, uint32_t c, uint32_t i);
/** Number of contexts. */
MXK_API uint32_t mxkt_module_num_ctx(const mxkt_module *m);
/**
 * Context c's executor (a BucketingModule's: the current bucket's) (owned by the
 * module, valid until mxkt_module_free; do not free), e.g. for mxk_executor_node_backend or the
 * profiler (mxk_executor_set_profiling); NULL before bind or when c is out of range.
 */
MXK_API mxk_executor *mxkt_module_executor(const mxkt_module *m, uint32_t c);
/**
 * Re-resolves every context's kernels by the backend preference now
 * (mxk_executor_reresolve on each executor; no MXNet counterpart): the live swap of
 * backends between batches or epochs, keeping the bound arrays, parameters and
 * optimizer states. Set the preference first (mxk_set_backend_preference,
 * mxk_set_op_backend), then call this; it waits for each node's pending work
 * before swapping its kernel. Errors: MXK_ERR_STATE "call bind before reresolve",
 * the kernel's status of mxk_executor_reresolve ("reresolve: ...", e.g.
 * MXK_ERR_NOT_FOUND for a node no kernel serves any more). A failure leaves the
 * contexts before it re-resolved.
 */
MXK_API mxk_status mxkt_module_reresolve(mxkt_module *m);

/**
 * get_params() (module.py; executor_group.py DataParallelExecutorGroup.get_params):
 * new CPU arrays of every parameter ("arg:NAME", list_arguments order) and aux
 * state ("aux:NAME"). With several contexts float32 values are averaged over them
 * on the host (equal to every context's value after an update), which waits for
 * pending work; with one context, or another dtype, they are context 0's values
 * copied asynchronously (mxk_ndarray_data / copy_to_host wait for them). On success
 * *names and *values hold *num entries the caller frees with mxk_ndarray_list_free
 * (as mxk_ndarray_load's). Errors: MXK_ERR_STATE "call bind and init_params before
 * get_params", MXK_ERR_OUT_OF_MEMORY, or the kernel's status creating or copying
 * an array ("get_params: ..."; when averaging, errors of pending work too); nothing is
 * returned then (*num 0, NULL lists).
 */
MXK_API mxk_status mxkt_module_get_params(const mxkt_module *m, uint32_t *num, char ***names,
                                          mxk_ndarray ***values);

/**
 * set_params(arg_params, aux_params, allow_extra) (module.py; executor.py
 * copy_params_from): copies `num` named arrays into every context's parameters /
 * aux states ("arg:x" parameters only, "aux:x" aux states only, bare x both; the
 * caller keeps the arrays), waits for all work (mxk_wait_all) and marks the
 * parameters initialised. Names not given keep their values. Errors: MXK_ERR_STATE
 * "call bind before set_params"; MXK_ERR_NOT_FOUND 'Find name "x" that is not in
 * the arguments' (x without prefix) unless allow_extra; the kernel's status of a
 * copy, unwrapped (e.g. MXK_ERR_SHAPE); the kernel's status of the wait
 * ("set_params: ...", errors of pending work). Arrays before a failure are copied.
 */
MXK_API mxk_status mxkt_module_set_params(mxkt_module *m, uint32_t num, const char *const *names,
                                          mxk_ndarray *const *values, int32_t allow_extra);

/**
 * save_checkpoint(prefix, epoch, save_optimizer_states) (module.py):
 * prefix-symbol.json, prefix-%04d.params (mxkt_module_get_params' arg:/aux: keys,
 * MXNet's NDArray list format) and, when save_states and the optimizer is
 * initialised (else skipped), prefix-%04d.states: mxk's own NDArray list, not
 * upstream's pickled updater states: context 0's "NAME:mom" (SGD) or "NAME:mean",
 * "NAME:var" (Adam) and "__counts__" (float64: num_update, then each parameter's
 * update count). Logs 'Saved checkpoint to "prefix-%04d.params"' and 'Saved
 * optimizer state to "prefix-%04d.states"' to `log` (NULL: none). Every file is
 * written atomically (mxk.h "Files": a temporary file renamed over the target),
 * prefix-symbol.json only when its content changed, so a failed or killed save
 * leaves each file as it was or complete. Errors: MXK_ERR_INVALID_ARGUMENT "the
 * checkpoint prefix is empty", "checkpoint prefix of N bytes: the KIND file name
 * does not fit in 4095 bytes" (names are never cut short); the kernel's status of
 * mxk_symbol_save or mxk_ndarray_save ("save_checkpoint: cannot write 'PATH':
 * <strerror>", "save_checkpoint: cannot write 'PATH': it is a directory, not a
 * regular file", ..., or errors of pending work), mxkt_module_get_params'
 * (MXK_ERR_STATE before bind and init_params), MXK_ERR_OUT_OF_MEMORY "out of
 * memory", the kernel's status creating the counts array. Files written before a
 * failure stay.
 */
MXK_API mxk_status mxkt_module_save_checkpoint(mxkt_module *m, const char *prefix, int32_t epoch,
                                               int32_t save_states, FILE *log);
/**
 * Loads prefix-%04d.params into the bound module through mxkt_module_set_params
 * with allow_extra 0 (module.py load_params; keys "arg:"/"aux:" or bare), after
 * checking that its names are exactly the module's parameters and aux states.
 * Errors: MXK_ERR_INVALID_ARGUMENT "PATH does not match the network: it has N
 * parameters the network lacks: arg:fc1_weight, ... and K more; it lacks M of the
 * network's: conv1_weight, ..." (up to 3 names each; nothing loaded),
 * the prefix errors of mxkt_module_save_checkpoint (MXK_ERR_INVALID_ARGUMENT), the kernel's status
 * of mxk_ndarray_load ("PATH: ...": MXK_ERR_IO, MXK_ERR_FORMAT, MXK_ERR_OUT_OF_MEMORY),
 * MXK_ERR_FORMAT "PATH: a parameter file needs names", mxkt_module_set_params' errors.
 */
MXK_API mxk_status mxkt_module_load_params(mxkt_module *m, const char *prefix, int32_t epoch);
/**
 * Loads prefix-%04d.states (as written by mxkt_module_save_checkpoint) into the
 * optimizer states of every context, then num_update and the update counts from
 * "__counts__" (ignored when absent or not of num_params + 1 entries) and replays
 * the scheduler to num_update; waits for all work. Errors: MXK_ERR_STATE
 * "init_optimizer before loading optimizer states", the prefix errors of
 * mxkt_module_save_checkpoint (MXK_ERR_INVALID_ARGUMENT), the kernel's status of
 * mxk_ndarray_load ("PATH: ...": MXK_ERR_IO, MXK_ERR_FORMAT, ...),
 * MXK_ERR_NOT_FOUND "PATH: no state NAME:KIND", MXK_ERR_FORMAT "PATH: __counts__
 * must be float64", the kernel's status of a copy or of the wait, unwrapped.
 */
MXK_API mxk_status mxkt_module_load_states(mxkt_module *m, const char *prefix, int32_t epoch);

/**
 * Loads prefix-symbol.json (mxk_symbol_load; python/mxnet/model.py
 * load_checkpoint). The caller owns *out (mxk_symbol_free). Errors: the prefix
 * errors of mxkt_module_save_checkpoint (MXK_ERR_INVALID_ARGUMENT), the kernel's
 * status of mxk_symbol_load ("PATH: ...": MXK_ERR_IO, MXK_ERR_OUT_OF_MEMORY,
 * MXK_ERR_FORMAT for malformed JSON, MXK_ERR_NOT_FOUND for an unknown operator).
 * Thread-safe.
 */
MXK_API mxk_status mxkt_load_symbol(const char *prefix, mxk_symbol **out);

/**
 * A batch-end callback (base_module.py fit's batch_end_callback with BatchEndParam):
 * called by mxkt_module_fit on its thread after each batch's update and metric
 * update with the epoch, the batch index in the epoch (from 0), fit's metrics
 * (valid during the call only) and `user`.
 */
typedef void (*mxkt_batch_cb)(int32_t epoch, int64_t nbatch, const mxkt_metric *metrics,
                              uint32_t num_metrics, void *user);

/**
 * Called by mxkt_module_fit on its thread at the end of each epoch, after the
 * metrics log line is written, with the epoch, that line's JSON object (one line,
 * no newline; valid during the call only; see mxkt_fit_options.metrics_log), fit's
 * options with the epoch's last_* fields filled, and `user`.
 */
typedef struct mxkt_fit_options mxkt_fit_options;
typedef void (*mxkt_epoch_cb)(int32_t epoch, const char *json, const mxkt_fit_options *o,
                              void *user);

/** Most metrics of one fit. */
#define MXKT_FIT_MAX_METRICS 8

/** Options of fit (upstream BaseModule.fit arguments). Zero-fill then set. */
struct mxkt_fit_options {
    int32_t begin_epoch, num_epoch; /**< epochs begin_epoch .. num_epoch - 1 */
    const mxkt_metric *metrics;     /**< templates (copied); NULL: accuracy */
    /** 1 to MXKT_FIT_MAX_METRICS (ignored when metrics is NULL) */
    uint32_t num_metrics;
    int32_t disp_batches;    /**< Speedometer frequent; <= 0: none */
    const char *ckpt_prefix; /**< checkpoint every `ckpt_period` epochs when set */
    int32_t ckpt_period;     /**< <= 0 → 1 */
    FILE *log;               /**< log lines (NULL: stderr) */
    /** One JSON line per epoch appended here (NULL: none): {"epoch": E, "train": {NAME: V},
     * "validation": {NAME: V} or null, "lr": rate of the epoch's last update (the
     * scheduler's or fixed lr, before Adam's bias correction),
     * "samples_per_sec": S, "seconds": T}; a value that is not finite is null. Metric
     * values (doubles) and the rate (a float32, as the update operators take it) are
     * written in the shortest form that reads back as the same double / float
     * (mxkt_format_shortest: 0.8775, not 0.87750000000000006), samples_per_sec with
     * one decimal, seconds with three. The log is rewritten whole with the line added
     * (atomically, mxk.h "Files"). */
    const char *metrics_log;
    mxkt_batch_cb batch_cb; /**< NULL: none */
    void *batch_cb_user;    /**< passed to batch_cb */
    mxkt_epoch_cb epoch_cb; /**< NULL: none */
    void *epoch_cb_user;    /**< passed to epoch_cb */
    /** filled by fit: last epoch's metric values (validation only with eval) */
    double last_train[MXKT_FIT_MAX_METRICS], last_val[MXKT_FIT_MAX_METRICS];
    /** filled by fit: last epoch's samples/sec (pad rows included), seconds and the
     * rate of its last update (as the metrics log's "lr") */
    double last_speed, last_seconds, last_lr;
    /** filled by fit: the real (not padded) training examples of the last epoch, and
     * those its validation scored (0 without eval) */
    int64_t last_examples, last_val_examples;
};

/** Where a pass of fit, score or predict stands (mxkt_module_set_progress). */
typedef struct mxkt_progress {
    const char *phase;   /**< "train", "validation" (fit's), "score" or "predict" */
    int32_t epoch;       /**< the epoch of "train" / "validation", else -1 */
    int64_t batch;       /**< batches done in the pass (1 after the first) */
    int64_t num_batches; /**< batches in the pass when the iterator knows, else 0 */
    int64_t samples;     /**< rows done, pad rows included */
    double seconds;      /**< since the pass started */
    const char *metric;  /**< name of the first metric, NULL: none (predict) */
    double value;        /**< its running value (NaN before it counted a row) */
    int32_t done;        /**< 1 in the pass's last call, after its last batch */
} mxkt_progress;

/** A progress callback: called on the pass's thread; `p` is valid during the call. */
typedef void (*mxkt_progress_cb)(const mxkt_progress *p, void *user);

/**
 * Sets the callback that fit, score and predict on `m` call after every batch and
 * once more with done = 1 at the end of each pass (cb NULL: none, the default).
 * Not thread-safe with a pass running on `m`. Cannot fail.
 */
MXK_API void mxkt_module_set_progress(mxkt_module *m, mxkt_progress_cb cb, void *user);

/**
 * Formats `p` as one line of text into buf (cut to `size`, NUL-terminated), e.g.
 * "Epoch[0] train [=====>    ] 300/600 50% 41230 samples/s ETA 0:07 accuracy=0.8123"
 * (80 columns for 600 batches): "Epoch[E] " only with an epoch; the bar of 10
 * cells, i/N and the percentage when num_batches is known, else "batch i";
 * samples/s once seconds > 0; the ETA (M:SS, H:MM:SS from an hour) while 0 <
 * batch < num_batches, from the mean time per batch so far; the metric ("%.4f")
 * when it has a finite value. Returns the length written. Cannot fail;
 * thread-safe.
 */
MXK_API size_t mxkt_progress_format(const mxkt_progress *p, char *buf, size_t size);

/**
 * Writes v into buf in the shortest "%.Ng" form that reads back (strtod) as the
 * same double, or with is_float as the same float32 after rounding v to float
 * (0.1f: "0.1"); "null" when v is not finite (JSON). 24 bytes always suffice.
 * Cannot fail; thread-safe.
 */
MXK_API void mxkt_format_shortest(double v, int is_float, char *buf, size_t size);

/**
 * fit(train, eval) (base_module.py BaseModule.fit; callback.py Speedometer and
 * module_checkpoint): per epoch resets the metrics, runs over `train` from where
 * it stands (a fresh iterator: its start) and resets it at the epoch's end as
 * upstream does, running forward_backward and update on all batch_size rows of each batch (the
 * pad rows of a padded last batch too, as upstream's fit over a padded iterator) and update_metric
 * on its batch_size - pad real rows (the pad rows are never counted), with the Speedometer and
 * batch_cb, logs "Update[N]: Change learning rate to R" when the scheduler
 * changes the rate, "Epoch[E] Train-NAME=V", "Epoch[E] Time cost=T", checkpoints (epoch + 1, with
 * states), scores on `eval` (may be NULL; "Epoch[E] Validation-NAME=V"), appends to metrics_log,
 * calls epoch_cb. The module must be bound, initialised and have its optimizer; the iterators stay
 * the caller's; `opt` is read and its last_* fields written. Errors (fit stops at the first):
 * MXK_ERR_INVALID_ARGUMENT "fit: 1 to 8 metrics, not N" (nothing run), MXK_ERR_INVALID_ARGUMENT
 * "label L of example I in 'SOURCE' is not a class of the output (0 to C-1)" before the batch's
 * update, so no parameter changes (a class metric, an output of C >= 2 values; I counts the epoch's
 * real examples from 0, SOURCE is train->source, the part " in 'SOURCE'" left out when it is
 * empty), MXK_ERR_INVALID_ARGUMENT "fit: epoch E: metric 'NAME' counted no example (the data gave
 * no labelled row)" after an epoch without a labelled example (never a NaN), those of
 * mxkt_iter_reset / mxkt_iter_next / the batch call, mxkt_module_forward_backward,
 * mxkt_module_update (MXK_ERR_STATE "call init_optimizer before update"),
 * mxkt_module_update_metric, the kernel's status reading a label array ("label:
 * ...", e.g. MXK_ERR_UNSUPPORTED off the CPU), the kernel's status when the
 * epoch's final wait reports an error ("fit: ..."), mxkt_module_save_checkpoint's,
 * mxkt_module_score's, the metrics log's: "metrics log: cannot write 'PATH': <strerror>"
 * (MXK_ERR_IO), "metrics log: cannot read 'PATH': it is a directory, not a regular file", ...
 * (the log is appended by reading it and rewriting it whole, atomically).
 */
MXK_API mxk_status mxkt_module_fit(mxkt_module *m, mxkt_iter *train, mxkt_iter *eval,
                                   mxkt_fit_options *opt);
/**
 * score(eval, metrics) (base_module.py BaseModule.score, which updates the metric
 * with the batch's pad rows dropped): resets the metrics and `eval`, runs forward
 * (inference) on each batch and updates the metrics with its labels' first
 * batch_size - pad rows (batches without a label are skipped), so every example
 * of the data is counted once. Errors: MXK_ERR_INVALID_ARGUMENT "label L of
 * example I in 'SOURCE' is not a class of the output (0 to C-1)" (as
 * mxkt_module_fit, SOURCE from eval->source; I is the example's position in the
 * data from 0), MXK_ERR_INVALID_ARGUMENT "score:
 * metric 'NAME' counted no example (the data gave no labelled row)" (never a
 * NaN), those of mxkt_iter_reset / mxkt_iter_next / the batch call,
 * mxkt_module_forward, mxkt_module_update_metric, the kernel's status reading the
 * label array ("label: ...").
 */
MXK_API mxk_status mxkt_module_score(mxkt_module *m, mxkt_iter *eval, mxkt_metric *metrics,
                                     uint32_t num_metrics);
/**
 * The examples (real rows of labelled batches, pad rows excluded) the last
 * mxkt_module_score on `m` counted, also the one fit runs for validation; 0
 * before any. Cannot fail; not thread-safe with a score running on `m`.
 */
MXK_API int64_t mxkt_module_scored_examples(const mxkt_module *m);
/**
 * predict(eval) (base_module.py iter_predict / predict: outputs[0:batch_size-pad],
 * merge_batches): resets `eval`, runs forward (inference, no labels) on each batch
 * and concatenates output 0 with pad rows dropped into a malloc'd host array
 * (*rows x *width floats, row-major; *rows = the data's examples) the caller frees
 * with free(). Errors: MXK_ERR_INVALID_ARGUMENT "predict: the data gave no
 * example", those of mxkt_iter_reset / mxkt_iter_next / the batch call,
 * mxkt_module_forward, mxkt_module_get_output, MXK_ERR_OUT_OF_MEMORY "out of
 * memory"; nothing is returned then.
 */
MXK_API mxk_status mxkt_module_predict(mxkt_module *m, mxkt_iter *eval, float **out, int64_t *rows,
                                       int64_t *width);

/* ------------------------------------------------------------------------- */
/* Networks: MXNet.jl's MNIST MLP and LeNet, the image-classification zoo    */
/* ------------------------------------------------------------------------- */

/** Largest num_classes, num_layers, num_group and image dim of mxkt_net_config. */
#define MXKT_NET_MAX_DIM 65536

/**
 * A network of mxkt_net_create, with the arguments of upstream's get_symbol
 * (example/image-classification/symbols/<network>.py, 1.9.1; train_cifar10.py and
 * train_imagenet.py pass them from --num-layers, --image-shape, ...). Caller-owned
 * plain data; set up with mxkt_net_config_default, then adjust.
 */
typedef struct mxkt_net_config {
    const char *network;    /**< mxkt_net_names(); not copied */
    int32_t num_classes;    /**< classes of the last FullyConnected (10) */
    int32_t num_layers;     /**< resnet/resnext depth (0: 20 for small images, else
                                 50), vgg 11/13/16/19 (0: 11) */
    int64_t image_shape[3]; /**< C,H,W (1,28,28): resnet/resnext/inception-bn pick
                                 their CIFAR-style variant by H as upstream */
    int32_t batch_norm;     /**< vgg: BatchNorm after each convolution */
    int32_t num_group;      /**< resnext: groups of the 3x3 convolutions (32) */
    double multiplier;      /**< mobilenet: alpha (0.25, 0.5, 0.75 or 1); mobilenetv2:
                                 width multiplier (1) */
} mxkt_net_config;

/** Sets `*c` to the defaults above for `network` (not copied). Cannot fail. */
MXK_API void mxkt_net_config_default(mxkt_net_config *c, const char *network);

/** The network names, ", "-separated (a static string). */
MXK_API const char *mxkt_net_names(void);

/**
 * Builds a network through the symbol API with upstream's node names, operators
 * and attributes (so its JSON equals the one upstream's get_symbol writes, and
 * `mxk symbol summary` prints print_summary's parameter counts): "mlp" and
 * "lenet" (julia/examples/mnist/mlp.jl, lenet.jl: below), "resnet" and "resnext" (resnet.py,
 * resnext.py), "vgg" (vgg.py), "alexnet", "googlenet", "inception-bn", "inception-v3", "mobilenet"
 * (mobilenet.py get_symbol, resolution 224) and "mobilenetv2" (mobilenetv2.py). The data variable
 * is "data", the label "softmax_label", the output SoftmaxOutput "softmax". The caller owns *out
 * (mxk_symbol_free). Errors (mxkt_last_error): MXK_ERR_INVALID_ARGUMENT "unknown network 'N' (mlp,
 * ...)", "N: num_classes C is not in [1, 65536]",
 * "N: image_shape C,H,W: each dim must be in [1, 65536]", "N: num_layers L is not in
 * [0, 65536]", "N: num_group G is not in [1, 65536]", "N: multiplier M is not in (0,
 * 16]", upstream's "resnet: no experiments done on num_layers L, you can do it
 * yourself" (also resnext), "vgg: Invalide num_layers L. Possible choices are
 * 11,13,16,19.", "mobilenet: Invalid alpha=M, must be one of 0.25, 0.5, 0.75, 1";
 * the kernel's status of a failing node, recorded as "NODE: ..." (e.g.
 * MXK_ERR_NOT_FOUND when the operators' plugin is not loaded). Thread-safe.
 */
MXK_API mxk_status mxkt_net_create(const mxkt_net_config *c, mxk_symbol **out);

/**
 * The MLP of MXNet.jl's MNIST tutorial (docs/tutorial/mnist.rst): data (batch, 784)
 * → fc1 (128) → relu1 → fc2 (64) → relu2 → fc3 (10) → SoftmaxOutput "softmax"
 * (arguments data, fc1_weight, fc1_bias, ..., softmax_label): mxkt_net_create of
 * "mlp" with the defaults. The caller owns *out (mxk_symbol_free). Errors: the
 * kernel's status of mxk_symbol_variable or mxk_symbol_create, recorded as
 * "LAYER: ..." (e.g. MXK_ERR_NOT_FOUND when the operators' plugin is not loaded).
 * Thread-safe.
 */
MXK_API mxk_status mxkt_net_mlp(mxk_symbol **out);
/**
 * The LeNet of MXNet.jl's examples/mnist/lenet.jl: data (batch, 1, 28, 28) →
 * convolution0 (5x5, 20) → tanh → max pooling0 (2x2, stride 2) → convolution1 (5x5,
 * 50) → tanh → pooling1 (as pooling0) → flatten0 → fullyconnected0 (500) → tanh →
 * fullyconnected1 (10) → SoftmaxOutput "softmax". Ownership, errors and thread
 * safety as mxkt_net_mlp.
 */
MXK_API mxk_status mxkt_net_lenet(mxk_symbol **out);

#ifdef __cplusplus
}
#endif

#endif /* MXK_TRAIN_H */
