/*
 * mxk public C API: the one header an application includes.
 *
 * Conventions:
 * - Every fallible function returns an mxk_status (MXK_OK == 0 on success); on
 *   failure mxk_get_last_error() holds a message saying what was wrong and where
 *   (operator, node, argument, expected vs got). The message is thread-local and
 *   valid until the next failing call on the same thread.
 * - Handles (mxk_ndarray *, mxk_op_instance *) are created by mxk_*_create / load
 *   functions and released by the matching *_free; the caller owns them.
 * - Shapes are row-major, batch first (NCHW); dtypes and device types use MXNet's
 *   codes (mxk_abi_base.h).
 * - Thread safety: all functions may be called from any thread; pushes of work on
 *   the same arrays are ordered in the order of the calls of one thread. Work runs
 *   asynchronously on the dependency engine; copies to the host and waits are the
 *   synchronisation points where errors of earlier asynchronous work are reported
 *   (once; seed exception_handling).
 */
#ifndef MXK_H
#define MXK_H

#include "mxk_abi_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A device: type (mxk_dev_type) and ordinal. */
typedef struct mxk_context {
    int32_t dev_type;
    int32_t dev_id;
} mxk_context;

/** Library version string, e.g. "0.1.0". */
const char *mxk_version(void);

/** The calling thread's last error message ("" if none). Thread-local. */
const char *mxk_get_last_error(void);

/** Name of a status code ("MXK_ERR_SHAPE"); never NULL. */
const char *mxk_status_name(mxk_status code);

/** Name of a dtype code ("float32"), or "unknown". */
const char *mxk_dtype_name(int32_t dtype);

/** Size in bytes of one element of a dtype, or 0 for an unknown code. */
size_t mxk_dtype_size(int32_t dtype);

/** Name of a device type ("cpu", "gpu", "cpu_pinned"), or "unknown". */
const char *mxk_dev_type_name(int32_t dev_type);

/* ------------------------------------------------------------------------- */
/* Library set-up                                                            */
/* ------------------------------------------------------------------------- */

/** Options of mxk_init. Zero-fill, set struct_size, then set what you need. */
typedef struct mxk_init_options {
    uint32_t struct_size;   /**< sizeof(mxk_init_options) */
    const char *config_dir; /**< explicit config dir (command-line flag); NULL: search */
    const char *backend;    /**< backend preference list overriding config and env; NULL: none */
    int32_t no_plugins;     /**< 1: load no plugins from the config (tests load by path) */
} mxk_init_options;

/**
 * Initialises the library: starts the engine (MXK_ENGINE_TYPE), finds the config
 * dir (options->config_dir, else $MXK_CONFIG_DIR, else $XDG_CONFIG_HOME/mxk, else
 * the install's etc/mxk located from libmxk's own path), reads mxk.conf and loads
 * every enabled plugin of plugins.d/ *.conf. A plugin that fails to load is
 * recorded with its reason (see mxk_plugin_*), never an error of mxk_init.
 * Errors: MXK_ERR_FORMAT for a malformed mxk.conf (file and line named),
 * MXK_ERR_INVALID_ARGUMENT for a bad engine type or option. Idempotent: a second
 * call returns MXK_OK and changes nothing. `options` may be NULL.
 */
mxk_status mxk_init(const mxk_init_options *options);

/** Waits for all work, runs plugin shutdown hooks and releases pooled memory. */
void mxk_shutdown(void);

/** The config dir in use after mxk_init ("" when none was found). */
const char *mxk_config_dir(void);

/**
 * Loads one plugin library by path (two-phase load, see abi/README.md).
 * `options` (may be NULL) is a NULL-terminated key, value, key, value, ... list
 * passed as the plugin's options. Loading the same real path twice is a no-op.
 * Errors: MXK_ERR_NOT_FOUND (no such file), MXK_ERR_ABI (not a plugin, version
 * skew, bad definitions), MXK_ERR_DUPLICATE (name clash), or what init returned;
 * in every case the rejection is also recorded for mxk_plugin_rejected_*.
 */
mxk_status mxk_load_plugin(const char *path, const char *const *options);

/** Number of loaded plugins. */
uint32_t mxk_plugin_count(void);

/** What a loaded plugin is (strings owned by the library, valid until mxk_shutdown). */
typedef struct mxk_plugin_record {
    const char *name;
    const char *version;
    const char *description;
    const char *path; /**< real path of the library */
    uint32_t abi_major, abi_minor, negotiated_minor;
    uint32_t num_ops, num_kernels, num_devices, num_iterators, num_transports;
} mxk_plugin_record;

/** Fills `out` for loaded plugin i (0-based). MXK_ERR_NOT_FOUND if out of range. */
mxk_status mxk_plugin_get(uint32_t i, mxk_plugin_record *out);

