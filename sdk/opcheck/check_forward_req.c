/*
 * The "forward_req" check of the operator test kit: forward with WRITE over NaN
 * and over 5 agree, and in place for the configured input/output pairs
 * (sdk/include/mxk_opcheck.h; MXNet's OpReqType kWriteTo / kWriteInplace).
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_sdk_half.h"
#include "oc_internal.h"

/** "forward_req": WRITE over 5 and INPLACE for the listed pairs equal the baseline. */
void oc_check_forward_req(oc_run *r, mxk_opcheck_result *res) {
    const mxk_opcheck_config *cfg = r->cfg;
    double *v = NULL;
    uint64_t maxn = 1;
    for (uint32_t j = 0; j < r->no; j++)
        maxn = r->out[j].n > maxn ? r->out[j].n : maxn;
    if ((v = malloc(maxn * sizeof(double))) == NULL) {
        oc_set_result(res, MXK_OPCHECK_FAIL, "out of memory");
        return;
    }
    oc_cmp c = {.rtol = cfg->req_rtol, .atol = cfg->req_atol};
    mxk_status st = oc_forward(r, NULL, r->tmp_out, 5.0, NULL);
    for (uint32_t j = 0; st == MXK_OK && j < r->no; j++) {
        st = oc_get(r->tmp_out[j], &r->out[j], v, NULL);
        char what[160];
        snprintf(what, sizeof what, "WRITE over 5: output '%s'", r->out[j].name);
        if (st == MXK_OK)
            oc_cmp_values(&c, what, v, r->base_outv[j], r->out[j].n);
    }
    if (st != MXK_OK) {
        oc_set_result(res, MXK_OPCHECK_FAIL, "forward failed: %s", oc_lib_error(st));
        free(v);
        return;
    }
    uint32_t tested = 0;
    for (uint32_t p = 0; p < cfg->num_inplace && !c.bad; p++) {
        uint32_t i = cfg->inplace[2 * p], j = cfg->inplace[2 * p + 1];
        if (i >= r->ni || j >= r->no || r->in[i].n != r->out[j].n ||
            r->in[i].dtype != r->out[j].dtype) {
            oc_set_result(res, MXK_OPCHECK_FAIL,
                          "in-place pair (input %u, output %u) is invalid: no such slots or "
                          "different shapes/dtypes",
                          (unsigned)i, (unsigned)j);
            free(v);
            return;
        }
        /* The output is the input's memory, viewed in the output's shape (Reshape). */
        mxk_ndarray *a = oc_slot_array(r, &r->in[i]), *view = NULL;
        mxk_ndarray *ins[OC_MAX_SLOTS], *outs[OC_MAX_SLOTS];
        memcpy(ins, r->in_arr, sizeof(mxk_ndarray *) * r->ni);
        memcpy(outs, r->tmp_out, sizeof(mxk_ndarray *) * r->no);
        st = a ? oc_put(a, &r->in[i], r->in_vals[i]) : MXK_ERR_OUT_OF_MEMORY;
        if (st == MXK_OK)
            st = mxk_ndarray_reshape(a, &r->out[j].shape, &view);
        ins[i] = a;
        outs[j] = view;
        if (st == MXK_OK) {
            /* oc_forward() uploads the instance's inputs; the aliased copy is `a`. */
            st = oc_forward(r, ins, outs, NAN, NULL);
        }
        for (uint32_t k = 0; st == MXK_OK && k < r->no; k++) {
            st = oc_get(outs[k], &r->out[k], v, NULL);
            char what[200];
            snprintf(what, sizeof what, "in place (input '%s' -> output '%s'): output '%s'",
                     r->in[i].name, r->out[j].name, r->out[k].name);
            if (st == MXK_OK)
                oc_cmp_values(&c, what, v, r->base_outv[k], r->out[k].n);
        }
        mxk_ndarray_free(view);
        mxk_ndarray_free(a);
        if (st != MXK_OK) {
            oc_set_result(res, MXK_OPCHECK_FAIL,
                          "in-place forward (input '%s' -> output '%s') "
                          "failed: %s",
                          r->in[i].name, r->out[j].name, oc_lib_error(st));
            free(v);
            return;
        }
        tested++;
    }
    free(v);
    oc_cmp_to_result(&c, res);
    if (c.bad)
        oc_set_result(res, MXK_OPCHECK_FAIL, "%llu elements differ from the WRITE result; %s",
                      (unsigned long long)c.bad, c.first);
    else if (tested)
        oc_set_result(res, MXK_OPCHECK_PASS,
                      "WRITE (over NaN and over 5) and %u in-place pair%s agree", (unsigned)tested,
                      tested == 1 ? "" : "s");
    else
        oc_set_result(res, MXK_OPCHECK_PASS,
                      "WRITE over NaN and over 5 agree; in place not tested (no pairs given)");
}
