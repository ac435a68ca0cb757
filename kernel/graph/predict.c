/*
 * The predict-only API (mxk.h mxk_predictor_*): a symbol and its parameters bound
 * for inference from bytes in memory.
 *
 * Semantics of upstream include/mxnet/c_predict_api.h and
 * src/c_api/c_predict_api.cc (MXPredCreate, MXPredCreatePartialOut,
 * MXPredSetInput, MXPredForward, MXPredGetOutputShape, MXPredGetOutput,
 * MXPredReshape, MXPredFree): the symbol is parsed from JSON, cut to internal
 * outputs when keys are given, the parameter list is read from memory, shapes are
 * inferred from the named inputs, and the executor is bound without gradients. It is
 * built on the public executor functions (simple_bind, copy_params_from, reshape).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

struct mxk_predictor {
    mxk_executor *ex;
    char **params; /**< names of the arguments and aux states loaded from the parameter bytes */
    uint32_t num_params;
};

/**
 * The symbol's internal output called `key` or "`key`_output" (upstream appends
 * "_output" to each key), in *out. MXK_ERR_NOT_FOUND when there is none.
 */
static mxk_status find_internal(mxk_symbol *internals, uint32_t num, char **names, const char *key,
                                mxk_symbol **out) {
    size_t n = strlen(key);
    for (uint32_t j = 0; j < num; j++)
        if (strcmp(names[j], key) == 0 ||
            (strncmp(names[j], key, n) == 0 && strcmp(names[j] + n, "_output") == 0))
            return mxk_symbol_get_output(internals, j, out);
    return mxk_set_error(MXK_ERR_NOT_FOUND,
                         "mxk_predictor_create: the symbol has no output named '%s' or "
                         "'%s_output'",
                         key, key);
}

/** The group of the internal outputs named by `keys` (MXPredCreatePartialOut). */
static mxk_status partial_outputs(mxk_symbol *sym, uint32_t num_keys, const char *const *keys,
                                  mxk_symbol **out) {
    mxk_symbol *internals = NULL;
    mxk_symbol **outs = calloc(num_keys, sizeof *outs);
    char **names = NULL;
    uint32_t num = 0;
    mxk_status rc =
        outs ? mxk_symbol_get_internals(sym, &internals)
             : mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "mxk_predictor_create: out of memory");
    if (rc == MXK_OK)
        rc = mxk_symbol_list_names(internals, MXK_SYMBOL_OUTPUTS, &num, &names);
    for (uint32_t i = 0; rc == MXK_OK && i < num_keys; i++)
        rc = keys[i] ? find_internal(internals, num, names, keys[i], &outs[i])
                     : mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                     "mxk_predictor_create: output key %u is NULL", i);
    if (rc == MXK_OK)
        rc = mxk_symbol_group(num_keys, outs, out);
    for (uint32_t i = 0; outs && i < num_keys; i++)
        mxk_symbol_free(outs[i]);
    free(outs);
    mxk_string_list_free(names);
    mxk_symbol_free(internals);
    return rc;
}

/**
 * Keeps the names (without prefix) of the list's entries that `p`'s executor has:
 * the parameters, whose shapes reshape must keep. Takes over `names`.
 */
static void keep_param_names(mxk_predictor *p, uint32_t num, char **names) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < num; i++) {
        const char *n =
            names[i] +
            (strncmp(names[i], "arg:", 4) == 0 || strncmp(names[i], "aux:", 4) == 0 ? 4 : 0);
        if (mxk_executor_arg(p->ex, n) || mxk_executor_aux(p->ex, n))
            memmove(names[k++] = names[i], n, strlen(n) + 1);
        else
            free(names[i]);
    }
    p->params = names;
    p->num_params = k;
}

