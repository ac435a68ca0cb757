/*
 * Shared helpers of the `mxk` tool: error and usage messages, argument checks,
 * library set-up, number/shape formatting, JSON output and wrapped lists. Names of
 * status codes, dtypes and device types come from the public API (mxk.h).
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "suggest.h"

/** Prints "mxk: <kind>: " and the formatted message on stderr, then a newline. */
static void vmessage(const char *kind, const char *fmt, va_list ap) {
    fprintf(stderr, "mxk: %s: ", kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

/** Prints "mxk: error: <message>" on stderr. Returns CLI_ERROR. */
int cli_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vmessage("error", fmt, ap);
    va_end(ap);
    return CLI_ERROR;
}

/**
 * Reports a failed library call: prints "mxk: error: " and mxk_get_last_error(),
 * or, when the library left no message, the formatted fallback and the status name.
 * Returns CLI_ERROR.
 */
int cli_api_error(mxk_status st, const char *fallback_fmt, ...) {
    const char *msg = mxk_get_last_error();
    if (msg != NULL && msg[0] != '\0') {
        fprintf(stderr, "mxk: error: %s\n", msg);
        return CLI_ERROR;
    }
    va_list ap;
    va_start(ap, fallback_fmt);
    fputs("mxk: error: ", stderr);
    vfprintf(stderr, fallback_fmt, ap);
    fprintf(stderr, " (%s)\n", mxk_status_name(st));
    va_end(ap);
    return CLI_ERROR;
}

/** Prints "mxk: note: <message>" on stderr (a hint after an error). */
void cli_note(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vmessage("note", fmt, ap);
    va_end(ap);
}

/** Prints "mxk: warning: <message>" on stderr (the command goes on). */
void cli_warning(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vmessage("warning", fmt, ap);
    va_end(ap);
}

/**
 * Prints "mxk CMD: <message>", the command's usage line and a pointer to
 * `mxk CMD --help` on stderr. cmd NULL: the global usage. Returns CLI_USAGE.
 */
int cli_usage_error(const cli_command *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mxk%s%s: ", cmd ? " " : "", cmd ? cmd->name : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (cmd != NULL) {
        fprintf(stderr, "usage: %s\n", cmd->usage);
        fprintf(stderr, "Try 'mxk %s --help' for more information.\n", cmd->name);
    } else {
        fputs("usage: mxk [GLOBAL OPTIONS] COMMAND [ARGS]\n", stderr);
        fputs("Try 'mxk --help' for more information.\n", stderr);
    }
    return CLI_USAGE;
}

/** Prints a command's full help (usage line and body) on stdout. */
void cli_print_command_help(const cli_command *cmd) {
    printf("usage: %s\n\n%s\n", cmd->usage, cmd->summary);
    if (cmd->help != NULL && cmd->help[0] != '\0')
        printf("\n%s", cmd->help);
    printf("\nGlobal options (before or after the command):\n%s", cli_global_options_help);
}

/**
 * Reports an argument that the command does not take: "unknown option 'ARG'" when
 * it looks like an option, else "unexpected argument 'ARG'" (see cli_usage_error).
 * Returns CLI_USAGE.
 */
int cli_reject_argument(const cli_command *cmd, const char *arg) {
    if (cli_is_option(arg)) {
        cli_option_table t;
        char hint[256];
        size_t len = strcspn(arg, "=");
        cli_option_table_fill(&t, cmd);
        cli_option_suggest(&t, arg, hint, sizeof hint);
        return cli_usage_error(cmd, "unknown option '%.*s'%s", (int)len, arg, hint);
    }
    return cli_usage_error(cmd, "unexpected argument '%s'", arg);
}

/**
 * Checks that a command that takes no arguments got none (a "--" is allowed).
 * Returns CLI_OK, or CLI_USAGE after reporting the first argument.
 */
int cli_no_arguments(const cli_command *cmd, int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--") != 0)
            return cli_reject_argument(cmd, argv[i]);
    return CLI_OK;
}

