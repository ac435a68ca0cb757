/*
 * mxk plugin ABI 1.3: the operator contract.
 *
 * Semantics follow MXNet's OperatorProperty / Operator (include/mxnet/operator.h,
 * include/mxnet/op_attr_types.h): attribute schema,
 * argument/output/aux-state names, visible outputs, shape and type inference,
 * backward dependency declaration (DeclareBackwardDependency), resource requests
 * per phase, in-place hints, mutated inputs, and kernels per device type that
 * receive the write request (mxk_op_req) of every output.
 *
 * An operator is registered once (mxk_op_def: the semantics), and one or more
 * kernels (mxk_op_kernel_def: the compute) are registered for it per device type,
 * possibly by other plugins ("backends"); which kernel runs is chosen by the
 * kernel's backend preference.
 *
 * Ownership: every pointer in a definition is read (and deep-copied) during the
 * registration call only. Pointers passed to callbacks are valid for that call.
 * Threading: callbacks of mxk_op_def may be called from any thread, concurrently,
 * with distinct arguments; they must be pure functions of their inputs. Kernel
 * functions are called from engine worker threads; calls with the same state
 * object are never concurrent.
 */
#ifndef MXK_ABI_OP_H
#define MXK_ABI_OP_H

#include "mxk_abi_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Type of an attribute value, for parsing and validation of its string form. */
typedef enum mxk_attr_type {
    MXK_ATTR_INT = 0,    /**< decimal integer, e.g. "128" */
    MXK_ATTR_FLOAT = 1,  /**< real number, e.g. "0.5", "1e-3" */
    MXK_ATTR_BOOL = 2,   /**< "true"/"false"/"1"/"0"/"True"/"False" */
    MXK_ATTR_STRING = 3, /**< any string */
    MXK_ATTR_SHAPE = 4,  /**< tuple of integers, "(5,5)", "(2, 2)", "[3]", "()" or "5" */
    MXK_ATTR_ENUM = 5    /**< one of the '|'-separated words in enum_values */
} mxk_attr_type;

/**
 * One attribute of an operator's (or iterator's, or transport's) schema.
 * The kernel checks every given attribute against the schema (unknown names are
 * an error listing the valid ones; values must parse as `type`), fills in
 * defaults, and rejects a missing required attribute before any callback runs.
 */
typedef struct mxk_attr_def {
    uint32_t struct_size; /**< sizeof(mxk_attr_def) as the plugin knows it */
    uint32_t abi_minor;   /**< MXK_ABI_MINOR the plugin was built with */
    const char *name;     /**< attribute name, e.g. "num_hidden"; required */
    mxk_attr_type type;   /**< value type */
    int32_t required;     /**< 1: must be given (default_value ignored) */
    const char
        *default_value;      /**< string form of the default; NULL: no default (optional, absent) */
    const char *enum_values; /**< for MXK_ATTR_ENUM: "relu|sigmoid|tanh|softrelu"; else NULL */
    const char *doc;         /**< one-line description; may be NULL */
} mxk_attr_def;

/** A resource a kernel may request (MXNet's ResourceRequest). */
typedef enum mxk_resource_type {
    MXK_RESOURCE_TEMP_SPACE = 1, /**< scratch memory on the op's device, of a requested size */
    MXK_RESOURCE_RANDOM = 2      /**< a counter-based random stream (Philox-4x32-10) */
} mxk_resource_type;

/** One resource request, filled by an operator's *_resources callback. */
typedef struct mxk_resource_request {
    uint32_t struct_size;
    int32_t type;        /**< mxk_resource_type */
    uint64_t temp_bytes; /**< MXK_RESOURCE_TEMP_SPACE: bytes needed (0: decided at run time) */
} mxk_resource_request;

/** Most resources one operator may request per phase. */
#define MXK_MAX_RESOURCES 4

