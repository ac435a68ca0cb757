/*
 * `mxk plugins`: what the library loaded from the config directory. For every
 * loaded plugin: name, version, ABI, path and what it registered (operators it
 * defines, an operator with kernels of several backends marked with them,
 * "Convolution [cpu-blas, onednn]"; kernels it provides per device type and
 * backend, the operators of other plugins named; device backends, iterators,
 * KVStore transports); then every rejected candidate with its reason.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/** A growable list of borrowed strings (owned by the library). */
typedef struct str_list {
    const char **items;
    size_t n, cap;
} str_list;

/** One registered kernel: operator, device type, backend and providing plugin. */
typedef struct kernel_info {
    const char *op;
    int32_t dev_type;
    const char *backend;
    const char *plugin;
} kernel_info;

/** One registered device backend. */
typedef struct device_info {
    int32_t dev_type;
    const char *name;
    const char *plugin;
} device_info;

/** Everything the registry holds that is listed per plugin, gathered once. */
typedef struct registry_view {
    uint32_t num_plugins;
    mxk_plugin_record *plugins;
    kernel_info *kernels;
    size_t num_kernels;
    device_info *devices;
    size_t num_devices;
} registry_view;

/**
 * Makes room for element n of the array `items` (*cap elements of `size` bytes
 * allocated), doubling the capacity, or starting at `first`. Returns the array,
 * possibly moved, or NULL when out of memory (then `items` is unchanged).
 */
static void *grow(void *items, size_t n, size_t *cap, size_t size, size_t first) {
    if (n < *cap)
        return items;
    size_t new_cap = *cap ? 2 * *cap : first;
    void *grown = realloc(items, new_cap * size);
    if (grown != NULL)
        *cap = new_cap;
    return grown;
}

/** Appends s to the list. Returns 0, or -1 when out of memory. */
static int list_push(str_list *l, const char *s) {
    const char **items = grow(l->items, l->n, &l->cap, sizeof *items, 16);
    if (items == NULL)
        return -1;
    l->items = items;
    l->items[l->n++] = s;
    return 0;
}

/** Releases a list's storage (not the strings). */
static void list_free(str_list *l) {
    free(l->items);
    memset(l, 0, sizeof *l);
}

