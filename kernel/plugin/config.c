/*
 * The config layers (the install's dir, the user's over it, or one explicit dir): mxk.conf,
 * the plugins.d confs merged by file name, MXK_PLUGINS; read with inih (see config.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attrs.h"
#include "env.h"
#include "error.h"
#include "loader.h"
#include "mxk.h"
#include "registry_internal.h"

#ifndef MXK_INSTALL_LIBDIR
#define MXK_INSTALL_LIBDIR "lib"
#endif
#ifndef MXK_INSTALL_SYSCONFDIR
#define MXK_INSTALL_SYSCONFDIR "etc"
#endif

/* The layers found by the last mxki_config_apply, most general first; the conf files
 * disabled by `enabled = false`. Written by mxki_config_apply (under mxk_init's lock),
 * read by the public queries after it. */
static mxk_config_layers layers;
static char **disabled;
static uint32_t num_disabled;
static int32_t conf_num_threads;

const char *mxk_config_dir(void) {
    return layers.n ? layers.dirs[layers.n - 1] : "";
}

uint32_t mxk_config_dir_count(void) {
    return layers.n;
}

mxk_status mxk_config_dir_get(uint32_t i, const char **dir) {
    if (dir == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_config_dir_get: dir is NULL");
    *dir = NULL;
    if (i >= layers.n)
        return mxk_set_error(MXK_ERR_NOT_FOUND, "config dir index %u out of range (%u in use)",
                             (unsigned)i, (unsigned)layers.n);
    *dir = layers.dirs[i];
    return MXK_OK;
}

uint32_t mxk_plugin_disabled_count(void) {
    return num_disabled;
}

mxk_status mxk_plugin_disabled_get(uint32_t i, const char **conf_path) {
    if (conf_path == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_plugin_disabled_get: conf_path is NULL");
    *conf_path = NULL;
    if (i >= num_disabled)
        return mxk_set_error(MXK_ERR_NOT_FOUND, "disabled conf index %u out of range (%u disabled)",
                             (unsigned)i, (unsigned)num_disabled);
    *conf_path = disabled[i];
    return MXK_OK;
}

/** Records conf_path as disabled (once; out of memory: not recorded). */
static void record_disabled(const char *conf_path) {
    for (uint32_t i = 0; i < num_disabled; i++)
        if (strcmp(disabled[i], conf_path) == 0)
            return;
    char **grown = realloc(disabled, (num_disabled + 1) * sizeof *grown);
    if (grown == NULL)
        return;
    disabled = grown;
    if ((disabled[num_disabled] = strdup(conf_path)) != NULL)
        num_disabled++;
}

int32_t mxki_config_num_threads(void) {
    return conf_num_threads;
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

void mxki_config_install_dir(const char *libdir, int plain, char *out, size_t size) {
    const char *sysconf = MXK_INSTALL_SYSCONFDIR;
    size_t n = strlen(libdir), r = strlen(MXK_INSTALL_LIBDIR);
    out[0] = '\0';
    if (sysconf[0] == '/') {
        snprintf(out, size, "%s/mxk", sysconf);
        return;
    }
    if (n <= r || libdir[n - r - 1] != '/' || strcmp(libdir + n - r, MXK_INSTALL_LIBDIR) != 0)
        return;
    int plen = (int)(n - r - 1); /* the prefix, libdir[0, plen) ("" is "/") */
    if (!plain && (plen == 0 || (plen == 4 && strncmp(libdir, "/usr", 4) == 0)))
        snprintf(out, size, "/%s/mxk", sysconf);
    else if (!plain && plen > 5 && strncmp(libdir, "/opt/", 5) == 0 &&
             !(plen > 14 && strncmp(libdir, "/opt/homebrew/", 14) == 0))
        snprintf(out, size, "/%s%.*s/mxk", sysconf, plen, libdir);
    else
        snprintf(out, size, "%.*s/%s/mxk", plen, libdir, sysconf);
}

/** Appends dir to out (when it fits), traced at debug level with why. */
static void add_layer(mxk_config_layers *out, const char *dir, const char *why) {
    if (out->n < MXK_CONFIG_MAX_LAYERS) {
        snprintf(out->dirs[out->n++], sizeof out->dirs[0], "%s", dir);
        mxki_log(MXK_LOG_DEBUG, "config: using config dir '%s' (%s)", dir, why);
    }
}

mxk_status mxki_config_find_dirs(const char *explicit_dir, mxk_config_layers *out) {
    out->n = 0;
    if (explicit_dir && *explicit_dir) {
        if (!is_dir(explicit_dir))
            return mxk_set_error(MXK_ERR_NOT_FOUND,
                                 "config dir '%s' (given explicitly) is not a directory",
                                 explicit_dir);
        add_layer(out, explicit_dir, "given explicitly, used alone");
        return MXK_OK;
    }
    const char *env = getenv("MXK_CONFIG_DIR");
    if (env && *env) {
        if (!is_dir(env))
            return mxk_set_error(MXK_ERR_NOT_FOUND,
                                 "config dir '%s' (from MXK_CONFIG_DIR) is not a directory", env);
        add_layer(out, env, "from MXK_CONFIG_DIR, used alone");
        return MXK_OK;
    }
    char cand[PATH_MAX];
    const char *libdir = mxki_loader_library_dir();
    /* The GNUInstallDirs place, else <prefix>/<sysconfdir>/mxk (a build tree under /opt). */
    int found = 0;
    for (int plain = 0; plain < 2 && *libdir && !found; plain++) {
        mxki_config_install_dir(libdir, plain, cand, sizeof cand);
        char real[PATH_MAX];
        if (cand[0] && is_dir(cand) && realpath(cand, real) != NULL) {
            add_layer(out, real, "the install's");
            found = 1;
        } else if (cand[0]) {
            mxki_log(MXK_LOG_DEBUG, "config: no install config dir '%s'", cand);
        }
    }
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(cand, sizeof cand, "%s/mxk", xdg);
    else if (home && *home)
        snprintf(cand, sizeof cand, "%s/.config/mxk", home);
    else
        cand[0] = '\0';
    if (cand[0] && is_dir(cand))
        add_layer(out, cand, "the user's, over the install's");
    else if (cand[0])
        mxki_log(MXK_LOG_DEBUG, "config: no user config dir '%s'", cand);
    return MXK_OK;
}

/* ---- reading a conf file ---- */

/** Largest conf file read (bytes); conf files are a few lines. */
#define CONF_MAX_BYTES (1u << 20)

/**
 * Reads the conf file `path` (a regular file of at most CONF_MAX_BYTES: a FIFO or
 * /dev/zero is refused, never waited on) and parses it with inih; *line is inih's
 * result (0, or the first line a handler refused). A line longer than inih reads
 * whole (ini_max_line less '\r', '\n' and NUL; inih would cut it in pieces) is
 * MXK_ERR_FORMAT "PATH:LINE: the line is longer than N characters". Errors of
 * reading: mxk_file_read's ("cannot read conf file 'PATH': it is a FIFO, not a
 * regular file", ...).
 */
static mxk_status parse_conf(const char *path, ini_handler handler, void *user, int *line) {
    char *text = NULL;
    size_t len = 0;
    mxk_status st = mxk_file_read(path, "conf file", CONF_MAX_BYTES, &text, &len);
    if (st != MXK_OK)
        return st;
    size_t max = ini_max_line > 3 ? (size_t)ini_max_line - 3 : 0;
    int n = 1;
    for (const char *p = text, *end = text + len; st == MXK_OK && p < end; n++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        size_t l = (size_t)(eol - p) - (eol > p && eol[-1] == '\r');
        if (l > max)
            st = mxk_set_error(MXK_ERR_FORMAT, "%s:%d: the line is longer than %zu characters",
                               path, n, max);
        p = nl ? nl + 1 : end;
    }
    if (st == MXK_OK && memchr(text, '\0', len) != NULL)
        st = mxk_set_error(MXK_ERR_FORMAT, "%s: the file contains a NUL byte", path);
    if (st == MXK_OK)
        *line = ini_parse_string(text, handler, user);
    free(text);
    return st;
}

/* ---- mxk.conf ---- */

typedef struct global_conf_state {
    char error[512];
} global_conf_state;

static int global_handler(void *user, const char *section, const char *name, const char *value) {
    global_conf_state *st = user;
    mxk_error_sink sink;
    mxki_error_sink_clear(&sink);
    if (strcmp(section, "mxk") == 0 || section[0] == '\0') {
        if (strcmp(name, "backend") == 0) {
            mxki_registry_set_conf_preference(value);
            return 1;
        }
        if (strcmp(name, "num_threads") == 0) {
            int64_t n;
            if (mxki_parse_int(name, value, &n, &sink) != MXK_OK || n < 0 || n > 4096) {
                snprintf(st->error, sizeof st->error,
                         "num_threads must be an integer in [0, 4096], got '%s'", value);
                return 0;
            }
            conf_num_threads = (int32_t)n;
            return 1;
        }
        snprintf(st->error, sizeof st->error,
                 "unknown key '%s' in [mxk]; valid keys: backend, num_threads", name);
        return 0;
    }
    if (strcmp(section, "op_backend") == 0) {
        mxki_registry_set_conf_op_backend(name, value);
        return 1;
    }
    snprintf(st->error, sizeof st->error,
             "unknown section [%s]; valid sections: [mxk], [op_backend]", section);
    return 0;
}

/**
 * Applies <dir>/mxk.conf. The file is optional: absent (no directory entry) is
 * fine, but one that cannot be read (a directory, a FIFO, a symlink loop or a
 * dangling symlink, no permission) is an error naming it.
 */
static mxk_status read_global_conf(const char *dir) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/mxk.conf", dir) >= (int)sizeof path)
        return mxk_set_error(MXK_ERR_IO, "cannot open conf file '%s/mxk.conf': %s", dir,
                             strerror(ENAMETOOLONG));
    struct stat sb;
    if (lstat(path, &sb) != 0 && errno == ENOENT)
        return MXK_OK; /* optional */
    global_conf_state st = {""};
    int line = 0;
    mxk_status rc = parse_conf(path, global_handler, &st, &line);
    if (rc != MXK_OK)
        return rc;
    if (line != 0)
        return mxk_set_error(MXK_ERR_FORMAT, "%s:%d: %s", path, line,
                             st.error[0] ? st.error : "syntax error");
    return MXK_OK;
}

/* ---- plugins.d/<name>.conf ---- */

typedef struct plugin_conf {
    char library[PATH_MAX];
    int32_t enabled;
    int64_t priority;
    mxk_attrs *options;
    char error[512];
} plugin_conf;

static int plugin_handler(void *user, const char *section, const char *name, const char *value) {
    plugin_conf *pc = user;
    mxk_error_sink sink;
    mxki_error_sink_clear(&sink);
    if (strcmp(section, "plugin") == 0) {
        if (strcmp(name, "library") == 0) {
            snprintf(pc->library, sizeof pc->library, "%s", value);
            return 1;
        }
        if (strcmp(name, "enabled") == 0) {
            if (mxki_parse_bool(name, value, &pc->enabled, &sink) == MXK_OK)
                return 1;
        } else if (strcmp(name, "priority") == 0) {
            if (mxki_parse_int(name, value, &pc->priority, &sink) == MXK_OK)
                return 1;
        } else {
            snprintf(sink.msg, sizeof sink.msg,
                     "unknown key '%s' in [plugin]; valid keys: library, enabled, priority", name);
        }
        snprintf(pc->error, sizeof pc->error, "%s", sink.msg);
        return 0;
    }
    if (strcmp(section, "options") == 0) {
        if (mxki_attrs_set(pc->options, name, value) == MXK_OK)
            return 1;
        snprintf(pc->error, sizeof pc->error, "out of memory");
        return 0;
    }
    snprintf(pc->error, sizeof pc->error,
             "unknown section [%s]; valid sections: [plugin], [options]", section);
    return 0;
}

/* Reads one plugin conf file and loads its library; problems become rejections, a
 * disabled one is recorded (mxk_plugin_disabled_*). */
static void load_plugin_conf(const char *conf_dir, const char *conf_path) {
    plugin_conf pc;
    memset(&pc, 0, sizeof pc);
    pc.enabled = 1;
    pc.options = mxki_attrs_new();
    if (pc.options == NULL)
        return;
    int line = 0;
    char reason[1024];
    reason[0] = '\0';
    if (parse_conf(conf_path, plugin_handler, &pc, &line) != MXK_OK)
        snprintf(reason, sizeof reason, "%s", mxki_last_error_message());
    else if (line < 0)
        snprintf(reason, sizeof reason, "out of memory");
    else if (line > 0)
        snprintf(reason, sizeof reason, "line %d: %s", line,
                 pc.error[0] ? pc.error : "syntax error");
    else if (pc.library[0] == '\0')
        snprintf(reason, sizeof reason, "[plugin] has no 'library' key");
    if (reason[0]) {
        mxki_registry_reject(conf_path, reason, 1);
        mxki_attrs_free(pc.options);
        return;
    }
    if (!pc.enabled) {
        mxki_log(MXK_LOG_DEBUG, "config: %s: disabled (enabled = false)", conf_path);
        record_disabled(conf_path);
        mxki_attrs_free(pc.options);
        return;
    }
    char lib[PATH_MAX];
    if (mxki_loader_resolve(pc.library, conf_dir, lib, sizeof lib) != MXK_OK)
        mxki_registry_reject(conf_path, mxki_last_error_message(), 1);
    else
        mxki_loader_load(lib, conf_path, pc.options, (int32_t)pc.priority);
    mxki_attrs_free(pc.options);
}

static int conf_name_filter(const struct dirent *d) {
    size_t n = strlen(d->d_name);
    return d->d_name[0] != '.' && n > 5 && strcmp(d->d_name + n - 5, ".conf") == 0;
}

/** A plugin conf file chosen by the merge: its name and the plugins.d holding it. */
typedef struct conf_choice {
    char name[NAME_MAX + 1];
    const char *pdir; /* a plugins_dirs entry */
} conf_choice;

/** Orders conf choices by file name (strcmp, as alphasort in the C locale). */
static int by_name(const void *a, const void *b) {
    return strcmp(((const conf_choice *)a)->name, ((const conf_choice *)b)->name);
}

/**
 * Loads the plugin confs of every layer's plugins.d, merged by file name: a file of a
 * later layer replaces the same-named file of an earlier one (systemd drop-ins);
 * then loaded in file-name order.
 */
static void load_plugins_dirs(void) {
    char pdirs[MXK_CONFIG_MAX_LAYERS][PATH_MAX];
    conf_choice *chosen = NULL;
    size_t n = 0;
    for (uint32_t l = 0; l < layers.n; l++) {
        snprintf(pdirs[l], sizeof pdirs[l], "%s/plugins.d", layers.dirs[l]);
        struct dirent **list = NULL;
        int m = scandir(pdirs[l], &list, conf_name_filter, alphasort);
        mxki_log(MXK_LOG_DEBUG, "config: %s: %d plugin conf%s", pdirs[l], m < 0 ? 0 : m,
                 m == 1 ? "" : "s");
        conf_choice *grown = m > 0 ? realloc(chosen, (n + (size_t)m) * sizeof *grown) : chosen;
        if (grown != NULL)
            chosen = grown;
        for (int i = 0; i < m; i++) {
            size_t k = 0;
            while (k < n && strcmp(chosen[k].name, list[i]->d_name) != 0)
                k++;
            if (k < n) {
                mxki_log(MXK_LOG_DEBUG, "config: %s/%s replaces %s/%s", pdirs[l], list[i]->d_name,
                         chosen[k].pdir, chosen[k].name);
                chosen[k].pdir = pdirs[l];
            } else if (grown != NULL) {
                snprintf(chosen[n].name, sizeof chosen[n].name, "%s", list[i]->d_name);
                chosen[n++].pdir = pdirs[l];
            }
            free(list[i]);
        }
        free(list);
    }
    if (n > 1)
        qsort(chosen, n, sizeof *chosen, by_name);
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", chosen[i].pdir, chosen[i].name);
        load_plugin_conf(chosen[i].pdir, path);
    }
    free(chosen);
}

/** Loads each library of MXK_PLUGINS (':'-separated paths), as mx.library.load does. */
static void load_env_plugins(void) {
    const char *env = getenv("MXK_PLUGINS");
    if (env == NULL || *env == '\0')
        return;
    char *copy = strdup(env);
    for (char *save = NULL, *tok = copy ? strtok_r(copy, ":", &save) : NULL; tok != NULL;
         tok = strtok_r(NULL, ":", &save)) {
        char origin[PATH_MAX + 16];
        snprintf(origin, sizeof origin, "MXK_PLUGINS=%s", tok);
        mxki_log(MXK_LOG_DEBUG, "config: loading '%s' (from MXK_PLUGINS)", tok);
        mxki_loader_load(tok, origin, NULL, 0);
    }
    free(copy);
}

mxk_status mxki_config_apply(const char *explicit_dir, int no_plugins) {
    for (uint32_t i = 0; i < num_disabled; i++)
        free(disabled[i]);
    num_disabled = 0;
    mxk_status rc = mxki_config_find_dirs(explicit_dir, &layers);
    for (uint32_t l = 0; rc == MXK_OK && l < layers.n; l++)
        rc = read_global_conf(layers.dirs[l]);
    if (rc != MXK_OK || no_plugins)
        return rc;
    load_plugins_dirs();
    load_env_plugins();
    return MXK_OK;
}