/** Most distinct backends gathered for warnings. */
#define MAX_BACKENDS 32

/** Fills names with the distinct backends of the loaded kernels; returns how many. */
static size_t known_backends(const char **names) {
    size_t n = 0;
    for (uint32_t i = 0; i < mxk_op_count(); i++) {
        const char *op = mxk_op_name(i);
        for (uint32_t k = 0; k < mxk_op_kernel_count(op); k++) {
            int32_t dev = 0;
            const char *backend = NULL, *plugin = NULL;
            if (mxk_op_kernel_get(op, k, &dev, &backend, &plugin) != MXK_OK || backend == NULL)
                continue;
            size_t j = 0;
            while (j < n && strcmp(names[j], backend) != 0)
                j++;
            if (j == n && n < MAX_BACKENDS)
                names[n++] = backend;
        }
    }
    return n;
}

/**
 * Warns about each backend of the effective preference list (--backend,
 * MXK_BACKEND or mxk.conf) that no loaded plugin provides, with the nearest names:
 * the kernel skips it silently, which hides a typo or a plugin that failed to load.
 */
static void warn_unknown_backends(void) {
    const char *names[MAX_BACKENDS];
    size_t n = known_backends(names);
    const char *p = mxk_get_backend_preference();
    while (p && *p) {
        size_t len = strcspn(p, ",");
        size_t b = 0;
        while (b < len && isspace((unsigned char)p[b]))
            b++;
        size_t e = len;
        while (e > b && isspace((unsigned char)p[e - 1]))
            e--;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(e - b), p + b);
        size_t j = 0;
        while (j < n && strcmp(names[j], name) != 0)
            j++;
        if (e > b && j == n) {
            char hint[256];
            mxki_suggest(name, names, n, hint, sizeof hint);
            cli_warning("backend '%s' is not provided by any loaded plugin; it is skipped "
                        "(see 'mxk plugins')%s",
                        name, hint);
        }
        p += len + (p[len] == ',');
    }
}

/**
 * Initialises the library with the global options (config dir, backend list), then
 * loads each --plugin library (mxk_load_plugin; a failure is an error, as MXNet's
 * mx.library.load raises). Returns CLI_OK, or CLI_ERROR after reporting the error
 * (the library shut down again). Pair with mxk_shutdown().
 */
int cli_init_library(const cli_globals *g) {
    mxk_init_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.config_dir = g->config_dir;
    opts.backend = g->backend;
    mxk_status st = mxk_init(&opts);
    if (st != MXK_OK)
        return cli_api_error(st, "initialising the mxk library failed");
    for (int i = 0; i < g->num_plugins; i++) {
        st = mxk_load_plugin(g->plugins[i], NULL);
        if (st != MXK_OK) {
            cli_api_error(st, "loading plugin '%s' failed", g->plugins[i]);
            mxk_shutdown();
            return CLI_ERROR;
        }
    }
    warn_unknown_backends();
    return CLI_OK;
}

/**
 * Initialises the library (cli_init_library), runs body(g, arg) and shuts the
 * library down again. Returns the initialisation's error or what body returned.
 */
int cli_with_library(const cli_globals *g, int (*body)(const cli_globals *g, void *arg),
                     void *arg) {
    int rc = cli_init_library(g);
    if (rc != CLI_OK)
        return rc;
    rc = body(g, arg);
    mxk_shutdown();
    return rc;
}

/** Whether a device backend is registered for dev_type (the plugin that serves it loaded). */
static int has_device_backend(int32_t dev_type) {
    for (uint32_t i = 0; i < mxk_device_backend_count(); i++) {
        int32_t t = -1;
        if (mxk_device_get(i, &t, NULL, NULL) == MXK_OK && t == dev_type)
            return 1;
    }
    return 0;
}