/**
 * A granted resource, passed to kernels in mxk_op_ctx in the order requested.
 * Temp space: `ptr`/`bytes` (at least the requested size; contents undefined;
 * valid during the call only). Random: `random`, used through the host table.
 */
typedef struct mxk_resource {
    uint32_t struct_size;
    int32_t type;       /**< mxk_resource_type */
    void *ptr;          /**< temp space on the op's device, or NULL */
    uint64_t bytes;     /**< size of ptr */
    mxk_random *random; /**< random stream, or NULL */
} mxk_resource;

/**
 * An in-place hint (frozen value type). Forward: input `in_index` may share memory
 * with output `out_index`. Backward: `in_index` numbers the backward inputs as
 * out_grad[0..nv), in_data[0..ni), out_data[0..no) consecutively (MXNet's
 * numbering), and `out_index` is the in_grad index. `identity` (FInplaceIdentity):
 * the output equals the input, so sharing is allowed even when the input has other
 * consumers. Hints only: the kernel decides, and kernels must work either way.
 */
typedef struct mxk_inplace_pair {
    uint32_t in_index;
    uint32_t out_index;
    uint32_t identity;
    uint32_t reserved_;
} mxk_inplace_pair;

/** Most in-place pairs / mutated inputs an operator may declare. */
#define MXK_MAX_INPLACE 16

/**
 * A tensor as kernels see it: memory, shape, dtype, device. Memory is owned by the
 * kernel (mxk); valid during the call. Row-major, contiguous.
 */
typedef struct mxk_tensor {
    uint32_t struct_size;
    int32_t dtype; /**< mxk_dtype */
    void *data;    /**< first element; NULL for an absent (undeclared) tensor */
    mxk_shape shape;
    int32_t dev_type; /**< mxk_dev_type */
    int32_t dev_id;
    /* --- ABI 1.2 (read only when struct_size covers it) --- */
    /**
     * The array's write version: the number of completed writes to its engine
     * variable when the call started (MXNet's engine variable version). Equal
     * versions of the same `data` mean equal contents, so a kernel may cache a
     * transformed copy (a reordered weight) keyed by (data, version). 0: unknown
     * (the host does not track this tensor; never cache on it).
     */
    uint64_t version;
} mxk_tensor;

/**
 * Per-call context handed to forward/backward (MXNet's OpContext + RunContext).
 */
typedef struct mxk_op_ctx {
    uint32_t struct_size;
    int32_t dev_type;
    int32_t dev_id;
    int32_t is_train;  /**< 1 in training mode */
    int32_t need_grad; /**< 1 when a backward pass will follow */
    uint32_t num_resources;
    const mxk_resource *const *resources; /**< granted resources, in request order */
    void *stream;                         /**< device stream (cudaStream_t on CUDA), NULL on CPU */
    mxk_async_handle
        *async; /**< for MXK_KERNEL_ASYNC kernels: complete through host->async_complete */
    uint32_t num_threads; /**< CPU threads the kernel may use (mxk's thread knob) */
} mxk_op_ctx;

/**
 * Arguments of a forward call. Arrays are of pointers to mxk_tensor, one per
 * argument / output / aux state, in the order the operator lists them.
 * `req[i]` is the write request of out_data[i]: usually WRITE or INPLACE (NULL when the
 * output is not needed); ADD is possible too (a caller accumulating outputs), and a
 * kernel without MXK_KERNEL_SUPPORTS_ADDTO gets WRITE into a temporary instead.
 */
typedef struct mxk_forward_args {
    uint32_t struct_size;
    uint32_t num_in;
    const mxk_tensor *const *in_data;
    uint32_t num_out; /**< all outputs, visible and hidden */
    const mxk_tensor *const *out_data;
    const mxk_op_req *req; /**< num_out entries */
    uint32_t num_aux;
    const mxk_tensor *const *aux; /**< aux states; writable (BatchNorm moving stats) */
} mxk_forward_args;

