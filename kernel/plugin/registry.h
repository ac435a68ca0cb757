/*
 * The registry (kernel-internal): operators, their kernels per device type and
 * backend, device backends, data iterators and KVStore transports, as registered
 * by plugins through the registrar (abi/mxk_abi_host.h).
 *
 * Definitions are deep copies, zero-filled to the full size of the host's struct,
 * so slots a plugin built for an older minor does not know read as NULL/0.
 * Registration is staged per plugin and committed only if its init succeeds.
 * Entries are never removed while the process runs (plugins are not unloaded).
 *
 * Thread safety: registration (plugin loading) is serialised by a lock; lookups
 * are safe from any thread concurrently with loading (entries are published
 * after they are complete and never move).
 */
#ifndef MXK_REGISTRY_H
#define MXK_REGISTRY_H

#include "mxk.h"
#include "mxk_plugin.h"

/** A loaded plugin. */
typedef struct mxk_plugin_entry {
    char *name;
    char *version;
    char *description;
    char *path;   /**< real path */
    char *origin; /**< the conf file, "MXK_PLUGINS=PATH", or "" (mxk_load_plugin) */
    uint32_t abi_major, abi_minor, negotiated_minor;
    void *dl_handle;
    mxk_plugin_shutdown_fn shutdown;
    uint32_t num_ops, num_kernels, num_devices, num_iterators, num_transports;
} mxk_plugin_entry;

/** A registered kernel of an operator. */
typedef struct mxk_kernel_entry {
    mxk_op_kernel_def def; /**< deep copy (op_name, backend point to owned strings) */
    const mxk_plugin_entry *plugin;
} mxk_kernel_entry;

/** A registered operator. */
typedef struct mxk_op_entry {
    mxk_op_def def; /**< deep copy: strings, attribute schema and name lists owned */
    const mxk_plugin_entry *plugin;
} mxk_op_entry;

/** A registered device backend. */
typedef struct mxk_device_entry {
    mxk_device_def def;
    const mxk_plugin_entry *plugin;
} mxk_device_entry;

/** A registered iterator type. */
typedef struct mxk_iter_entry {
    mxk_iter_def def;
    const mxk_plugin_entry *plugin;
} mxk_iter_entry;

/** A registered KVStore transport. */
typedef struct mxk_transport_entry {
    mxk_kvstore_transport_def def;
    const mxk_plugin_entry *plugin;
} mxk_transport_entry;

/** The operator named `name`, or NULL. */
const mxk_op_entry *mxki_registry_find_op(const char *name);

/**
 * Sets and returns the MXK_ERR_NOT_FOUND error for an operator no loaded plugin
 * registers: "unknown operator 'NAME': no loaded plugin registers it" ("no plugins
 * are loaded" when none is), then "; did you mean 'X'?" naming the nearest
 * registered operators (mxki_suggest), then, when some plugin candidates were not
 * loaded, " (plugins not loaded: CONF (enabled = false); PATH (rejected: REASON))"
 * with whole entries only ("; ..." when more do not fit). NAME NULL: "(null)".
 * Thread-safe.
 */
mxk_status mxki_registry_unknown_op(const char *name);

/**
 * 1 when `name` is the operator's name or one of its aliases (mxk_op_def.aliases,
 * MXNet's add_alias), else 0. Pure; thread-safe.
 */
int mxki_op_entry_named(const mxk_op_entry *op, const char *name);

/** The device backend of dev_type, or NULL. */
const mxk_device_def *mxki_registry_device(int32_t dev_type);

/** The iterator type named `name`, or NULL. */
const mxk_iter_entry *mxki_registry_find_iterator(const char *name);

/** The KVStore transport named `name`, or NULL. */
const mxk_transport_entry *mxki_registry_find_transport(const char *name);

/**
 * Chooses the kernel for `op` on dev_type: per-operator override first, then the
 * backend preference list in order, then the highest priority, then registration
 * order; kernels whose `supports` declines the configuration are skipped
 * (param/in_shapes/in_types may be NULL to skip that check). A kernel with its own
 * parse_param (ABI 1.2) parses `attrs` (NULL: not parsed) and is asked with that
 * object; the chosen kernel's object is returned in *kparam (NULL when it has
 * none; the caller frees it with the kernel's free_param; kparam may be NULL to
 * free it here). Returns NULL and
 * sets the last error (naming the operator, the device type and the backends
 * registered) when none fits.
 */
const mxk_kernel_entry *mxki_registry_resolve_kernel(const mxk_op_entry *op, int32_t dev_type,
                                                     const void *param, const mxk_attrs *attrs,
                                                     const mxk_shape *in_shapes,
                                                     const int32_t *in_types, uint32_t num_in,
                                                     void **kparam);

#endif /* MXK_REGISTRY_H */