/** True when a and b are both non-NULL and equal. */
static int same_name(const char *a, const char *b) {
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/** Releases what gather_registry allocated. */
static void registry_free(registry_view *v) {
    free(v->plugins);
    free(v->kernels);
    free(v->devices);
    memset(v, 0, sizeof *v);
}

/** Fills *v from the registry. Returns CLI_OK or CLI_ERROR (reported). */
static int gather_registry(registry_view *v) {
    memset(v, 0, sizeof *v);
    v->num_plugins = mxk_plugin_count();
    v->plugins = calloc(v->num_plugins + 1, sizeof *v->plugins);
    if (v->plugins == NULL)
        return cli_error("out of memory");
    for (uint32_t i = 0; i < v->num_plugins; i++) {
        v->plugins[i].struct_size = sizeof v->plugins[i];
        mxk_status st = mxk_plugin_get(i, &v->plugins[i]);
        if (st != MXK_OK)
            return cli_api_error(st, "reading plugin record %u failed", (unsigned)i);
    }

    uint32_t num_ops = mxk_op_count();
    size_t cap = 0;
    for (uint32_t j = 0; j < num_ops; j++) {
        const char *op = mxk_op_name(j);
        uint32_t nk = op ? mxk_op_kernel_count(op) : 0;
        for (uint32_t k = 0; k < nk; k++) {
            kernel_info ki = {op, 0, NULL, NULL};
            if (mxk_op_kernel_get(op, k, &ki.dev_type, &ki.backend, &ki.plugin) != MXK_OK)
                continue;
            kernel_info *grown = grow(v->kernels, v->num_kernels, &cap, sizeof *grown, 64);
            if (grown == NULL)
                return cli_error("out of memory");
            v->kernels = grown;
            v->kernels[v->num_kernels++] = ki;
        }
    }

    cap = 0;
    for (uint32_t d = 0;; d++) {
        device_info di = {0, NULL, NULL};
        if (mxk_device_get(d, &di.dev_type, &di.name, &di.plugin) != MXK_OK)
            break;
        device_info *grown = grow(v->devices, v->num_devices, &cap, sizeof *grown, 8);
        if (grown == NULL)
            return cli_error("out of memory");
        v->devices = grown;
        v->devices[v->num_devices++] = di;
    }
    return CLI_OK;
}

/**
 * Appends to *out, in registration order, the names of one kind (operators,
 * iterators or KVStore transports) that plugin `plugin` registered: name_at(i) is
 * the i-th name of the kind (NULL past the last), owner(name) the plugin that
 * registered it. Returns 0, or -1 when out of memory.
 */
static int plugin_names(const char *plugin, const char *(*name_at)(uint32_t),
                        const char *(*owner)(const char *), str_list *out) {
    const char *name;
    for (uint32_t i = 0; (name = name_at(i)) != NULL; i++)
        if (same_name(owner(name), plugin) && list_push(out, name) != 0)
            return -1;
    return 0;
}

/** The operators plugin `plugin` defines, in registration order. */
static int plugin_operators(const char *plugin, str_list *out) {
    return plugin_names(plugin, mxk_op_name, mxk_op_plugin, out);
}

/** Most backends listed per operator. */
#define MAX_OP_BACKENDS 8

/**
 * The distinct backends with a kernel (any device) for operator `op`, in
 * registration order, into out[0..MAX_OP_BACKENDS). Returns their number.
 */
static size_t op_backends(const registry_view *v, const char *op, const char **out) {
    size_t n = 0;
    for (size_t k = 0; k < v->num_kernels; k++) {
        const kernel_info *ki = &v->kernels[k];
        if (!same_name(ki->op, op) || ki->backend == NULL)
            continue;
        size_t j = 0;
        while (j < n && strcmp(out[j], ki->backend) != 0)
            j++;
        if (j == n && n < MAX_OP_BACKENDS)
            out[n++] = ki->backend;
    }
    return n;
}

/**
 * The labels of the operators in `ops` for the human listing: the name, followed by
 * " [b1, b2]" when kernels of several backends serve it. The strings are allocated
 * (free them with free_all). Returns 0, or -1 when out of memory.
 */
static int operator_labels(const registry_view *v, const str_list *ops, str_list *out) {
    for (size_t i = 0; i < ops->n; i++) {
        const char *b[MAX_OP_BACKENDS];
        size_t nb = op_backends(v, ops->items[i], b);
        char label[512];
        int len = snprintf(label, sizeof label, "%s", ops->items[i]);
        for (size_t j = 0; nb > 1 && j < nb && len > 0 && (size_t)len < sizeof label; j++)
            len += snprintf(label + len, sizeof label - (size_t)len, "%s%s%s", j ? ", " : " [",
                            b[j], j + 1 == nb ? "]" : "");
        char *copy = strdup(label);
        if (copy == NULL || list_push(out, copy) != 0) {
            free(copy);
            return -1;
        }
    }
    return 0;
}

/**
 * The aliases of the operators in `ops` as "alias=Operator" strings, in registration
 * order; the strings are allocated (free them with free_all). Returns 0, or -1 when
 * out of memory.
 */
static int alias_pairs(const str_list *ops, str_list *out) {
    for (size_t i = 0; i < ops->n; i++) {
        const char *const *a = mxk_op_aliases(ops->items[i]);
        for (size_t j = 0; a != NULL && a[j] != NULL; j++) {
            size_t len = strlen(a[j]) + strlen(ops->items[i]) + 2;
            char *s = malloc(len);
            if (s == NULL)
                return -1;
            snprintf(s, len, "%s=%s", a[j], ops->items[i]);
            if (list_push(out, s) != 0) {
                free(s);
                return -1;
            }
        }
    }
    return 0;
}

/** Frees the strings of a list built by alias_pairs, and the list. */
static void free_all(str_list *l) {
    for (size_t i = 0; i < l->n; i++)
        free((char *)l->items[i]);
    list_free(l);
}

/** The data iterators plugin `plugin` registered, in registration order. */
static int plugin_iterators(const char *plugin, str_list *out) {
    return plugin_names(plugin, mxk_iterator_name, mxk_iterator_plugin, out);
}

/** The KVStore transports plugin `plugin` registered, in registration order. */
static int plugin_transports(const char *plugin, str_list *out) {
    return plugin_names(plugin, mxk_kvstore_transport_name, mxk_kvstore_transport_plugin, out);
}

/**
 * A JSON array of the names of one kind that `plugin` registered; names(plugin,
 * list) is plugin_operators, plugin_iterators or plugin_transports.
 */
static json_t *names_json(const char *plugin, int (*names)(const char *, str_list *)) {
    str_list l = {NULL, 0, 0};
    names(plugin, &l);
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < l.n; i++)
        json_array_append_new(a, json_string(l.items[i]));
    list_free(&l);
    return a;
}

