/*
 * The plugin loader: dlopen, ABI version negotiation, plugin init through the
 * registrar, rejection reasons (see loader.h).
 */
#include "loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attrs.h"
#include "env.h"
#include "error.h"
#include "host_api.h"
#include "registry_internal.h"

#ifndef MXK_REL_PLUGINDIR
#define MXK_REL_PLUGINDIR "mxk/plugins"
#endif

/* Serialises loads (registration is single-threaded by contract). */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static char library_dir[PATH_MAX];
static pthread_once_t library_dir_once = PTHREAD_ONCE_INIT;

/* pthread_once target: the directory holding libmxk, from dladdr on one of its symbols. */
static void find_library_dir(void) {
    Dl_info info;
    char real[PATH_MAX];
    if (dladdr((void *)&mxki_loader_library_dir, &info) == 0 || info.dli_fname == NULL ||
        realpath(info.dli_fname, real) == NULL)
        return;
    char *slash = strrchr(real, '/');
    if (slash == NULL)
        return;
    *slash = '\0';
    snprintf(library_dir, sizeof library_dir, "%s", real);
}

const char *mxki_loader_library_dir(void) {
    pthread_once(&library_dir_once, find_library_dir);
    return library_dir;
}

/* Why `st` lets someone other than this process's user (or root) change the file or
 * directory, or NULL. A directory with the sticky bit protects its entries' names. */
static const char *foreign_writer(const struct stat *st, int is_dir) {
    if ((st->st_mode & S_IWOTH) && !(is_dir && (st->st_mode & S_ISVTX)))
        return "world-writable";
    if (st->st_uid != 0 && st->st_uid != geteuid() && (st->st_mode & S_IWUSR))
        return "owned and writable by another user";
    if ((st->st_mode & S_IWGRP) && st->st_gid != getegid() && st->st_gid != 0 &&
        !(is_dir && (st->st_mode & S_ISVTX)))
        return "writable by another group";
    return NULL;
}

/* Warns (once per load) when the library `real` or its directory can be changed by
 * another user: a plugin is code running in this process (abi/README.md, "Trust
 * model"). Loading goes on: the warning names what to fix. */
static void warn_if_foreign_writable(const char *real) {
    struct stat st;
    const char *why;
    if (stat(real, &st) == 0 && (why = foreign_writer(&st, 0)) != NULL)
        mxki_log(MXK_LOG_WARNING,
                 "plugin library '%s' is %s: anyone who can write it runs code "
                 "in this process",
                 real, why);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", real);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        return;
    *(slash == dir ? slash + 1 : slash) = '\0';
    if (stat(dir, &st) == 0 && (why = foreign_writer(&st, 1)) != NULL)
        mxki_log(MXK_LOG_WARNING,
                 "plugin directory '%s' (of '%s') is %s: anyone who can write "
                 "it can replace the plugin",
                 dir, real, why);
}

static int is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

mxk_status mxki_loader_resolve(const char *library, const char *conf_dir, char *out,
                               size_t out_size) {
    char tried[2048] = "";
    size_t pos = 0;
    if (library == NULL || *library == '\0')
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "empty library path");
    if (library[0] == '/') {
        if (is_file(library)) {
            snprintf(out, out_size, "%s", library);
            return MXK_OK;
        }
        return mxk_set_error(MXK_ERR_NOT_FOUND, "library '%s' not found", library);
    }
    char cand[PATH_MAX];
    const char *dirs[64];
    char envbuf[4096];
    int nd = 0;
    if (conf_dir && *conf_dir)
        dirs[nd++] = conf_dir;
    const char *env = getenv("MXK_PLUGIN_PATH");
    if (env && *env) {
        snprintf(envbuf, sizeof envbuf, "%s", env);
        for (char *save = NULL, *tok = strtok_r(envbuf, ":", &save); tok && nd < 62;
             tok = strtok_r(NULL, ":", &save))
            if (*tok)
                dirs[nd++] = tok;
    }
    char install[PATH_MAX];
    const char *libdir = mxki_loader_library_dir();
    if (*libdir) {
        snprintf(install, sizeof install, "%s/%s", libdir, MXK_REL_PLUGINDIR);
        dirs[nd++] = install;
    }
    for (int i = 0; i < nd; i++) {
        snprintf(cand, sizeof cand, "%s/%s", dirs[i], library);
        if (is_file(cand)) {
            snprintf(out, out_size, "%s", cand);
            return MXK_OK;
        }
        if (pos < sizeof tried)
            pos +=
                (size_t)snprintf(tried + pos, sizeof tried - pos, "%s%s", pos ? ", " : "", dirs[i]);
    }
    return mxk_set_error(MXK_ERR_NOT_FOUND, "library '%s' not found (looked in: %s)", library,
                         pos ? tried : "nowhere: no conf dir, MXK_PLUGIN_PATH or install dir");
}