/**
 * Arguments of a backward call. Tensors the operator did not declare in its
 * backward dependency may have data == NULL (and shape ndim 0): never read them. `req[i]` is the
 * write request of in_grad[i] (any mxk_op_req; NULL means that gradient is not wanted).
 */
typedef struct mxk_backward_args {
    uint32_t struct_size;
    uint32_t num_out_grad; /**< number of visible outputs */
    const mxk_tensor *const *out_grad;
    uint32_t num_in;
    const mxk_tensor *const *in_data;
    uint32_t num_out;
    const mxk_tensor *const *out_data;
    const mxk_tensor *const *in_grad; /**< num_in entries */
    const mxk_op_req *req;            /**< num_in entries */
    uint32_t num_aux;
    const mxk_tensor *const *aux;
} mxk_backward_args;

/** Kernel capability flags (mxk_op_kernel_def.flags). */
enum mxk_kernel_flags {
    /** The kernel handles MXK_REQ_ADD itself; otherwise the executor gives it a
     *  temporary output with WRITE and adds the result. */
    MXK_KERNEL_SUPPORTS_ADDTO = 1u << 0,
    /** forward/backward start work and finish by host->async_complete(ctx->async, ...). */
    MXK_KERNEL_ASYNC = 1u << 1
    /* 1u << 2 is reserved (ABI 1.0-1.2 named it MXK_KERNEL_REENTRANT, which was never
     * honoured: calls with one state object are never concurrent) and ignored. */
};

/**
 * Semantics of one operator. Optional callbacks may be NULL; the default is
 * stated on each. `param` everywhere is the object returned by parse_param (or
 * NULL when parse_param is NULL).
 */
