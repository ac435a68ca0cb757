/*
 * mxk_opcheck: the operator test kit of the mxk SDK (library mxk_opcheck, CMake
 * target mxk::opcheck; links libmxk).
 *
 * Given an operator name, string attributes, input shapes, a device and optionally
 * a backend, mxk_opcheck_run() builds an operator instance through the public API
 * (mxk_op_instance_*) and runs these checks, each giving one mxk_opcheck_result:
 *
 *   "shape_type"   shape and type inference is complete (every input, output and
 *                  aux shape and dtype known); outputs match ref_out_shapes /
 *                  ref_out_types when given; creating the instance again with every
 *                  inferred input shape gives the same outputs.
 *   "forward"      forward (visible outputs) against the caller's float64 reference
 *                  function (skipped without one).
 *   "backward"     backward against float64 central finite differences of the scalar
 *                  loss L = sum_k <w_k, y_k> over the visible outputs y_k (w_k random,
 *                  fixed seed; w_k are the out_grads). Elements where the two one-sided
 *                  differences disagree by more than twice the tolerance sit on a kink
 *                  (max, relu, abs at a tie or zero) and are not compared (the message
 *                  counts them). Operators without a backward
 *                  kernel are skipped with a note. Loss operators, whose backward
 *                  ignores out_grad (no out_grad declared as a backward dependency,
 *                  or MXK_OPCHECK_LOSS_OP), are checked against finite differences of
 *                  the caller's implicit loss (loss_fn) when given, else for
 *                  consistency only (finite, independent of out_grad).
 *   "forward_req"  forward WRITE over outputs pre-filled with NaN and with 5 gives the
 *                  same result; INPLACE (the output is the same array as the input)
 *                  for the pairs the caller lists in `inplace` gives the WRITE result.
 *   "backward_req" backward WRITE (pre-filled 5: overwritten), ADD (pre-filled 5:
 *                  5 + grad), NULL (stays 5), and a mixed request list.
 *   "dependency"   backward with every array not declared by the operator's backward
 *                  dependency NaN-filled ("poisoned"), and with them omitted (NULL),
 *                  equals the run with every array given (bit for bit); the
 *                  omitted run only after the poisoned one passed. A failure
 *                  names the undeclared arrays that changed the result.
 *   "determinism"  two forward+backward runs after the same mxk_random_seed give
 *                  bit-identical outputs and gradients.
 *
 * Inputs are drawn uniformly from a range (default [-1, 1)) by the kit's own
 * generator seeded from `seed`, per input configurable (integer values for labels
 * and indices, no gradient check for them, margins around kinks). Aux states are
 * drawn from [aux_low, aux_high) (default [0.5, 1.5): valid moving variances), and
 * every run starts from the same inputs and aux values (the operator may mutate
 * them). Without input specs, arguments whose name ends in "label" get no gradient
 * check. Before every forward the kit calls mxk_random_seed(seed), so operators that
 * draw random numbers (Dropout in training) see the same stream in every run.
 *
 * The library must be initialised (mxk_init) with the operator's plugin and a
 * device backend loaded. The kit is not thread-safe with respect to the global
 * settings it touches: mxk_random_seed, and mxk_set_op_backend(op, backend) while
 * a run with `backend` set lasts (the override is cleared afterwards).
 *
 * Errors: mxk_opcheck_run returns MXK_OK when the checks ran (whether they passed
 * or not: see mxk_opcheck_report_failed); otherwise a status and
 * mxk_opcheck_last_error() says what was wrong (unknown operator, bad attribute,
 * wrong number of shapes, missing backend, ...). Never crashes on bad input.
 */
#ifndef MXK_OPCHECK_H
#define MXK_OPCHECK_H

#include <stdio.h>

#include "mxk.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Outcome of one check. */
typedef enum mxk_opcheck_outcome {
    MXK_OPCHECK_PASS = 0, /**< the check ran and passed */
    MXK_OPCHECK_FAIL = 1, /**< the check ran and found a problem (message says what) */
    MXK_OPCHECK_SKIP = 2  /**< not applicable or not requested (message says why) */
} mxk_opcheck_outcome;