/* Records a rejection of `path` and sets the last error to "<origin>: <path>: reason". */
static mxk_status reject(mxk_status code, const char *path, const char *origin, const char *fmt,
                         ...) __attribute__((format(printf, 4, 5)));
static mxk_status reject(mxk_status code, const char *path, const char *origin, const char *fmt,
                         ...) {
    char reason[MXK_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    mxki_registry_reject(origin ? origin : path, reason, origin != NULL);
    return mxk_set_error(code, "plugin %s rejected: %s", origin ? origin : path, reason);
}

static void free_plugin_entry(mxk_plugin_entry *p) {
    if (p == NULL)
        return;
    free(p->name);
    free(p->version);
    free(p->description);
    free(p->path);
    free(p->origin);
    free(p);
}

/* Phase 1: reads and checks the info of an opened library. Of the plugin's entry points
 * only the info function runs before these checks; but dlopen has already run the
 * library's ELF constructors and those of its dependencies (abi/README.md, "Trust
 * model"), so a rejected plugin may have run code. Fills `info` (zero-filled to host
 * size). */
static mxk_status check_info(void *dl, const char *real, const char *origin,
                             mxk_plugin_info *info) {
    mxk_plugin_get_info_fn get_info = (mxk_plugin_get_info_fn)dlsym(dl, MXK_PLUGIN_INFO_SYMBOL);
    if (get_info == NULL)
        return reject(MXK_ERR_ABI, real, origin, "not an mxk plugin: '%s' does not export %s()",
                      real, MXK_PLUGIN_INFO_SYMBOL);
    const mxk_plugin_info *src = get_info();
    const size_t min_size = offsetof(mxk_plugin_info, min_host_minor) + sizeof(uint32_t);
    if (src == NULL || src->struct_size < min_size)
        return reject(MXK_ERR_ABI, real, origin,
                      "%s() returned %s (struct_size %u, at least %zu needed)",
                      MXK_PLUGIN_INFO_SYMBOL, src ? "a malformed info" : "NULL",
                      src ? src->struct_size : 0u, min_size);
    memset(info, 0, sizeof *info);
    memcpy(info, src, src->struct_size < sizeof *info ? src->struct_size : sizeof *info);
    const char *name = info->name ? info->name : "(unnamed)";
    if (info->abi_major != MXK_ABI_MAJOR)
        return reject(MXK_ERR_ABI, real, origin,
                      "plugin '%s' was built for ABI %u.%u; this host implements ABI %d.%d "
                      "(major versions must match)",
                      name, info->abi_major, info->abi_minor, MXK_ABI_MAJOR, MXK_ABI_MINOR);
    if (info->min_host_minor > MXK_ABI_MINOR)
        return reject(MXK_ERR_ABI, real, origin,
                      "plugin '%s' needs a host with ABI minor >= %u; this host implements ABI "
                      "%d.%d",
                      name, info->min_host_minor, MXK_ABI_MAJOR, MXK_ABI_MINOR);
    if (info->name == NULL || info->name[0] == '\0' || strlen(info->name) > 64)
        return reject(MXK_ERR_ABI, real, origin, "plugin info has no valid name");
    const mxk_plugin_entry *same = mxki_registry_plugin_by_name(info->name);
    if (same != NULL)
        return reject(MXK_ERR_DUPLICATE, real, origin,
                      "a plugin named '%s' is already loaded from '%s'", info->name, same->path);
    return MXK_OK;
}

/* The minor both sides speak: min(host, plugin). */
static uint32_t negotiate_minor(uint32_t plugin_minor) {
    const uint32_t host_minor = MXK_ABI_MINOR;
    return plugin_minor < host_minor ? plugin_minor : host_minor;
}

/* Phase 2: init with staged registration, then commit. */
static mxk_status init_plugin(void *dl, const char *real, const char *origin,
                              const mxk_plugin_info *info, const mxk_attrs *options,
                              int32_t priority) {
    mxk_plugin_init_fn init = (mxk_plugin_init_fn)dlsym(dl, MXK_PLUGIN_INIT_SYMBOL);
    if (init == NULL)
        return reject(MXK_ERR_ABI, real, origin, "plugin '%s' does not export %s()", info->name,
                      MXK_PLUGIN_INIT_SYMBOL);
    mxk_plugin_entry *p = calloc(1, sizeof *p);
    if (p == NULL || (p->name = strdup(info->name)) == NULL ||
        (p->version = strdup(info->version ? info->version : "")) == NULL ||
        (p->description = strdup(info->description ? info->description : "")) == NULL ||
        (p->path = strdup(real)) == NULL || (p->origin = strdup(origin ? origin : "")) == NULL) {
        free_plugin_entry(p);
        return reject(MXK_ERR_OUT_OF_MEMORY, real, origin, "out of memory");
    }
    p->abi_major = info->abi_major;
    p->abi_minor = info->abi_minor;
    p->negotiated_minor = negotiate_minor(info->abi_minor);
    mxki_log(MXK_LOG_DEBUG,
             "loader: plugin '%s' %s (%s): built for ABI %u.%u (needs host minor >= %u), "
             "host %d.%d: negotiated minor %u",
             info->name, p->version, real, (unsigned)info->abi_major, (unsigned)info->abi_minor,
             (unsigned)info->min_host_minor, MXK_ABI_MAJOR, MXK_ABI_MINOR,
             (unsigned)p->negotiated_minor);
    p->dl_handle = dl;
    p->shutdown = (mxk_plugin_shutdown_fn)dlsym(dl, MXK_PLUGIN_SHUTDOWN_SYMBOL);

    mxk_staging st;
    memset(&st, 0, sizeof st);
    st.plugin = p;
    st.priority_bonus = priority;
    mxk_registrar reg;
    mxki_registrar_init(&reg, &st);
    mxk_attrs *empty = NULL;
    if (options == NULL && (options = empty = mxki_attrs_new()) == NULL) {
        free_plugin_entry(p);
        return reject(MXK_ERR_OUT_OF_MEMORY, real, origin, "out of memory");
    }
    mxk_plugin_init_args args;
    memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.negotiated_minor = p->negotiated_minor;
    args.host = mxki_host_api_table();
    args.registrar = &reg;
    args.plugin_path = p->path;
    args.options = options;
    mxk_error_sink sink;
    mxki_error_sink_clear(&sink);
    mxk_status rc = init(&args, &sink);
    mxki_attrs_free(empty);
    if (rc != MXK_OK) {
        mxki_staging_discard(&st);
        free_plugin_entry(p);
        return reject(rc, real, origin, "plugin '%s': init failed (%s): %s", info->name,
                      mxk_status_name(rc), sink.msg[0] ? sink.msg : "no message");
    }
    if (st.first_error != MXK_OK) {
        mxk_status code = st.first_error;
        char msg[sizeof st.first_error_msg];
        memcpy(msg, st.first_error_msg, sizeof msg);
        mxki_staging_discard(&st);
        free_plugin_entry(p);
        return reject(code, real, origin, "plugin '%s': a registration failed: %s", info->name,
                      msg);
    }
    if (mxki_registry_commit(&st) != MXK_OK) {
        char msg[MXK_ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", mxki_last_error_message());
        mxk_status code = mxki_last_error_code();
        mxki_staging_discard(&st);
        free_plugin_entry(p);
        return reject(code, real, origin, "%s", msg);
    }
    return MXK_OK;
}

mxk_status mxki_loader_load(const char *path, const char *origin, const mxk_attrs *options,
                            int32_t priority) {
    char real[PATH_MAX];
    if (path == NULL || *path == '\0')
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_load_plugin: empty path");
    if (realpath(path, real) == NULL || !is_file(real))
        return reject(MXK_ERR_NOT_FOUND, path, origin, "library '%s' not found", path);
    pthread_mutex_lock(&load_lock);
    if (mxki_registry_plugin_by_path(real) != NULL) {
        pthread_mutex_unlock(&load_lock);
        return MXK_OK; /* idempotent: the same file is one plugin */
    }
    warn_if_foreign_writable(real);
    mxki_log(MXK_LOG_DEBUG, "loader: dlopen '%s' (for %s)", real,
             origin ? origin : "mxk_load_plugin");
    dlerror();
    void *dl = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (dl == NULL) {
        const char *why = dlerror();
        mxk_status rc = reject(MXK_ERR_ABI, real, origin, "cannot load '%s': %s", real,
                               why ? why : "unknown dlopen error");
        pthread_mutex_unlock(&load_lock);
        return rc;
    }
    mxk_plugin_info info;
    mxk_status rc = check_info(dl, real, origin, &info);
    if (rc == MXK_OK)
        rc = init_plugin(dl, real, origin, &info, options, priority);
    if (rc != MXK_OK)
        dlclose(dl); /* nothing of a rejected plugin stays registered */
    pthread_mutex_unlock(&load_lock);
    return rc;
}

mxk_status mxk_load_plugin(const char *path, const char *const *options) {
    mxk_attrs *opts = mxki_attrs_new();
    if (opts == NULL)
        return mxki_last_error_code();
    for (size_t i = 0; options && options[i]; i += 2) {
        if (options[i + 1] == NULL) {
            mxki_attrs_free(opts);
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                 "mxk_load_plugin: option '%s' has no value", options[i]);
        }
        if (mxki_attrs_set(opts, options[i], options[i + 1]) != MXK_OK) {
            mxki_attrs_free(opts);
            return mxki_last_error_code();
        }
    }
    mxk_status rc = mxki_loader_load(path, NULL, opts, 0);
    mxki_attrs_free(opts);
    return rc;
}