typedef struct mxk_op_def {
    uint32_t struct_size; /**< sizeof(mxk_op_def) as the plugin knows it */
    uint32_t abi_minor;   /**< MXK_ABI_MINOR the plugin was built with */
    const char *name; /**< unique operator name, e.g. "FullyConnected"; [A-Za-z_][A-Za-z0-9_]* */
    const char *description;   /**< documentation; may be NULL */
    const mxk_attr_def *attrs; /**< attribute schema; all elements have attrs[0].struct_size */
    uint32_t num_attrs;

    /** Fixed argument names (NULL-terminated). Used when list_arguments is NULL;
     *  if both are NULL the operator has one argument, "data". */
    const char *const *arguments;
    /** Fixed output names (NULL-terminated); default {"output"}. */
    const char *const *outputs;
    /** Fixed aux-state names (NULL-terminated); default none. */
    const char *const *aux_states;

    /**
     * Parses validated attributes (defaults filled in) into an operator-owned
     * parameter object, read through host->attr_* functions. Returns an error
     * (MXK_ERR_INVALID_ARGUMENT with a message) for values that are well-typed but
     * invalid (e.g. num_hidden <= 0). NULL: no parameters.
     */
    mxk_status (*parse_param)(const mxk_attrs *attrs, void **param, mxk_error_sink *err);
    /** Frees a parameter object from parse_param. Required when parse_param is set. */
    void (*free_param)(void *param);

    /** Attribute-dependent argument names, appended with host->name_list_add (Concat: arg0..). */
    mxk_status (*list_arguments)(const void *param, mxk_name_list *out, mxk_error_sink *err);
    /** Attribute-dependent output names (SliceChannel: output0..). */
    mxk_status (*list_outputs)(const void *param, mxk_name_list *out, mxk_error_sink *err);
    /** Attribute-dependent aux-state names. */
    mxk_status (*list_aux_states)(const void *param, mxk_name_list *out, mxk_error_sink *err);
    /** Number of visible outputs (MXNet NumVisibleOutputs); NULL: all outputs. */
    uint32_t (*num_visible_outputs)(const void *param);

    /**
     * Shape inference (MXNet InferShape). Arrays have one slot per argument,
     * output, aux state; unknown shapes have ndim 0, unknown dims are 0. Fill the
     * unknown slots that can be deduced (also backwards, e.g. weight from data) and
     * check known ones. Return MXK_OK when merely incomplete (the kernel decides
     * completeness); return MXK_ERR_SHAPE with "argument 'weight': expected
     * (128,784), got (128,100)"-style detail when shapes are inconsistent.
     * Required.
     */
    mxk_status (*infer_shape)(const void *param, mxk_shape *in_shapes, uint32_t num_in,
                              mxk_shape *out_shapes, uint32_t num_out, mxk_shape *aux_shapes,
                              uint32_t num_aux, mxk_error_sink *err);
    /**
     * Type inference with mxk_dtype codes (-1 unknown), same conventions.
     * NULL: every slot takes the first known dtype, default float32; a known slot
     * of another dtype is MXK_ERR_TYPE.
     */
    mxk_status (*infer_type)(const void *param, int32_t *in_types, uint32_t num_in,
                             int32_t *out_types, uint32_t num_out, int32_t *aux_types,
                             uint32_t num_aux, mxk_error_sink *err);

    /**
     * Backward dependency (MXNet DeclareBackwardDependency): set the flags (all
     * zero on entry) of the out_grad (num_visible entries), in_data and out_data
     * tensors that backward reads. Undeclared tensors may be freed after forward
     * and reach backward with data == NULL. NULL: backward needs everything.
     */
    void (*backward_dependency)(const void *param, uint32_t num_visible, uint32_t num_in,
                                uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                uint8_t *need_out_data);

    /** Resources forward needs, given the input shapes; writes up to *num (in: capacity
     *  MXK_MAX_RESOURCES, out: count). NULL: none. */
    mxk_status (*forward_resources)(const void *param, const mxk_shape *in_shapes, uint32_t num_in,
                                    mxk_resource_request *reqs, uint32_t *num, mxk_error_sink *err);
    /** Resources backward needs; same contract. NULL: none. */
    mxk_status (*backward_resources)(const void *param, const mxk_shape *in_shapes, uint32_t num_in,
                                     mxk_resource_request *reqs, uint32_t *num,
                                     mxk_error_sink *err);

    /** Forward in-place hints; returns the count written (<= capacity). NULL: none. */
    uint32_t (*forward_inplace)(const void *param, mxk_inplace_pair *pairs, uint32_t capacity);
    /** Backward in-place hints (see mxk_inplace_pair for numbering). NULL: none. */
    uint32_t (*backward_inplace)(const void *param, mxk_inplace_pair *pairs, uint32_t capacity);
    /** Indices of inputs the forward writes (optimizer updates); returns the count. NULL: none. */
    uint32_t (*mutate_inputs)(const void *param, uint32_t *indices, uint32_t capacity);
    /** 1 if the operator has no backward (BlockGrad-like ops return gradients of 0
     *  through their own backward instead); NULL: differentiable. */
    int32_t (*no_gradient)(const void *param);

    /* --- ABI 1.1 --- */
    /**
     * Other names of the operator (NULL-terminated; NULL: none), as MXNet's
     * NNVM_REGISTER_OP(...).add_alias(...) registers them (`flatten` for Flatten,
     * `_plus`/`_add`/`_Plus` for elemwise_add). An alias resolves to this operator
     * wherever a name is looked up (symbol creation, MXNet JSON, imperative calls,
     * kernels registered under the alias); JSON written by mxk names the operator
     * by `name`. Each alias must be unique among all operator names and aliases.
     * Read only when struct_size covers it.
     */
    const char *const *aliases;
    /* --- ABI 1.3 (read only when struct_size covers it) --- */
    /**
     * Attributes for the variable feeding input `index` (arguments first, then aux
     * states, MXNet's input numbering), MXNet's FSetInputVarAttrOnCompose: BatchNorm
     * gives moving_mean `__init__` "[\"zero\", {}]" and moving_var "[\"one\", {}]"
     * (src/operator/nn/batch_norm.cc), so initialisers start them at 0 and 1. Append
     * key, value, key, value, ... with host->name_list_add (none: nothing to set);
     * the host sets each key the variable does not have yet, and never touches an
     * input computed by another operator. Called when a node of the operator is
     * composed (symbol creation, MXNet JSON loading), once per input fed by a
     * variable, auto-created or given. An error fails the composition with the
     * operator's name prefixed. NULL: no attributes.
     */
    mxk_status (*input_var_attrs)(const void *param, uint32_t index, mxk_name_list *out,
                                  mxk_error_sink *err);
} mxk_op_def;

