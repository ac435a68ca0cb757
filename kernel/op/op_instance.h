/*
 * Operator instances (kernel-internal side of mxk_op_instance in mxk.h).
 *
 * An instance binds an operator (mxk_op_params) to a device and to fully inferred
 * input/output/aux shapes and types; it holds the resolved kernel and its state
 * and the resource slots of each phase. Forward/backward calls push one engine
 * function each, reading the inputs and writing the outputs, the aux states, the
 * mutated inputs and the resource slots: once (mxk_op_instance_forward/backward) or
 * as prepared calls pushed many times (mxk_op_call_*, below; both go through the
 * same preparation). Instances are reference-counted: pushed work and prepared
 * calls keep their instance alive until they are done.
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
    uint32_t mutate[MXK_MAX_INPLACE]; /**< mutated inputs: indices over args, then aux states */
    const mxk_kernel_entry *kernel;
    void *kparam; /**< the kernel's own parameter object (ABI 1.2 parse_param), or NULL */
    void *state;
    mxk_phase_resources fwd_res, bwd_res;
    /**
     * Written by every call of the instance: calls sharing the kernel state never run
     * concurrently (the ABI's promise), and reresolve waits for this instance's work
     * only.
     */
    mxk_engine_var *var;
};

/**
 * Creates an instance from params (ownership of params passes to the instance,
 * also on failure). Shapes: num_in entries (unknown ones inferred); types may be NULL.
 * out_shapes (num_out entries, or NULL) seeds the outputs with shapes known from
 * elsewhere, the graph's inference: an operator whose outputs do not follow from its
 * inputs alone (`_zeros` with shape (0, H), its 0 dim inferred from a consumer, as
 * nnvm's InferShape pass does) then gets them; the operator checks them as it checks
 * given input shapes.
 */
mxk_status mxki_op_instance_from_params(mxk_op_params *params, mxk_context ctx,
                                        const mxk_shape *in_shapes, const int32_t *in_types,
                                        const mxk_shape *out_shapes, mxk_op_instance **out);

/**
 * A prepared call: one forward or backward of an instance bound to fixed arrays,
 * pushed many times without allocating (the executor's "cached operator"; upstream
 * src/executor/graph_executor.cc InitCachedOps / Engine::NewOperator).
 *
 * Preparing checks every array against the instance's slots (shape, dtype, device;
 * the same rules and messages as mxk_op_instance_forward/backward), retains a view
 * of each, fills the kernel's tensors once (array memory never moves) and lists the
 * engine variables read and written. Each is_train mode gets one cached engine op,
 * created at the first push of that mode; every later push of the call goes to the
 * engine without allocating. An emulated add-to (kernel without
 * MXK_KERNEL_SUPPORTS_ADDTO) allocates its temporary at the first run and keeps it.
 * The call holds a reference on its instance; the kernel is read at run time, so a
 * call keeps working after mxk_op_instance_reresolve.
 *
 * Threading: pushes of one call may come from any thread; runs of one call are
 * serialised by the engine through the arrays it writes.
 */
typedef struct mxk_op_call mxk_op_call;

/**
 * Prepares a forward call: arrays as mxk_op_instance_forward (inputs, all outputs,
 * aux; req one per output, NULL: all WRITE; an output that is the same memory as an
 * input gets MXK_REQ_INPLACE). Errors as mxk_op_instance_forward (last error set);
 * *out is NULL then.
 */
mxk_status mxki_op_call_prepare_forward(mxk_op_instance *inst, mxk_ndarray *const *inputs,
                                        mxk_ndarray *const *outputs, const mxk_op_req *req,
                                        mxk_ndarray *const *aux, mxk_op_call **out);

/**
 * Prepares a backward call: arrays as mxk_op_instance_backward (out_grads, in_data,
 * out_data, in_grads with one req each, aux; undeclared entries may be NULL; a NULL
 * in_grad gets MXK_REQ_NULL). An ADD in_grad that is the same memory as an earlier
 * in_grad (one gradient named twice, as for x * x) is computed into a temporary and
 * added after the kernel. MXK_ERR_UNSUPPORTED when the kernel has no backward.
 */
mxk_status mxki_op_call_prepare_backward(mxk_op_instance *inst, mxk_ndarray *const *out_grads,
                                         mxk_ndarray *const *in_data, mxk_ndarray *const *out_data,
                                         mxk_ndarray *const *in_grads, const mxk_op_req *req,
                                         mxk_ndarray *const *aux, mxk_op_call **out);

/**
 * Names the graph node the call computes, for the engine watchdog's and the storage
 * guard's reports (kernel/engine/engine.h). `node` must outlive the call's pushes
 * (the executor's graph owns it); NULL: none. Call before the first push.
 */
void mxki_op_call_set_node(mxk_op_call *call, const char *node);

/**
 * Turns the call's kernel profiling on (counters reset to zero) or off. While on,
 * every run of the call adds one run and the wall time of the kernel's forward or
 * backward function (CLOCK_MONOTONIC nanoseconds, add-to emulation and resource
 * preparation excluded) to the call's counters; off, a run costs one relaxed atomic
 * load. Runs already pushed but not yet started when it is turned on are counted.
 * Thread-safe (the counters are atomic).
 */
void mxki_op_call_set_profiling(mxk_op_call *call, int on);

/**
 * The call's profiling counters: kernel runs and their total wall time in
 * nanoseconds since profiling was last turned on (what runs have finished so far;
 * zeros when it was never on). Thread-safe.
 */
void mxki_op_call_profile(const mxk_op_call *call, uint64_t *runs, uint64_t *ns);

/**
 * Pushes the call (backward calls always run with is_train 1). Allocates only at the
 * first push of a mode (its cached engine op). Errors: those of
 * mxki_engine_cached_op_new / _push (a stopped engine: MXK_ERR_STATE).
 */
mxk_status mxki_op_call_push(mxk_op_call *call, int32_t is_train);

/**
 * Frees the call handle; its views and buffers are released once its pushed work has
 * completed. NULL: no-op.
 */
void mxki_op_call_free(mxk_op_call *call);

#endif /* MXK_OP_INSTANCE_H */