/** Number of rejected plugin candidates (kept with their reasons). */
uint32_t mxk_plugin_rejected_count(void);

/** Path (or conf file) and reason of rejected candidate i; strings owned by the library. */
mxk_status mxk_plugin_rejected_get(uint32_t i, const char **path, const char **reason);

/* ------------------------------------------------------------------------- */
/* Registry queries                                                          */
/* ------------------------------------------------------------------------- */

/** Number of registered operators; names are listed in registration order. */
uint32_t mxk_op_count(void);
/** Name of operator i, or NULL when out of range. */
const char *mxk_op_name(uint32_t i);
/** Name of the plugin that defined operator `op`, or NULL. */
const char *mxk_op_plugin(const char *op);
/** Number of kernels registered for operator `op` (all devices and backends). */
uint32_t mxk_op_kernel_count(const char *op);
/** Device type, backend and plugin of kernel i of `op`. MXK_ERR_NOT_FOUND if out of range. */
mxk_status mxk_op_kernel_get(const char *op, uint32_t i, int32_t *dev_type, const char **backend,
                             const char **plugin);
/** Registered iterator / transport / device names (i-th), or NULL when out of range. */
const char *mxk_iterator_name(uint32_t i);
const char *mxk_kvstore_transport_name(uint32_t i);
/** Name of the plugin that registered iterator / transport `name`, or NULL. */
const char *mxk_iterator_plugin(const char *name);
const char *mxk_kvstore_transport_plugin(const char *name);
/** i-th registered device backend: type and name; MXK_ERR_NOT_FOUND if out of range. */
mxk_status mxk_device_get(uint32_t i, int32_t *dev_type, const char **name, const char **plugin);
/** Number of devices of a type (0 when no backend serves it). */
int32_t mxk_device_count(int32_t dev_type);

/* ------------------------------------------------------------------------- */
/* Backend selection                                                         */
/* ------------------------------------------------------------------------- */

/**
 * Sets the backend preference list, comma-separated, most preferred first
 * ("onednn,cpu-blas"). Backends not named rank after the named ones, by kernel
 * priority. Precedence: this call > MXK_BACKEND > `backend =` in mxk.conf.
 * An empty string or NULL clears the API-level preference. Takes effect at the next
 * dispatch or bind (and when a live executor re-resolves).
 */
mxk_status mxk_set_backend_preference(const char *list);

/** Forces `backend` for operator `op` (NULL or "" clears the override). Also
 *  settable in mxk.conf as `backend.OPNAME = name`. */
mxk_status mxk_set_op_backend(const char *op, const char *backend);

/** The effective preference list ("" when none). Owned by the library; valid until the next set. */
const char *mxk_get_backend_preference(void);

/**
 * The backend whose kernel would run `op` on `dev_type` now (NULL and
 * MXK_ERR_NOT_FOUND when none is registered).
 */
mxk_status mxk_resolve_backend(const char *op, int32_t dev_type, const char **backend);

/* ------------------------------------------------------------------------- */
/* Global knobs                                                              */
/* ------------------------------------------------------------------------- */

/** Seeds every random stream (all devices), as MXNet's mx.random.seed. */
mxk_status mxk_random_seed(uint64_t seed);

/**
 * Sets the number of CPU threads operator kernels may use (mxk_op_ctx.num_threads);
 * also caps OpenBLAS's own pool through the cpu-blas plugin so the two never
 * oversubscribe. Default: MXK_NUM_THREADS or the number of online CPUs.
 */
mxk_status mxk_set_num_threads(int32_t n);
/** Current CPU thread count. */
int32_t mxk_get_num_threads(void);

/** Memory statistics of one device's storage pool (bytes). */
typedef struct mxk_storage_stats {
    uint64_t bytes_in_use; /**< handed out and not yet freed (rounded sizes) */
    uint64_t bytes_pooled; /**< freed and kept for reuse */
    uint64_t peak_in_use;  /**< maximum of bytes_in_use since start */
    uint64_t raw_allocs;   /**< calls of the backend's alloc */
    uint64_t pool_hits;    /**< allocations served from the pool */
} mxk_storage_stats;

/** Fills `out` with ctx's storage statistics (zeros for a device never used). */
mxk_status mxk_storage_get_stats(mxk_context ctx, mxk_storage_stats *out);

/** Waits for all pushed work; reports the first unreported asynchronous error once. */
mxk_status mxk_wait_all(void);

/* ------------------------------------------------------------------------- */
/* NDArray                                                                   */
/* ------------------------------------------------------------------------- */

/** An n-dimensional array on a device, guarded by an engine variable. */
typedef struct mxk_ndarray mxk_ndarray;

