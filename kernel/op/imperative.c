/*
 * Imperative invocation: run a registered operator on NDArrays by name with
 * string attributes (MXNet's MXImperativeInvoke, src/imperative/imperative.cc).
 * Inputs are the operator's arguments followed by its auxiliary states.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ndarray.h"
#include "op_instance.h"
#include "shape.h"

mxk_status mxk_imperative_invoke(const char *op_name, uint32_t num_inputs,
                                 mxk_ndarray *const *inputs, uint32_t *num_outputs,
                                 mxk_ndarray **outputs, uint32_t num_attrs, const char *const *keys,
                                 const char *const *vals) {
    mxk_attrs *given = mxki_attrs_from_arrays(num_attrs, keys, vals);
    if (given == NULL)
        return mxki_last_error_code();
    mxk_op_params *params;
    mxk_status rc = mxki_op_params_create(op_name, given, &params);
    mxki_attrs_free(given);
    if (rc != MXK_OK)
        return rc;
    uint32_t nargs = params->in_names->count, naux = params->aux_names->count;
    if (num_inputs != nargs + naux) {
        char names[512];
        rc = mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                           "%s expects %u input%s (%s) and %u auxiliary state%s, got %u array%s",
                           op_name, nargs, nargs == 1 ? "" : "s",
                           mxki_name_list_join(params->in_names, names, sizeof names), naux,
                           naux == 1 ? "" : "s", num_inputs, num_inputs == 1 ? "" : "s");
        mxki_op_params_free(params);
        return rc;
    }
    mxk_shape shapes[64];
    int32_t types[64];
    if (nargs > 64) {
        mxki_op_params_free(params);
        return mxk_set_error(MXK_ERR_UNSUPPORTED, "%s: more than 64 inputs", op_name);
    }
    for (uint32_t i = 0; i < num_inputs; i++)
        if (inputs[i] == NULL) {
            mxki_op_params_free(params);
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: input %u is NULL", op_name, i);
        }
    for (uint32_t i = 0; i < nargs; i++) {
        shapes[i] = inputs[i]->shape;
        types[i] = inputs[i]->dtype;
    }
    mxk_context ctx = num_inputs ? inputs[0]->chunk->ctx : (mxk_context){MXK_DEV_CPU, 0};
    mxk_op_instance *inst;
    rc = mxki_op_instance_from_params(params, ctx, shapes, types, NULL, &inst);
    if (rc != MXK_OK)
        return rc;
    /* Outputs: caller-provided (visible ones) or allocated here; hidden ones always here. */
    mxk_ndarray *outs[MXK_MAX_OUTPUTS] = {0};
    int allocate = *num_outputs == 0;
    if (inst->num_out > MXK_MAX_OUTPUTS)
        rc = mxk_set_error(MXK_ERR_UNSUPPORTED, "%s: more than %d outputs", op_name,
                           MXK_MAX_OUTPUTS);
    else if (!allocate && *num_outputs != inst->num_visible)
        rc = mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s produces %u outputs, %u given", op_name,
                           inst->num_visible, *num_outputs);
    for (uint32_t i = 0; rc == MXK_OK && i < inst->num_out; i++) {
        if (!allocate && i < inst->num_visible)
            outs[i] = outputs[i];
        else
            rc = mxk_ndarray_create(&inst->out_shapes[i], inst->out_types[i], ctx, &outs[i]);
    }
    if (rc == MXK_OK)
        rc = mxk_op_instance_forward(inst, 0, inputs, outs, NULL, inputs + nargs);
    for (uint32_t i = 0; i < inst->num_out; i++) {
        int owned = allocate || i >= inst->num_visible;
        if (!owned)
            continue;
        if (rc == MXK_OK && allocate && i < inst->num_visible)
            outputs[i] = outs[i];
        else
            mxk_ndarray_free(outs[i]);
    }
    if (rc == MXK_OK && allocate)
        *num_outputs = inst->num_visible;
    mxk_op_instance_free(inst);
    return rc;
}