int cli_check_ctx(const mxk_context *ctx, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        const char *type = mxk_dev_type_name(ctx[i].dev_type);
        int id = (int)ctx[i].dev_id;
        int32_t count = mxk_device_count(ctx[i].dev_type);
        if (ctx[i].dev_type == MXK_DEV_GPU && !has_device_backend(MXK_DEV_GPU))
            return cli_error("--ctx gpu:%d: no gpu device backend is loaded (the cuda plugin is "
                             "not installed or was rejected: see mxk plugins)",
                             id);
        if (ctx[i].dev_type == MXK_DEV_GPU && count == 0)
            return cli_error("--ctx gpu:%d: no GPU is visible (the cuda plugin reports 0 devices)",
                             id);
        if (id >= count)
            return cli_error("--ctx %s:%d: %s(%d) does not exist (%d %s device(s) visible)", type,
                             id, type, id, (int)count, type);
    }
    return CLI_OK;
}

/** True for the integer dtypes (uint8, int8, int32, int64). */
int cli_dtype_is_integer(int32_t dtype) {
    return dtype == MXK_UINT8 || dtype == MXK_INT8 || dtype == MXK_INT32 || dtype == MXK_INT64;
}

/** Writes a shape as "(a,b,c)" ("()" for ndim 0) into buf (always terminated). */
void cli_format_shape(const mxk_shape *shape, char *buf, size_t size) {
    size_t used = 0;
    int ndim = shape->ndim < 0 ? 0 : shape->ndim > MXK_MAX_NDIM ? MXK_MAX_NDIM : shape->ndim;
    if (size == 0)
        return;
    buf[0] = '\0';
    used += (size_t)snprintf(buf + used, size - used, "(");
    for (int d = 0; d < ndim && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? "," : "",
                                 (long long)shape->dims[d]);
    if (used < size)
        snprintf(buf + used, size - used, ")");
}

/**
 * The double nearest to the shortest decimal that reads back as `f`, so that a
 * float32 value 0.1f prints as 0.1 (not 0.100000001490116) with up to 15 digits.
 */
double cli_float_shortest(float f) {
    if (!isfinite(f))
        return (double)f;
    char buf[32];
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, (double)f);
        double d = strtod(buf, NULL);
        if ((float)d == f)
            return d;
    }
    return (double)f;
}

/** Writes a double compactly ("%.6g"; "nan", "inf", "-inf") into buf. */
void cli_format_number(double v, char *buf, size_t size) {
    if (isnan(v))
        snprintf(buf, size, "nan");
    else if (isinf(v))
        snprintf(buf, size, v < 0 ? "-inf" : "inf");
    else
        snprintf(buf, size, "%.6g", v);
}

/**
 * A JSON real for v; the strings "NaN", "Infinity", "-Infinity" for non-finite
 * values (JSON has no such numbers). Never NULL unless out of memory.
 */
json_t *cli_json_number(double v) {
    if (isnan(v))
        return json_string("NaN");
    if (isinf(v))
        return json_string(v < 0 ? "-Infinity" : "Infinity");
    return json_real(v);
}

/** True when v is neither an object nor an array. */
static int json_is_scalar(const json_t *v) {
    return !json_is_object(v) && !json_is_array(v);
}

/** True when every element / member of the container v is a scalar. */
static int json_all_scalar(json_t *v) {
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            if (!json_is_scalar(json_array_get(v, i)))
                return 0;
        return 1;
    }
    const char *key;
    json_t *member;
    json_object_foreach(v, key, member) {
        if (!json_is_scalar(member))
            return 0;
    }
    return 1;
}

/** Writes a scalar (or a key, as a JSON string) with Jansson's encoder. Returns 0 or -1. */
static int json_write_scalar(FILE *f, const json_t *v, size_t flags) {
    char *text = json_dumps(v, flags | JSON_ENCODE_ANY);
    if (text == NULL)
        return -1;
    int rc = fputs(text, f) < 0 ? -1 : 0;
    free(text);
    return rc;
}

