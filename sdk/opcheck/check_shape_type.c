/*
 * The "shape_type" check of the operator test kit: shape and type inference is
 * complete, agrees with the caller's references, and re-inferring from the
 * inferred inputs gives the same outputs (sdk/include/mxk_opcheck.h).
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_sdk_half.h"
#include "oc_internal.h"

/** "shape_type": completeness, the references, and re-inference from the inferred inputs. */
void oc_check_shape_type(oc_run *r, mxk_opcheck_result *res) {
    const mxk_opcheck_config *cfg = r->cfg;
    char sb[96], sb2[96];
    for (uint32_t j = 0; j < cfg->num_ref_out; j++) {
        if (j >= r->nv) {
            oc_set_result(res, MXK_OPCHECK_FAIL, "%u visible outputs, the reference gives %u",
                          (unsigned)r->nv, (unsigned)cfg->num_ref_out);
            return;
        }
        const mxk_shape *e = cfg->ref_out_shapes ? &cfg->ref_out_shapes[j] : NULL;
        const mxk_shape *g = &r->out[j].shape;
        if (e && (e->ndim != g->ndim ||
                  memcmp(e->dims, g->dims, sizeof(int64_t) * (size_t)g->ndim) != 0)) {
            oc_set_result(res, MXK_OPCHECK_FAIL, "output '%s': shape %s, expected %s",
                          r->out[j].name, oc_shape_str(g, sb, sizeof sb),
                          oc_shape_str(e, sb2, sizeof sb2));
            return;
        }
        if (cfg->ref_out_types && cfg->ref_out_types[j] != r->out[j].dtype) {
            oc_set_result(res, MXK_OPCHECK_FAIL, "output '%s': dtype %s, expected %s",
                          r->out[j].name, mxk_dtype_name(r->out[j].dtype),
                          mxk_dtype_name(cfg->ref_out_types[j]));
            return;
        }
    }
    /* Inference again from every inferred input shape and dtype: the same outputs. */
    mxk_shape shapes[OC_MAX_SLOTS];
    int32_t types[OC_MAX_SLOTS];
    for (uint32_t i = 0; i < r->ni; i++) {
        shapes[i] = r->in[i].shape;
        types[i] = r->in[i].dtype;
    }
    mxk_op_instance *again = NULL;
    mxk_status st = mxk_op_instance_create(cfg->op, cfg->num_attrs, cfg->keys, cfg->vals, r->ctx,
                                           r->ni, shapes, types, &again);
    if (st != MXK_OK) {
        oc_set_result(res, MXK_OPCHECK_FAIL,
                      "creating the instance again with the inferred input shapes failed: %s",
                      oc_lib_error(st));
        return;
    }
    for (uint32_t j = 0; j < r->no; j++) {
        mxk_shape s;
        int32_t t = -1;
        mxk_op_instance_shape(again, 1, j, &s, &t);
        if (s.ndim != r->out[j].shape.ndim ||
            memcmp(s.dims, r->out[j].shape.dims, sizeof(int64_t) * (size_t)s.ndim) != 0 ||
            t != r->out[j].dtype) {
            oc_set_result(res, MXK_OPCHECK_FAIL,
                          "output '%s': %s %s from the given shapes, %s %s from the inferred ones",
                          r->out[j].name, oc_shape_str(&r->out[j].shape, sb, sizeof sb),
                          mxk_dtype_name(r->out[j].dtype), oc_shape_str(&s, sb2, sizeof sb2),
                          mxk_dtype_name(t));
            mxk_op_instance_free(again);
            return;
        }
    }
    mxk_op_instance_free(again);
    char outs[200] = "";
    size_t used = 0;
    for (uint32_t j = 0; j < r->nv && used < sizeof outs; j++)
        used += (size_t)snprintf(outs + used, sizeof outs - used, "%s%s %s", j ? ", " : "",
                                 oc_shape_str(&r->out[j].shape, sb, sizeof sb),
                                 mxk_dtype_name(r->out[j].dtype));
    oc_set_result(res, MXK_OPCHECK_PASS,
                  "complete: %u inputs, %u outputs (%u visible), %u aux; %s%s", (unsigned)r->ni,
                  (unsigned)r->no, (unsigned)r->nv, (unsigned)r->na, outs,
                  cfg->num_ref_out ? "; matches the reference" : "");
}
