/*
 * mxk public C API: the one header an application includes.
 *
 * Example: classify one image with a checkpoint of `mxk train --model-prefix m`
 * (the whole program, with error handling: examples/classify/classify.c; link
 * with -lmxk):
 *
 *     char *json, *params;
 *     size_t json_size, params_size;
 *     float image[784], prob[10]; // pixels / 256, as MNISTIter scales them
 *     mxk_init(NULL);             // finds the config dir and loads the plugins
 *     mxk_file_read("m-symbol.json", "symbol file", 1 << 26, &json, &json_size);
 *     mxk_file_read("m-0010.params", "parameter file", 1u << 31, &params, &params_size);
 *     const char *inputs[] = {"data"};
 *     mxk_shape shape = {.ndim = 4, .dims = {1, 1, 28, 28}};
 *     mxk_predictor *p;
 *     mxk_predictor_create(json, params, params_size, (mxk_context){MXK_DEV_CPU, 0}, 1,
 *                          inputs, &shape, 0, NULL, &p);
 *     mxk_predictor_set_input(p, "data", image, 784);
 *     mxk_predictor_forward(p);
 *     mxk_predictor_get_output(p, 0, prob, 10); // softmax probabilities
 *     mxk_predictor_free(p);
 *     mxk_free(json);
 *     mxk_free(params);
 *     mxk_shutdown();
 *
 * Each call returns MXK_OK or an error status; on an error,
 * mxk_get_last_error() says what went wrong.
 *
 * Conventions:
 * - Every fallible function returns an mxk_status (MXK_OK == 0 on success); on
 *   failure mxk_get_last_error() holds a message saying what was wrong and where
 *   (operator, node, argument, expected vs got). The message is thread-local and
 *   valid until the next failing call on the same thread; successful calls do not
 *   clear it. It is the one error channel: mxk_train and mxk_opcheck record their
 *   messages there too (mxk_set_error, mxk_error_add_context).
 * - NULL: the *_free functions accept NULL (no-op). Every other function says what
 *   it does with NULL arguments (most that return a status give
 *   MXK_ERR_INVALID_ARGUMENT naming the argument; output pointers documented as
 *   optional are skipped); NULL where a function's documentation does not allow it
 *   is a caller's bug.
 * - Indexes: an index past the end (plugin, operator kernel, device, output) is
 *   MXK_ERR_NOT_FOUND for functions returning a status, NULL for those returning
 *   a name. Registries are enumerated by a count and a get by index.
 * - Ownership: handles (mxk_ndarray, mxk_symbol, mxk_executor, mxk_op_instance,
 *   mxk_predictor, mxk_data_iter, mxk_kvstore) are created by mxk_*_create / load /
 *   bind functions and released by the matching *_free; the caller owns them.
 *   Plain buffers the library allocates for the caller (JSON, debug strings,
 *   profiles, file contents) are released with mxk_free(); string lists with
 *   mxk_string_list_free, NDArray lists with mxk_ndarray_list_free. Strings
 *   returned as `const char *` are owned by the library (lifetime documented).
 * - Shapes are row-major, batch first (NCHW); dtypes and device types use MXNet's
 *   codes (mxk_abi_base.h).
 * - Records that may grow carry `struct_size` as their first field: zero-fill, set
 *   it to sizeof, then set what you need (mxk_init_options, mxk_crosscheck_options).
 * - Thread safety per handle type: an NDArray may be used from any thread (its
 *   reads and writes are ordered by its engine variable, in the order of the calls
 *   of each thread); a Symbol may be read by several threads at once, but one that
 *   is being modified (mxk_symbol_set_attr) by none other; an Executor, a Predictor,
 *   an op instance and a data iterator are used by one thread at a time (distinct
 *   ones are independent); a KVStore as documented there. Registry queries and
 *   global settings are thread-safe.
 * - Asynchrony: work runs on the dependency engine; copies to the host and waits
 *   are the synchronisation points where errors of earlier asynchronous work are
 *   reported (upstream docs/static_site/src/pages/api/architecture/
 *   exception_handling.md). An array written by failed work stays failed: every
 *   wait on it, copy from it or work reading it reports the error again, until the
 *   array is written again (never MXK_OK with undefined contents); mxk_wait_all
 *   reports each error once.
 * - Debugging aids (environment, read at mxk_init / the first allocation):
 *   MXK_ENGINE_WATCHDOG=SECONDS logs (ERROR, stderr) each operator call running
 *   longer, naming the operator (and node and backend when known); it cannot stop
 *   it, so waits and mxk_shutdown still wait. MXK_STORAGE_GUARD=1 puts red zones
 *   around every CPU block; a write outside an array by an operator fails that
 *   operator with "storage guard: operator 'OP' ... wrote outside array 'A' (N
 *   bytes): canary damaged at byte offset OFF". `mxk opcheck` turns both on.
 * - Integer environment settings are range-checked: a bad MXK_NUM_THREADS or
 *   MXK_LOG_LEVEL is ignored with one WARNING; bad engine settings (MXK_*_NTHREADS,
 *   MXK_ENGINE_WATCHDOG) fail mxk_init; bad storage settings (MXK_STORAGE_POOL,
 *   MXK_STORAGE_GUARD, MXK_MEM_*) fail every allocation, naming the variable.
 */
#ifndef MXK_H
#define MXK_H

#include "mxk_abi_base.h"

/**
 * Marks a function of the public API: libmxk is built with hidden visibility
 * (-fvisibility=hidden), so only the functions declared with MXK_API here are
 * exported (`nm -D --defined-only libmxk.so` lists exactly them; tests/capi checks
 * it). mxk_train.h and mxk_opcheck.h mark their functions with it too.
 */
#ifndef MXK_API
#define MXK_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Most outputs (hidden ones included) of an operator that mxk_imperative_invoke
 * runs: an output array given to it must have room for this many; an operator with
 * more fails with MXK_ERR_UNSUPPORTED "OP: more than 16 outputs".
 */
#define MXK_MAX_OUTPUTS 16

/**
 * A device: type (mxk_dev_type) and ordinal, MXNet's Context: cpu(N), gpu(N), and
 * cpu_pinned(N), page-locked host memory that a GPU copies to and from faster and
 * asynchronously (MXNet's PinnedMemoryStorage): it comes from the GPU backend's
 * host_alloc (abi/mxk_abi_device.h, ABI 1.4; N is then a GPU's ordinal), or, without
 * a GPU backend that has it, is ordinary host memory from the CPU backend (N a CPU
 * ordinal). For every other purpose a cpu_pinned array is host memory:
 * mxk_ndarray_data reads it directly, and copies treat it as host memory (a copy to
 * or from a GPU is the GPU backend's host-to-device or device-to-host copy).
 */
typedef struct mxk_context {
    int32_t dev_type;
    int32_t dev_id;
} mxk_context;

/**
 * Frees a buffer the library allocated for the caller (mxk_symbol_to_json's JSON,
 * mxk_executor_debug_str's text, mxk_executor_get_profile's array, mxk_file_read's
 * data). NULL: no-op. Not for handles (their *_free) or lists (mxk_string_list_free,
 * mxk_ndarray_list_free). Thread-safe.
 */
MXK_API void mxk_free(void *ptr);

/** Library version string, e.g. "0.1.0". */
MXK_API const char *mxk_version(void);

/** The calling thread's last error message ("" if none). Thread-local. */
MXK_API const char *mxk_get_last_error(void);

/**
 * Sets the calling thread's last error: `code` and a printf-style message, which
 * mxk_get_last_error returns until the next failure on the thread; returns `code`.
 * The one error channel of mxk: libmxk, mxk_train and mxk_opcheck record their
 * messages here, and an application wrapping mxk may too (`return
 * mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "model '%s' has no output", name);`).
 * Messages longer than 2047 bytes are cut. Thread-safe (thread-local storage).
 */