/** The JSON object of plugin i. */
static json_t *plugin_json(const registry_view *v, uint32_t i) {
    const mxk_plugin_record *r = &v->plugins[i];
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    char abi[32];
    snprintf(abi, sizeof abi, "%u.%u", (unsigned)r->abi_major, (unsigned)r->abi_minor);
    json_object_set_new(o, "name", json_string(r->name ? r->name : ""));
    json_object_set_new(o, "version", json_string(r->version ? r->version : ""));
    json_object_set_new(o, "description", json_string(r->description ? r->description : ""));
    json_object_set_new(o, "abi", json_string(abi));
    json_object_set_new(o, "negotiated_minor", json_integer(r->negotiated_minor));
    json_object_set_new(o, "path", json_string(r->path ? r->path : ""));
    const char *origin = mxk_plugin_origin(r->name);
    json_object_set_new(o, "origin", json_string(origin ? origin : ""));

    json_object_set_new(o, "operators", names_json(r->name, plugin_operators));
    str_list ops = {NULL, 0, 0};
    plugin_operators(r->name, &ops);
    json_t *aliases = json_object();
    for (size_t k = 0; aliases != NULL && k < ops.n; k++) {
        const char *const *a = mxk_op_aliases(ops.items[k]);
        for (size_t j = 0; a != NULL && a[j] != NULL; j++)
            json_object_set_new(aliases, a[j], json_string(ops.items[k]));
    }
    json_object_set_new(o, "aliases", aliases);
    list_free(&ops);

    json_t *kernels = json_array();
    for (size_t k = 0; kernels != NULL && k < v->num_kernels; k++) {
        const kernel_info *ki = &v->kernels[k];
        if (!same_name(ki->plugin, r->name))
            continue;
        json_t *ko = json_object();
        json_object_set_new(ko, "op", json_string(ki->op));
        json_object_set_new(ko, "device", json_string(mxk_dev_type_name(ki->dev_type)));
        json_object_set_new(ko, "backend", json_string(ki->backend ? ki->backend : ""));
        json_array_append_new(kernels, ko);
    }
    json_object_set_new(o, "kernels", kernels);

    json_t *devices = json_array();
    for (size_t d = 0; devices != NULL && d < v->num_devices; d++) {
        const device_info *di = &v->devices[d];
        if (!same_name(di->plugin, r->name))
            continue;
        json_t *dobj = json_object();
        json_object_set_new(dobj, "device", json_string(mxk_dev_type_name(di->dev_type)));
        json_object_set_new(dobj, "name", json_string(di->name ? di->name : ""));
        json_object_set_new(dobj, "count", json_integer(mxk_device_count(di->dev_type)));
        json_array_append_new(devices, dobj);
    }
    json_object_set_new(o, "devices", devices);

    json_object_set_new(o, "iterators", names_json(r->name, plugin_iterators));
    json_object_set_new(o, "kvstore_transports", names_json(r->name, plugin_transports));
    return o;
}