/**
 * Creates an array of `shape` and `dtype` (mxk_dtype) on `ctx`. Memory comes from
 * the device's pool; contents are undefined. ndim 0 with no dims is rejected
 * (MXK_ERR_SHAPE); unknown device type: MXK_ERR_NOT_FOUND; OOM: MXK_ERR_OUT_OF_MEMORY.
 */
mxk_status mxk_ndarray_create(const mxk_shape *shape, int32_t dtype, mxk_context ctx,
                              mxk_ndarray **out);
/** Releases the handle; memory is freed once no view and no pending work uses it. NULL: no-op. */
void mxk_ndarray_free(mxk_ndarray *arr);
/** Shape of the array. */
mxk_shape mxk_ndarray_shape(const mxk_ndarray *arr);
/** dtype (mxk_dtype). */
int32_t mxk_ndarray_dtype(const mxk_ndarray *arr);
/** Device of the array. */
mxk_context mxk_ndarray_context(const mxk_ndarray *arr);
/** Number of elements. */
uint64_t mxk_ndarray_size(const mxk_ndarray *arr);
/**
 * Pointer to the first element, for CPU arrays, after waiting for pending writes
 * (reports their errors). Non-CPU arrays: MXK_ERR_UNSUPPORTED.
 */
mxk_status mxk_ndarray_data(mxk_ndarray *arr, void **data);
/** Copies `bytes` (must equal size * element size) from host memory into the array (async). */
mxk_status mxk_ndarray_copy_from_host(mxk_ndarray *arr, const void *src, uint64_t bytes);
/** Copies the array into host memory; waits, and reports errors of earlier work on it. */
mxk_status mxk_ndarray_copy_to_host(mxk_ndarray *arr, void *dst, uint64_t bytes);
/** Copies src into dst (same shape; any devices; dtype converted if different). Async. */
mxk_status mxk_ndarray_copy_to(mxk_ndarray *src, mxk_ndarray *dst);
/** Sets every element to `value` (async). */
mxk_status mxk_ndarray_fill(mxk_ndarray *arr, double value);
/** Creates an array filled with `value` (zeros: 0, ones: 1). */
mxk_status mxk_ndarray_full(const mxk_shape *shape, int32_t dtype, mxk_context ctx, double value,
                            mxk_ndarray **out);
/** A view of rows [begin, end) along axis 0, sharing memory (and the engine variable). */
mxk_status mxk_ndarray_slice(mxk_ndarray *arr, int64_t begin, int64_t end, mxk_ndarray **out);
/** A view with another shape of the same size, sharing memory. MXK_ERR_SHAPE on size mismatch. */
mxk_status mxk_ndarray_reshape(mxk_ndarray *arr, const mxk_shape *shape, mxk_ndarray **out);
/** Waits until all pending writes to the array are done; reports their errors (once). */
mxk_status mxk_ndarray_wait_to_read(mxk_ndarray *arr);
/** Waits until all pending reads and writes of the array are done; reports errors (once). */
mxk_status mxk_ndarray_wait_to_write(mxk_ndarray *arr);

/**
 * Saves arrays (with names, or names == NULL for an unnamed list) in MXNet's
 * NDArray list format (.params; V2 records). Waits for pending writes.
 * Errors: MXK_ERR_IO (file), or errors of pending work.
 */
mxk_status mxk_ndarray_save(const char *path, uint32_t num, mxk_ndarray *const *arrays,
                            const char *const *names);
/**
 * Loads an MXNet NDArray list file (V2/V3-dense/V1/legacy records) onto CPU.
 * On success *arrays and *names (NULL when the file has no names) are arrays of
 * *num entries that the caller frees with mxk_ndarray_list_free.
 * Errors: MXK_ERR_IO, MXK_ERR_FORMAT ("Invalid NDArray file format" plus detail),
 * never a crash on malformed input.
 */
mxk_status mxk_ndarray_load(const char *path, uint32_t *num, mxk_ndarray ***arrays, char ***names);
/** Frees what mxk_ndarray_load returned (arrays and names). */
void mxk_ndarray_list_free(uint32_t num, mxk_ndarray **arrays, char **names);

/* ------------------------------------------------------------------------- */
/* Operators: imperative invocation and operator instances                   */
/* ------------------------------------------------------------------------- */

/**
 * Runs operator `op_name` on NDArrays (MXNet's MXImperativeInvoke). Attributes are
 * string key/value pairs checked against the operator's schema (an unknown key is
 * MXK_ERR_NOT_FOUND listing the valid ones). Shapes and types are inferred; if
 * *num_outputs is 0 on entry, outputs are allocated on the first input's device
 * (the visible outputs are returned: *num_outputs set, outputs[] filled with new
 * handles the caller frees; `outputs` must have room for 16); otherwise
 * outputs[0..*num_outputs) are written (their shapes must match). The work is
 * pushed to the engine reading the inputs and writing the outputs, with the
 * operator's resources; it runs in inference mode (is_train 0).
 */