MXK_API mxk_status mxk_set_error(mxk_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * Adds context before the calling thread's last error: the message becomes
 * "<formatted context>: <message>" ("fc1: " + "shape mismatch ..."); the code is
 * kept. Returns the code (MXK_ERR_INTERNAL when no error was recorded, which is a
 * caller's bug). For wrapping a failed mxk call in the caller's terms (which file,
 * which step). Thread-safe.
 */
MXK_API mxk_status mxk_error_add_context(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/** Name of a status code ("MXK_ERR_SHAPE"); never NULL. */
MXK_API const char *mxk_status_name(mxk_status code);

/** Name of a dtype code ("float32"), or "unknown". */
MXK_API const char *mxk_dtype_name(int32_t dtype);

/** Size in bytes of one element of a dtype, or 0 for an unknown code. */
MXK_API size_t mxk_dtype_size(int32_t dtype);

/** Name of a device type ("cpu", "gpu", "cpu_pinned"), or "unknown". */
MXK_API const char *mxk_dev_type_name(int32_t dev_type);

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
 * dirs (options->config_dir or $MXK_CONFIG_DIR alone, else the install's config dir
 * located from libmxk's own path (<prefix>/etc/mxk, /etc/mxk for the prefix /usr) with the user's
 * $XDG_CONFIG_HOME/mxk over it: see "Config layers" below), reads mxk.conf and loads every enabled
 * plugin of plugins.d/ *.conf, then those of $MXK_PLUGINS. A plugin that fails to load is recorded
 * with its reason (see mxk_plugin_*), never an error of mxk_init. Sets GOMP_SPINCOUNT=3000 in the
 * environment unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set: the GNU OpenMP runtime a plugin
 * loads (oneDNN's) reads it once, and its default 300,000 spins after each parallel region take the
 * cores from the engine's other threads, while passive waiting slows every primitive by a wake-up.
 * Call before anything else loads GNU OpenMP, or set the variables yourself. Errors: MXK_ERR_FORMAT
 * for a malformed mxk.conf (file and line named), MXK_ERR_INVALID_ARGUMENT for a bad engine type or
 * option. Idempotent: a second call returns MXK_OK and changes nothing. `options` may be NULL.
 */
MXK_API mxk_status mxk_init(const mxk_init_options *options);

/**
 * Waits for all work, runs plugin shutdown hooks and releases pooled memory. Work
 * that never completes (a hung kernel) makes it wait forever; with
 * MXK_ENGINE_WATCHDOG set, the culprit is named on stderr first.
 */
MXK_API void mxk_shutdown(void);

/** The most specific config dir in use after mxk_init ("" when none was found). */
MXK_API const char *mxk_config_dir(void);

/**
 * Loads one plugin library by path (two-phase load, see abi/README.md).
 * `options` (may be NULL) is a NULL-terminated key, value, key, value, ... list
 * passed as the plugin's options. Loading the same real path twice is a no-op.
 * Errors: MXK_ERR_NOT_FOUND (no such file), MXK_ERR_ABI (not a plugin, version
 * skew, bad definitions), MXK_ERR_DUPLICATE (name clash), or what init returned;
 * in every case the rejection is also recorded for mxk_plugin_rejected_*.
 */
MXK_API mxk_status mxk_load_plugin(const char *path, const char *const *options);

/** Number of loaded plugins. */
MXK_API uint32_t mxk_plugin_count(void);

/**
 * What a loaded plugin is (strings owned by the library, valid until mxk_shutdown).
 * A growable record: set struct_size to sizeof(mxk_plugin_record) before
 * mxk_plugin_get.
 */
typedef struct mxk_plugin_record {
    uint32_t struct_size; /**< sizeof(mxk_plugin_record), set by the caller */
    const char *name;
    const char *version;
    const char *description;
    const char *path; /**< real path of the library */
    uint32_t abi_major, abi_minor, negotiated_minor;
    uint32_t num_ops, num_kernels, num_devices, num_iterators, num_transports;
} mxk_plugin_record;

/**
 * Fills `out` for loaded plugin i (0-based; out->struct_size set by the caller).
 * Errors: MXK_ERR_NOT_FOUND "plugin index I out of range (N loaded)";
 * MXK_ERR_INVALID_ARGUMENT "mxk_plugin_get: out is NULL", "mxk_plugin_get:
 * out->struct_size is N, less than M (set it to sizeof(mxk_plugin_record))".
 */
MXK_API mxk_status mxk_plugin_get(uint32_t i, mxk_plugin_record *out);

/** Number of rejected plugin candidates (kept with their reasons). */
MXK_API uint32_t mxk_plugin_rejected_count(void);

/** Path (or conf file) and reason of rejected candidate i; strings owned by the library. */
MXK_API mxk_status mxk_plugin_rejected_get(uint32_t i, const char **path, const char **reason);

/* ------------------------------------------------------------------------- */
/* Config layers and where plugins came from                                 */
/* ------------------------------------------------------------------------- */
/*
 * mxk_init reads its config from layers, most general first: an explicit config
 * dir (mxk_init_options.config_dir), else $MXK_CONFIG_DIR, is used alone;
 * otherwise the install's etc/mxk and, over it, the user's $XDG_CONFIG_HOME/mxk
 * (~/.config/mxk), each when it exists. mxk.conf keys of a later layer replace an
 * earlier one's; plugins.d confs are merged by file name (a later layer's NAME.conf
 * replaces the earlier NAME.conf; `enabled = false` disables the plugin), as
 * systemd drop-ins are. Then each library of $MXK_PLUGINS (':'-separated paths,
 * as MXNet's mx.library.load in python/mxnet/library.py) is loaded unless
 * no_plugins is set; a failure there, as one of a conf, is recorded with
 * mxk_plugin_rejected_* and logged once as a WARNING ("plugin candidate ORIGIN
 * rejected: REASON"; MXK_LOG_LEVEL=error silences it). mxk_load_plugin (the
 * `mxk --plugin PATH` option) is meant for after mxk_init, as mx.library.load after
 * importing mxnet; its failure is returned, not logged. The values below are those
 * of the last mxk_init; strings owned by the library, valid until the next
 * mxk_init. Call them from the thread that called mxk_init, or after it returned.
 */

/** Number of config dirs in use (0 to 2; mxk_config_dir() is the last one). */
MXK_API uint32_t mxk_config_dir_count(void);

/**
 * Config dir i (0: the most general) into *dir. Errors: MXK_ERR_INVALID_ARGUMENT
 * (dir NULL), MXK_ERR_NOT_FOUND "config dir index I out of range (N in use)".
 */
MXK_API mxk_status mxk_config_dir_get(uint32_t i, const char **dir);

/**
 * Where loaded plugin `plugin` came from: its conf file's path, "MXK_PLUGINS=PATH",
 * or "" (mxk_load_plugin, the `mxk --plugin` option); NULL for no such plugin.
 */
MXK_API const char *mxk_plugin_origin(const char *plugin);

/** Number of plugin conf files that `enabled = false` disabled (after the merge). */
MXK_API uint32_t mxk_plugin_disabled_count(void);

/**
 * Path of disabled conf file i into *conf_path. Errors: MXK_ERR_INVALID_ARGUMENT
 * (conf_path NULL), MXK_ERR_NOT_FOUND "disabled conf index I out of range (N disabled)".
 */
MXK_API mxk_status mxk_plugin_disabled_get(uint32_t i, const char **conf_path);

/* ------------------------------------------------------------------------- */
/* Registry queries                                                          */
/* ------------------------------------------------------------------------- */

/** Number of registered operators; names are listed in registration order. */
MXK_API uint32_t mxk_op_count(void);
/** Name of operator i, or NULL when out of range. */
MXK_API const char *mxk_op_name(uint32_t i);
/**
 * The canonical name of the operator called `name` (its registered name, or the
 * operator of which `name` is an alias: "Flatten" for "flatten", as MXNet's
 * NNVM_REGISTER_OP(...).add_alias resolves), or NULL when no operator has that name.
 * The string is owned by the registry and valid until mxk_shutdown. Thread-safe.
 * Every function that takes an operator name accepts an alias too.
 */
MXK_API const char *mxk_op_canonical_name(const char *name);
/**
 * The aliases of the operator called `name` (name or alias), as a NULL-terminated
 * list in registration order (empty when it has none), or NULL when no operator has
 * that name. Owned by the registry, valid until mxk_shutdown. Thread-safe.
 */
MXK_API const char *const *mxk_op_aliases(const char *name);
/** An operator's documentation (its help): strings owned by the registry until mxk_shutdown. */
typedef struct mxk_op_doc {
    const char *name;        /**< canonical name */
    const char *description; /**< "" when the plugin gave none */
    const char *plugin;      /**< the plugin that defined it */
    uint32_t num_attrs;      /**< attributes of its schema (mxk_op_get_attr_doc) */
} mxk_op_doc;

/**
 * Fills `out` for the operator called `name` (name or alias). MXK_ERR_NOT_FOUND
 * ("unknown operator 'X'") when there is none; MXK_ERR_INVALID_ARGUMENT for NULL.
 * Thread-safe.
 */
MXK_API mxk_status mxk_op_get_doc(const char *name, mxk_op_doc *out);

/** One attribute of an operator's schema, as MXNet's operator docs list it. */
typedef struct mxk_op_attr_doc {
    const char *name;
    const char *type;          /**< "int", "float", "boolean", "string", "Shape(tuple)", "enum" */
    const char *default_value; /**< string form; NULL when required or without default */
    const char *enum_values;   /**< "relu|sigmoid|..." for enum attributes, else NULL */
    const char *doc;           /**< one line, or "" */
    int32_t required;
} mxk_op_attr_doc;

/**
 * Fills `out` with attribute i (0-based, schema order) of the operator called
 * `name`. MXK_ERR_NOT_FOUND for an unknown operator or i out of range. Thread-safe.
 */
MXK_API mxk_status mxk_op_get_attr_doc(const char *name, uint32_t i, mxk_op_attr_doc *out);

/** Name of the plugin that defined operator `op`, or NULL. */
MXK_API const char *mxk_op_plugin(const char *op);
/** Number of kernels registered for operator `op` (all devices and backends). */
MXK_API uint32_t mxk_op_kernel_count(const char *op);
/** Device type, backend and plugin of kernel i of `op`. MXK_ERR_NOT_FOUND if out of range. */
MXK_API mxk_status mxk_op_kernel_get(const char *op, uint32_t i, int32_t *dev_type,
                                     const char **backend, const char **plugin);
/** Number of registered iterator types / KVStore transports / device backends. */
MXK_API uint32_t mxk_iterator_count(void);
MXK_API uint32_t mxk_kvstore_transport_count(void);
MXK_API uint32_t mxk_device_backend_count(void);
/** Registered iterator / transport names (i-th), or NULL when out of range. */
MXK_API const char *mxk_iterator_name(uint32_t i);
MXK_API const char *mxk_kvstore_transport_name(uint32_t i);
/** Name of the plugin that registered iterator / transport `name`, or NULL. */
MXK_API const char *mxk_iterator_plugin(const char *name);
MXK_API const char *mxk_kvstore_transport_plugin(const char *name);
/**
 * i-th registered device backend (0 to mxk_device_backend_count() - 1): type, name
 * and plugin (owned by the registry until mxk_shutdown; NULL outputs are skipped).
 * MXK_ERR_NOT_FOUND "device backend index I out of range" past the end.
 */
MXK_API mxk_status mxk_device_get(uint32_t i, int32_t *dev_type, const char **name,
                                  const char **plugin);
/** Number of devices of a type (0 when no backend serves it). */
MXK_API int32_t mxk_device_count(int32_t dev_type);

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
MXK_API mxk_status mxk_set_backend_preference(const char *list);

/**
 * Forces `backend` for operator `op` (NULL or "" clears the override). Takes
 * precedence over mxk.conf's section [op_backend], whose lines `OPNAME = backend`
 * force the same (the mxk.conf of the config dir, documented in its comments).
 */
MXK_API mxk_status mxk_set_op_backend(const char *op, const char *backend);

/** The effective preference list ("" when none). Owned by the library; valid until the next set. */
MXK_API const char *mxk_get_backend_preference(void);

/**
 * The backend forced for operator `op` (name or alias): mxk_set_op_backend's, else
 * mxk.conf's [op_backend] entry, copied into buf (`size` bytes, cut to fit, always
 * terminated); "" when none is forced. Errors: MXK_ERR_INVALID_ARGUMENT
 * "mxk_get_op_backend: op or buf is NULL" (also for size 0); MXK_ERR_NOT_FOUND
 * "unknown operator 'X'". Thread-safe.
 */
MXK_API mxk_status mxk_get_op_backend(const char *op, char *buf, size_t size);

/**
 * The backend whose kernel would run `op` on `dev_type` now (NULL and
 * MXK_ERR_NOT_FOUND when none is registered).
 */
MXK_API mxk_status mxk_resolve_backend(const char *op, int32_t dev_type, const char **backend);

/* ------------------------------------------------------------------------- */
/* Global knobs                                                              */
/* ------------------------------------------------------------------------- */

/** Seeds every random stream (all devices), as MXNet's mx.random.seed. */
MXK_API mxk_status mxk_random_seed(uint64_t seed);

/**
 * Sets the number of CPU threads operator kernels may use (mxk_op_ctx.num_threads);
 * the cpu-blas plugin splits its kernels over that many threads of its own pool
 * (capped by its `num_threads` option) and keeps OpenBLAS at one thread, so the two
 * never oversubscribe (the cpu-blas README, "Threads"). Default: MXK_NUM_THREADS (an integer in [1,
 * 4096]; another value is ignored with one WARNING), else mxk.conf's num_threads, else the online
 * CPUs. Errors: MXK_ERR_INVALID_ARGUMENT "mxk_set_num_threads: N is not in [1, 4096]".
 */
MXK_API mxk_status mxk_set_num_threads(int32_t n);
/** Current CPU thread count. */
MXK_API int32_t mxk_get_num_threads(void);

/** Memory statistics of one device's storage pool (bytes). */
typedef struct mxk_storage_stats {
    uint64_t bytes_in_use; /**< handed out and not yet freed (rounded sizes, red zones included) */
    uint64_t bytes_pooled; /**< freed and kept for reuse */
    uint64_t peak_in_use;  /**< maximum of bytes_in_use since start */
    uint64_t raw_allocs;   /**< calls of the backend's alloc */
    uint64_t pool_hits;    /**< allocations served from the pool */
} mxk_storage_stats;

/** Fills `out` with ctx's storage statistics (zeros for a device never used). */
MXK_API mxk_status mxk_storage_get_stats(mxk_context ctx, mxk_storage_stats *out);

/* Device properties (the backend's mxk_device_def.get_properties). */
#include "mxk_abi_device.h"

/**
 * Fills `out` with the properties of device `ctx` as its backend reports them
 * (abi/mxk_abi_device.h: name, total and free memory in bytes, 0 when unknown,
 * allocation alignment, compute capability, 0 on CPU); the counterpart of MXNet's
 * mx.context.gpu_memory_info (python/mxnet/context.py). `out` (caller-owned) is
 * zero-filled and its struct_size set first; on error it stays zero-filled.
 * Thread-safe. Errors: MXK_ERR_INVALID_ARGUMENT "mxk_device_properties: out is
 * NULL"; MXK_ERR_NOT_FOUND "mxk_device_properties: no device backend is registered
 * for device type 2 (gpu)" or "mxk_device_properties: device cpu(9) does not
 * exist: the cpu backend has 2 device(s)"; the backend's own error, prefixed
 * "mxk_device_properties: cpu(0): ".
 */
MXK_API mxk_status mxk_device_properties(mxk_context ctx, mxk_device_props *out);

/**
 * Waits for all pushed work; reports the first asynchronous error not yet reported
 * (by any wait), once. Failed arrays stay failed (see the conventions above).
 */
MXK_API mxk_status mxk_wait_all(void);

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
MXK_API mxk_status mxk_ndarray_create(const mxk_shape *shape, int32_t dtype, mxk_context ctx,
                                      mxk_ndarray **out);
/** Releases the handle; memory is freed once no view and no pending work uses it. NULL: no-op. */
MXK_API void mxk_ndarray_free(mxk_ndarray *arr);
/** Shape of the array. */
MXK_API mxk_shape mxk_ndarray_shape(const mxk_ndarray *arr);
/** dtype (mxk_dtype). */
MXK_API int32_t mxk_ndarray_dtype(const mxk_ndarray *arr);
/** Device of the array. */
MXK_API mxk_context mxk_ndarray_context(const mxk_ndarray *arr);
/** Number of elements. */
MXK_API uint64_t mxk_ndarray_size(const mxk_ndarray *arr);
/**
 * Pointer to the first element, for CPU arrays, after waiting for pending writes
 * (reports their errors). Non-CPU arrays: MXK_ERR_UNSUPPORTED.
 */
MXK_API mxk_status mxk_ndarray_data(mxk_ndarray *arr, void **data);
/** Copies `bytes` (must equal size * element size) from host memory into the array (async). */
MXK_API mxk_status mxk_ndarray_copy_from_host(mxk_ndarray *arr, const void *src, uint64_t bytes);
/** Copies the array into host memory; waits, and reports errors of earlier work on it. */
MXK_API mxk_status mxk_ndarray_copy_to_host(mxk_ndarray *arr, void *dst, uint64_t bytes);
/** Copies src into dst (same shape; any devices; dtype converted if different). Async. */
MXK_API mxk_status mxk_ndarray_copy_to(mxk_ndarray *src, mxk_ndarray *dst);
/** Sets every element to `value` (async). */
MXK_API mxk_status mxk_ndarray_fill(mxk_ndarray *arr, double value);
/** Creates an array filled with `value` (zeros: 0, ones: 1). */
MXK_API mxk_status mxk_ndarray_full(const mxk_shape *shape, int32_t dtype, mxk_context ctx,
                                    double value, mxk_ndarray **out);
/** A view of rows [begin, end) along axis 0, sharing memory (and the engine variable). */
MXK_API mxk_status mxk_ndarray_slice(mxk_ndarray *arr, int64_t begin, int64_t end,
                                     mxk_ndarray **out);
/** A view with another shape of the same size, sharing memory. MXK_ERR_SHAPE on size mismatch. */
MXK_API mxk_status mxk_ndarray_reshape(mxk_ndarray *arr, const mxk_shape *shape, mxk_ndarray **out);
/**
 * Waits until all pending writes to the array are done; returns the error of a failed
 * array at every call until it is written again.
 */
MXK_API mxk_status mxk_ndarray_wait_to_read(mxk_ndarray *arr);
/**
 * Waits until all pending reads and writes of the array are done and reports a
 * failure as wait_to_read; like upstream it pushes an empty write, so once the error
 * has been reported, it clears the failed state (the caller is about to overwrite).
 */
MXK_API mxk_status mxk_ndarray_wait_to_write(mxk_ndarray *arr);

/**
 * Saves arrays (with names, or names == NULL for an unnamed list) in MXNet's
 * NDArray list format (.params; V2 records, or V3 records for every array when one
 * is a NumPy 0-d scalar that mxk_ndarray_load read, as mx.npx.save writes them).
 * Waits for pending writes.
 * Errors: MXK_ERR_IO (file), or errors of pending work.
 */
MXK_API mxk_status mxk_ndarray_save(const char *path, uint32_t num, mxk_ndarray *const *arrays,
                                    const char *const *names);
/**
 * Loads an MXNet NDArray list file (V2/V3-dense/V1/legacy records) onto CPU; a
 * V3 0-d scalar (shape (), mx.npx.save) loads as shape (1,) and is saved back as 0-d.
 * On success *arrays and *names (NULL when the file has no names) are arrays of
 * *num entries that the caller frees with mxk_ndarray_list_free.
 * Errors: MXK_ERR_IO, MXK_ERR_FORMAT ("Invalid NDArray file format" plus detail),
 * never a crash on malformed input.
 */
MXK_API mxk_status mxk_ndarray_load(const char *path, uint32_t *num, mxk_ndarray ***arrays,
                                    char ***names);
/**
 * mxk_ndarray_load from `size` bytes in memory (not retained), e.g. a .params file
 * an application embeds or reads itself (upstream MXNDListCreate, NDArray::Load on
 * a dmlc::MemoryFixedSizeStream). `source` names the input in error messages
 * ("file 'x.params'"; NULL: "memory buffer"). Outputs and ownership as
 * mxk_ndarray_load. Errors (outputs zeroed, nothing leaked): MXK_ERR_INVALID_ARGUMENT
 * for NULL outputs or NULL data with size > 0; MXK_ERR_FORMAT "Invalid NDArray file
 * format: <detail> (<source>)" for malformed or truncated input (every count is
 * checked against the bytes left before anything is allocated);
 * MXK_ERR_UNSUPPORTED for valid records mxk cannot represent (sparse storage, more
 * than MXK_MAX_NDIM dims); MXK_ERR_OUT_OF_MEMORY; MXK_ERR_NOT_FOUND when no CPU
 * backend is registered. Thread-safe.
 */
MXK_API mxk_status mxk_ndarray_load_buffer(const void *data, size_t size, const char *source,
                                           uint32_t *num, mxk_ndarray ***arrays, char ***names);
/** Frees what mxk_ndarray_load returned (arrays and names). */
MXK_API void mxk_ndarray_list_free(uint32_t num, mxk_ndarray **arrays, char **names);

/* ------------------------------------------------------------------------- */
/* Files: atomic writes and bounded reads                                    */
/* ------------------------------------------------------------------------- */

/*
 * Every file mxk writes (symbol JSON, .params, .states, predictions, the metrics
 * log) goes through an mxk_file_writer: the bytes go to a new temporary file
 * ".mxk-tmp-*" in the target's directory, which is fsync'ed, closed (checked) and
 * rename()d over the target, then the directory is fsync'ed. A reader sees the old
 * file or the new one, never a part; a failed write removes the temporary file and
 * leaves the target untouched (upstream MXNet writes in place through
 * dmlc::Stream, src/io/local_filesys.cc; the atomic replacement is mxk's). A
 * symlink at the target is replaced by the new file (its target is not written);
 * an existing target that is neither a regular file nor a symlink (a directory, a
 * device node such as /dev/null, a FIFO, a socket) is refused and left alone. An
 * existing regular target's permission bits are kept; a new file gets 0666 less
 * the umask. A process killed while writing leaves the target intact and its
 * temporary file behind (nothing can tell it from another writer's). Readers open
 * without blocking and refuse anything but a regular file, and read at most a
 * stated number of bytes.
 */

/** A file being written atomically (see above); opaque. */
typedef struct mxk_file_writer mxk_file_writer;

/**
 * Checks that `path` may be written by an mxk_file_writer without creating
 * anything: a non-empty path shorter than PATH_MAX whose directory exists, and
 * that is absent, a regular file or a symlink. Lets a command refuse a bad output
 * path before long work. Errors: MXK_ERR_INVALID_ARGUMENT "cannot write '': the
 * path is empty" (NULL or ""), "cannot write 'PATH': the path ends with '/'";
 * MXK_ERR_IO "cannot write 'PATH': File name too long" (and the other strerror
 * texts of lstat or of opening the directory: "No such file or directory", ...),
 * "cannot write 'PATH': it is a directory|a FIFO|a character device|a block
 * device|a socket, not a regular file". Thread-safe.
 */
MXK_API mxk_status mxk_file_check_target(const char *path);

/**
 * Starts writing `path`: the checks of mxk_file_check_target, then a temporary
 * file is created (O_EXCL) in the same directory. On success the caller owns *out
 * and ends it with mxk_file_writer_commit or mxk_file_writer_abort. Errors: those
 * of mxk_file_check_target; MXK_ERR_IO "cannot write 'PATH': <strerror>" when the
 * temporary file cannot be created; MXK_ERR_OUT_OF_MEMORY "cannot write 'PATH':
 * out of memory". Thread-safe (one writer per thread; two writers of one path:
 * the last commit wins).
 */
MXK_API mxk_status mxk_file_writer_open(const char *path, mxk_file_writer **out);

/**
 * Appends `size` bytes (buffered). Errors: MXK_ERR_IO "cannot write 'PATH':
 * <strerror>" (ENOSPC, EIO, ...; a write that makes no progress is EIO); after a
 * failure every later write returns the same error, so callers may check once at
 * commit. Not thread-safe for one writer.
 */
MXK_API mxk_status mxk_file_writer_write(mxk_file_writer *w, const void *data, size_t size);

/**
 * Writes what is buffered, fsyncs and closes the temporary file, renames it over
 * the target and fsyncs the directory; frees `w` in every case. On an error
 * before the rename the temporary file is removed and the target is untouched.
 * Errors: MXK_ERR_IO "cannot write 'PATH': <strerror>" (of write, fsync, close,
 * rename or the directory's fsync; the last happens after the replacement), or
 * the error of an earlier failed mxk_file_writer_write. NULL: MXK_ERR_INVALID_ARGUMENT.
 */
MXK_API mxk_status mxk_file_writer_commit(mxk_file_writer *w);

/** Removes the temporary file and frees `w`; the target is untouched. NULL: no-op. */
MXK_API void mxk_file_writer_abort(mxk_file_writer *w);

/**
 * Writes `size` bytes of `data` to `path` atomically: mxk_file_writer_open, one
 * write, commit; the errors of those. Thread-safe.
 */
MXK_API mxk_status mxk_file_write(const char *path, const void *data, size_t size);

/**
 * Reads a whole regular file into a malloc'd buffer with a NUL after the last
 * byte (*data, freed by the caller with mxk_free(); *size bytes, without the NUL).
 * Never blocks on a FIFO or a device: anything but a regular file (or a symlink
 * to one) is refused, and a file of more than `max_size` bytes is refused before
 * anything is allocated. `what` names the kind of file in messages ("symbol
 * file"; NULL: none). Errors: MXK_ERR_INVALID_ARGUMENT (NULL path or outputs);
 * MXK_ERR_IO "cannot open WHAT 'PATH': <strerror>" ("No such file or directory",
 * "Permission denied", "Too many levels of symbolic links", ...), "cannot read WHAT 'PATH': it
 * is a directory|a FIFO|... , not a regular file", "cannot read WHAT 'PATH':
 * <strerror>"; MXK_ERR_FORMAT "cannot read WHAT 'PATH': N bytes is more than the
 * limit of M bytes"; MXK_ERR_OUT_OF_MEMORY. Thread-safe.
 */
MXK_API mxk_status mxk_file_read(const char *path, const char *what, uint64_t max_size, char **data,
                                 size_t *size);

/* ------------------------------------------------------------------------- */
/* Operators: imperative invocation and operator instances                   */
/* ------------------------------------------------------------------------- */

/**
 * Runs operator `op_name` on NDArrays (MXNet's MXImperativeInvoke). Attributes are
 * string key/value pairs checked against the operator's schema (an unknown key is
 * MXK_ERR_NOT_FOUND listing the valid ones). Shapes and types are inferred; if
 * *num_outputs is 0 on entry, outputs are allocated on the first input's device
 * (the visible outputs are returned: *num_outputs set, outputs[] filled with new
 * handles the caller frees; `outputs` must have room for MXK_MAX_OUTPUTS); otherwise
 * outputs[0..*num_outputs) are written (their shapes must match). The work is
 * pushed to the engine reading the inputs and writing the outputs, with the
 * operator's resources; it runs in inference mode (is_train 0).
 */
MXK_API mxk_status mxk_imperative_invoke(const char *op_name, uint32_t num_inputs,
                                         mxk_ndarray *const *inputs, uint32_t *num_outputs,
                                         mxk_ndarray **outputs, uint32_t num_attrs,
                                         const char *const *keys, const char *const *vals);

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
MXK_API mxk_status mxk_op_instance_create(const char *op_name, uint32_t num_attrs,
                                          const char *const *keys, const char *const *vals,
                                          mxk_context ctx, uint32_t num_inputs,
                                          const mxk_shape *in_shapes, const int32_t *in_types,
                                          mxk_op_instance **out);
/** Frees an instance (after its pushed work completes). NULL: no-op. */
MXK_API void mxk_op_instance_free(mxk_op_instance *inst);

/** Counts: arguments, all outputs, visible outputs, aux states. */
MXK_API void mxk_op_instance_counts(const mxk_op_instance *inst, uint32_t *num_inputs,
                                    uint32_t *num_outputs, uint32_t *num_visible,
                                    uint32_t *num_aux);
/** The kinds of slots of an operator instance. */
typedef enum mxk_op_slot_kind {
    MXK_SLOT_INPUT = 0,  /**< arguments (list_arguments order) */
    MXK_SLOT_OUTPUT = 1, /**< all outputs, hidden ones included */
    MXK_SLOT_AUX = 2     /**< aux states */
} mxk_op_slot_kind;

/**
 * Inferred shape/dtype of slot i of a kind (shape or dtype may be NULL). Errors:
 * MXK_ERR_NOT_FOUND "OP: no slot I of kind K" for an index past the end or an
 * unknown kind.
 */
MXK_API mxk_status mxk_op_instance_shape(const mxk_op_instance *inst, mxk_op_slot_kind kind,
                                         uint32_t i, mxk_shape *shape, int32_t *dtype);
/** Name of slot i of a kind, or NULL (index past the end, unknown kind). */
MXK_API const char *mxk_op_instance_name(const mxk_op_instance *inst, mxk_op_slot_kind kind,
                                         uint32_t i);
/** The backend whose kernel the instance runs. */
MXK_API const char *mxk_op_instance_backend(const mxk_op_instance *inst);
/** Backward dependency: fills need flags (out_grad: num_visible, in_data, out_data entries). */
MXK_API void mxk_op_instance_backward_dependency(const mxk_op_instance *inst,
                                                 uint8_t *need_out_grad, uint8_t *need_in_data,
                                                 uint8_t *need_out_data);
/* --- Resources of an operator instance (`mxk op describe`) --- */

/** One resource a phase of an operator instance requested (MXNet's ResourceRequest). */
typedef struct mxk_op_resource_info {
    int32_t type;        /**< mxk_resource_type of abi/mxk_abi_op.h: 1 temp space, 2 random */
    uint64_t temp_bytes; /**< temp space: the bytes requested (0: decided at run time) */
} mxk_op_resource_info;

/**
 * The resources that the forward (`backward` 0) or backward (1) phase of `inst`
 * requested when it was created (the operator's *_resources callbacks, given the
 * instance's input shapes), in request order: writes min(count, capacity) entries
 * into `out` and returns the count (at most MXK_MAX_RESOURCES of abi/mxk_abi_op.h,
 * 4). Reads only the instance: thread-safe while no call changes it.
 */
MXK_API uint32_t mxk_op_instance_resources(const mxk_op_instance *inst, int32_t backward,
                                           mxk_op_resource_info *out, uint32_t capacity);

/**
 * Re-resolves the kernel by the current backend preference (e.g. after
 * mxk_set_backend_preference); re-creates the kernel state when it changes.
 */
MXK_API mxk_status mxk_op_instance_reresolve(mxk_op_instance *inst);

/**
 * Pushes forward. inputs/outputs/aux follow the instance's slots (all outputs,
 * hidden ones included). `req` has one mxk_op_req per output (NULL: all WRITE).
 * An output that is the same array as an input gets MXK_REQ_INPLACE semantics.
 * ADD on a kernel without MXK_KERNEL_SUPPORTS_ADDTO is emulated (temp + add).
 */
MXK_API mxk_status mxk_op_instance_forward(mxk_op_instance *inst, int32_t is_train,
                                           mxk_ndarray *const *inputs, mxk_ndarray *const *outputs,
                                           const mxk_op_req *req, mxk_ndarray *const *aux);
/**
 * Pushes backward: out_grads (visible outputs), in_data, out_data (undeclared
 * entries may be NULL), in_grads with one req each (NULL: all WRITE), aux.
 * MXK_ERR_UNSUPPORTED if the kernel has no backward.
 */
MXK_API mxk_status mxk_op_instance_backward(mxk_op_instance *inst, mxk_ndarray *const *out_grads,
                                            mxk_ndarray *const *in_data,
                                            mxk_ndarray *const *out_data,
                                            mxk_ndarray *const *in_grads, const mxk_op_req *req,
                                            mxk_ndarray *const *aux);

/* ------------------------------------------------------------------------- */
/* Symbol (symbolic graphs)                                                  */
/* ------------------------------------------------------------------------- */

/**
 * A symbolic graph: a list of output entries of operator and variable nodes
 * (MXNet's Symbol; docs/static_site/src/pages/api/architecture/overview.md
 * "Symbol", dmlc/nnvm src/core/symbolic.cc).
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
MXK_API mxk_status mxk_symbol_variable(const char *name, mxk_symbol **out);

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
MXK_API mxk_status mxk_symbol_create(const char *op, const char *name, uint32_t num_attrs,
                                     const char *const *keys, const char *const *vals,
                                     uint32_t num_inputs, const char *const *input_names,
                                     mxk_symbol *const *inputs, mxk_symbol **out);

/** Groups symbols: the outputs of all of them, in order. */
MXK_API mxk_status mxk_symbol_group(uint32_t num, mxk_symbol *const *symbols, mxk_symbol **out);

/** A deep copy (new nodes with the same names and attributes). */
MXK_API mxk_status mxk_symbol_copy(const mxk_symbol *sym, mxk_symbol **out);

/** Frees a handle (nodes are freed when no symbol uses them). NULL: no-op. */
MXK_API void mxk_symbol_free(mxk_symbol *sym);

/** Number of outputs. */
MXK_API uint32_t mxk_symbol_num_outputs(const mxk_symbol *sym);

/** A symbol of output i. MXK_ERR_NOT_FOUND when out of range. */
MXK_API mxk_status mxk_symbol_get_output(const mxk_symbol *sym, uint32_t i, mxk_symbol **out);

/** All internal outputs (every node's visible outputs, variables too), MXNet's get_internals. */
MXK_API mxk_status mxk_symbol_get_internals(const mxk_symbol *sym, mxk_symbol **out);

/**
 * Lists names of a kind. *names is a NULL-terminated array of *num strings that the
 * caller frees with mxk_string_list_free.
 */
MXK_API mxk_status mxk_symbol_list_names(const mxk_symbol *sym, mxk_symbol_names kind,
                                         uint32_t *num, char ***names);

/** Frees a string list returned by the library. NULL: no-op. */
MXK_API void mxk_string_list_free(char **list);

/** Name of the symbol's single output node (NULL for a group). Owned by the symbol. */
MXK_API const char *mxk_symbol_name(const mxk_symbol *sym);

/**
 * Sets attribute `key` on the symbol's single output node (a group:
 * MXK_ERR_INVALID_ARGUMENT). Hidden keys (lr_mult, wd_mult, ctx_group, ...) are
 * stored as "__key__", as MXNet does.
 */
MXK_API mxk_status mxk_symbol_set_attr(mxk_symbol *sym, const char *key, const char *value);

/** Value of attribute `key` of the single output node, or NULL (owned by the symbol). */
MXK_API const char *mxk_symbol_get_attr(const mxk_symbol *sym, const char *key);

/**
 * Lists the attributes of every node reachable from the symbol as
 * "<node>$<key>", value pairs (MXNet's list_attr(recursive=True), MXSymbolListAttr
 * in src/c_api/c_api_symbolic.cc): each of MXNet's replaced hidden keys
 * (__ctx_group__, __lr_mult__, __wd_mult__, __force_mirroring__, __mirror_stage__) is
 * followed by its plain alias ("w$lr_mult") with the same value; *kv is a
 * NULL-terminated array of 2 * *num strings freed with mxk_string_list_free.
 */
MXK_API mxk_status mxk_symbol_list_attrs(const mxk_symbol *sym, uint32_t *num, char ***kv);

/** Serialises to MXNet's JSON (current nnvm form). *json is freed with mxk_free(). */
MXK_API mxk_status mxk_symbol_to_json(const mxk_symbol *sym, char **json);

/**
 * Parses MXNet symbol JSON, current or legacy (MXNet <= 0.8: `param`/`attr`,
 * two-element inputs, missing aux-state inputs added back as "<node>_<aux>").
 * Errors: MXK_ERR_FORMAT for malformed JSON or graph (cycles, out-of-range ids;
 * the message says where), MXK_ERR_NOT_FOUND for an unknown operator (naming the
 * operator and the node). Never crashes on bad input.
 */
MXK_API mxk_status mxk_symbol_from_json(const char *json, mxk_symbol **out);

/** mxk_symbol_to_json into a file (MXK_ERR_IO on failure). */
MXK_API mxk_status mxk_symbol_save(const mxk_symbol *sym, const char *path);

/** mxk_symbol_from_json from a file. */
MXK_API mxk_status mxk_symbol_load(const char *path, mxk_symbol **out);

/**
 * Shape inference. Known argument shapes are given by name (`num_known` names and
 * shapes). On success fills arrays owned by the caller: arg_shapes (one per
 * argument), out_shapes (one per output), aux_shapes (one per aux state); any may
 * be NULL. *complete is 1 when every shape is known, 0 when inference was partial
 * (unknown dims 0; not an error). Inconsistent shapes: MXK_ERR_SHAPE naming the
 * node, the argument, expected and actual. An unknown name: MXK_ERR_NOT_FOUND.
 */
MXK_API mxk_status mxk_symbol_infer_shape(const mxk_symbol *sym, uint32_t num_known,
                                          const char *const *names, const mxk_shape *shapes,
                                          mxk_shape *arg_shapes, mxk_shape *out_shapes,
                                          mxk_shape *aux_shapes, int32_t *complete);

/** Type inference, the same conventions with dtype codes (-1 unknown). */
MXK_API mxk_status mxk_symbol_infer_type(const mxk_symbol *sym, uint32_t num_known,
                                         const char *const *names, const int32_t *types,
                                         int32_t *arg_types, int32_t *out_types, int32_t *aux_types,
                                         int32_t *complete);

/* ------------------------------------------------------------------------- */
/* Executor                                                                  */
/* ------------------------------------------------------------------------- */

/**
 * A symbol bound to arrays on a device: forward and backward over a static memory
 * plan, pushed to the engine as cached operators (upstream
 * src/executor/graph_executor.cc, python/mxnet/executor.py).
 */
typedef struct mxk_executor mxk_executor;

/**
 * Binds `sym` on ctx. args: one array per argument (list_arguments order);
 * arg_grads: one per argument, entries may be NULL (then no gradient: null);
 * grad_reqs: one mxk_op_req per argument (NULL = all WRITE where a gradient array
 * is given); aux: one per aux state. Arrays are referenced, not copied.
 * `shared_exec` (may be NULL) lends its memory pool. Errors: MXK_ERR_INVALID_ARGUMENT
 * ("Length of args does not match the number of arguments", ...), MXK_ERR_SHAPE /
 * MXK_ERR_TYPE from inference (also for a shape over 2^60 elements),
 * MXK_ERR_NOT_FOUND for a missing kernel, MXK_ERR_OUT_OF_MEMORY before anything is
 * allocated when the memory plan needs more than MXK_MEM_LIMIT bytes (default: the
 * physical memory): "bind: the memory plan needs N bytes, more than the memory limit
 * of L bytes (MXK_MEM_LIMIT); the largest array is <what> (B bytes)", where <what>
 * names the array's operator and node.
 */
MXK_API mxk_status mxk_executor_bind(const mxk_symbol *sym, mxk_context ctx, uint32_t num_args,
                                     mxk_ndarray *const *args, mxk_ndarray *const *arg_grads,
                                     const mxk_op_req *grad_reqs, uint32_t num_aux,
                                     mxk_ndarray *const *aux, mxk_executor *shared_exec,
                                     mxk_executor **out);

/**
 * Infers every shape from the given input shapes and allocates zero-filled
 * arguments, gradients (for requests other than null) and aux states.
 * grad_req: "write", "add" or "null" for all arguments; per-argument overrides
 * may follow in `req_names`/`req_values` (num_reqs entries). `shared_exec` lends
 * its pool; `shared_buffer`-style reuse of same-named data arrays goes through it
 * too. Errors as bind, plus "InferShape pass cannot decide shapes for the
 * following arguments ..." (MXK_ERR_SHAPE) when shapes stay unknown, and
 * MXK_ERR_OUT_OF_MEMORY ("simple_bind: the arguments, gradients and auxiliary states
 * needs N bytes, more than the memory limit ...") before allocating any of them.
 */
MXK_API mxk_status mxk_executor_simple_bind(const mxk_symbol *sym, mxk_context ctx,
                                            uint32_t num_shapes, const char *const *names,
                                            const mxk_shape *shapes, const char *grad_req,
                                            uint32_t num_reqs, const char *const *req_names,
                                            const char *const *req_values,
                                            mxk_executor *shared_exec, mxk_executor **out);

/** Frees an executor (after its pending work). Arrays it allocated are freed; bound ones not. */
MXK_API void mxk_executor_free(mxk_executor *ex);

/** Pushes the forward pass (is_train selects training behaviour and keeps backward inputs). */
MXK_API mxk_status mxk_executor_forward(mxk_executor *ex, int32_t is_train);

/**
 * Pushes the backward pass. head_grads: one per output (entries may be NULL for
 * loss outputs, whose gradient is ignored); num_head may be 0 when every output is
 * a loss. When a non-loss output has no head gradient: MXK_ERR_INVALID_ARGUMENT with
 * MXNet's message ("Because the last operator is not Loss function, head_gradient is
 * required when calling backward. ..."). No gradient requested: does nothing.
 */
MXK_API mxk_status mxk_executor_backward(mxk_executor *ex, uint32_t num_head,
                                         mxk_ndarray *const *head_grads);

/** Number of outputs; output i (owned by the executor, valid until it is freed/reshaped). */
MXK_API uint32_t mxk_executor_num_outputs(const mxk_executor *ex);
MXK_API mxk_ndarray *mxk_executor_output(const mxk_executor *ex, uint32_t i);

/** Arrays by name (owned by the executor; NULL when absent): argument, its gradient, aux, output.
 */
MXK_API mxk_ndarray *mxk_executor_arg(const mxk_executor *ex, const char *name);
MXK_API mxk_ndarray *mxk_executor_grad(const mxk_executor *ex, const char *name);
MXK_API mxk_ndarray *mxk_executor_aux(const mxk_executor *ex, const char *name);
MXK_API mxk_ndarray *mxk_executor_output_by_name(const mxk_executor *ex, const char *name);

/**
 * Copies named arrays into the executor's arguments (and aux states), converting
 * dtype (upstream python/mxnet/executor.py copy_params_from). A name may carry the
 * prefix of MXNet's .params files: "arg:NAME" goes to argument NAME and "aux:NAME"
 * to aux state NAME whichever list it is in, so the names and arrays that
 * mxk_ndarray_load returns for a checkpoint can be passed as the argument list
 * (python/mxnet/model.py save_checkpoint / load_checkpoint); a name without a
 * prefix goes to the list it is in. Every name is checked before anything is
 * copied. Errors: MXK_ERR_INVALID_ARGUMENT "copy_params_from: executor is NULL",
 * "copy_params_from: a list is NULL", "copy_params_from: argument I has a NULL
 * name or array" (aux state alike); MXK_ERR_NOT_FOUND 'Find name "x" that is not
 * in the arguments' / "Find name x that is not in the auxiliary states" for an
 * unknown name unless allow_extra (then it is skipped); the copy's errors (a shape
 * that differs: MXK_ERR_SHAPE, prefixed "copy_params_from: argument 'x': ").
 */
MXK_API mxk_status mxk_executor_copy_params_from(mxk_executor *ex, uint32_t num_args,
                                                 const char *const *arg_names,
                                                 mxk_ndarray *const *arg_arrays, uint32_t num_aux,
                                                 const char *const *aux_names,
                                                 mxk_ndarray *const *aux_arrays,
                                                 int32_t allow_extra);

/**
 * A new executor for new input shapes sharing memory with `ex` (upstream
 * GraphExecutor::Reshape): unchanged arrays are shared, smaller ones become views,
 * larger ones need allow_up_sizing. The two must not run concurrently. Errors as
 * bind, the memory limit included.
 */
MXK_API mxk_status mxk_executor_reshape(mxk_executor *ex, int32_t partial_shaping,
                                        int32_t allow_up_sizing, uint32_t num_shapes,
                                        const char *const *names, const mxk_shape *shapes,
                                        mxk_executor **out);

/**
 * Monitor callback: called after each operator is pushed, per output
 * ("<node>_<output>"), with a new array handle the callee owns (frees) and must
 * wait on before reading; with monitor_all, inputs first too.
 */
typedef void (*mxk_monitor_fn)(const char *name, mxk_ndarray *array, void *user);
MXK_API mxk_status mxk_executor_set_monitor(mxk_executor *ex, mxk_monitor_fn fn, void *user,
                                            int32_t monitor_all);

/**
 * MXNet's debug_str: the symbol listing, the memory plan and the footer
 * "Total N MB allocated". *out is freed with mxk_free().
 */
MXK_API mxk_status mxk_executor_debug_str(const mxk_executor *ex, char **out);

/** Planned bytes of the executor's memory plan, and of a naive plan (one buffer per entry). */
MXK_API void mxk_executor_plan_bytes(const mxk_executor *ex, uint64_t *planned, uint64_t *naive);

/** Re-resolves every node's kernel by the current backend preference (between iterations). */
MXK_API mxk_status mxk_executor_reresolve(mxk_executor *ex);

/**
 * The backend whose kernel runs operator node `node` (by name; the first such node
 * when names repeat) of the bound executor now: what bind resolved, or the last
 * mxk_executor_reresolve. *backend is owned by the registry (valid until
 * mxk_shutdown). Errors: MXK_ERR_INVALID_ARGUMENT "mxk_executor_node_backend: executor,
 * node or backend is NULL"; MXK_ERR_NOT_FOUND "executor: no operator node named 'X'"
 * (also for a variable's name). Thread-safe with respect to running work.
 */
MXK_API mxk_status mxk_executor_node_backend(const mxk_executor *ex, const char *node,
                                             const char **backend);

/**
 * Turns the executor's per-node profiler on (every counter reset to zero) or off
 * (counters dropped). While on, each run of a node's forward or backward kernel adds
 * one run and its wall time, measured inside the engine function around the
 * kernel's call with CLOCK_MONOTONIC (resource preparation, add-to emulation and the
 * engine's scheduling excluded), to the node's counters; off (the default), a run
 * costs one relaxed atomic load. Work pushed before the call and not yet started is
 * counted: wait (mxk_wait_all) before turning it on to measure from a clean start.
 * Executors made by reshape start with it off. Errors: MXK_ERR_INVALID_ARGUMENT
 * "mxk_executor_set_profiling: executor is NULL".
 */
MXK_API mxk_status mxk_executor_set_profiling(mxk_executor *ex, int32_t on);

/** Kernel time of one operator node of an executor (mxk_executor_get_profile). */
typedef struct mxk_executor_node_profile {
    const char *name;    /**< the node's name (owned by the executor, valid until it is freed) */
    const char *op;      /**< canonical operator name (owned by the registry) */
    const char *backend; /**< backend whose kernel runs the node now (owned by the registry) */
    uint64_t fwd_runs;   /**< forward kernel runs since profiling was turned on */
    uint64_t fwd_ns;     /**< their total wall time, nanoseconds */
    uint64_t bwd_runs;   /**< backward kernel runs (0 for a node without a backward step) */
    uint64_t bwd_ns;     /**< their total wall time, nanoseconds */
} mxk_executor_node_profile;

/**
 * The profiler's counters: one entry per operator node in the graph's topological
 * order (the order of the symbol's JSON nodes), with what has finished so far: wait
 * for the work (mxk_wait_all) first to count every pushed run. A node whose backend
 * changed by reresolve while profiling sums the runs of both kernels (turn profiling
 * off and on to restart the count). With profiling off: *num 0 and *nodes NULL. On
 * success *nodes is an array of *num entries the caller frees with mxk_free(). Errors:
 * MXK_ERR_INVALID_ARGUMENT "mxk_executor_get_profile: executor, num or nodes is NULL";
 * MXK_ERR_OUT_OF_MEMORY "executor: out of memory".
 */
MXK_API mxk_status mxk_executor_get_profile(const mxk_executor *ex, uint32_t *num,
                                            mxk_executor_node_profile **nodes);

/* ------------------------------------------------------------------------- */
/* Predictor: inference from a symbol and parameters in memory               */
/* ------------------------------------------------------------------------- */

/**
 * A symbol bound for inference with its parameters (upstream
 * include/mxnet/c_predict_api.h, src/c_api/c_predict_api.cc PredictorHandle): the
 * one handle an application needs to run a trained model. Thread safety: as an
 * executor (one thread at a time per predictor; distinct predictors independent).
 */
typedef struct mxk_predictor mxk_predictor;

/**
 * Creates a predictor (upstream MXPredCreate / MXPredCreatePartialOut) from a
 * symbol JSON string (mxk_symbol_from_json; a checkpoint's PREFIX-symbol.json) and
 * the bytes of a parameter list (the content of PREFIX-EPOCH.params:
 * mxk_ndarray_load_buffer; param_size 0: no parameters, they stay zero). Shapes
 * are inferred from the `num_inputs` named input shapes (e.g. "data" (1,1,28,28));
 * arguments and aux states are allocated on ctx, the list's "arg:NAME" /
 * "aux:NAME" arrays are copied in (mxk_executor_copy_params_from with
 * allow_extra: names the symbol does not use are skipped), and the graph is bound
 * without gradients. With num_output_keys > 0 the outputs are the internal outputs
 * named by output_keys instead of the symbol's: a key matches an output named KEY
 * or KEY_output ("fc1" and "fc1_output" both name fc1's output; upstream appends
 * "_output"). Nothing is retained from the arguments. On success the caller owns
 * *out (mxk_predictor_free); on failure *out is NULL. Errors:
 * MXK_ERR_INVALID_ARGUMENT "mxk_predictor_create: out, symbol_json or a list is
 * NULL", "mxk_predictor_create: output key I is NULL"; MXK_ERR_NOT_FOUND
 * "mxk_predictor_create: the symbol has no output named 'K' or 'K_output'"; the
 * errors of mxk_symbol_from_json, mxk_executor_simple_bind (an input name the
 * symbol lacks, "InferShape pass cannot decide shapes ..."), mxk_ndarray_load_buffer
 * (MXK_ERR_FORMAT "Invalid NDArray file format: ... (parameter bytes)"),
 * MXK_ERR_FORMAT "mxk_predictor_create: the parameter list has no names (Invalid
 * param file format)", and of the copies (a parameter whose shape differs from the
 * inferred one: MXK_ERR_SHAPE naming it); MXK_ERR_OUT_OF_MEMORY.
 */
MXK_API mxk_status mxk_predictor_create(const char *symbol_json, const void *param_bytes,
                                        size_t param_size, mxk_context ctx, uint32_t num_inputs,
                                        const char *const *input_names,
                                        const mxk_shape *input_shapes, uint32_t num_output_keys,
                                        const char *const *output_keys, mxk_predictor **out);

/**
 * Copies `count` floats into input `name` (upstream MXPredSetInput; any argument may
 * be set, parameters too). The data is copied before the call returns. Errors:
 * MXK_ERR_INVALID_ARGUMENT "mxk_predictor_set_input: predictor, name or data is
 * NULL"; MXK_ERR_NOT_FOUND "mxk_predictor_set_input: cannot find input key NAME";
 * MXK_ERR_SHAPE "mxk_predictor_set_input: input 'NAME' has N elements, not COUNT";
 * MXK_ERR_TYPE for an input that is not float32.
 */
MXK_API mxk_status mxk_predictor_set_input(mxk_predictor *p, const char *name, const float *data,
                                           uint64_t count);

/**
 * Runs the forward pass in inference mode (upstream MXPredForward); asynchronous:
 * its errors are reported by mxk_predictor_get_output. Errors:
 * MXK_ERR_INVALID_ARGUMENT "mxk_predictor_forward: predictor is NULL"; those of
 * mxk_executor_forward.
 */
MXK_API mxk_status mxk_predictor_forward(mxk_predictor *p);

/** Number of outputs (0 for NULL). */
MXK_API uint32_t mxk_predictor_num_outputs(const mxk_predictor *p);

/**
 * The shape of output `index` (upstream MXPredGetOutputShape). Errors:
 * MXK_ERR_INVALID_ARGUMENT (NULL predictor or shape); MXK_ERR_NOT_FOUND
 * "mxk_predictor_output_shape: output I is out of range (N outputs)".
 */
MXK_API mxk_status mxk_predictor_output_shape(const mxk_predictor *p, uint32_t index,
                                              mxk_shape *shape);

/**
 * Copies output `index` (`count` floats, the output's size) into `data`, waiting
 * for the forward pass (upstream MXPredGetOutput). Errors: MXK_ERR_INVALID_ARGUMENT
 * (NULL predictor or data); MXK_ERR_NOT_FOUND "mxk_predictor_get_output: output I
 * is out of range (N outputs)"; MXK_ERR_SHAPE "mxk_predictor_get_output: output 'I'
 * has N elements, not COUNT"; the errors of the forward pass.
 */
MXK_API mxk_status mxk_predictor_get_output(const mxk_predictor *p, uint32_t index, float *data,
                                            uint64_t count);

/**
 * A new predictor for new input shapes sharing the parameters of `p` (upstream
 * MXPredReshape): shapes are inferred again from the named ones; every argument
 * that is not a parameter (not loaded from the parameter bytes: the data, a label
 * following the batch size) may change shape and grow (mxk_executor_reshape with
 * partial_shaping and allow_up_sizing; larger inputs get fresh arrays), while the
 * parameters must keep their shapes. Both predictors stay valid and share the
 * parameters' memory (free each, in any order); they must not run concurrently.
 * Errors: MXK_ERR_INVALID_ARGUMENT "mxk_predictor_reshape: predictor or out is
 * NULL"; MXK_ERR_SHAPE "mxk_predictor_reshape: the shape of parameter NAME would
 * change; only the shapes of inputs may change"; those of mxk_executor_reshape
 * (inference); MXK_ERR_OUT_OF_MEMORY.
 */
MXK_API mxk_status mxk_predictor_reshape(mxk_predictor *p, uint32_t num_inputs,
                                         const char *const *input_names,
                                         const mxk_shape *input_shapes, mxk_predictor **out);

/** Frees a predictor (after its pending work). NULL: no-op. */
MXK_API void mxk_predictor_free(mxk_predictor *p);

/* ------------------------------------------------------------------------- */
/* Cross-check (two backends on identical inputs)                            */
/* ------------------------------------------------------------------------- */

/** Options of mxk_crosscheck_executor. Zero-initialise, then set struct_size. */
typedef struct mxk_crosscheck_options {
    uint32_t struct_size;   /**< sizeof(mxk_crosscheck_options) */
    const char *reference;  /**< the reference backend ("cpu-blas"); required */
    int32_t is_train;       /**< forward in training mode (batch statistics, dropout masks) */
    int32_t check_backward; /**< also backward of every node (only with is_train) */
    double rtol;            /**< relative tolerance; 0: the kernels' declared ones */
    double atol;            /**< absolute tolerance; 0: the kernels' declared ones */
    uint64_t seed;          /**< seeds the random output gradients and random operators */
} mxk_crosscheck_options;

/** The result of a cross-check: counts, and the first divergence if any. */
typedef struct mxk_crosscheck_report {
    int32_t diverged;            /**< 1 when a node's results differ beyond the tolerance */
    uint32_t nodes_checked;      /**< operator nodes run on both backends (up to the divergence) */
    uint32_t nodes_on_reference; /**< of those, nodes whose tested backend is the reference */
    uint32_t nodes_skipped;      /**< nodes the reference backend has no kernel for (or declines) */
    /* The first divergence (set only when diverged): */
    char node[128];     /**< the node's name */
    char op[64];        /**< its canonical operator name */
    char backend[64];   /**< the backend under test that ran it */
    char reference[64]; /**< the reference backend */
    char result[160];   /**< "output 'output'", "gradient of 'weight'", "aux state 'moving_mean'" */
    double max_abs_err; /**< max |tested - reference| over the result's elements */
    double max_rel_err; /**< max |tested - reference| / |reference| (inf where reference is 0) */
    uint64_t worst_index;   /**< flat row-major index of the element exceeding the bound most */
    double value;           /**< the tested backend's value there */
    double reference_value; /**< the reference backend's value there */
    double rtol, atol;      /**< the tolerance applied */
} mxk_crosscheck_report;

/**
 * Cross-checks a bound executor node by node against a reference backend: for every
 * operator node in topological order, the node's inputs are the values the graph
 * computes on the kernels the executor runs (from its bound arguments and aux
 * states, which are not modified); the node's operator runs once with the
 * executor's kernel and once with the reference backend's (an operator instance
 * created while mxk_set_op_backend(op, reference) forces it; the operator's override
 * before, mxk_get_op_backend's, is set back afterwards) on copies of the same
 * inputs and aux states:
 * forward (random operators seeded alike), then, with check_backward, backward of
 * every input (WRITE) with the same random output gradient (uniform in [-1, 1),
 * from `seed`), given only the tensors the operator's backward dependency declares
 * (the others absent, as in the executor). Compared: visible outputs, aux states after forward,
 * input gradients; an element agrees when |a - r| <= atol + rtol * |r| (NaN agrees only with NaN).
 * Tolerance: the options' when non-zero, else the larger of the two kernels' crosscheck_rtol /
 * crosscheck_atol (ABI 1.2), else rtol 1e-4 / atol 1e-5. Stops at the first divergence. Nodes whose
 * kernel is the reference's are still run (deterministic kernels agree with themselves); a node the
 * reference backend has no kernel for, or declines, is skipped and counted. A kernel without
 * backward (MXK_ERR_UNSUPPORTED) is checked forward only. Values are compared as float64.
 * Synchronous (waits for its work); the executor must not run meanwhile, and no
 * other thread may bind or set operator overrides during the call.
 * Errors: MXK_ERR_INVALID_ARGUMENT "mxk_crosscheck_executor: executor, options or
 * report is NULL", "mxk_crosscheck_executor: options.struct_size is too small",
 * "mxk_crosscheck_executor: no reference backend given"; MXK_ERR_NOT_FOUND
 * "mxk_crosscheck_executor: unknown backend 'X' (registered: a, b)"; the errors of
 * the kernels' runs (naming node and backend), MXK_ERR_OUT_OF_MEMORY.
 */
MXK_API mxk_status mxk_crosscheck_executor(mxk_executor *ex, const mxk_crosscheck_options *options,
                                           mxk_crosscheck_report *report);

/* ------------------------------------------------------------------------- */
/* Data iterators                                                            */
/* ------------------------------------------------------------------------- */

/**
 * A data iterator of a registered type (MNISTIter, CSVIter, ... from plugins):
 * MXNet's DataIter (include/mxnet/io.h) behind the C API's DataIterHandle
 * (include/mxnet/c_api.h MXDataIter*; python/mxnet/io/io.py MXDataIter). Batches
 * are CPU NDArrays owned by the iterator, valid until the next call of
 * next/reset/free on it. Errors of a producer thread surface at next/reset and
 * stay sticky (upstream docs/static_site/src/pages/api/architecture/exception_handling.md). Thread
 * safety: an iterator is used by one thread at a time (calls on one iterator must not overlap);
 * distinct iterators are independent. Every function returning a status gives
 * MXK_ERR_INVALID_ARGUMENT for a NULL iterator.
 */
typedef struct mxk_data_iter mxk_data_iter;

/**
 * Creates an iterator of type `name` with string attributes (upstream
 * MXDataIterCreateIter; attribute names and defaults of the type's upstream
 * parameters, e.g. MNISTParam of src/io/iter_mnist.cc, CSVIterParam of
 * src/io/iter_csv.cc). On success the caller owns *out (mxk_data_iter_free);
 * keys and vals are copied. On failure *out is NULL. Errors:
 * - MXK_ERR_INVALID_ARGUMENT: out is NULL; keys or vals NULL with num_attrs > 0; a
 *   NULL key or value; a value that does not parse as the attribute's type or is
 *   out of range (batch_size 0, part_index >= num_parts, ...); a required
 *   attribute missing (CSVIter's data_csv).
 * - MXK_ERR_NOT_FOUND: unknown type (the message lists the registered ones; none
 *   before mxk_init has loaded the io-recordio plugin); unknown attribute name
 *   (the message lists the valid ones).
 * - MXK_ERR_OUT_OF_MEMORY.
 * - what the type's create reports: MNISTIter MXK_ERR_FORMAT for an image or
 *   label file that cannot be opened or read, is not an IDX file of the right
 *   kind, is truncated, or disagrees in count with the other; CSVIter MXK_ERR_IO
 *   for a file that cannot be opened, MXK_ERR_INVALID_ARGUMENT for shapes that do
 *   not fit; MXK_ERR_INTERNAL if the prefetch thread cannot start.
 * - MXK_ERR_INTERNAL: the plugin described a layout without names or with an
 *   unknown dtype (a plugin bug).
 */
MXK_API mxk_status mxk_data_iter_create(const char *name, uint32_t num_attrs,
                                        const char *const *keys, const char *const *vals,
                                        mxk_data_iter **out);
/**
 * Destroys an iterator: stops and joins its producer thread, frees its arrays
 * (pending work on them finishes first). NULL: no-op. Upstream MXDataIterFree.
 */
MXK_API void mxk_data_iter_free(mxk_data_iter *it);
/**
 * Rewinds to the first batch (upstream MXDataIterBeforeFirst / DataIter::BeforeFirst;
 * MNISTIter keeps its order, as upstream). Afterwards there is no current batch.
 * Errors: MXK_ERR_INVALID_ARGUMENT (it NULL); a sticky producer error (as
 * mxk_data_iter_next).
 */
MXK_API mxk_status mxk_data_iter_reset(mxk_data_iter *it);
/**
 * Advances (upstream MXDataIterNext): *has_next 1 when a batch is current, 0 at
 * the end of the epoch (no current batch then; reset starts the next epoch).
 * Waits for pending work that reads the batch arrays before overwriting them.
 * Errors (*has_next 0, no current batch): MXK_ERR_INVALID_ARGUMENT (it or has_next
 * NULL); the producer's error, sticky until free (CSVIter: MXK_ERR_FORMAT for a
 * malformed row or a label file shorter than the data, MXK_ERR_INVALID_ARGUMENT
 * for round_batch with fewer rows than batch_size); errors of pending work on the
 * batch arrays; MXK_ERR_INTERNAL for a plugin batch that does not match its
 * described layout.
 */
MXK_API mxk_status mxk_data_iter_next(mxk_data_iter *it, int32_t *has_next);
/**
 * The current batch (upstream MXDataIterGetData / GetLabel / GetPadNum): data and
 * label arrays (owned by the iterator: do not free; valid until the next
 * next/reset/free) and the number of padding examples at its end. NULL output
 * pointers are skipped. Errors: MXK_ERR_INVALID_ARGUMENT (it NULL); MXK_ERR_STATE
 * when there is no current batch (before the first successful
 * mxk_data_iter_next, after one that returned 0 or failed, after a reset).
 */
MXK_API mxk_status mxk_data_iter_batch(mxk_data_iter *it, uint32_t *num_data,
                                       mxk_ndarray *const **data, uint32_t *num_label,
                                       mxk_ndarray *const **label, uint32_t *pad);
/**
 * Names and batch shapes of data and label (python DataIter.provide_data /
 * provide_label), owned by the iterator and valid as long as it. NULL output
 * pointers are skipped. Errors: MXK_ERR_INVALID_ARGUMENT (it NULL) only.
 */
MXK_API mxk_status mxk_data_iter_describe(mxk_data_iter *it, uint32_t *num_data,
                                          const char *const **data_names,
                                          const mxk_shape **data_shapes, uint32_t *num_label,
                                          const char *const **label_names,
                                          const mxk_shape **label_shapes);

/* ------------------------------------------------------------------------- */
/* KVStore                                                                   */
/* ------------------------------------------------------------------------- */

/**
 * A key-value store (MXNet's KVStore: include/mxnet/kvstore.h, C API
 * include/mxnet/c_api.h MXKVStore*, semantics of src/kvstore/kvstore_local.h and
 * python/mxnet/kvstore.py). Values pushed to one key in one call are
 * summed; without an updater the sum replaces the stored value, with one the
 * updater is called once per key on the sum. Keys are strings; the *_int
 * functions take integer keys (kept in decimal string form). A store holds keys
 * of one kind: once it holds keys of one kind, a call with keys of the other kind
 * fails with MXK_ERR_INVALID_ARGUMENT "Mixed key types are not allowed" (upstream
 * KVStoreLocal::SetKeyType). Push and pull are asynchronous (engine functions);
 * arrays may live on any device; errors of that asynchronous work are reported by
 * waits on the arrays involved (mxk_ndarray_wait_to_read on pulled outputs).
 * Thread safety: the functions may be called concurrently from any thread (a lock
 * guards the key table; as upstream, the order of calls from different threads is
 * not defined), except mxk_kvstore_free, which must not overlap any other call on
 * the store. Every function returning a status gives MXK_ERR_INVALID_ARGUMENT for
 * a NULL kv.
 */
typedef struct mxk_kvstore mxk_kvstore;

/**
 * Creates a store (upstream MXKVStoreCreate / KVStore::Create): "local" (reduce on
 * CPU) or "device" (reduce on the first pushed value's device; the stored value
 * stays on the init value's device), both in-process through the transport ABI
 * (built-in transport). As upstream's KVStore::Create, names are matched
 * lower-cased: without "dist", a name starting with "local" or containing "device"
 * is built in (local_update_cpu, local_allreduce_device, ...); any other name is
 * looked up among the registered KVStore transports (dist_sync, ...). The caller
 * owns *out (mxk_kvstore_free); *out is NULL on failure. Errors:
 * MXK_ERR_INVALID_ARGUMENT (type or out NULL); MXK_ERR_NOT_FOUND (no transport of
 * that name; the message lists the registered ones); MXK_ERR_OUT_OF_MEMORY; what
 * the transport's create reports.
 */
MXK_API mxk_status mxk_kvstore_create(const char *type, mxk_kvstore **out);
/**
 * Frees a store (upstream MXKVStoreFree): waits for its pending transport work,
 * then releases the stored values (memory goes after pending work on them).
 * NULL: no-op.
 */
MXK_API void mxk_kvstore_free(mxk_kvstore *kv);
/**
 * The store's type name as given to create (upstream MXKVStoreGetType), owned by
 * the store and valid until mxk_kvstore_free; NULL for a NULL kv.
 */
MXK_API const char *mxk_kvstore_type(const mxk_kvstore *kv);
/**
 * This worker's rank and the number of workers (upstream MXKVStoreGetRank /
 * MXKVStoreGetGroupSize), from the transport (local/device: 0 and 1; a NULL kv
 * too).
 */
MXK_API int32_t mxk_kvstore_rank(const mxk_kvstore *kv);
MXK_API int32_t mxk_kvstore_num_workers(const mxk_kvstore *kv);
/**
 * Initialises keys with copies of values (upstream MXKVStoreInitEx /
 * KVStoreLocal::Init): the store keeps its own copy (on the CPU, or with "device"
 * on the value's non-CPU device); the caller keeps its arrays. Waits for the
 * values' pending writes. Every key is checked before any is added, so a call
 * failing a check adds none; a failure after the checks (out of memory, the
 * transport's init) leaves the keys before the failing one initialised. Errors:
 * - MXK_ERR_INVALID_ARGUMENT: kv NULL; keys or values NULL with num > 0; a NULL
 *   key or value; keys of the other kind than those the store holds.
 * - MXK_ERR_STATE: a key already initialised, or twice in the call ("duplicate
 *   init of key K").
 * - MXK_ERR_OUT_OF_MEMORY.
 * - errors of the copy (MXK_ERR_NOT_FOUND / MXK_ERR_UNSUPPORTED for a device
 *   without a backend or copy function), of pending work on a value, and of the
 *   transport's init.
 */
MXK_API mxk_status mxk_kvstore_init(mxk_kvstore *kv, uint32_t num, const char *const *keys,
                                    mxk_ndarray *const *values);
/**
 * Pushes values (upstream MXKVStorePushEx / KVStoreLocal::Push); values of one
 * key in one call are summed, then assigned or handed to the updater. The
 * caller keeps its arrays and may free them at once (pending work holds its own
 * references); later writes to them are ordered after the push's reads. Every key
 * is checked before anything is pushed. Errors:
 * - MXK_ERR_INVALID_ARGUMENT: kv NULL; keys or values NULL with num > 0; a NULL
 *   key or value; keys of the other kind than those the store holds.
 * - MXK_ERR_NOT_FOUND: a key not initialised ("key K doesn't exist. Did you
 *   init?"; integer keys: "key K has not been inited").
 * - MXK_ERR_SHAPE: a value's shape differs from the stored one.
 * - MXK_ERR_TYPE: a value's dtype differs from the stored one.
 * - MXK_ERR_OUT_OF_MEMORY; errors of pushing the sum and copies (MXK_ERR_NOT_FOUND
 *   / MXK_ERR_UNSUPPORTED for a device without a backend, copy function or
 *   ElementWiseSum kernel). Such a late failure stops the call: keys before it may
 *   already be pushed.
 */
MXK_API mxk_status mxk_kvstore_push(mxk_kvstore *kv, uint32_t num, const char *const *keys,
                                    mxk_ndarray *const *values, int32_t priority);
/**
 * Pulls the stored value of each key into outs (upstream MXKVStorePullEx /
 * KVStoreLocal::Pull; one key may appear several times; outs may have another
 * dtype: the copy converts). Asynchronous: outs are written by pending engine
 * copies (wait on them before reading); the caller owns outs. Errors as
 * mxk_kvstore_push, except that a dtype difference is not an error
 * (MXK_ERR_INVALID_ARGUMENT, MXK_ERR_NOT_FOUND, MXK_ERR_SHAPE,
 * MXK_ERR_OUT_OF_MEMORY, errors of pushing the copies).
 */
MXK_API mxk_status mxk_kvstore_pull(mxk_kvstore *kv, uint32_t num, const char *const *keys,
                                    mxk_ndarray *const *outs, int32_t priority);
/**
 * Integer-key forms of init/push/pull (upstream MXKVStoreInit / MXKVStorePush /
 * MXKVStorePull): the same semantics, ownership and errors, with the key in
 * decimal in messages and the updater; MXK_ERR_INVALID_ARGUMENT also when the
 * store holds string keys (and the string forms fail alike on a store holding
 * integer keys).
 */
MXK_API mxk_status mxk_kvstore_init_int(mxk_kvstore *kv, uint32_t num, const int32_t *keys,
                                        mxk_ndarray *const *values);
MXK_API mxk_status mxk_kvstore_push_int(mxk_kvstore *kv, uint32_t num, const int32_t *keys,
                                        mxk_ndarray *const *values, int32_t priority);
MXK_API mxk_status mxk_kvstore_pull_int(mxk_kvstore *kv, uint32_t num, const int32_t *keys,
                                        mxk_ndarray *const *outs, int32_t priority);
/**
 * The updater: called once per key and push, with the summed value (recv) and the
 * stored array (stored, to update in place). Keys are passed as strings (integer
 * keys in decimal). As upstream (KVStoreLocal::PushImpl), it is called in the
 * thread calling mxk_kvstore_push, during that call, after the sum has been pushed
 * to the engine and without the store's lock: recv's and stored's values are
 * produced by pending engine work, so the updater pushes its own work through the
 * engine (imperative operators, copies: ordered by the arrays' variables, so a
 * later pull sees the result) or waits for them (mxk_ndarray_copy_to_host and
 * friends are allowed: it is not inside an engine function). Both arrays belong to
 * the store: recv is valid only during the call (retain nothing), stored until
 * mxk_kvstore_free; free neither.
 */
typedef void (*mxk_kvstore_updater)(const char *key, mxk_ndarray *recv, mxk_ndarray *stored,
                                    void *user);
/**
 * Sets the updater (upstream MXKVStoreSetUpdater / KVStore::set_updater; python
 * KVStore._set_updater); NULL restores the default (assign the sum). `user` is
 * passed to every call and not owned by the store. Takes effect for pushes that
 * start after it returns. Errors: MXK_ERR_INVALID_ARGUMENT (kv NULL) only.
 */
MXK_API mxk_status mxk_kvstore_set_updater(mxk_kvstore *kv, mxk_kvstore_updater fn, void *user);
/**
 * Blocks until every worker reaches the barrier (upstream MXKVStoreBarrier /
 * KVStore::Barrier; local and device: returns at once). Errors:
 * MXK_ERR_INVALID_ARGUMENT (kv NULL); what the transport's barrier reports.
 */
MXK_API mxk_status mxk_kvstore_barrier(mxk_kvstore *kv);
/**
 * 1 when this process is a server of the store (upstream MXKVStoreIsServerNode):
 * with dist_async, the last MXK_KVSTORE_NUM_SERVERS ranks of the MPI job
 * (docs/distributed.md). A server's rank is its index among the servers and
 * mxk_kvstore_num_workers the number of workers; it must call
 * mxk_kvstore_run_server and nothing else on the store. 0 for workers, stores
 * without servers and a NULL kv.
 */
MXK_API int32_t mxk_kvstore_is_server(const mxk_kvstore *kv);
/**
 * A server's controller (upstream KVStoreServer._controller,
 * python/mxnet/kvstore/kvstore_server.py): called for every command of the workers
 * (mxk_kvstore_send_command_to_servers), in the thread running
 * mxk_kvstore_run_server. Command 0 conventionally sets the optimizer: the
 * controller then calls mxk_kvstore_set_updater on the server's store. `body` is
 * valid during the call. A failure (status and mxk_set_error message) is returned
 * to the worker that sent the command.
 */
typedef mxk_status (*mxk_kvstore_server_controller)(int32_t head, const char *body, void *user);
/**
 * Runs a server of the store (upstream MXKVStoreRunServer / KVStoreDistServer,
 * src/kvstore/kvstore_dist_server.h, async mode): until every worker has freed its
 * store, keeps the server's share of each key (host memory), runs `controller` for
 * commands, applies every worker's push at once with the updater the controller
 * set (updater(key, pushed value, stored value, user)), and answers pulls with
 * the current value. A key of at least MXK_KVSTORE_BIGARRAY_BOUND elements is
 * split over all servers (a smaller one lives whole on one), and each server's
 * updater sees its slice as a 1-D array under the key's name. Blocks the calling
 * thread. Errors: MXK_ERR_INVALID_ARGUMENT (kv or controller NULL); MXK_ERR_STATE
 * "KVStore T: this process is not a server of the store"; the transport's (a
 * worker lost: see MXK_KVSTORE_TIMEOUT). Errors of single messages (a push before
 * the optimizer, "no updater: the workers must send the optimizer (set_optimizer)
 * before they push") go back to the worker concerned, and the server goes on.
 */
MXK_API mxk_status mxk_kvstore_run_server(mxk_kvstore *kv, mxk_kvstore_server_controller controller,
                                          void *user);
/**
 * Sends a command to every server and waits until each has run it (upstream
 * MXKVStoreSendCommmandToServers; python KVStore.set_optimizer sends command 0 with
 * the optimizer). Every worker calls it alike: rank 0's body is sent, then the
 * workers wait for each other, so no push of any worker precedes the command
 * (upstream sends every worker's). Errors: MXK_ERR_INVALID_ARGUMENT (kv or body
 * NULL); MXK_ERR_UNSUPPORTED "KVStore T has no servers to send commands to";
 * MXK_ERR_STATE on a server; the controller's error, or the transport's.
 */
MXK_API mxk_status mxk_kvstore_send_command_to_servers(mxk_kvstore *kv, int32_t head,
                                                       const char *body);
/**
 * Sets gradient compression for the pushes that follow (upstream
 * KVStore.set_gradient_compression, src/kvstore/gradient_compression.cc): type
 * "2bit" quantises each pushed value to -threshold, 0 or +threshold per element
 * with error feedback (the residual, per key and worker, is added to the next
 * push); "none" turns it off. Every worker calls it alike, before pushing.
 * Errors: MXK_ERR_INVALID_ARGUMENT (kv or type NULL, "Unknown type for gradient
 * compression T (known: 2bit, none)", "gradient compression 2bit: threshold must
 * be positive, not X"); MXK_ERR_UNSUPPORTED "KVStore T: gradient compression needs
 * a dist store ..." (local and device: upstream compresses across devices too;
 * mxk only between processes); the transport's.
 */
MXK_API mxk_status mxk_kvstore_set_gradient_compression(mxk_kvstore *kv, const char *type,
                                                        double threshold);

#ifdef __cplusplus
}
#endif

#endif /* MXK_H */