/**
 * Compute for one operator on one device type, from one backend. Several backends
 * may register kernels for the same (operator, device type); the kernel's backend
 * preference chooses. `supports` lets a kernel decline configurations it cannot
 * handle, so the next backend in preference order is used.
 */
typedef struct mxk_op_kernel_def {
    uint32_t struct_size;
    uint32_t abi_minor;
    const char *op_name; /**< operator this computes; may be defined by another plugin */
    int32_t dev_type;    /**< mxk_dev_type */
    const char *backend; /**< backend name, e.g. "cpu-blas"; NULL: the plugin's name */
    int32_t priority;    /**< tie-break when the preference does not name a backend; higher wins */
    uint32_t flags;      /**< mxk_kernel_flags */

    /** 1 if this kernel can run the given configuration, 0 to decline. NULL: always. */
    int32_t (*supports)(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                        uint32_t num_in);
    /**
     * Creates a per-binding state object (cached descriptors, primitive objects).
     * Called once per bound node (or imperative call) with the inferred shapes and
     * types. NULL: kernels get state == NULL.
     */
    mxk_status (*create_state)(const void *param, int32_t dev_type, int32_t dev_id,
                               const mxk_shape *in_shapes, const int32_t *in_types, uint32_t num_in,
                               void **state, mxk_error_sink *err);
    /** Frees a state from create_state. */
    void (*destroy_state)(void *state);
    /** Forward. Required. */
    mxk_status (*forward)(const mxk_op_ctx *ctx, const void *param, void *state,
                          const mxk_forward_args *args, mxk_error_sink *err);
    /** Backward. NULL: the operator cannot be differentiated on this backend. */
    mxk_status (*backward)(const mxk_op_ctx *ctx, const void *param, void *state,
                           const mxk_backward_args *args, mxk_error_sink *err);

    /* --- ABI 1.2 (read only when struct_size covers it) --- */
    /**
     * Parses the operator's validated attributes (defaults filled in, as the
     * operator's schema gives them) into the kernel's own parameter object. A
     * backend whose kernels compute an operator another plugin defines cannot read
     * that plugin's parameter object; with parse_param set, `supports`,
     * `create_state`, `forward` and `backward` receive the kernel's object as
     * `param` instead. Called when the kernel is considered for a node (resolution,
     * re-resolution); errors decline the kernel with the message logged at debug
     * level. NULL: the kernel gets the operator's object.
     */
    mxk_status (*parse_param)(const mxk_attrs *attrs, void **param, mxk_error_sink *err);
    /** Frees an object from parse_param. Required when parse_param is set. */
    void (*free_param)(void *param);
    /**
     * Tolerances of this kernel against another backend's kernel of the same
     * operator on identical inputs (mxk crosscheck, MXK_CROSSCHECK): an element
     * agrees when |a - b| <= atol + rtol * |b|. 0: the defaults (rtol 1e-4,
     * atol 1e-5 for float32); the larger of the two kernels' values is used.
     */
    double crosscheck_rtol;
    double crosscheck_atol;
} mxk_op_kernel_def;

#ifdef __cplusplus
}
#endif

#endif /* MXK_ABI_OP_H */