mxk_status mxk_imperative_invoke(const char *op_name, uint32_t num_inputs,
                                 mxk_ndarray *const *inputs, uint32_t *num_outputs,
                                 mxk_ndarray **outputs, uint32_t num_attrs, const char *const *keys,
                                 const char *const *vals);

/**
 * An operator bound to attributes, input shapes/dtypes and a device: parsed
 * parameters, inferred shapes, resolved kernel and its state, resource needs.
 * It is what the executor pushes per node ("cached operator"), and what tests and
 * the operator test kit use to run forward and backward with explicit write requests.
 */
typedef struct mxk_op_instance mxk_op_instance;

/**
 * Creates an instance. `in_shapes` / `in_types` give one entry per argument
 * (unknown shapes ndim 0 are inferred where the operator can, e.g. weights);
 * in_types may be NULL (float32). After creation every shape is known, or
 * MXK_ERR_SHAPE says which is missing/inconsistent.
 */
mxk_status mxk_op_instance_create(const char *op_name, uint32_t num_attrs, const char *const *keys,
                                  const char *const *vals, mxk_context ctx, uint32_t num_inputs,
                                  const mxk_shape *in_shapes, const int32_t *in_types,
                                  mxk_op_instance **out);
/** Frees an instance (after its pushed work completes). NULL: no-op. */
void mxk_op_instance_free(mxk_op_instance *inst);

/** Counts: arguments, all outputs, visible outputs, aux states. */
void mxk_op_instance_counts(const mxk_op_instance *inst, uint32_t *num_inputs,
                            uint32_t *num_outputs, uint32_t *num_visible, uint32_t *num_aux);
/** Inferred shape/dtype of input, output or aux slot i (kind 0 input, 1 output, 2 aux). */
mxk_status mxk_op_instance_shape(const mxk_op_instance *inst, int32_t kind, uint32_t i,
                                 mxk_shape *shape, int32_t *dtype);
/** Name of input, output or aux slot i (kind as above), or NULL. */
const char *mxk_op_instance_name(const mxk_op_instance *inst, int32_t kind, uint32_t i);
/** The backend whose kernel the instance runs. */
const char *mxk_op_instance_backend(const mxk_op_instance *inst);
/** Backward dependency: fills need flags (out_grad: num_visible, in_data, out_data entries). */
void mxk_op_instance_backward_dependency(const mxk_op_instance *inst, uint8_t *need_out_grad,
                                         uint8_t *need_in_data, uint8_t *need_out_data);
/**
 * Re-resolves the kernel by the current backend preference (e.g. after
 * mxk_set_backend_preference); re-creates the kernel state when it changes.
 */
mxk_status mxk_op_instance_reresolve(mxk_op_instance *inst);

/**
 * Pushes forward. inputs/outputs/aux follow the instance's slots (all outputs,
 * hidden ones included). `req` has one mxk_op_req per output (NULL: all WRITE).
 * An output that is the same array as an input gets MXK_REQ_INPLACE semantics.
 * ADD on a kernel without MXK_KERNEL_SUPPORTS_ADDTO is emulated (temp + add).
 */
mxk_status mxk_op_instance_forward(mxk_op_instance *inst, int32_t is_train,
                                   mxk_ndarray *const *inputs, mxk_ndarray *const *outputs,
                                   const int32_t *req, mxk_ndarray *const *aux);
/**
 * Pushes backward: out_grads (visible outputs), in_data, out_data (undeclared
 * entries may be NULL), in_grads with one req each (NULL: all WRITE), aux.
 * MXK_ERR_UNSUPPORTED if the kernel has no backward.
 */
mxk_status mxk_op_instance_backward(mxk_op_instance *inst, mxk_ndarray *const *out_grads,
                                    mxk_ndarray *const *in_data, mxk_ndarray *const *out_data,
                                    mxk_ndarray *const *in_grads, const int32_t *req,
                                    mxk_ndarray *const *aux);

/* ------------------------------------------------------------------------- */
/* Symbol (symbolic graphs)                                                  */
/* ------------------------------------------------------------------------- */

/**
 * A symbolic graph: a list of output entries of operator and variable nodes
 * (MXNet's Symbol; seed overview "Symbol", dmlc/nnvm src/core/symbolic.cc).
 * Symbols share nodes; every function returning a symbol returns a new handle
 * that the caller frees with mxk_symbol_free.
 */
typedef struct mxk_symbol mxk_symbol;