/** Prints the whole listing as one JSON object. */
static int print_json(const registry_view *v) {
    json_t *root = json_object();
    if (root == NULL)
        return cli_json_print(NULL, 0);
    json_object_set_new(root, "config_dir", json_string(mxk_config_dir()));
    json_t *dirs = json_array();
    for (uint32_t i = 0; dirs != NULL && i < mxk_config_dir_count(); i++) {
        const char *dir = NULL;
        if (mxk_config_dir_get(i, &dir) == MXK_OK)
            json_array_append_new(dirs, json_string(dir));
    }
    json_object_set_new(root, "config_dirs", dirs);
    json_object_set_new(root, "backend_preference", json_string(mxk_get_backend_preference()));
    json_t *plugins = json_array();
    for (uint32_t i = 0; plugins != NULL && i < v->num_plugins; i++)
        json_array_append_new(plugins, plugin_json(v, i));
    json_object_set_new(root, "plugins", plugins);
    json_t *rejected = json_array();
    uint32_t nr = mxk_plugin_rejected_count();
    for (uint32_t i = 0; rejected != NULL && i < nr; i++) {
        const char *path = NULL, *reason = NULL;
        if (mxk_plugin_rejected_get(i, &path, &reason) != MXK_OK)
            continue;
        json_t *ro = json_object();
        json_object_set_new(ro, "path", json_string(path ? path : ""));
        json_object_set_new(ro, "reason", json_string(reason ? reason : ""));
        json_array_append_new(rejected, ro);
    }
    json_object_set_new(root, "rejected", rejected);
    json_t *disabled = json_array();
    for (uint32_t i = 0; disabled != NULL && i < mxk_plugin_disabled_count(); i++) {
        const char *conf = NULL;
        if (mxk_plugin_disabled_get(i, &conf) == MXK_OK)
            json_array_append_new(disabled, json_string(conf));
    }
    json_object_set_new(root, "disabled", disabled);
    json_t *by_op = json_object();
    const char *op;
    for (uint32_t j = 0; by_op != NULL && (op = mxk_op_name(j)) != NULL; j++) {
        const char *b[MAX_OP_BACKENDS];
        size_t nb = op_backends(v, op, b);
        json_t *list = json_array();
        for (size_t k = 0; list != NULL && k < nb; k++)
            json_array_append_new(list, json_string(b[k]));
        json_object_set_new(by_op, op, list);
    }
    json_object_set_new(root, "operator_backends", by_op);
    return cli_json_print(root, 0);
}

/** Width of the label column of the human listing ("  operators   "). */
#define LABEL_COL 14

/** Prints "  <label>" padded to the label column. */
static void print_label(const char *label) {
    printf("  %-*s", LABEL_COL - 2, label);
}

/**
 * Prints the kernels plugin `r` provides, one line per (device type, backend),
 * operators wrapped; "all N operators above" when they are exactly the plugin's
 * own operators.
 */
static void print_kernels(const registry_view *v, const mxk_plugin_record *r,
                          const str_list *own_ops, int width) {
    char *done = calloc(v->num_kernels + 1, 1);
    str_list ops = {NULL, 0, 0};
    int printed = 0;
    print_label("kernels");
    for (size_t k = 0; done != NULL && k < v->num_kernels; k++) {
        const kernel_info *g = &v->kernels[k];
        if (done[k] || !same_name(g->plugin, r->name))
            continue;
        ops.n = 0;
        int all_own = 1;
        for (size_t m = k; m < v->num_kernels; m++) {
            const kernel_info *ki = &v->kernels[m];
            if (done[m] || !same_name(ki->plugin, r->name) || ki->dev_type != g->dev_type ||
                !same_name(ki->backend ? ki->backend : "", g->backend ? g->backend : ""))
                continue;
            done[m] = 1;
            list_push(&ops, ki->op);
            if (!same_name(mxk_op_plugin(ki->op), r->name))
                all_own = 0;
        }
        if (printed++)
            printf("%*s", LABEL_COL, "");
        char head[160];
        const char *backend = g->backend ? g->backend : "?";
        const char *dev = mxk_dev_type_name(g->dev_type);
        if (all_own && ops.n == own_ops->n) {
            printf("%s, backend %s: all %zu operators above\n", dev, backend, ops.n);
            continue;
        }
        int col =
            LABEL_COL + snprintf(head, sizeof head, "%s, backend %s (%zu): ", dev, backend, ops.n);
        fputs(head, stdout);
        cli_print_wrapped(stdout, ops.items, ops.n, col, LABEL_COL + 2, width);
    }
    if (!printed)
        puts("-");
    list_free(&ops);
    free(done);
}

/**
 * Prints "  <label>" and the names of one kind that `plugin` registered, wrapped
 * ("-" when none); names(plugin, list) is plugin_iterators or plugin_transports.
 */
static void print_names(const char *label, const char *plugin,
                        int (*names)(const char *, str_list *), int width) {
    str_list l = {NULL, 0, 0};
    names(plugin, &l);
    print_label(label);
    cli_print_wrapped(stdout, l.items, l.n, LABEL_COL, LABEL_COL, width);
    list_free(&l);
}

/**
 * One line per visible GPU under the devices line: "gpu(0)  NAME, 79.1 GiB, compute
 * capability 9.0" (mxk_device_properties; MXNet's mx.context.num_gpus and
 * gpu_memory_info).
 */
