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

#ifdef __cplusplus
}
#endif

#endif /* MXK_H */