/** Kinds of name lists of a symbol (mxk_symbol_list_names). */
typedef enum mxk_symbol_names {
    MXK_SYMBOL_ARGUMENTS = 0, /**< list_arguments: variables that are not aux states */
    MXK_SYMBOL_OUTPUTS = 1,   /**< list_outputs: "<node>_output", "<node>_<name>" */
    MXK_SYMBOL_AUX_STATES = 2 /**< list_auxiliary_states */
} mxk_symbol_names;

/** Creates a variable named `name`. Errors: MXK_ERR_INVALID_ARGUMENT for an empty name. */
mxk_status mxk_symbol_variable(const char *name, mxk_symbol **out);

/**
 * Applies operator `op` with string attributes to inputs (MXNet's compose).
 * `name` NULL gives MXNet's automatic name: the lower-cased operator name and a
 * per-operator counter ("fullyconnected0"). Inputs are positional when
 * `input_names` is NULL, else matched by argument name ("data", "weight"); each
 * input must have one output. Arguments not given become new variables named
 * "<name>_<argument>" (fc1_weight, fc1_bias, softmax_label), and aux states
 * "<name>_<aux>"; those variables carry a copy of the node's attributes as MXNet
 * does. Errors: MXK_ERR_NOT_FOUND (unknown operator, listing the registered ones;
 * unknown input name, listing the arguments), MXK_ERR_INVALID_ARGUMENT (bad
 * attributes; too many inputs; an input with several outputs).
 */
mxk_status mxk_symbol_create(const char *op, const char *name, uint32_t num_attrs,
                             const char *const *keys, const char *const *vals, uint32_t num_inputs,
                             const char *const *input_names, mxk_symbol *const *inputs,
                             mxk_symbol **out);

/** Groups symbols: the outputs of all of them, in order. */
mxk_status mxk_symbol_group(uint32_t num, mxk_symbol *const *symbols, mxk_symbol **out);

/** A deep copy (new nodes with the same names and attributes). */
mxk_status mxk_symbol_copy(const mxk_symbol *sym, mxk_symbol **out);

/** Frees a handle (nodes are freed when no symbol uses them). NULL: no-op. */
void mxk_symbol_free(mxk_symbol *sym);

/** Number of outputs. */
uint32_t mxk_symbol_num_outputs(const mxk_symbol *sym);

/** A symbol of output i. MXK_ERR_INVALID_ARGUMENT when out of range. */
mxk_status mxk_symbol_get_output(const mxk_symbol *sym, uint32_t i, mxk_symbol **out);

/** All internal outputs (every node's visible outputs, variables too), MXNet's get_internals. */
mxk_status mxk_symbol_get_internals(const mxk_symbol *sym, mxk_symbol **out);

/**
 * Lists names of a kind. *names is a NULL-terminated array of *num strings that the
 * caller frees with mxk_string_list_free.
 */
mxk_status mxk_symbol_list_names(const mxk_symbol *sym, mxk_symbol_names kind, uint32_t *num,
                                 char ***names);

/** Frees a string list returned by the library. NULL: no-op. */
void mxk_string_list_free(char **list);

/** Name of the symbol's single output node (NULL for a group). Owned by the symbol. */
const char *mxk_symbol_name(const mxk_symbol *sym);

/**
 * Sets attribute `key` on the symbol's single output node (a group:
 * MXK_ERR_INVALID_ARGUMENT). Hidden keys (lr_mult, wd_mult, ctx_group, ...) are
 * stored as "__key__", as MXNet does.
 */
mxk_status mxk_symbol_set_attr(mxk_symbol *sym, const char *key, const char *value);

/** Value of attribute `key` of the single output node, or NULL (owned by the symbol). */
const char *mxk_symbol_get_attr(const mxk_symbol *sym, const char *key);

/**
 * Lists the attributes of every node reachable from the symbol as
 * "<node>$<key>", value pairs (MXNet's list_attr(recursive=True)); *kv is a
 * NULL-terminated array of 2 * *num strings freed with mxk_string_list_free.
 */
mxk_status mxk_symbol_list_attrs(const mxk_symbol *sym, uint32_t *num, char ***kv);

/** Serialises to MXNet's JSON (current nnvm form). *json is freed with free(). */
mxk_status mxk_symbol_to_json(const mxk_symbol *sym, char **json);

/**
 * Parses MXNet symbol JSON, current or legacy (MXNet <= 0.8: `param`/`attr`,
 * two-element inputs, missing aux-state inputs added back as "<node>_<aux>").
 * Errors: MXK_ERR_FORMAT for malformed JSON or graph (cycles, out-of-range ids;
 * the message says where), MXK_ERR_NOT_FOUND for an unknown operator (naming the
 * operator and the node). Never crashes on bad input.
 */
mxk_status mxk_symbol_from_json(const char *json, mxk_symbol **out);

