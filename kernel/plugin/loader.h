/*
 * The plugin loader (kernel-internal): two-phase load of one plugin library
 * (abi/mxk_plugin.h, abi/README.md) and resolution of library paths.
 */
#ifndef MXK_LOADER_H
#define MXK_LOADER_H

#include <stddef.h>

#include "mxk_abi_base.h"

/**
 * Loads the plugin library at `path` (absolute or relative to the current dir).
 * `origin` names where the request came from for messages (a conf file path, or
 * NULL for an API call); `options` are the conf file's [options] (may be NULL);
 * `priority` is added to every kernel priority the plugin registers.
 * Already loaded (same real path): MXK_OK, nothing happens. On rejection the reason
 * is recorded (mxk_plugin_rejected_*) and returned as the last error.
 * Thread-safe: loads are serialised.
 */
mxk_status mxki_loader_load(const char *path, const char *origin, const mxk_attrs *options,
                            int32_t priority);

/**
 * Resolves a conf file's `library` value: absolute paths as they are; relative
 * ones against `conf_dir`, then each directory of MXK_PLUGIN_PATH (':'-separated),
 * then the install's plugin folder (found from libmxk's own location). Writes the
 * first existing candidate into out; otherwise MXK_ERR_NOT_FOUND with every place
 * looked at in the last error.
 */
mxk_status mxki_loader_resolve(const char *library, const char *conf_dir, char *out,
                               size_t out_size);

/**
 * Directory of libmxk itself (from dladdr), e.g. "/usr/local/lib"; "" if unknown.
 * The install layout is found from it: the config dir (mxki_config_install_dir)
 * and mxk/plugins (MXK_REL_PLUGINDIR).
 */
const char *mxki_loader_library_dir(void);

#endif /* MXK_LOADER_H */