/** Number of checks of a run (the order of mxk_opcheck_report.results). */
#define MXK_OPCHECK_NUM_CHECKS 7
/** Capacity of mxk_opcheck_result.message. */
#define MXK_OPCHECK_MESSAGE_MAX 512

/** The result of one check. */
typedef struct mxk_opcheck_result {
    const char *name;   /**< "shape_type", "forward", ... (static string) */
    int32_t outcome;    /**< mxk_opcheck_outcome */
    double max_abs_err; /**< largest |got - expected| compared (0 if none) */
    double max_rel_err; /**< largest |got - expected| / |expected| (expected != 0) */
    char message[MXK_OPCHECK_MESSAGE_MAX]; /**< what was checked or what failed / why skipped */
} mxk_opcheck_result;

/** What mxk_opcheck_run produced. */
typedef struct mxk_opcheck_report {
    char op[128];         /**< operator name */
    char backend[64];     /**< backend whose kernel ran ("" if the instance was not created) */
    uint32_t num_results; /**< MXK_OPCHECK_NUM_CHECKS after a run */
    mxk_opcheck_result results[MXK_OPCHECK_NUM_CHECKS]; /**< in the order listed above */
} mxk_opcheck_report;

/**
 * What the float64 callbacks get: the inputs as the operator saw them (values
 * converted to double), and, for forward_ref, room for the visible outputs in the
 * inferred shapes (row-major, one buffer per visible output, zero-filled).
 */
typedef struct mxk_opcheck_ref_args {
    const struct mxk_opcheck_config *config; /**< the run's configuration (attributes etc.) */
    uint32_t num_in;                         /**< number of arguments */
    const mxk_shape *in_shapes;              /**< inferred argument shapes */
    const double *const *in;                 /**< argument values */
    uint32_t num_aux;                        /**< number of aux states */
    const mxk_shape *aux_shapes;             /**< aux shapes */
    const double *const *aux;                /**< aux values at the start of the run */
    uint32_t num_out;                        /**< number of visible outputs */
    const mxk_shape *out_shapes;             /**< inferred visible output shapes */
    double *const *out;                      /**< forward_ref writes here; NULL for loss_fn */
} mxk_opcheck_ref_args;

/**
 * A float64 reference forward: fills args->out from args->in. Returns 0 on success,
 * non-zero when it cannot compute (the "forward" check then fails saying so).
 */
typedef int (*mxk_opcheck_forward_fn)(void *user, const mxk_opcheck_ref_args *args);

/**
 * The implicit loss of a loss operator (SoftmaxOutput: -sum log softmax(x)[label],
 * LinearRegressionOutput: sum (x - label)^2 / 2, scaled as the operator scales its
 * gradient), a float64 function of the inputs written to *loss. Its gradient (by
 * float64 central differences) is what the operator's backward must produce.
 * Returns 0 on success.
 */
typedef int (*mxk_opcheck_loss_fn)(void *user, const mxk_opcheck_ref_args *args, double *loss);

/** How the values of one argument are drawn and checked. */
typedef struct mxk_opcheck_input_spec {
    double low, high;   /**< uniform in [low, high); both 0: the config's low/high */
    int32_t integer;    /**< 1: floor of the draw (labels, indices: use low 0, high K) */
    int32_t no_grad;    /**< 1: no gradient requested or checked (labels, indices) */
    double kink_margin; /**< > 0: draws closer than this to a multiple of 0.5 are redrawn */
} mxk_opcheck_input_spec;

/** Flags of mxk_opcheck_config.flags. */
enum {
    MXK_OPCHECK_LOSS_OP = 1,        /**< backward ignores out_grad even if it is declared */
    MXK_OPCHECK_NO_BACKWARD = 2,    /**< skip the backward-based checks (non-differentiable op) */
    MXK_OPCHECK_NO_DETERMINISM = 4, /**< skip "determinism" (operators documented as racy) */
    MXK_OPCHECK_INFERENCE = 8       /**< forward with is_train 0 (default: training mode) */
};

