/*
 * The "dependency" check of the operator test kit: tensors that backward does not
 * declare (MXNet's DeclareBackwardDependency) NaN-filled or omitted change
 * nothing (sdk/include/mxk_opcheck.h).
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_sdk_half.h"
#include "oc_internal.h"

/** Runs backward with the undeclared arrays replaced (poison: NaN arrays, else NULL). */
static mxk_status dep_run(oc_run *r, int poison, int only_kind, uint32_t only_index,
                          mxk_ndarray **nan_og, mxk_ndarray **nan_id, mxk_ndarray **nan_od,
                          void **raw) {
    mxk_ndarray *og[OC_MAX_SLOTS], *id[OC_MAX_SLOTS], *od[OC_MAX_SLOTS];
    for (uint32_t j = 0; j < r->nv; j++) {
        int repl = !r->need_og[j] && (only_kind < 0 || (only_kind == 0 && only_index == j));
        og[j] = repl ? (poison ? nan_og[j] : NULL) : r->og_arr[j];
    }
    for (uint32_t i = 0; i < r->ni; i++) {
        int repl = !r->need_id[i] && (only_kind < 0 || (only_kind == 1 && only_index == i));
        id[i] = repl ? (poison ? nan_id[i] : NULL) : r->in_arr[i];
    }
    for (uint32_t j = 0; j < r->no; j++) {
        int repl = !r->need_od[j] && (only_kind < 0 || (only_kind == 2 && only_index == j));
        od[j] = repl ? (poison ? nan_od[j] : NULL) : r->base_out[j];
    }
    mxk_status st = oc_backward(r, og, id, od, NAN, NULL);
    if (st == MXK_OK)
        st = oc_read_grads(r, NULL, raw);
    return st;
}

/** 1 when the raw gradients equal the baseline's bit for bit. */
static int same_grads(oc_run *r, void **raw) {
    for (uint32_t i = 0; i < r->ni; i++)
        if (r->grad_in[i] && memcmp(raw[i], r->base_gradraw[i], r->in[i].bytes) != 0)
            return 0;
    return 1;
}

