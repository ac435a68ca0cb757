/*
 * Operator parameters (operator.h): an operator looked up by name with its
 * attributes validated, and its shape and type inference.
 */
#include "operator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mxk.h"

const char *mxki_name_list_join(const mxk_name_list *l, char *buf, size_t size) {
    size_t pos = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; l && i < l->count && pos < size; i++)
        pos += (size_t)snprintf(buf + pos, size - pos, i ? ", %s" : "%s", l->names[i]);
    return buf;
}

/* Fills `list` from the callback, or the fixed names, or the default. */
static mxk_status list_names(const mxk_op_params *p, const char *what,
                             mxk_status (*fn)(const void *, mxk_name_list *, mxk_error_sink *),
                             const char *const *fixed, const char *dflt, mxk_name_list *list) {
    mxk_error_sink sink;
    mxki_error_sink_clear(&sink);
    if (fn != NULL) {
        if (fn(p->param, list, &sink) != MXK_OK)
            return mxki_set_error_from_sink(&sink, "%s: listing %s: ", p->op->def.name, what);
        return MXK_OK;
    }
    if (fixed != NULL) {
        for (size_t i = 0; fixed[i]; i++)
            if (mxki_name_list_add(list, fixed[i], &sink) != MXK_OK)
                return mxki_set_error_from_sink(&sink, "%s: ", p->op->def.name);
        return MXK_OK;
    }
    if (dflt != NULL && mxki_name_list_add(list, dflt, &sink) != MXK_OK)
        return mxki_set_error_from_sink(&sink, "%s: ", p->op->def.name);
    return MXK_OK;
}

mxk_status mxki_op_params_create(const char *op_name, const mxk_attrs *given, mxk_op_params **out) {
    const mxk_op_entry *op = mxki_registry_find_op(op_name);
    if (op == NULL)
        return mxki_registry_unknown_op(op_name);
    mxk_op_params *p = calloc(1, sizeof *p);
    if (p == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", op_name);
    p->op = op;
    mxk_error_sink sink;
    mxki_error_sink_clear(&sink);
    mxk_status rc = mxki_attrs_validate(op->def.attrs, op->def.num_attrs, given, &p->attrs, &sink);
    if (rc != MXK_OK) {
        mxki_op_params_free(p);
        return mxki_set_error_from_sink(&sink, "%s: ", op_name);
    }
    if (op->def.parse_param && op->def.parse_param(p->attrs, &p->param, &sink) != MXK_OK) {
        p->param = NULL;
        mxki_op_params_free(p);
        return mxki_set_error_from_sink(&sink, "%s: ", op_name);
    }
    p->in_names = mxki_name_list_new();
    p->out_names = mxki_name_list_new();
    p->aux_names = mxki_name_list_new();
    if (!p->in_names || !p->out_names || !p->aux_names) {
        mxki_op_params_free(p);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", op_name);
    }
    rc = list_names(p, "arguments", op->def.list_arguments, op->def.arguments, "data", p->in_names);
    if (rc == MXK_OK)
        rc =
            list_names(p, "outputs", op->def.list_outputs, op->def.outputs, "output", p->out_names);
    if (rc == MXK_OK)
        rc = list_names(p, "auxiliary states", op->def.list_aux_states, op->def.aux_states, NULL,
                        p->aux_names);
    if (rc != MXK_OK) {
        mxki_op_params_free(p);
        return rc;
    }
    p->num_visible = p->out_names->count;
    if (op->def.num_visible_outputs) {
        uint32_t v = op->def.num_visible_outputs(p->param);
        uint32_t count = p->out_names->count;
        if (v == 0 || v > count) {
            mxki_op_params_free(p);
            return mxk_set_error(MXK_ERR_INTERNAL, "%s: num_visible_outputs %u not in [1, %u]",
                                 op_name, v, count);
        }
        p->num_visible = v;
    }
    *out = p;
    return MXK_OK;
}

void mxki_op_params_free(mxk_op_params *p) {
    if (p == NULL)
        return;
    if (p->param && p->op->def.free_param)
        p->op->def.free_param(p->param);
    mxki_attrs_free(p->attrs);
    mxki_name_list_free(p->in_names);
    mxki_name_list_free(p->out_names);
    mxki_name_list_free(p->aux_names);
    free(p);
}

mxk_status mxki_op_params_infer_shape(const mxk_op_params *p, mxk_shape *in, mxk_shape *out,
                                      mxk_shape *aux) {
    mxk_error_sink sink;
    mxki_error_sink_clear(&sink);
    if (p->op->def.infer_shape(p->param, in, p->in_names->count, out, p->out_names->count, aux,
                               p->aux_names->count, &sink) != MXK_OK)
        return mxki_set_error_from_sink(&sink, "%s: ", p->op->def.name);
    return MXK_OK;
}

/* MXNet's default type inference: every slot takes the first known type. */
static mxk_status default_infer_type(const mxk_op_params *p, int32_t *in, int32_t *out,
                                     int32_t *aux) {
    uint32_t ni = p->in_names->count, no = p->out_names->count, na = p->aux_names->count;
    int32_t t = -1;
    for (uint32_t i = 0; i < ni && t < 0; i++)
        t = in[i];
    for (uint32_t i = 0; i < no && t < 0; i++)
        t = out[i];
    if (t < 0)
        t = MXK_FLOAT32;
    int32_t *arrs[3] = {in, out, aux};
    uint32_t counts[3] = {ni, no, na};
    const mxk_name_list *names[3] = {p->in_names, p->out_names, p->aux_names};
    for (int a = 0; a < 3; a++)
        for (uint32_t i = 0; i < counts[a]; i++) {
            if (arrs[a][i] >= 0 && arrs[a][i] != t)
                return mxk_set_error(MXK_ERR_TYPE, "%s: '%s' has dtype %d, expected %d",
                                     p->op->def.name, names[a]->names[i], arrs[a][i], t);
            arrs[a][i] = t;
        }
    return MXK_OK;
}

mxk_status mxki_op_params_infer_type(const mxk_op_params *p, int32_t *in, int32_t *out,
                                     int32_t *aux) {
    if (p->op->def.infer_type == NULL)
        return default_infer_type(p, in, out, aux);
    mxk_error_sink sink;
    mxki_error_sink_clear(&sink);
    if (p->op->def.infer_type(p->param, in, p->in_names->count, out, p->out_names->count, aux,
                              p->aux_names->count, &sink) != MXK_OK)
        return mxki_set_error_from_sink(&sink, "%s: ", p->op->def.name);
    return MXK_OK;
}
