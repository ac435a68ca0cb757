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
 * Layers: an explicit dir (command-line flag / mxk_init option), else
 * $MXK_CONFIG_DIR, is used alone (missing: an error). Otherwise the install's
 * config dir (located from libmxk's own path: mxki_config_install_dir) and, over it, the user's
 * $XDG_CONFIG_HOME/mxk (default ~/.config/mxk), each when it exists: mxk.conf
 * keys of the user's replace the install's (the files are applied in that order),
 * and plugins.d confs are merged by file name, the user's NAME.conf replacing the
 * install's (`enabled = false` in it disables that plugin), as systemd drop-ins
 * do. After the confs, each library of $MXK_PLUGINS (':'-separated paths, as
 * MXNet's mx.library.load) is loaded. Parsed with inih.
 */
#ifndef MXK_CONFIG_H
#define MXK_CONFIG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "mxk_abi_base.h"

/** Most config dirs layered: the install's and the user's. */
#define MXK_CONFIG_MAX_LAYERS 2

/** The config dirs in use, most general first. */
typedef struct mxk_config_layers {
    uint32_t n;
    char dirs[MXK_CONFIG_MAX_LAYERS][PATH_MAX];
} mxk_config_layers;

/**
 * Finds the config layers (see above), applies each layer's mxk.conf in order and,
 * unless `no_plugins`, loads each enabled plugin of the merged plugins.d, then those
 * of $MXK_PLUGINS. Errors: MXK_ERR_NOT_FOUND for a missing explicit/env dir;
 * MXK_ERR_FORMAT for a malformed mxk.conf (file, line, reason). Problems with a
 * plugin conf or an MXK_PLUGINS library are recorded as rejections (and logged as
 * warnings), not errors. Not thread-safe: called under mxk_init's lock.
 */
mxk_status mxki_config_apply(const char *explicit_dir, int no_plugins);

/**
 * Picks the config layers by the rules above into *out (n 0 when no optional
 * candidate exists). Errors: MXK_ERR_NOT_FOUND for a missing explicit or
 * MXK_CONFIG_DIR directory (named in the message).
 */
mxk_status mxki_config_find_dirs(const char *explicit_dir, mxk_config_layers *out);

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
void mxki_config_install_dir(const char *libdir, int plain, char *out, size_t size);

/** num_threads from mxk.conf (0 when unset). */
int32_t mxki_config_num_threads(void);

#endif /* MXK_CONFIG_H */
