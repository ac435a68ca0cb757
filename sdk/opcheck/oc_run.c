/*
 * Running an operator for the test kit: arrays of a run's slots, uploads and
 * downloads, forward and backward with explicit write requests over a fill value,
 * comparisons with tolerances, and reading the instance's inferred slots.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_sdk_half.h"
#include "oc_internal.h"

/** Sets a result's outcome and message. */
void oc_set_result(mxk_opcheck_result *r, int outcome, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    r->outcome = outcome;
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

/** The library's last error, or a fallback naming the status. */
const char *oc_lib_error(mxk_status st) {
    const char *m = mxk_get_last_error();
    return m && m[0] ? m : mxk_status_name(st);
}

/** Creates an array of a slot on the run's device (NULL on failure). */
mxk_ndarray *oc_slot_array(oc_run *r, const oc_slot *s) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_create(&s->shape, s->dtype, r->ctx, &a) != MXK_OK)
        return NULL;
    return a;
}

/** Uploads n doubles into an array of dtype t. */
mxk_status oc_put(mxk_ndarray *a, const oc_slot *s, const double *v) {
    void *raw = malloc(s->bytes ? s->bytes : 1);
    if (raw == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    oc_to_raw(s->dtype, v, s->n, raw);
    mxk_status st = mxk_ndarray_copy_from_host(a, raw, s->bytes);
    free(raw);
    return st;
}

/** Downloads an array: raw bytes into raw (may be NULL) and doubles into v (may be NULL). */
mxk_status oc_get(mxk_ndarray *a, const oc_slot *s, double *v, void *raw) {
    void *buf = raw ? raw : malloc(s->bytes ? s->bytes : 1);
    if (buf == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    mxk_status st = mxk_ndarray_copy_to_host(a, buf, s->bytes);
    if (st == MXK_OK && v)
        oc_from_raw(s->dtype, buf, s->n, v);
    if (buf != raw)
        free(buf);
    return st;
}

/** Uploads the run's inputs into the instance's input arrays. */
mxk_status oc_restore_inputs(oc_run *r) {
    for (uint32_t i = 0; i < r->ni; i++) {
        mxk_status st = oc_put(r->in_arr[i], &r->in[i], r->in_vals[i]);
        if (st != MXK_OK)
            return st;
    }
    return MXK_OK;
}

/** Uploads aux values (vals: aux_vals or aux_fwd). */
mxk_status oc_restore_aux(oc_run *r, double *const *vals) {
    for (uint32_t i = 0; i < r->na; i++) {
        mxk_status st = oc_put(r->aux_arr[i], &r->aux[i], vals[i]);
        if (st != MXK_OK)
            return st;
    }
    return MXK_OK;
}

/** 1 when output j of `outs` is an in-place view of one of `ins` (the in-place run). */
int oc_aliased_out(const oc_run *r, mxk_ndarray *const *ins, mxk_ndarray *const *outs, uint32_t j) {
    return ins != NULL && ins != r->in_arr && outs != r->tmp_out && outs != r->base_out &&
           outs[j] != r->tmp_out[j];
}

/**
 * One forward from the run's inputs and initial aux after mxk_random_seed: inputs
 * `ins` (NULL: the instance's), outputs `outs` pre-filled with `fill` (except an
 * output that is one of the inputs: in place), requests req (NULL: WRITE). Waits.
 */
mxk_status oc_forward(oc_run *r, mxk_ndarray *const *ins, mxk_ndarray *const *outs, double fill,
                      const mxk_op_req *req) {
    mxk_status st = oc_restore_inputs(r);
    if (st == MXK_OK)
        st = oc_restore_aux(r, r->aux_vals);
    for (uint32_t j = 0; st == MXK_OK && j < r->no; j++) {
        if (!oc_aliased_out(r, ins, outs, j))
            st = mxk_ndarray_fill(outs[j], fill);
    }
    if (st == MXK_OK)
        st = mxk_random_seed(r->seed);
    if (st == MXK_OK)
        st = mxk_op_instance_forward(r->inst, r->is_train, ins ? ins : r->in_arr, outs, req,
                                     r->na ? r->aux_arr : NULL);
    if (st == MXK_OK)
        st = mxk_wait_all();
    return st;
}

/**
 * One backward with in_grads pre-filled with `fill` and requests req (NULL: WRITE
 * for inputs with a gradient). og / id / od: the out_grads, in_data, out_data to
 * pass (entries may be NULL). Inputs without a gradient get NULL in_grads. Waits.
 */
mxk_status oc_backward(oc_run *r, mxk_ndarray *const *og, mxk_ndarray *const *id,
                       mxk_ndarray *const *od, double fill, const mxk_op_req *req) {
    mxk_status st = oc_restore_inputs(r);
    if (st == MXK_OK)
        st = oc_restore_aux(r, r->aux_fwd);
    mxk_ndarray *grads[OC_MAX_SLOTS];
    mxk_op_req reqs[OC_MAX_SLOTS];
    for (uint32_t i = 0; st == MXK_OK && i < r->ni; i++) {
        grads[i] = r->grad_in[i] ? r->grad_arr[i] : NULL;
        reqs[i] = !r->grad_in[i] ? MXK_REQ_NULL : req ? req[i] : MXK_REQ_WRITE;
        if (grads[i])
            st = mxk_ndarray_fill(grads[i], fill);
    }
    if (st == MXK_OK)
        st = mxk_random_seed(r->seed);
    if (st == MXK_OK)
        st = mxk_op_instance_backward(r->inst, og, id, od, grads, reqs, r->na ? r->aux_arr : NULL);
    if (st == MXK_OK)
        st = mxk_wait_all();
    return st;
}

/** Reads the gradients of the last backward (inputs with a gradient) into v / raw. */
mxk_status oc_read_grads(oc_run *r, double **v, void **raw) {
    for (uint32_t i = 0; i < r->ni; i++) {
        if (!r->grad_in[i])
            continue;
        mxk_status st = oc_get(r->grad_arr[i], &r->in[i], v ? v[i] : NULL, raw ? raw[i] : NULL);
        if (st != MXK_OK)
            return st;
    }
    return MXK_OK;
}

/** Compares n values; `what` names the tensor for the first failure. */
void oc_cmp_values(oc_cmp *c, const char *what, const double *got, const double *exp, uint64_t n) {
    for (uint64_t k = 0; k < n; k++) {
        double g = got[k], e = exp[k];
        double d = fabs(g - e);
        int ok;
        if (isnan(g) || isnan(e)) {
            ok = isnan(g) && isnan(e);
            d = ok ? 0.0 : INFINITY;
        } else if (isinf(g) || isinf(e)) {
            ok = g == e;
            d = ok ? 0.0 : INFINITY;
        } else {
            ok = d <= c->atol + c->rtol * fmax(fabs(e), fabs(g));
        }
        if (d > c->max_abs)
            c->max_abs = d;
        if (e != 0.0 && d / fabs(e) > c->max_rel)
            c->max_rel = d / fabs(e);
        if (!ok && c->bad++ == 0)
            snprintf(c->first, sizeof c->first, "%s[%llu]: got %.9g, expected %.9g", what,
                     (unsigned long long)k, g, e);
    }
}

/** Copies a comparison's statistics into a result. */
void oc_cmp_to_result(const oc_cmp *c, mxk_opcheck_result *res) {
    if (c->max_abs > res->max_abs_err)
        res->max_abs_err = c->max_abs;
    if (c->max_rel > res->max_rel_err)
        res->max_rel_err = c->max_rel;
}

/** Frees everything a run holds. */
void oc_run_free(oc_run *r) {
    for (uint32_t i = 0; i < OC_MAX_SLOTS; i++) {
        free(r->in_vals[i]);
        free(r->aux_vals[i]);
        free(r->aux_fwd[i]);
        free(r->w[i]);
        free(r->base_outv[i]);
        free(r->base_outraw[i]);
        free(r->base_grad[i]);
        free(r->base_gradraw[i]);
        mxk_ndarray_free(r->in_arr[i]);
        mxk_ndarray_free(r->aux_arr[i]);
        mxk_ndarray_free(r->base_out[i]);
        mxk_ndarray_free(r->og_arr[i]);
        mxk_ndarray_free(r->tmp_out[i]);
        mxk_ndarray_free(r->grad_arr[i]);
    }
    mxk_op_instance_free(r->inst);
    memset(r, 0, sizeof *r);
}

/** Reads one slot kind of the instance into slots[]; returns 0 when a shape or dtype is unknown. */
int oc_read_slots(oc_run *r, int32_t kind, uint32_t n, oc_slot *slots, char *why, size_t why_size) {
    int complete = 1;
    static const char *const kinds[] = {"input", "output", "aux state"};
    for (uint32_t i = 0; i < n; i++) {
        oc_slot *s = &slots[i];
        mxk_op_instance_shape(r->inst, kind, i, &s->shape, &s->dtype);
        s->name = mxk_op_instance_name(r->inst, kind, i);
        if (s->name == NULL)
            s->name = "?";
        s->n = oc_shape_count(&s->shape);
        size_t es = mxk_dtype_size(s->dtype);
        s->bytes = (size_t)s->n * es;
        char sb[96];
        if (complete && s->n == 0) {
            snprintf(why, why_size, "%s '%s' has an unknown shape %s after inference", kinds[kind],
                     s->name, oc_shape_str(&s->shape, sb, sizeof sb));
            complete = 0;
        } else if (complete && (s->dtype < 0 || es == 0)) {
            snprintf(why, why_size, "%s '%s' has an unknown dtype (%d) after inference",
                     kinds[kind], s->name, (int)s->dtype);
            complete = 0;
        } else if (complete && !oc_dtype_ok(s->dtype)) {
            snprintf(why, why_size, "%s '%s' has dtype %s, which the kit cannot convert",
                     kinds[kind], s->name, mxk_dtype_name(s->dtype));
            complete = 0;
        }
    }
    return complete;
}

/** Fills reference args for the callbacks (out: buffers or NULL). */
void oc_ref_args(oc_run *r, mxk_opcheck_ref_args *a, mxk_shape *in_s, mxk_shape *aux_s,
                 mxk_shape *out_s, double *const *out) {
    memset(a, 0, sizeof *a);
    for (uint32_t i = 0; i < r->ni; i++)
        in_s[i] = r->in[i].shape;
    for (uint32_t i = 0; i < r->na; i++)
        aux_s[i] = r->aux[i].shape;
    for (uint32_t j = 0; j < r->nv; j++)
        out_s[j] = r->out[j].shape;
    a->config = r->cfg;
    a->num_in = r->ni;
    a->in_shapes = in_s;
    a->in = (const double *const *)r->in_vals;
    a->num_aux = r->na;
    a->aux_shapes = aux_s;
    a->aux = (const double *const *)r->aux_vals;
    a->num_out = r->nv;
    a->out_shapes = out_s;
    a->out = out;
}
