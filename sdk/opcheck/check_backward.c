/*
 * The "backward" check of the operator test kit: gradients against float64
 * central finite differences of a random projection of the outputs, of the
 * caller's implicit loss, or (loss operators) consistency (sdk/include/mxk_opcheck.h;
 * MXNet's python/mxnet/test_utils.py check_numeric_gradient).
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_sdk_half.h"
#include "oc_internal.h"

/** The projected loss sum_k <w_k, y_k> of the visible outputs in tmp_out. */
static mxk_status projected_loss(oc_run *r, double *loss, double *buf) {
    double l = 0.0;
    for (uint32_t j = 0; j < r->nv; j++) {
        mxk_status st = oc_get(r->tmp_out[j], &r->out[j], buf, NULL);
        if (st != MXK_OK)
            return st;
        for (uint64_t k = 0; k < r->out[j].n; k++)
            l += r->w[j][k] * buf[k];
    }
    *loss = l;
    return MXK_OK;
}

/** The gradient of the caller's implicit loss by float64 central differences. */
static int loss_gradient(oc_run *r, double **num) {
    const mxk_opcheck_config *cfg = r->cfg;
    mxk_shape in_s[OC_MAX_SLOTS], aux_s[OC_MAX_SLOTS], out_s[OC_MAX_SLOTS];
    mxk_opcheck_ref_args a;
    oc_ref_args(r, &a, in_s, aux_s, out_s, NULL);
    for (uint32_t i = 0; i < r->ni; i++) {
        if (!r->grad_in[i])
            continue;
        for (uint64_t k = 0; k < r->in[i].n; k++) {
            double x = r->in_vals[i][k], h = 1e-6 * fmax(1.0, fabs(x)), lp = 0, lm = 0;
            r->in_vals[i][k] = x + h;
            int bad = cfg->loss_fn(cfg->user, &a, &lp);
            r->in_vals[i][k] = x - h;
            bad |= cfg->loss_fn(cfg->user, &a, &lm);
            r->in_vals[i][k] = x;
            if (bad)
                return -1;
            num[i][k] = (lp - lm) / (2 * h);
        }
    }
    return 0;
}