/** Copies the "arg:"/"aux:" arrays of a parameter list in memory into `p`. */
static mxk_status load_params(mxk_predictor *p, const void *bytes, size_t size) {
    uint32_t num = 0;
    mxk_ndarray **arrays = NULL;
    char **names = NULL;
    if (size == 0)
        return MXK_OK;
    mxk_status rc = mxk_ndarray_load_buffer(bytes, size, "parameter bytes", &num, &arrays, &names);
    if (rc == MXK_OK && num > 0 && names == NULL)
        rc = mxk_set_error(MXK_ERR_FORMAT,
                           "mxk_predictor_create: the parameter list has no names (Invalid param "
                           "file format)");
    /* Names of the parameter list not in this (maybe partial) symbol are skipped, as
     * upstream does. */
    if (rc == MXK_OK)
        rc = mxk_executor_copy_params_from(p->ex, num, (const char *const *)names, arrays, 0, NULL,
                                           NULL, 1);
    if (rc == MXK_OK && names != NULL) {
        keep_param_names(p, num, names);
        names = NULL;
    }
    mxk_ndarray_list_free(num, arrays, names);
    return rc;
}

mxk_status mxk_predictor_create(const char *symbol_json, const void *param_bytes, size_t param_size,
                                mxk_context ctx, uint32_t num_inputs,
                                const char *const *input_names, const mxk_shape *input_shapes,
                                uint32_t num_output_keys, const char *const *output_keys,
                                mxk_predictor **out) {
    if (out == NULL || symbol_json == NULL || (param_size && param_bytes == NULL) ||
        (num_inputs && (input_names == NULL || input_shapes == NULL)) ||
        (num_output_keys && output_keys == NULL))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_predictor_create: out, symbol_json or a list is NULL");
    *out = NULL;
    mxk_symbol *sym = NULL, *cut = NULL;
    mxk_predictor *p = calloc(1, sizeof *p);
    mxk_status rc = p ? mxk_symbol_from_json(symbol_json, &sym)
                      : mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "mxk_predictor_create: out of memory");
    if (rc == MXK_OK && num_output_keys)
        rc = partial_outputs(sym, num_output_keys, output_keys, &cut);
    if (rc == MXK_OK)
        rc = mxk_executor_simple_bind(cut ? cut : sym, ctx, num_inputs, input_names, input_shapes,
                                      "null", 0, NULL, NULL, NULL, &p->ex);
    if (rc == MXK_OK)
        rc = load_params(p, param_bytes, param_size);
    mxk_symbol_free(cut);
    mxk_symbol_free(sym);
    if (rc != MXK_OK) {
        mxk_predictor_free(p);
        return rc;
    }
    *out = p;
    return MXK_OK;
}

void mxk_predictor_free(mxk_predictor *p) {
    if (p == NULL)
        return;
    mxk_executor_free(p->ex);
    for (uint32_t i = 0; i < p->num_params; i++)
        free(p->params[i]);
    free(p->params);
    free(p);
}

/** Checks that `count` floats fit array `a` exactly (`what` names it in the message). */
static mxk_status check_count(mxk_ndarray *a, uint64_t count, const char *who, const char *what,
                              const char *name) {
    if (mxk_ndarray_dtype(a) != MXK_FLOAT32)
        return mxk_set_error(MXK_ERR_TYPE, "%s: %s '%s' is %s, not float32", who, what, name,
                             mxk_dtype_name(mxk_ndarray_dtype(a)));
    if (mxk_ndarray_size(a) != count)
        return mxk_set_error(MXK_ERR_SHAPE, "%s: %s '%s' has %llu elements, not %llu", who, what,
                             name, (unsigned long long)mxk_ndarray_size(a),
                             (unsigned long long)count);
    return MXK_OK;
}