/** Everything a run needs. Initialise with mxk_opcheck_config_init, then set fields. */
typedef struct mxk_opcheck_config {
    uint32_t struct_size; /**< sizeof(mxk_opcheck_config) */
    const char *op;       /**< operator name (required) */
    uint32_t num_attrs;   /**< attribute pairs */
    const char *const *keys, *const *vals;
    uint32_t num_inputs;        /**< must equal the operator's number of arguments */
    const mxk_shape *in_shapes; /**< one per argument; ndim 0: inferred (weights) */
    const int32_t *in_types;    /**< one per argument, or NULL: float32 */
    mxk_context ctx;            /**< device (default cpu 0) */
    const char *backend;        /**< NULL: by preference; else force this backend for `op` */
    uint64_t seed;              /**< inputs, projections and mxk_random_seed (default 0) */
    double low, high;           /**< default input range (default -1, 1) */
    double aux_low, aux_high;   /**< aux state range (default 0.5, 1.5) */
    const mxk_opcheck_input_spec *inputs; /**< NULL or num_inputs specs */
    double fd_step;                       /**< central difference step (default 1e-3) */
    double grad_rtol, grad_atol;          /**< gradient tolerances (default 1e-2, 1e-3) */
    double fwd_rtol, fwd_atol;          /**< forward-vs-reference tolerances (default 1e-4, 1e-5) */
    double req_rtol, req_atol;          /**< ADD and in-place tolerances (default 1e-5, 1e-5) */
    uint32_t flags;                     /**< MXK_OPCHECK_* flags */
    uint32_t num_ref_out;               /**< entries of ref_out_shapes / ref_out_types (visible) */
    const mxk_shape *ref_out_shapes;    /**< expected visible output shapes, or NULL */
    const int32_t *ref_out_types;       /**< expected visible output dtypes, or NULL */
    mxk_opcheck_forward_fn forward_ref; /**< float64 reference forward, or NULL */
    mxk_opcheck_loss_fn loss_fn;        /**< implicit loss of a loss operator, or NULL */
    void *user;                         /**< passed to the callbacks */
    uint32_t num_inplace;               /**< pairs in `inplace` */
    const uint32_t *inplace;            /**< 2*num_inplace entries: input i, output j */
} mxk_opcheck_config;

/** Zero-fills *cfg and sets struct_size and the defaults documented above. */
MXK_API void mxk_opcheck_config_init(mxk_opcheck_config *cfg);

/**
 * Runs every check on cfg->op and fills *report (always fully initialised, also on
 * error: then results hold what ran before the error). Returns MXK_OK when the checks
 * ran, or the error (MXK_ERR_NOT_FOUND unknown operator or backend,
 * MXK_ERR_INVALID_ARGUMENT bad attributes / wrong number of shapes / bad config,
 * MXK_ERR_SHAPE inconsistent shapes, ...) with mxk_opcheck_last_error() set.
 */
MXK_API mxk_status mxk_opcheck_run(const mxk_opcheck_config *cfg, mxk_opcheck_report *report);

/**
 * The calling thread's last error message: an alias of mxk_get_last_error() (mxk.h),
 * libmxk's one error channel, where mxk_opcheck_run records its messages
 * (mxk_set_error). Valid until the thread's next failing call of mxk or the kit; not
 * cleared by successful calls. Never NULL.
 */
MXK_API const char *mxk_opcheck_last_error(void);

/** Number of results with outcome MXK_OPCHECK_FAIL. */
MXK_API uint32_t mxk_opcheck_report_failed(const mxk_opcheck_report *report);

/** "pass", "FAIL" or "skip". */
MXK_API const char *mxk_opcheck_outcome_name(int32_t outcome);

/**
 * Prints one line per check: "  name  PASS|FAIL|skip  max_abs max_rel  message",
 * after a header line with the operator and backend.
 */
MXK_API void mxk_opcheck_report_print(FILE *f, const mxk_opcheck_report *report);

/**
 * Parses "d1,d2,..." (optionally in parentheses; "" or "()" or "0": unknown, ndim 0)
 * into *shape. Returns 1 on success, 0 on a malformed string, a zero dimension or
 * more than MXK_MAX_NDIM dims.
 */
MXK_API int mxk_opcheck_parse_shape(const char *text, mxk_shape *shape);

#ifdef __cplusplus
}
#endif

#endif /* MXK_OPCHECK_H */