/** mxk_symbol_to_json into a file (MXK_ERR_IO on failure). */
mxk_status mxk_symbol_save(const mxk_symbol *sym, const char *path);

/** mxk_symbol_from_json from a file. */
mxk_status mxk_symbol_load(const char *path, mxk_symbol **out);

/**
 * Shape inference. Known argument shapes are given by name (`num_known` names and
 * shapes). On success fills arrays owned by the caller: arg_shapes (one per
 * argument), out_shapes (one per output), aux_shapes (one per aux state); any may
 * be NULL. *complete is 1 when every shape is known, 0 when inference was partial
 * (unknown dims 0; not an error). Inconsistent shapes: MXK_ERR_SHAPE naming the
 * node, the argument, expected and actual. An unknown name: MXK_ERR_NOT_FOUND.
 */
mxk_status mxk_symbol_infer_shape(const mxk_symbol *sym, uint32_t num_known,
                                  const char *const *names, const mxk_shape *shapes,
                                  mxk_shape *arg_shapes, mxk_shape *out_shapes,
                                  mxk_shape *aux_shapes, int32_t *complete);

/** Type inference, the same conventions with dtype codes (-1 unknown). */
mxk_status mxk_symbol_infer_type(const mxk_symbol *sym, uint32_t num_known,
                                 const char *const *names, const int32_t *types, int32_t *arg_types,
                                 int32_t *out_types, int32_t *aux_types, int32_t *complete);

/* ------------------------------------------------------------------------- */
/* Executor                                                                  */
/* ------------------------------------------------------------------------- */

/**
 * A symbol bound to arrays on a device: forward and backward over a static memory
 * plan, pushed to the engine as cached operators (seed executor pages; upstream
 * src/executor/graph_executor.cc; digest executor-bucketing.md).
 */
typedef struct mxk_executor mxk_executor;

/**
 * Binds `sym` on ctx. args: one array per argument (list_arguments order);
 * arg_grads: one per argument, entries may be NULL (then no gradient: null);
 * grad_reqs: one mxk_op_req per argument (NULL = all WRITE where a gradient array
 * is given); aux: one per aux state. Arrays are referenced, not copied.
 * `shared_exec` (may be NULL) lends its memory pool. Errors: MXK_ERR_INVALID_ARGUMENT
 * ("Length of args does not match the number of arguments", ...), MXK_ERR_SHAPE /
 * MXK_ERR_TYPE from inference, MXK_ERR_NOT_FOUND for a missing kernel.
 */
mxk_status mxk_executor_bind(const mxk_symbol *sym, mxk_context ctx, uint32_t num_args,
                             mxk_ndarray *const *args, mxk_ndarray *const *arg_grads,
                             const int32_t *grad_reqs, uint32_t num_aux, mxk_ndarray *const *aux,
                             mxk_executor *shared_exec, mxk_executor **out);

/**
 * Infers every shape from the given input shapes and allocates zero-filled
 * arguments, gradients (for requests other than null) and aux states.
 * grad_req: "write", "add" or "null" for all arguments; per-argument overrides
 * may follow in `req_names`/`req_values` (num_reqs entries). `shared_exec` lends
 * its pool; `shared_buffer`-style reuse of same-named data arrays goes through it
 * too. Errors as bind, plus "InferShape pass cannot decide shapes for the
 * following arguments ..." (MXK_ERR_SHAPE) when shapes stay unknown.
 */
mxk_status mxk_executor_simple_bind(const mxk_symbol *sym, mxk_context ctx, uint32_t num_shapes,
                                    const char *const *names, const mxk_shape *shapes,
                                    const char *grad_req, uint32_t num_reqs,
                                    const char *const *req_names, const char *const *req_values,
                                    mxk_executor *shared_exec, mxk_executor **out);

/** Frees an executor (after its pending work). Arrays it allocated are freed; bound ones not. */
void mxk_executor_free(mxk_executor *ex);

/** Pushes the forward pass (is_train selects training behaviour and keeps backward inputs). */
mxk_status mxk_executor_forward(mxk_executor *ex, int32_t is_train);

/**
 * Pushes the backward pass. head_grads: one per output (entries may be NULL for
 * loss outputs, whose gradient is ignored); num_head may be 0 when every output is
 * a loss. When a non-loss output has no head gradient: MXK_ERR_INVALID_ARGUMENT with
 * MXNet's message ("Because the last operator is not Loss function, head_gradient is
 * required when calling backward. ..."). No gradient requested: does nothing.
 */
mxk_status mxk_executor_backward(mxk_executor *ex, uint32_t num_head,
                                 mxk_ndarray *const *head_grads);

