/*
 * Internals of the operator test kit (sdk/opcheck, not installed): the state of
 * one run and the functions the checks share. Every name here is hidden in
 * libmxk_opcheck (OC_HIDDEN); the public contract is sdk/include/mxk_opcheck.h.
 */
#ifndef MXK_OPCHECK_INTERNAL_H
#define MXK_OPCHECK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mxk_opcheck.h"

/** Keeps a function out of the shared library's exported symbols. */
#define OC_HIDDEN __attribute__((visibility("hidden")))

/** Most arguments, outputs or aux states the kit handles. */
#define OC_MAX_SLOTS 64

/** One tensor slot: shape, dtype, element count. */
typedef struct oc_slot {
    mxk_shape shape;
    int32_t dtype;
    uint64_t n;
    size_t bytes;
    const char *name;
} oc_slot;

/** Everything a run keeps. */
typedef struct oc_run {
    const mxk_opcheck_config *cfg;
    mxk_context ctx;
    mxk_op_instance *inst;
    uint32_t ni, no, nv, na;
    oc_slot in[OC_MAX_SLOTS], out[OC_MAX_SLOTS], aux[OC_MAX_SLOTS];
    double *in_vals[OC_MAX_SLOTS];  /**< the inputs, as the operator sees them */
    double *aux_vals[OC_MAX_SLOTS]; /**< aux at the start of every forward */
    double *aux_fwd[OC_MAX_SLOTS];  /**< aux after the baseline forward (start of backward) */
    double *w[OC_MAX_SLOTS];        /**< projections of the visible outputs = out_grads */
    mxk_ndarray *in_arr[OC_MAX_SLOTS], *aux_arr[OC_MAX_SLOTS];
    mxk_ndarray *base_out[OC_MAX_SLOTS]; /**< baseline forward outputs (out_data) */
    mxk_ndarray *og_arr[OC_MAX_SLOTS];   /**< out_grads (w) */
    mxk_ndarray *tmp_out[OC_MAX_SLOTS];  /**< outputs of other forwards */
    mxk_ndarray *grad_arr[OC_MAX_SLOTS]; /**< in_grads of backward runs */
    double *base_outv[OC_MAX_SLOTS];     /**< baseline outputs, float64 */
    void *base_outraw[OC_MAX_SLOTS];
    double *base_grad[OC_MAX_SLOTS]; /**< baseline gradients (NULL: no gradient) */
    void *base_gradraw[OC_MAX_SLOTS];
    uint8_t need_og[OC_MAX_SLOTS], need_id[OC_MAX_SLOTS], need_od[OC_MAX_SLOTS];
    uint8_t grad_in[OC_MAX_SLOTS]; /**< gradient requested / checked for input i */
    int is_train;
    int has_backward; /**< the kernel has a backward and it ran */
    int loss_op;      /**< backward ignores out_grad */
    char bwd_error[512];
    uint64_t seed;
} oc_run;

/** Running comparison of got vs expected with tolerances. */
typedef struct oc_cmp {
    double rtol, atol;
    double max_abs, max_rel;
    uint64_t bad;    /**< elements out of tolerance */
    char first[320]; /**< description of the first bad element */
} oc_cmp;

/* oc_values.c */
/** Next 64 random bits. */
OC_HIDDEN uint64_t oc_rng_next(uint64_t *s);
/** Uniform double in [0, 1). */
OC_HIDDEN double oc_rng_unit(uint64_t *s);
/** Number of elements of a shape. */
OC_HIDDEN uint64_t oc_shape_count(const mxk_shape *s);
/** Formats a shape "(a,b)". */
OC_HIDDEN const char *oc_shape_str(const mxk_shape *s, char *buf, size_t size);
/** 1 for dtypes the kit converts. */
OC_HIDDEN int oc_dtype_ok(int32_t t);
/** 1 for floating-point dtypes. */
OC_HIDDEN int oc_dtype_float(int32_t t);
/** Value v as the dtype stores it (rounded / truncated), back in double. */
OC_HIDDEN double oc_dtype_round(int32_t t, double v);
/** Converts n doubles into raw elements of dtype t. */
OC_HIDDEN void oc_to_raw(int32_t t, const double *v, uint64_t n, void *raw);
/** Converts n raw elements of dtype t into doubles. */
OC_HIDDEN void oc_from_raw(int32_t t, const void *raw, uint64_t n, double *v);
/** The spec of input i (a zero spec when none given). */
OC_HIDDEN mxk_opcheck_input_spec oc_input_spec(const mxk_opcheck_config *cfg, uint32_t i);
/** Draws one value of input spec s for dtype t. */
OC_HIDDEN double oc_draw(uint64_t *rng, const mxk_opcheck_input_spec *s, int32_t t);

