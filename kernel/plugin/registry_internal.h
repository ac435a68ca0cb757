/*
 * Registry internals shared by the registry store (registry.c), backend selection
 * (backend_select.c), the registrar (registrar.c), the plugin loader (loader.c) and
 * the config dir (config.c). Not used elsewhere.
 */
#ifndef MXK_REGISTRY_INTERNAL_H
#define MXK_REGISTRY_INTERNAL_H

#include "registry.h"

/** Registrations of one plugin, staged during its init. */
typedef struct mxk_staging {
    mxk_plugin_entry *plugin;
    int32_t priority_bonus; /**< the conf file's `priority`, added to kernel priorities */
    mxk_op_entry **ops;
    uint32_t num_ops;
    mxk_kernel_entry **kernels;
    uint32_t num_kernels;
    mxk_device_entry **devices;
    uint32_t num_devices;
    mxk_iter_entry **iters;
    uint32_t num_iters;
    mxk_transport_entry **transports;
    uint32_t num_transports;
    mxk_status first_error; /**< first failed registration (MXK_OK if none) */
    char first_error_msg[1024];
} mxk_staging;

/** Initialises `reg` (the ABI registrar table) to stage into `st`. */
void mxki_registrar_init(mxk_registrar *reg, mxk_staging *st);

/** Frees every staged (uncommitted) entry and resets the staging. */
void mxki_staging_discard(mxk_staging *st);

/**
 * Commits staged entries into the registry after re-checking names against the
 * committed ones; on a clash nothing is committed and MXK_ERR_DUPLICATE is returned
 * with a message naming both plugins (last error). The plugin entry is added to
 * the list of loaded plugins. Takes the registry lock.
 */
mxk_status mxki_registry_commit(mxk_staging *st);

/**
 * Checks a staged name against the committed registry (under the lock): returns the
 * plugin that already registered an operator / device type / iterator / transport
 * / kernel (op, dev_type, backend), or NULL.
 */
const mxk_plugin_entry *mxki_registry_owner_of_op(const char *name);
const mxk_plugin_entry *mxki_registry_owner_of_device(int32_t dev_type);
const mxk_plugin_entry *mxki_registry_owner_of_iterator(const char *name);
const mxk_plugin_entry *mxki_registry_owner_of_transport(const char *name);
const mxk_plugin_entry *mxki_registry_owner_of_kernel(const char *op, int32_t dev_type,
                                                      const char *backend);

/** The loaded plugin whose library has this real path, or NULL. */
const mxk_plugin_entry *mxki_registry_plugin_by_path(const char *real_path);
/** The loaded plugin named `name`, or NULL. */
const mxk_plugin_entry *mxki_registry_plugin_by_name(const char *name);

/**
 * Records a rejected candidate (copies both strings) and, when `warn`, logs the
 * WARNING "plugin candidate PATH rejected: REASON" (candidates of the config and
 * MXK_PLUGINS; an API load returns its error instead). The same path and reason
 * are recorded and warned about once per process.
 */
void mxki_registry_reject(const char *path, const char *reason, int warn);

/** Frees op/kernel/... entries (used by discard and on shutdown). */
void mxki_op_entry_free(mxk_op_entry *e);
void mxki_kernel_entry_free(mxk_kernel_entry *e);

/** Calls every loaded plugin's shutdown hook (in reverse load order), once. */
void mxki_registry_shutdown_plugins(void);

/**
 * Writes into out[0..max) the kernels registered for `op` (under its name or an
 * alias) on dev_type, in registration order; returns how many (at most max).
 * Kernels never move, so the pointers stay valid. Takes the registry lock.
 */
uint32_t mxki_registry_kernels_of(const mxk_op_entry *op, int32_t dev_type,
                                  const mxk_kernel_entry **out, uint32_t max);

/** Sets the mxk.conf-level backend preference and per-op overrides (config.c). */
mxk_status mxki_registry_set_conf_preference(const char *list);
mxk_status mxki_registry_set_conf_op_backend(const char *op, const char *backend);

#endif /* MXK_REGISTRY_INTERNAL_H */
