/*
 * The "forward" check of the operator test kit: the visible outputs against the
 * caller's float64 reference (sdk/include/mxk_opcheck.h).
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_sdk_half.h"
#include "oc_internal.h"

/** "forward": visible outputs against the float64 reference. */
void oc_check_forward(oc_run *r, mxk_opcheck_result *res) {
    const mxk_opcheck_config *cfg = r->cfg;
    if (cfg->forward_ref == NULL) {
        oc_set_result(res, MXK_OPCHECK_SKIP, "no reference forward given");
        return;
    }
    double *out[OC_MAX_SLOTS] = {0};
    int oom = 0;
    for (uint32_t j = 0; j < r->nv; j++)
        oom |= (out[j] = calloc(r->out[j].n, sizeof(double))) == NULL;
    if (!oom) {
        mxk_shape in_s[OC_MAX_SLOTS], aux_s[OC_MAX_SLOTS], out_s[OC_MAX_SLOTS];
        mxk_opcheck_ref_args a;
        oc_ref_args(r, &a, in_s, aux_s, out_s, out);
        if (cfg->forward_ref(cfg->user, &a) != 0) {
            oc_set_result(res, MXK_OPCHECK_FAIL, "the reference function failed");
        } else {
            oc_cmp c = {.rtol = cfg->fwd_rtol, .atol = cfg->fwd_atol};
            for (uint32_t j = 0; j < r->nv; j++) {
                char what[160];
                snprintf(what, sizeof what, "output '%s'", r->out[j].name);
                oc_cmp_values(&c, what, r->base_outv[j], out[j], r->out[j].n);
            }
            oc_cmp_to_result(&c, res);
            if (c.bad)
                oc_set_result(res, MXK_OPCHECK_FAIL, "%llu elements differ from the reference; %s",
                              (unsigned long long)c.bad, c.first);
            else
                oc_set_result(res, MXK_OPCHECK_PASS,
                              "matches the float64 reference (rtol %g atol %g)", cfg->fwd_rtol,
                              cfg->fwd_atol);
        }
    } else {
        oc_set_result(res, MXK_OPCHECK_FAIL, "out of memory");
    }
    for (uint32_t j = 0; j < r->nv; j++)
        free(out[j]);
}
