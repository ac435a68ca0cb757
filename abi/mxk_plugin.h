/*
 * mxk plugin ABI 1.0: the plugin entry points. Include this one header.
 *
 * Two-phase load (abi/README.md):
 * 1. The kernel dlopens the library and calls `mxk_plugin_get_info()`, which must
 *    be side-effect free and return a pointer to constant data. The kernel checks
 *    the ABI major (must equal MXK_ABI_MAJOR) and `min_host_minor` (must be <= the
 *    host's minor) and rejects the plugin with a reason before running any other
 *    plugin code.
 * 2. The kernel calls `mxk_plugin_init(args, err)` with the negotiated minor
 *    (min(host minor, plugin abi_minor)), the host table and a registrar. The plugin
 *    registers what it provides and returns MXK_OK, or an error (its registrations
 *    are then discarded and the plugin is unloaded).
 * 3. In mxk_shutdown() (kernel/include/mxk.h), after all work has finished, the
 *    kernel calls `mxk_plugin_shutdown()` if exported, once, in the reverse order of
 *    loading; a process that never calls mxk_shutdown never calls it. Plugins are
 *    never dlclose'd while the registry can point into them.
 */
#ifndef MXK_PLUGIN_H
#define MXK_PLUGIN_H

#include "mxk_abi_base.h"
#include "mxk_abi_device.h"
#include "mxk_abi_host.h"
#include "mxk_abi_iter.h"
#include "mxk_abi_kvstore.h"
#include "mxk_abi_op.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a plugin provides (mxk_plugin_info.provides bits), for listings. */
enum mxk_plugin_provides {
    MXK_PROVIDES_OPERATORS = 1u << 0,
    MXK_PROVIDES_KERNELS = 1u << 1,
    MXK_PROVIDES_DEVICES = 1u << 2,
    MXK_PROVIDES_ITERATORS = 1u << 3,
    MXK_PROVIDES_KVSTORE = 1u << 4
};

/** Static description of a plugin, returned by mxk_plugin_get_info. */
typedef struct mxk_plugin_info {
    uint32_t struct_size;
    uint32_t abi_major;      /**< MXK_ABI_MAJOR the plugin was built with */
    uint32_t abi_minor;      /**< MXK_ABI_MINOR the plugin was built with */
    uint32_t min_host_minor; /**< oldest host minor whose table the plugin can use */
    const char *name;        /**< unique plugin name, e.g. "cpu-blas"; default backend name */
    const char *version;     /**< plugin version, e.g. "0.1.0" */
    const char *description;
    uint32_t provides; /**< mxk_plugin_provides bits */
} mxk_plugin_info;

/** Arguments of mxk_plugin_init. */
typedef struct mxk_plugin_init_args {
    uint32_t struct_size;
    uint32_t negotiated_minor; /**< min(host minor, plugin abi_minor) */
    const mxk_host_api *host;  /**< valid until process exit */
    mxk_registrar *registrar;  /**< valid during init only */
    const char *plugin_path;   /**< real path of the loaded library (valid during init; copy it) */
    const mxk_attrs *options;  /**< [options] of the plugin's conf file (valid during init) */
} mxk_plugin_init_args;

/** Name of the info entry point, looked up with dlsym. */
#define MXK_PLUGIN_INFO_SYMBOL "mxk_plugin_get_info"
/** Name of the init entry point. */
#define MXK_PLUGIN_INIT_SYMBOL "mxk_plugin_init"
/** Name of the optional shutdown entry point. */
#define MXK_PLUGIN_SHUTDOWN_SYMBOL "mxk_plugin_shutdown"

/** Signature of mxk_plugin_get_info. */
typedef const mxk_plugin_info *(*mxk_plugin_get_info_fn)(void);
/** Signature of mxk_plugin_init. */
typedef mxk_status (*mxk_plugin_init_fn)(const mxk_plugin_init_args *args, mxk_error_sink *err);
/** Signature of mxk_plugin_shutdown. */
typedef void (*mxk_plugin_shutdown_fn)(void);

/** Marks a plugin entry point as exported (plugins build with hidden visibility). */
#define MXK_PLUGIN_EXPORT __attribute__((visibility("default")))

/*
 * The entry points a plugin defines (declared here so that a plugin's definitions
 * have prototypes and default visibility). The kernel never calls them by name:
 * it looks them up with dlsym in each library.
 */
MXK_PLUGIN_EXPORT const mxk_plugin_info *mxk_plugin_get_info(void);
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args, mxk_error_sink *err);
MXK_PLUGIN_EXPORT void mxk_plugin_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* MXK_PLUGIN_H */