static void print_gpus(void) {
    int32_t n = mxk_device_count(MXK_DEV_GPU);
    for (int32_t i = 0; i < n; i++) {
        mxk_device_props p = {.struct_size = sizeof p};
        mxk_context c = {MXK_DEV_GPU, i};
        print_label("");
        if (mxk_device_properties(c, &p) != MXK_OK) {
            printf("gpu(%d)  %s\n", (int)i, mxk_get_last_error());
            continue;
        }
        printf("gpu(%d)  %s, %.1f GiB, compute capability %d.%d\n", (int)i, p.name,
               (double)p.total_memory / (1024.0 * 1024.0 * 1024.0), (int)p.compute_major,
               (int)p.compute_minor);
    }
}

/** Prints plugin i in the human listing. */
static void print_plugin(const registry_view *v, uint32_t i, int width) {
    const mxk_plugin_record *r = &v->plugins[i];
    printf("%s %s", r->name ? r->name : "?", r->version ? r->version : "");
    if (r->description != NULL && r->description[0] != '\0')
        printf("  -  %s", r->description);
    putchar('\n');
    print_label("path");
    printf("%s\n", r->path ? r->path : "");
    const char *origin = mxk_plugin_origin(r->name);
    print_label("from");
    printf("%s\n", origin && origin[0] ? origin : "--plugin (mxk_load_plugin)");
    print_label("abi");
    printf("%u.%u (negotiated minor %u)\n", (unsigned)r->abi_major, (unsigned)r->abi_minor,
           (unsigned)r->negotiated_minor);

    print_label("devices");
    int any = 0;
    for (size_t d = 0; d < v->num_devices; d++) {
        const device_info *di = &v->devices[d];
        if (!same_name(di->plugin, r->name))
            continue;
        int32_t count = mxk_device_count(di->dev_type);
        printf("%s%s \"%s\" (%d device%s)", any++ ? ", " : "", mxk_dev_type_name(di->dev_type),
               di->name ? di->name : "", (int)count, count == 1 ? "" : "s");
    }
    puts(any ? "" : "-");
    for (size_t d = 0; d < v->num_devices; d++)
        if (same_name(v->devices[d].plugin, r->name) && v->devices[d].dev_type == MXK_DEV_GPU)
            print_gpus();

    str_list ops = {NULL, 0, 0}, labels = {NULL, 0, 0};
    plugin_operators(r->name, &ops);
    operator_labels(v, &ops, &labels);
    print_label("operators");
    if (labels.n > 0) {
        char count[32];
        int col = LABEL_COL + snprintf(count, sizeof count, "%zu: ", labels.n);
        fputs(count, stdout);
        cli_print_wrapped(stdout, labels.items, labels.n, col, LABEL_COL, width);
    } else {
        puts(r->num_kernels > 0 ? "- (kernels only, for operators of other plugins)" : "-");
    }
    free_all(&labels);
    str_list pairs = {NULL, 0, 0};
    alias_pairs(&ops, &pairs);
    print_label("aliases");
    if (pairs.n > 0)
        cli_print_wrapped(stdout, pairs.items, pairs.n, LABEL_COL, LABEL_COL, width);
    else
        puts("-");
    free_all(&pairs);
    print_kernels(v, r, &ops, width);
    list_free(&ops);

    print_names("iterators", r->name, plugin_iterators, width);
    print_names("transports", r->name, plugin_transports, width);
}

/** Prints the human-readable listing. */
static int print_human(const registry_view *v) {
    int width = cli_output_width();
    const char *pref = mxk_get_backend_preference();
    uint32_t ndirs = mxk_config_dir_count();
    for (uint32_t i = 0; i < ndirs; i++) {
        const char *dir = NULL;
        mxk_config_dir_get(i, &dir);
        printf("%-21s%s\n", i == 0 ? (ndirs > 1 ? "config dirs:" : "config dir:") : "",
               dir ? dir : "?");
    }
    if (ndirs == 0)
        puts("config dir:          (none found)");
    printf("backend preference:  %s\n", pref && pref[0] ? pref : "(none)");
    putchar('\n');
    if (v->num_plugins == 0)
        puts("no plugins loaded");
    else
        printf("%u plugin%s loaded:\n", (unsigned)v->num_plugins, v->num_plugins == 1 ? "" : "s");
    for (uint32_t i = 0; i < v->num_plugins; i++) {
        putchar('\n');
        print_plugin(v, i, width);
    }

    uint32_t nd = mxk_plugin_disabled_count();
    if (nd > 0)
        printf("\n%u disabled conf%s (enabled = false):\n", (unsigned)nd, nd == 1 ? "" : "s");
    for (uint32_t i = 0; i < nd; i++) {
        const char *conf = NULL;
        if (mxk_plugin_disabled_get(i, &conf) == MXK_OK)
            printf("  %s\n", conf);
    }

    uint32_t nr = mxk_plugin_rejected_count();
    if (nr > 0)
        printf("\n%u rejected candidate%s:\n", (unsigned)nr, nr == 1 ? "" : "s");
    for (uint32_t i = 0; i < nr; i++) {
        const char *path = NULL, *reason = NULL;
        if (mxk_plugin_rejected_get(i, &path, &reason) != MXK_OK)
            continue;
        printf("  %s\n      %s\n", path ? path : "?", reason ? reason : "(no reason given)");
    }
    return CLI_OK;
}

