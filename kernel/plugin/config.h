/*
 * Configuration directory (kernel-internal): discovery, mxk.conf and plugins.d.
 *
 * Layout (README.md "Configuration and plugins"):
 *   <dir>/mxk.conf           global settings, INI:
 *       [mxk]
 *       backend = onednn, cpu-blas    ; backend preference list
 *       num_threads = 2               ; CPU threads for kernels (0: all CPUs)
 *       [op_backend]
 *       Convolution = onednn          ; per-operator override
 *   <dir>/plugins.d/<name>.conf  one per plugin, loaded in file-name order:
 *       [plugin]
 *       library = libmxk-cpu-blas.so  ; resolved: conf dir, MXK_PLUGIN_PATH, install
 *       enabled = true
 *       priority = 0                  ; added to the plugin's kernel priorities
 *       [options]
 *       key = value                   ; passed to the plugin's init
 * Search order for <dir>: explicit (command-line flag / mxk_init option),
 * $MXK_CONFIG_DIR, $XDG_CONFIG_HOME/mxk (default ~/.config/mxk), the install's
 * config dir located from libmxk's own path (mxk_config_install_dir). An explicit
 * or environment dir that does not exist is an error; later candidates that do not
 * exist are skipped. Parsed with inih.
 */
#ifndef MXK_CONFIG_H
#define MXK_CONFIG_H

#include <stddef.h>

#include "mxk_abi_base.h"

/**
 * Finds the config dir (see above), applies mxk.conf and, unless `no_plugins`,
 * loads each enabled plugin of plugins.d. Errors: MXK_ERR_NOT_FOUND for a
 * missing explicit/env dir; MXK_ERR_FORMAT for a malformed mxk.conf (file, line,
 * reason). Problems with a plugin conf are recorded as rejections, not errors.
 */
mxk_status mxk_config_apply(const char *explicit_dir, int no_plugins);

/**
 * Picks the config dir by the search order above into out ("" when no optional
 * candidate exists). Errors: MXK_ERR_NOT_FOUND for a missing explicit or
 * MXK_CONFIG_DIR directory (named in the message).
 */
mxk_status mxk_config_find_dir(const char *explicit_dir, char *out, size_t size);

/**
 * The install's config dir for a libmxk in the directory `libdir`
 * (<prefix>/<libdir>, the libdir relative as built: MXK_INSTALL_LIBDIR), written
 * into out: "<full sysconfdir>/mxk", the full sysconfdir by GNUInstallDirs'
 * CMAKE_INSTALL_FULL_SYSCONFDIR rule (sdk/cmake/mxkInstallDirs.cmake, the same
 * rule the install rules apply): /usr/lib -> /etc/mxk, /usr/local/lib ->
 * /usr/local/etc/mxk, /opt/P/lib -> /etc/opt/P/mxk, <build>/lib ->
 * <build>/etc/mxk. `plain` set: always <prefix>/<sysconfdir>/mxk (the build
 * tree's layout, for a build tree under /opt). "" when libdir does not end in
 * the built libdir. Pure string work; thread-safe.
 */
void mxk_config_install_dir(const char *libdir, int plain, char *out, size_t size);

/** num_threads from mxk.conf (0 when unset). */
int32_t mxk_config_num_threads(void);

#endif /* MXK_CONFIG_H */