/** Writes an object key as a JSON string followed by ": ". Returns 0 or -1. */
static int json_write_key(FILE *f, const char *key, size_t flags) {
    json_t *k = json_string(key);
    int rc = k ? json_write_scalar(f, k, flags) : -1;
    json_decref(k);
    return rc == 0 && fputs(": ", f) >= 0 ? 0 : -1;
}

/**
 * Writes v pretty-printed: containers of containers one member per line, indented
 * by 2 per level; containers holding only scalars on one line ([1, 2, 3]).
 * Returns 0 or -1 on a write error.
 */
static int json_write(FILE *f, json_t *v, int depth, size_t flags) {
    if (json_is_scalar(v))
        return json_write_scalar(f, v, flags);
    int is_array = json_is_array(v);
    size_t n = is_array ? json_array_size(v) : json_object_size(v);
    int inline_ = n == 0 || json_all_scalar(v);
    int rc = fputc(is_array ? '[' : '{', f) == EOF ? -1 : 0;
    void *iter = is_array ? NULL : json_object_iter(v);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *key = NULL;
        json_t *member;
        if (is_array) {
            member = json_array_get(v, i);
        } else {
            key = json_object_iter_key(iter);
            member = json_object_iter_value(iter);
            iter = json_object_iter_next(v, iter);
        }
        if (i > 0 && fputs(inline_ ? ", " : ",", f) < 0)
            rc = -1;
        if (!inline_ && fprintf(f, "\n%*s", 2 * (depth + 1), "") < 0)
            rc = -1;
        if (rc == 0 && !is_array)
            rc = json_write_key(f, key, flags);
        if (rc == 0)
            rc = json_write(f, member, depth + 1, flags);
    }
    if (rc == 0 && !inline_ && fprintf(f, "\n%*s", 2 * depth, "") < 0)
        rc = -1;
    if (rc == 0 && fputc(is_array ? ']' : '}', f) == EOF)
        rc = -1;
    return rc;
}

/**
 * Prints `root` on stdout (2-space indent, containers of scalars on one line, keys
 * in insertion order, reals with `real_precision` significant digits, 0: exact),
 * then a newline, and releases it. Returns CLI_OK, or CLI_ERROR when root is NULL
 * (out of memory) or writing failed.
 */
int cli_json_print(json_t *root, int real_precision) {
    if (root == NULL)
        return cli_error("out of memory while building the JSON output");
    size_t flags = JSON_PRESERVE_ORDER;
    if (real_precision > 0)
        flags |= JSON_REAL_PRECISION(real_precision);
    int rc = json_write(stdout, root, 0, flags);
    json_decref(root);
    if (rc != 0 || fputc('\n', stdout) == EOF)
        return cli_error("writing the JSON output failed");
    return CLI_OK;
}

/** Width for wrapped human output: $COLUMNS when set and sane, else 80. */
int cli_output_width(void) {
    const char *env = getenv("COLUMNS");
    uint64_t w = 0;
    if (env != NULL && cli_parse_uint(env, 1000, &w) && w >= 40)
        return (int)w;
    return 80;
}

/**
 * Prints items separated by ", ", starting at column `col` (the caller has already
 * printed that much of the line), wrapping before `width` and indenting wrapped
 * lines by `indent` spaces. Ends with a newline. Prints "-" when n is 0.
 */
void cli_print_wrapped(FILE *f, const char *const *items, size_t n, int col, int indent,
                       int width) {
    if (n == 0) {
        fputs("-\n", f);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        int len = (int)strlen(items[i]) + (i + 1 < n ? 1 : 0); /* item and its comma */
        if (i > 0) {
            if (col + 1 + len > width && col > indent) {
                fprintf(f, "\n%*s", indent, "");
                col = indent;
            } else {
                fputc(' ', f);
                col += 1;
            }
        }
        fprintf(f, "%s%s", items[i], i + 1 < n ? "," : "");
        col += len;
    }
    fputc('\n', f);
}