/** Number of outputs; output i (owned by the executor, valid until it is freed/reshaped). */
uint32_t mxk_executor_num_outputs(const mxk_executor *ex);
mxk_ndarray *mxk_executor_output(const mxk_executor *ex, uint32_t i);

/** Arrays by name (owned by the executor; NULL when absent): argument, its gradient, aux, output.
 */
mxk_ndarray *mxk_executor_arg(const mxk_executor *ex, const char *name);
mxk_ndarray *mxk_executor_grad(const mxk_executor *ex, const char *name);
mxk_ndarray *mxk_executor_aux(const mxk_executor *ex, const char *name);
mxk_ndarray *mxk_executor_output_by_name(const mxk_executor *ex, const char *name);

/**
 * Copies named arrays into the executor's arguments (and aux states), converting
 * dtype. An unknown name: MXK_ERR_NOT_FOUND ('Find name "x" that is not in the
 * arguments') unless allow_extra.
 */
mxk_status mxk_executor_copy_params_from(mxk_executor *ex, uint32_t num_args,
                                         const char *const *arg_names,
                                         mxk_ndarray *const *arg_arrays, uint32_t num_aux,
                                         const char *const *aux_names,
                                         mxk_ndarray *const *aux_arrays, int32_t allow_extra);

/**
 * A new executor for new input shapes sharing memory with `ex` (upstream
 * GraphExecutor::Reshape): unchanged arrays are shared, smaller ones become views,
 * larger ones need allow_up_sizing. The two must not run concurrently.
 */
mxk_status mxk_executor_reshape(mxk_executor *ex, int32_t partial_shaping, int32_t allow_up_sizing,
                                uint32_t num_shapes, const char *const *names,
                                const mxk_shape *shapes, mxk_executor **out);

/**
 * Monitor callback: called after each operator is pushed, per output
 * ("<node>_<output>"), with a new array handle the callee owns (frees) and must
 * wait on before reading; with monitor_all, inputs first too.
 */
typedef void (*mxk_monitor_fn)(const char *name, mxk_ndarray *array, void *user);
mxk_status mxk_executor_set_monitor(mxk_executor *ex, mxk_monitor_fn fn, void *user,
                                    int32_t monitor_all);

/**
 * MXNet's debug_str: the symbol listing, the memory plan and the footer
 * "Total N MB allocated". *out is freed with free().
 */
mxk_status mxk_executor_debug_str(const mxk_executor *ex, char **out);

/** Planned bytes of the executor's memory plan, and of a naive plan (one buffer per entry). */
void mxk_executor_plan_bytes(const mxk_executor *ex, uint64_t *planned, uint64_t *naive);

/** Re-resolves every node's kernel by the current backend preference (between iterations). */
mxk_status mxk_executor_reresolve(mxk_executor *ex);

/* ------------------------------------------------------------------------- */
/* Data iterators                                                            */
/* ------------------------------------------------------------------------- */

/**
 * A data iterator of a registered type (MNISTIter, CSVIter, ... from plugins;
 * MXNet's DataIter, include/mxnet/io.h). Batches are CPU NDArrays owned by the
 * iterator, valid until the next call of next/reset/free on it. Errors of a
 * producer thread surface at next/reset and stay sticky (seed exception_handling).
 * One iterator is used by one thread at a time.
 */
typedef struct mxk_data_iter mxk_data_iter;

/**
 * Creates an iterator of type `name` with string attributes (checked against the
 * type's schema; unknown names list the valid ones). Errors: MXK_ERR_NOT_FOUND
 * (unknown type, listing the registered ones), what the plugin's create returns.
 */
mxk_status mxk_data_iter_create(const char *name, uint32_t num_attrs, const char *const *keys,
                                const char *const *vals, mxk_data_iter **out);
/** Destroys an iterator (stops its producer). NULL: no-op. */
void mxk_data_iter_free(mxk_data_iter *it);
/** Rewinds to the first batch. */
mxk_status mxk_data_iter_reset(mxk_data_iter *it);
/** Advances: *has_next 1 when a batch is current, 0 at the end of the epoch. */
mxk_status mxk_data_iter_next(mxk_data_iter *it, int32_t *has_next);
/**
 * The current batch: data and label arrays (owned by the iterator), and the number
 * of padding examples at its end.
 */
mxk_status mxk_data_iter_batch(mxk_data_iter *it, uint32_t *num_data, mxk_ndarray *const **data,
                               uint32_t *num_label, mxk_ndarray *const **label, uint32_t *pad);
/**
 * Names and shapes of data and label (provide_data / provide_label), valid as long
 * as the iterator.
 */
mxk_status mxk_data_iter_describe(mxk_data_iter *it, uint32_t *num_data,
                                  const char *const **data_names, const mxk_shape **data_shapes,
                                  uint32_t *num_label, const char *const **label_names,
                                  const mxk_shape **label_shapes);

