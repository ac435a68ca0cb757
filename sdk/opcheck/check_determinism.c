/*
 * The "determinism" check of the operator test kit: two runs after the same
 * mxk_random_seed are bit-identical (sdk/include/mxk_opcheck.h).
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_sdk_half.h"
#include "oc_internal.h"

/** One forward (+ backward) from a fresh seed; raw outputs and gradients into outs/grads. */
static mxk_status det_run(oc_run *r, mxk_ndarray **outs, void **out_raw, void **grad_raw) {
    mxk_status st = oc_forward(r, NULL, outs, NAN, NULL);
    for (uint32_t j = 0; st == MXK_OK && j < r->no; j++)
        st = oc_get(outs[j], &r->out[j], NULL, out_raw[j]);
    if (st == MXK_OK && r->has_backward) {
        st = oc_backward(r, r->og_arr, r->in_arr, outs, NAN, NULL);
        if (st == MXK_OK)
            st = oc_read_grads(r, NULL, grad_raw);
    }
    return st;
}

/** "determinism": two runs after the same seed are bit-identical. */
void oc_check_determinism(oc_run *r, mxk_opcheck_result *res) {
    if (r->cfg->flags & MXK_OPCHECK_NO_DETERMINISM) {
        oc_set_result(res, MXK_OPCHECK_SKIP, "not requested (MXK_OPCHECK_NO_DETERMINISM)");
        return;
    }
    void *o[2][OC_MAX_SLOTS] = {{0}}, *g[2][OC_MAX_SLOTS] = {{0}};
    mxk_ndarray *outs[OC_MAX_SLOTS] = {0};
    mxk_status st = MXK_OK;
    for (int k = 0; k < 2; k++) {
        for (uint32_t j = 0; j < r->no && st == MXK_OK; j++)
            if ((o[k][j] = malloc(r->out[j].bytes ? r->out[j].bytes : 1)) == NULL)
                st = MXK_ERR_OUT_OF_MEMORY;
        for (uint32_t i = 0; i < r->ni && st == MXK_OK; i++)
            if (r->grad_in[i] && (g[k][i] = malloc(r->in[i].bytes ? r->in[i].bytes : 1)) == NULL)
                st = MXK_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t j = 0; j < r->no && st == MXK_OK; j++)
        if ((outs[j] = oc_slot_array(r, &r->out[j])) == NULL)
            st = MXK_ERR_OUT_OF_MEMORY;
    for (int k = 0; k < 2 && st == MXK_OK; k++)
        st = det_run(r, outs, o[k], g[k]);
    if (st != MXK_OK) {
        oc_set_result(res, MXK_OPCHECK_FAIL, "run failed: %s", oc_lib_error(st));
    } else {
        const char *diff = NULL;
        for (uint32_t j = 0; j < r->no && !diff; j++)
            if (memcmp(o[0][j], o[1][j], r->out[j].bytes) != 0)
                diff = r->out[j].name;
        for (uint32_t i = 0; i < r->ni && !diff && r->has_backward; i++)
            if (r->grad_in[i] && memcmp(g[0][i], g[1][i], r->in[i].bytes) != 0)
                diff = r->in[i].name;
        if (diff)
            oc_set_result(res, MXK_OPCHECK_FAIL,
                          "two runs after mxk_random_seed(%llu) differ in %s '%s'",
                          (unsigned long long)r->seed,
                          r->has_backward ? "output or gradient of" : "output", diff);
        else
            oc_set_result(res, MXK_OPCHECK_PASS,
                          "two runs after mxk_random_seed(%llu): outputs%s bit-identical",
                          (unsigned long long)r->seed, r->has_backward ? " and gradients" : "");
    }
    for (int k = 0; k < 2; k++)
        for (uint32_t j = 0; j < OC_MAX_SLOTS; j++) {
            free(o[k][j]);
            free(g[k][j]);
        }
    for (uint32_t j = 0; j < OC_MAX_SLOTS; j++)
        mxk_ndarray_free(outs[j]);
}