/** "dependency": poisoned and omitted undeclared arrays change nothing. */
void oc_check_dependency(oc_run *r, mxk_opcheck_result *res) {
    if (!r->has_backward) {
        oc_set_result(res, MXK_OPCHECK_SKIP, "%s", r->bwd_error);
        return;
    }
    uint32_t undeclared = 0;
    for (uint32_t j = 0; j < r->nv; j++)
        undeclared += !r->need_og[j];
    for (uint32_t i = 0; i < r->ni; i++)
        undeclared += !r->need_id[i];
    for (uint32_t j = 0; j < r->no; j++)
        undeclared += !r->need_od[j];
    if (undeclared == 0) {
        oc_set_result(res, MXK_OPCHECK_PASS, "every array is declared: nothing to poison");
        return;
    }
    mxk_ndarray *nan_og[OC_MAX_SLOTS] = {0}, *nan_id[OC_MAX_SLOTS] = {0},
                *nan_od[OC_MAX_SLOTS] = {0};
    void *raw[OC_MAX_SLOTS] = {0};
    mxk_status st = MXK_OK;
    for (uint32_t j = 0; j < r->nv && st == MXK_OK; j++)
        if (!r->need_og[j])
            st = (nan_og[j] = oc_slot_array(r, &r->out[j])) ? mxk_ndarray_fill(nan_og[j], NAN)
                                                            : MXK_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < r->ni && st == MXK_OK; i++)
        if (!r->need_id[i])
            st = (nan_id[i] = oc_slot_array(r, &r->in[i])) ? mxk_ndarray_fill(nan_id[i], NAN)
                                                           : MXK_ERR_OUT_OF_MEMORY;
    for (uint32_t j = 0; j < r->no && st == MXK_OK; j++)
        if (!r->need_od[j])
            st = (nan_od[j] = oc_slot_array(r, &r->out[j])) ? mxk_ndarray_fill(nan_od[j], NAN)
                                                            : MXK_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < r->ni && st == MXK_OK; i++)
        if (r->grad_in[i] && (raw[i] = malloc(r->in[i].bytes ? r->in[i].bytes : 1)) == NULL)
            st = MXK_ERR_OUT_OF_MEMORY;
    int poisoned_ok = 1, omitted_ok = 1;
    char err[400] = "";
    if (st == MXK_OK) {
        mxk_status s1 = dep_run(r, 1, -1, 0, nan_og, nan_id, nan_od, raw);
        if (s1 != MXK_OK)
            snprintf(err, sizeof err, "with the undeclared arrays NaN-filled backward failed: %s",
                     oc_lib_error(s1));
        poisoned_ok = s1 == MXK_OK && same_grads(r, raw);
        /* Omitted (data NULL) only after the poisoned run passed: a kernel that reads
         * an undeclared array would dereference NULL. */
        if (poisoned_ok) {
            mxk_status s2 = dep_run(r, 0, -1, 0, nan_og, nan_id, nan_od, raw);
            if (s2 != MXK_OK)
                snprintf(err, sizeof err,
                         "with the undeclared arrays omitted (NULL) backward failed: %s",
                         oc_lib_error(s2));
            omitted_ok = s2 == MXK_OK && same_grads(r, raw);
        }
    }
    if (st != MXK_OK) {
        oc_set_result(res, MXK_OPCHECK_FAIL, "set-up failed: %s", oc_lib_error(st));
    } else if (poisoned_ok && omitted_ok) {
        oc_set_result(res, MXK_OPCHECK_PASS,
                      "%u undeclared array%s NaN-filled and omitted: gradients unchanged",
                      (unsigned)undeclared, undeclared == 1 ? "" : "s");
    } else {
        /* Name the culprits: poison one undeclared array at a time. */
        char names[300] = "";
        size_t used = 0;
        static const char *const kinds[] = {"out_grad", "in_data", "out_data"};
        for (int kind = 0; kind < 3; kind++) {
            uint32_t n = kind == 0 ? r->nv : kind == 1 ? r->ni : r->no;
            for (uint32_t x = 0; x < n; x++) {
                const uint8_t *need = kind == 0 ? r->need_og : kind == 1 ? r->need_id : r->need_od;
                if (need[x])
                    continue;
                mxk_status s = dep_run(r, 1, kind, x, nan_og, nan_id, nan_od, raw);
                if ((s != MXK_OK || !same_grads(r, raw)) && used < sizeof names)
                    used += (size_t)snprintf(names + used, sizeof names - used, "%s%s '%s'",
                                             used ? ", " : "", kinds[kind],
                                             kind == 1 ? r->in[x].name : r->out[x].name);
            }
        }
        oc_set_result(res, MXK_OPCHECK_FAIL,
                      "backward reads arrays it does not declare as dependencies: %s%s%s",
                      !poisoned_ok ? "NaN-filled undeclared arrays change the gradients" : "",
                      !poisoned_ok && !omitted_ok ? "; " : "",
                      !omitted_ok ? "omitting them (NULL) changes the gradients or fails" : "");
        size_t len = strlen(res->message);
        if (used && len < sizeof res->message)
            snprintf(res->message + len, sizeof res->message - len, " (culprit%s: %s)",
                     strchr(names, ',') ? "s" : "", names);
        len = strlen(res->message);
        if (err[0] && len < sizeof res->message)
            snprintf(res->message + len, sizeof res->message - len, "; %s", err);
    }
    for (uint32_t i = 0; i < OC_MAX_SLOTS; i++) {
        mxk_ndarray_free(nan_og[i]);
        mxk_ndarray_free(nan_id[i]);
        mxk_ndarray_free(nan_od[i]);
        free(raw[i]);
    }
}