/** "backward": against finite differences (or the implicit loss, or consistency). */
void oc_check_backward(oc_run *r, mxk_opcheck_result *res) {
    const mxk_opcheck_config *cfg = r->cfg;
    if (!r->has_backward) {
        oc_set_result(res, MXK_OPCHECK_SKIP, "%s", r->bwd_error);
        return;
    }
    uint32_t ngrad = 0;
    for (uint32_t i = 0; i < r->ni; i++)
        ngrad += r->grad_in[i];
    if (ngrad == 0) {
        oc_set_result(res, MXK_OPCHECK_SKIP, "no input with a gradient to check");
        return;
    }
    /* Gradients must be finite. */
    for (uint32_t i = 0; i < r->ni; i++)
        for (uint64_t k = 0; r->grad_in[i] && k < r->in[i].n; k++)
            if (!isfinite(r->base_grad[i][k])) {
                oc_set_result(res, MXK_OPCHECK_FAIL, "gradient of '%s'[%llu] is %g", r->in[i].name,
                              (unsigned long long)k, r->base_grad[i][k]);
                return;
            }
    double *num[OC_MAX_SLOTS] = {0};
    double *buf = NULL;
    uint64_t maxn = 1;
    for (uint32_t j = 0; j < r->nv; j++)
        maxn = r->out[j].n > maxn ? r->out[j].n : maxn;
    int oom = (buf = malloc(maxn * sizeof(double))) == NULL;
    for (uint32_t i = 0; i < r->ni; i++)
        if (r->grad_in[i])
            oom |= (num[i] = calloc(r->in[i].n, sizeof(double))) == NULL;
    if (oom) {
        oc_set_result(res, MXK_OPCHECK_FAIL, "out of memory");
        goto done;
    }
    const char *how;
    uint64_t kinks = 0;
    if (r->loss_op && cfg->loss_fn == NULL) {
        /* Consistency only: out_grad must not matter, results are finite (checked). */
        mxk_ndarray *og2[OC_MAX_SLOTS] = {0};
        mxk_status st = MXK_OK;
        for (uint32_t j = 0; j < r->nv && st == MXK_OK; j++) {
            og2[j] = oc_slot_array(r, &r->out[j]);
            st = og2[j] ? mxk_ndarray_fill(og2[j], 3.0) : MXK_ERR_OUT_OF_MEMORY;
        }
        if (st == MXK_OK)
            st = oc_backward(r, og2, r->in_arr, r->base_out, NAN, NULL);
        if (st == MXK_OK)
            st = oc_read_grads(r, num, NULL);
        for (uint32_t j = 0; j < r->nv; j++)
            mxk_ndarray_free(og2[j]);
        if (st != MXK_OK) {
            oc_set_result(res, MXK_OPCHECK_FAIL, "backward failed: %s", oc_lib_error(st));
            goto done;
        }
        oc_cmp c = {.rtol = 0, .atol = 0};
        for (uint32_t i = 0; i < r->ni; i++)
            if (r->grad_in[i])
                oc_cmp_values(&c, r->in[i].name, num[i], r->base_grad[i], r->in[i].n);
        oc_cmp_to_result(&c, res);
        if (c.bad)
            oc_set_result(res, MXK_OPCHECK_FAIL,
                          "loss operator: the gradient changes with out_grad, which it does not "
                          "declare; %s",
                          c.first);
        else
            oc_set_result(res, MXK_OPCHECK_PASS,
                          "loss operator without an implicit loss given: checked for consistency "
                          "only (finite, independent of out_grad)");
        goto done;
    }
    if (r->loss_op) {
        if (loss_gradient(r, num) != 0) {
            oc_set_result(res, MXK_OPCHECK_FAIL, "the implicit loss function failed");
            goto done;
        }
        how = "the gradient of the implicit loss (float64 central differences)";
    } else {
        /* L0: the loss at the inputs themselves, to spot kinks (one-sided differences
         * that disagree: max, relu, abs near a tie or zero); such elements are skipped. */
        double l0 = 0.0;
        for (uint32_t j = 0; j < r->nv; j++)
            for (uint64_t k = 0; k < r->out[j].n; k++)
                l0 += r->w[j][k] * r->base_outv[j][k];
        for (uint32_t i = 0; i < r->ni; i++) {
            if (!r->grad_in[i])
                continue;
            for (uint64_t k = 0; k < r->in[i].n; k++) {
                double x = r->in_vals[i][k], h = cfg->fd_step;
                double xp = oc_dtype_round(r->in[i].dtype, x + h);
                double xm = oc_dtype_round(r->in[i].dtype, x - h);
                double lp = 0, lm = 0;
                r->in_vals[i][k] = xp;
                mxk_status st = oc_forward(r, NULL, r->tmp_out, NAN, NULL);
                if (st == MXK_OK)
                    st = projected_loss(r, &lp, buf);
                r->in_vals[i][k] = xm;
                if (st == MXK_OK)
                    st = oc_forward(r, NULL, r->tmp_out, NAN, NULL);
                if (st == MXK_OK)
                    st = projected_loss(r, &lm, buf);
                r->in_vals[i][k] = x;
                if (st != MXK_OK) {
                    oc_set_result(res, MXK_OPCHECK_FAIL, "forward failed: %s", oc_lib_error(st));
                    goto done;
                }
                num[i][k] = (lp - lm) / (xp - xm);
                double dp = (lp - l0) / (xp - x), dm = (l0 - lm) / (x - xm);
                double tol = 2.0 * (cfg->grad_atol + cfg->grad_rtol * fmax(fabs(dp), fabs(dm)));
                if (xp != x && xm != x && fabs(dp - dm) > tol) {
                    num[i][k] = r->base_grad[i][k]; /* a kink: not comparable */
                    kinks++;
                }
            }
        }
        how = "float64 central differences of a random projection of the outputs";
    }
    oc_cmp c = {.rtol = cfg->grad_rtol, .atol = cfg->grad_atol};
    for (uint32_t i = 0; i < r->ni; i++) {
        if (!r->grad_in[i])
            continue;
        char what[160];
        snprintf(what, sizeof what, "gradient of '%s'", r->in[i].name);
        oc_cmp_values(&c, what, r->base_grad[i], num[i], r->in[i].n);
    }
    oc_cmp_to_result(&c, res);
    if (c.bad)
        oc_set_result(res, MXK_OPCHECK_FAIL, "%llu elements differ from %s; %s",
                      (unsigned long long)c.bad, how, c.first);
    else
        oc_set_result(res, MXK_OPCHECK_PASS, "matches %s (rtol %g atol %g)", how, cfg->grad_rtol,
                      cfg->grad_atol);
    if (kinks) {
        size_t len = strlen(res->message);
        if (len < sizeof res->message)
            snprintf(res->message + len, sizeof res->message - len,
                     "; %llu element%s at a kink (one-sided differences disagree) not compared",
                     (unsigned long long)kinks, kinks == 1 ? "" : "s");
    }
done:
    free(buf);
    for (uint32_t i = 0; i < r->ni; i++)
        free(num[i]);
}