/* oc_run.c */
/** Sets a result's outcome and message. */
OC_HIDDEN void oc_set_result(mxk_opcheck_result *r, int outcome, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** The library's last error, or a fallback naming the status. */
OC_HIDDEN const char *oc_lib_error(mxk_status st);
/** Creates an array of a slot on the run's device (NULL on failure). */
OC_HIDDEN mxk_ndarray *oc_slot_array(oc_run *r, const oc_slot *s);
/** Uploads n doubles into an array of dtype t. */
OC_HIDDEN mxk_status oc_put(mxk_ndarray *a, const oc_slot *s, const double *v);
/** Downloads an array: raw bytes into raw (may be NULL) and doubles into v (may be NULL). */
OC_HIDDEN mxk_status oc_get(mxk_ndarray *a, const oc_slot *s, double *v, void *raw);
/** Uploads the run's inputs into the instance's input arrays. */
OC_HIDDEN mxk_status oc_restore_inputs(oc_run *r);
/** Uploads aux values (vals: aux_vals or aux_fwd). */
OC_HIDDEN mxk_status oc_restore_aux(oc_run *r, double *const *vals);
/** 1 when output j of `outs` is an in-place view of one of `ins` (the in-place run). */
OC_HIDDEN int oc_aliased_out(const oc_run *r, mxk_ndarray *const *ins, mxk_ndarray *const *outs,
                             uint32_t j);
/**
 * One forward from the run's inputs and initial aux after mxk_random_seed: inputs
 * `ins` (NULL: the instance's), outputs `outs` pre-filled with `fill` (except an
 * output that is one of the inputs: in place), requests req (NULL: WRITE). Waits.
 */
OC_HIDDEN mxk_status oc_forward(oc_run *r, mxk_ndarray *const *ins, mxk_ndarray *const *outs,
                                double fill, const mxk_op_req *req);
/**
 * One backward with in_grads pre-filled with `fill` and requests req (NULL: WRITE
 * for inputs with a gradient). og / id / od: the out_grads, in_data, out_data to
 * pass (entries may be NULL). Inputs without a gradient get NULL in_grads. Waits.
 */
OC_HIDDEN mxk_status oc_backward(oc_run *r, mxk_ndarray *const *og, mxk_ndarray *const *id,
                                 mxk_ndarray *const *od, double fill, const mxk_op_req *req);
/** Reads the gradients of the last backward (inputs with a gradient) into v / raw. */
OC_HIDDEN mxk_status oc_read_grads(oc_run *r, double **v, void **raw);
/** Compares n values; `what` names the tensor for the first failure. */
OC_HIDDEN void oc_cmp_values(oc_cmp *c, const char *what, const double *got, const double *exp,
                             uint64_t n);
/** Copies a comparison's statistics into a result. */
OC_HIDDEN void oc_cmp_to_result(const oc_cmp *c, mxk_opcheck_result *res);
/** Frees everything a run holds. */
OC_HIDDEN void oc_run_free(oc_run *r);
/** Reads one slot kind of the instance into slots[]; returns 0 when a shape or dtype is unknown. */
OC_HIDDEN int oc_read_slots(oc_run *r, int32_t kind, uint32_t n, oc_slot *slots, char *why,
                            size_t why_size);
/** Fills reference args for the callbacks (out: buffers or NULL). */
OC_HIDDEN void oc_ref_args(oc_run *r, mxk_opcheck_ref_args *a, mxk_shape *in_s, mxk_shape *aux_s,
                           mxk_shape *out_s, double *const *out);

/* check_shape_type.c */
/** "shape_type": completeness, the references, and re-inference from the inferred inputs. */
OC_HIDDEN void oc_check_shape_type(oc_run *r, mxk_opcheck_result *res);

/* check_forward.c */
/** "forward": visible outputs against the float64 reference. */
OC_HIDDEN void oc_check_forward(oc_run *r, mxk_opcheck_result *res);

/* check_backward.c */
/** "backward": against finite differences (or the implicit loss, or consistency). */
OC_HIDDEN void oc_check_backward(oc_run *r, mxk_opcheck_result *res);

/* check_forward_req.c */
/** "forward_req": WRITE over 5 and INPLACE for the listed pairs equal the baseline. */
OC_HIDDEN void oc_check_forward_req(oc_run *r, mxk_opcheck_result *res);

/* check_backward_req.c */
/** "backward_req": WRITE / ADD / NULL over 5 and a mixed list. */
OC_HIDDEN void oc_check_backward_req(oc_run *r, mxk_opcheck_result *res);

/* check_dependency.c */
/** "dependency": poisoned and omitted undeclared arrays change nothing. */
OC_HIDDEN void oc_check_dependency(oc_run *r, mxk_opcheck_result *res);

/* check_determinism.c */
/** "determinism": two runs after the same seed are bit-identical. */
OC_HIDDEN void oc_check_determinism(oc_run *r, mxk_opcheck_result *res);

#endif /* MXK_OPCHECK_INTERNAL_H */
