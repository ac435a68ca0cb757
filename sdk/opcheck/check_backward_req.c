/*
 * The "backward_req" check of the operator test kit: WRITE overwrites, ADD gives
 * 5 + grad, NULL leaves 5, also mixed per input (sdk/include/mxk_opcheck.h;
 * MXNet's OpReqType kWriteTo / kAddTo / kNullOp).
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_sdk_half.h"
#include "oc_internal.h"

/** Request name. */
static const char *req_name(int32_t q) {
    static const char *const names[] = {"NULL", "WRITE", "INPLACE", "ADD"};
    return q >= 0 && q <= 3 ? names[q] : "?";
}

/** Compares the gradients of the last backward run under requests req (pre-filled 5). */
static mxk_status cmp_req_grads(oc_run *r, const mxk_op_req *req, oc_cmp *c, double *v,
                                double *expect) {
    for (uint32_t i = 0; i < r->ni; i++) {
        if (!r->grad_in[i])
            continue;
        mxk_status st = oc_get(r->grad_arr[i], &r->in[i], v, NULL);
        if (st != MXK_OK)
            return st;
        for (uint64_t k = 0; k < r->in[i].n; k++)
            expect[k] = req[i] == MXK_REQ_NULL ? 5.0
                        : req[i] == MXK_REQ_ADD
                            ? oc_dtype_round(r->in[i].dtype, 5.0 + r->base_grad[i][k])
                            : r->base_grad[i][k];
        char what[200];
        snprintf(what, sizeof what, "%s (pre-filled 5): gradient of '%s'", req_name(req[i]),
                 r->in[i].name);
        if (req[i] == MXK_REQ_NULL) {
            oc_cmp exact = {.rtol = 0, .atol = 0};
            oc_cmp_values(&exact, what, v, expect, r->in[i].n);
            if (exact.bad && c->bad++ == 0)
                memcpy(c->first, exact.first, sizeof c->first);
            c->max_abs = fmax(c->max_abs, exact.max_abs);
        } else {
            oc_cmp_values(c, what, v, expect, r->in[i].n);
        }
    }
    return MXK_OK;
}

/** "backward_req": WRITE / ADD / NULL over 5 and a mixed list. */
void oc_check_backward_req(oc_run *r, mxk_opcheck_result *res) {
    const mxk_opcheck_config *cfg = r->cfg;
    if (!r->has_backward) {
        oc_set_result(res, MXK_OPCHECK_SKIP, "%s", r->bwd_error);
        return;
    }
    uint32_t ngrad = 0;
    uint64_t maxn = 1;
    for (uint32_t i = 0; i < r->ni; i++) {
        ngrad += r->grad_in[i];
        maxn = r->in[i].n > maxn ? r->in[i].n : maxn;
    }
    if (ngrad == 0) {
        oc_set_result(res, MXK_OPCHECK_SKIP, "no input with a gradient");
        return;
    }
    double *v = malloc(maxn * sizeof(double)), *e = malloc(maxn * sizeof(double));
    if (v == NULL || e == NULL) {
        free(v);
        free(e);
        oc_set_result(res, MXK_OPCHECK_FAIL, "out of memory");
        return;
    }
    oc_cmp c = {.rtol = cfg->req_rtol, .atol = cfg->req_atol};
    mxk_op_req reqs[4][OC_MAX_SLOTS];
    int nruns = ngrad > 1 ? 4 : 3;
    for (uint32_t i = 0; i < r->ni; i++) {
        reqs[0][i] = MXK_REQ_WRITE;
        reqs[1][i] = MXK_REQ_ADD;
        reqs[2][i] = MXK_REQ_NULL;
        static const int32_t cycle[3] = {MXK_REQ_ADD, MXK_REQ_NULL, MXK_REQ_WRITE};
        reqs[3][i] = cycle[i % 3];
    }
    mxk_status st = MXK_OK;
    for (int run = 0; run < nruns && st == MXK_OK && !c.bad; run++) {
        st = oc_backward(r, r->og_arr, r->in_arr, r->base_out, 5.0, reqs[run]);
        if (st == MXK_OK)
            st = cmp_req_grads(r, reqs[run], &c, v, e);
    }
    free(v);
    free(e);
    oc_cmp_to_result(&c, res);
    if (st != MXK_OK)
        oc_set_result(res, MXK_OPCHECK_FAIL, "backward failed: %s", oc_lib_error(st));
    else if (c.bad)
        oc_set_result(res, MXK_OPCHECK_FAIL, "%s", c.first);
    else
        oc_set_result(res, MXK_OPCHECK_PASS,
                      "WRITE overwrites, ADD accumulates (5 + grad), NULL leaves 5%s",
                      nruns == 4 ? ", mixed requests too" : "");
}