/* ------------------------------------------------------------------------- */
/* KVStore                                                                   */
/* ------------------------------------------------------------------------- */

/**
 * A key-value store (MXNet's KVStore; seed KVStore tutorial; upstream
 * src/kvstore/kvstore_local.h; digest operators-kvstore-module.md §3). Values
 * pushed to one key in one call are summed; without an updater the sum replaces
 * the stored value, with one the updater is called once per key on the sum. Keys
 * are strings; the *_int functions take integer keys; mixing both kinds in one
 * store fails with "Mixed key types are not allowed". Push and pull are
 * asynchronous (engine functions); arrays may live on any device.
 */
typedef struct mxk_kvstore mxk_kvstore;

/**
 * Creates a store: "local" (reduce on CPU) or "device" (reduce on the first pushed
 * value's device; the stored value stays on the init value's device), both
 * in-process through the transport ABI (built-in transport). As upstream's
 * KVStore::Create, names are matched lower-cased: without "dist", a name starting
 * with "local" or containing "device" is built in (local_update_cpu,
 * local_allreduce_device, ...); any other name is looked up among the registered
 * KVStore transports (dist_sync, ...): MXK_ERR_NOT_FOUND if none.
 */
mxk_status mxk_kvstore_create(const char *type, mxk_kvstore **out);
/** Frees a store (after its pending work). NULL: no-op. */
void mxk_kvstore_free(mxk_kvstore *kv);
/** The store's type name. */
const char *mxk_kvstore_type(const mxk_kvstore *kv);
/** This worker's rank and the number of workers (local: 0 and 1). */
int32_t mxk_kvstore_rank(const mxk_kvstore *kv);
int32_t mxk_kvstore_num_workers(const mxk_kvstore *kv);
/**
 * Initialises keys with copies of values. A key initialised twice: MXK_ERR_STATE
 * ("duplicate init of key K").
 */
mxk_status mxk_kvstore_init(mxk_kvstore *kv, uint32_t num, const char *const *keys,
                            mxk_ndarray *const *values);
/** Pushes values; values of one key in one call are summed. Unknown key: MXK_ERR_NOT_FOUND
 *  ("key K doesn't exist. Did you init?"; integer keys: "key K has not been inited");
 *  shape mismatch: MXK_ERR_SHAPE; a dtype other than the stored one: MXK_ERR_TYPE.
 *  Every key is checked before anything is pushed. */
mxk_status mxk_kvstore_push(mxk_kvstore *kv, uint32_t num, const char *const *keys,
                            mxk_ndarray *const *values, int32_t priority);
/** Pulls the stored value of each key into outs (one key may appear several times;
 *  outs may have another dtype: the copy converts). Errors as mxk_kvstore_push. */
mxk_status mxk_kvstore_pull(mxk_kvstore *kv, uint32_t num, const char *const *keys,
                            mxk_ndarray *const *outs, int32_t priority);
/** Integer-key forms of init/push/pull. */
mxk_status mxk_kvstore_init_int(mxk_kvstore *kv, uint32_t num, const int32_t *keys,
                                mxk_ndarray *const *values);
mxk_status mxk_kvstore_push_int(mxk_kvstore *kv, uint32_t num, const int32_t *keys,
                                mxk_ndarray *const *values, int32_t priority);
mxk_status mxk_kvstore_pull_int(mxk_kvstore *kv, uint32_t num, const int32_t *keys,
                                mxk_ndarray *const *outs, int32_t priority);
/**
 * The updater: called once per key and push, with the summed value (recv) and the
 * stored array (stored, to update in place). Keys are passed as strings (integer
 * keys in decimal). NULL restores the default (assign). As upstream
 * (KVStoreLocal::PushImpl), it is called in the thread calling mxk_kvstore_push,
 * during that call, after the sum has been pushed to the engine and without the
 * store's lock: recv's and stored's values are produced by pending engine work, so
 * the updater pushes its own work through the engine (imperative operators, copies:
 * ordered by the arrays' variables, so a later pull sees the result) or waits for
 * them (mxk_ndarray_copy_to_host and friends are allowed: it is not inside an
 * engine function). recv is valid only during the call (retain nothing).
 */
typedef void (*mxk_kvstore_updater)(const char *key, mxk_ndarray *recv, mxk_ndarray *stored,
                                    void *user);
mxk_status mxk_kvstore_set_updater(mxk_kvstore *kv, mxk_kvstore_updater fn, void *user);
/** Blocks until every worker reaches the barrier (local: returns at once). */
mxk_status mxk_kvstore_barrier(mxk_kvstore *kv);

#ifdef __cplusplus
}
#endif

#endif /* MXK_H */
