/*
 * Operator instances (kernel-internal side of mxk_op_instance in mxk.h).
 *
 * An instance binds an operator (mxk_op_params) to a device and to fully inferred
 * input/output/aux shapes and types; it holds the resolved kernel and its state
 * and the resource slots of each phase. Forward/backward calls push one engine
 * function each, reading the inputs and writing the outputs, the aux states, the
 * mutated inputs and the resource slots. Instances are reference-counted: pushed
 * work keeps its instance alive until it completes.
 */
#ifndef MXK_OP_INSTANCE_H
#define MXK_OP_INSTANCE_H

#include <stdatomic.h>

#include "operator.h"
#include "resource.h"

/** Resource slots of one phase. */
typedef struct mxk_phase_resources {
    uint32_t count;
    mxk_resource_request req[MXK_MAX_RESOURCES];
    mxk_resource_slot *slot[MXK_MAX_RESOURCES];
} mxk_phase_resources;

/** Definition of the public opaque mxk_op_instance. */
struct mxk_op_instance {
    atomic_uint refcount;
    mxk_op_params *params;
    mxk_context ctx;
    uint32_t num_in, num_out, num_visible, num_aux;
    mxk_shape *in_shapes, *out_shapes, *aux_shapes;
    int32_t *in_types, *out_types, *aux_types;
    uint8_t *need_out_grad, *need_in_data, *need_out_data;
    uint32_t num_mutate;
    uint32_t mutate[MXK_MAX_INPLACE];
    const mxk_kernel_entry *kernel;
    void *state;
    mxk_phase_resources fwd_res, bwd_res;
};

/**
 * Creates an instance from params (ownership of params passes to the instance,
 * also on failure). Shapes: num_in entries (unknown ones inferred); types may be NULL.
 */
mxk_status mxk_op_instance_from_params(mxk_op_params *params, mxk_context ctx,
                                       const mxk_shape *in_shapes, const int32_t *in_types,
                                       mxk_op_instance **out);

#endif /* MXK_OP_INSTANCE_H */