mxk_status mxk_predictor_set_input(mxk_predictor *p, const char *name, const float *data,
                                   uint64_t count) {
    const char *who = "mxk_predictor_set_input";
    if (p == NULL || name == NULL || data == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: predictor, name or data is NULL", who);
    mxk_ndarray *a = mxk_executor_arg(p->ex, name);
    if (a == NULL)
        return mxk_set_error(MXK_ERR_NOT_FOUND, "%s: cannot find input key %s", who, name);
    mxk_status rc = check_count(a, count, who, "input", name);
    return rc != MXK_OK ? rc : mxk_ndarray_copy_from_host(a, data, count * sizeof(float));
}

mxk_status mxk_predictor_forward(mxk_predictor *p) {
    if (p == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_predictor_forward: predictor is NULL");
    return mxk_executor_forward(p->ex, 0);
}

uint32_t mxk_predictor_num_outputs(const mxk_predictor *p) {
    return p ? mxk_executor_num_outputs(p->ex) : 0;
}

/** Output `index` of `p` in *out, or the out-of-range error. */
static mxk_status output(const mxk_predictor *p, uint32_t index, const char *who,
                         mxk_ndarray **out) {
    if (p == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: predictor is NULL", who);
    uint32_t n = mxk_executor_num_outputs(p->ex);
    if (index >= n)
        return mxk_set_error(MXK_ERR_NOT_FOUND, "%s: output %u is out of range (%u outputs)", who,
                             index, n);
    *out = mxk_executor_output(p->ex, index);
    return MXK_OK;
}

mxk_status mxk_predictor_output_shape(const mxk_predictor *p, uint32_t index, mxk_shape *shape) {
    mxk_ndarray *a = NULL;
    mxk_status rc = output(p, index, "mxk_predictor_output_shape", &a);
    if (rc == MXK_OK && shape == NULL)
        rc = mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_predictor_output_shape: shape is NULL");
    if (rc == MXK_OK)
        *shape = mxk_ndarray_shape(a);
    return rc;
}

mxk_status mxk_predictor_get_output(const mxk_predictor *p, uint32_t index, float *data,
                                    uint64_t count) {
    const char *who = "mxk_predictor_get_output";
    mxk_ndarray *a = NULL;
    mxk_status rc = output(p, index, who, &a);
    if (rc == MXK_OK && data == NULL)
        rc = mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: data is NULL", who);
    char name[16];
    snprintf(name, sizeof name, "%u", index);
    if (rc == MXK_OK)
        rc = check_count(a, count, who, "output", name);
    return rc != MXK_OK ? rc : mxk_ndarray_copy_to_host(a, data, count * sizeof(float));
}

mxk_status mxk_predictor_reshape(mxk_predictor *p, uint32_t num_inputs,
                                 const char *const *input_names, const mxk_shape *input_shapes,
                                 mxk_predictor **out) {
    if (p == NULL || out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_predictor_reshape: predictor or out is NULL");
    *out = NULL;
    mxk_predictor *q = calloc(1, sizeof *q);
    char **params = calloc(p->num_params + 1, sizeof *params);
    mxk_status rc =
        q && params ? MXK_OK
                    : mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "mxk_predictor_reshape: out of memory");
    for (uint32_t i = 0; rc == MXK_OK && i < p->num_params; i++)
        if ((params[i] = strdup(p->params[i])) == NULL)
            rc = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "mxk_predictor_reshape: out of memory");
    if (q == NULL)
        free(params);
    else
        q->params = params, q->num_params = p->num_params;
    /* Inputs (named or not, e.g. a label that follows the batch size) may change and
     * grow (upstream ReshapeAndAlloc); the parameters must keep their shapes. */
    if (rc == MXK_OK)
        rc = mxk_executor_reshape(p->ex, 1, 1, num_inputs, input_names, input_shapes, &q->ex);
    for (uint32_t i = 0; rc == MXK_OK && i < p->num_params; i++) {
        const char *n = p->params[i];
        mxk_ndarray *a = mxk_executor_arg(p->ex, n), *b = mxk_executor_arg(q->ex, n);
        if (a == NULL) {
            a = mxk_executor_aux(p->ex, n);
            b = mxk_executor_aux(q->ex, n);
        }
        mxk_shape sa = mxk_ndarray_shape(a), sb = mxk_ndarray_shape(b);
        if (sa.ndim != sb.ndim || memcmp(sa.dims, sb.dims, sizeof sa.dims[0] * (size_t)sa.ndim))
            rc = mxk_set_error(MXK_ERR_SHAPE,
                               "mxk_predictor_reshape: the shape of parameter %s would change; "
                               "only the shapes of inputs may change",
                               n);
    }
    if (rc != MXK_OK) {
        mxk_predictor_free(q);
        return rc;
    }
    *out = q;
    return MXK_OK;
}