/**
 * Gathers the registry and prints it (with the library initialised); *(int *)strict
 * set: then an error when a candidate was rejected.
 */
static int list_plugins(const cli_globals *g, void *strict) {
    registry_view v;
    int rc = gather_registry(&v);
    if (rc == CLI_OK)
        rc = g->json ? print_json(&v) : print_human(&v);
    registry_free(&v);
    uint32_t nr = mxk_plugin_rejected_count();
    if (rc == CLI_OK && *(int *)strict && nr > 0)
        rc = cli_error("--strict: %u plugin candidate%s rejected", (unsigned)nr,
                       nr == 1 ? " was" : "s were");
    return rc;
}

/** Runs `mxk plugins [--strict] [--json]`. */
static int run_plugins(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    int strict = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--strict") == 0)
            strict = 1;
        else if (strcmp(argv[i], "--") != 0)
            return cli_reject_argument(self, argv[i]);
    }
    return cli_with_library(g, list_plugins, &strict);
}

/** The `plugins` command. */
const cli_command cli_cmd_plugins = {
    .name = "plugins",
    .summary = "list loaded plugins, what they registered, and rejected candidates",
    .usage = "mxk plugins [--strict] [--config-dir DIR] [--plugin PATH] [--json]",
    .help = "Loads the plugins of the config directory (plugins.d/*.conf) as any program\n"
            "using mxk would, then lists the config directory in use, the backend\n"
            "preference, and for every loaded plugin: name, version, path, ABI version it\n"
            "was built for and the minor negotiated with the library, the operators it\n"
            "defines (an operator with kernels of several backends is marked with them:\n"
            "\"Convolution [cpu-blas, onednn]\"; the preference list picks one, see\n"
            "`mxk op NAME`) and their aliases (alias=Operator: MXNet's other names,\n"
            "accepted wherever an operator is named), its kernels per device type and\n"
            "backend (a plugin such as onednn registers kernels for operators of other\n"
            "plugins only: they are named there), its device backends, data iterators and\n"
            "KVStore transports. Candidates that were not loaded are listed last, each\n"
            "with the reason (missing library, ABI mismatch, duplicate name...); every\n"
            "mxk command warns about them on stderr. Each plugin shows where it came\n"
            "from: its conf file (so which config dir), MXK_PLUGINS=PATH, or --plugin;\n"
            "confs disabled by 'enabled = false' are listed too.\n"
            "\n"
            "  --strict   exit with status 1 when any candidate was rejected (for the CI\n"
            "             of plugin authors)\n"
            "\n"
            "--json prints one object:\n"
            "  {\"config_dir\", \"config_dirs\": [most general first], \"backend_preference\",\n"
            "   \"plugins\": [{\"name\", \"version\", \"description\", \"abi\": \"MAJOR.MINOR\",\n"
            "                \"negotiated_minor\", \"path\", \"origin\" (conf file,\n"
            "                \"MXK_PLUGINS=PATH\" or \"\" for --plugin), \"operators\": [...],\n"
            "                \"aliases\": {\"alias\": \"Operator\"},\n"
            "                \"kernels\": [{\"op\", \"device\", \"backend\"}],\n"
            "                \"devices\": [{\"device\", \"name\", \"count\"}],\n"
            "                \"iterators\": [...], \"kvstore_transports\": [...]}],\n"
            "   \"rejected\": [{\"path\", \"reason\"}], \"disabled\": [conf paths],\n"
            "   \"operator_backends\": {\"Operator\": [backends with a kernel, any device]}}\n",
    .run = run_plugins,
};
