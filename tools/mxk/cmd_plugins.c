/*
 * `mxk plugins`: what the library loaded from the config directory. For every
 * loaded plugin: name, version, ABI, path and what it registered (operators it
 * defines, kernels it provides per device type and backend, device backends,
 * iterators, KVStore transports); then every rejected candidate with its reason.
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

/** Everything the registry holds, gathered once. */
typedef struct registry_view {
    uint32_t num_plugins;
    mxk_plugin_record *plugins;
    kernel_info *kernels;
    size_t num_kernels;
    device_info *devices;
    size_t num_devices;
    str_list iterators;  /**< all iterator names, registration order */
    str_list transports; /**< all transport names, registration order */
    /** First index into iterators / transports per plugin; NULL when the names
     *  cannot be attributed (counts of the plugin records do not add up). */
    size_t *iter_first, *transport_first;
} registry_view;

/** Appends s to the list. Returns 0, or -1 when out of memory. */
static int list_push(str_list *l, const char *s) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        const char **items = realloc(l->items, cap * sizeof *items);
        if (items == NULL)
            return -1;
        l->items = items;
        l->cap = cap;
    }
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
    list_free(&v->iterators);
    list_free(&v->transports);
    free(v->iter_first);
    free(v->transport_first);
    memset(v, 0, sizeof *v);
}

/**
 * Computes, per plugin, the index of its first name in `all`, assuming plugins
 * registered their `count_of(plugin)` names in load order (the registry lists
 * names in registration order and commits each plugin's names at once). Returns
 * NULL when the counts do not add up to all->n (then names are not attributed)
 * or when out of memory.
 */
static size_t *attribute_names(const registry_view *v, const str_list *all, int transports) {
    size_t total = 0;
    for (uint32_t i = 0; i < v->num_plugins; i++)
        total += transports ? v->plugins[i].num_transports : v->plugins[i].num_iterators;
    if (total != all->n)
        return NULL;
    size_t *first = calloc(v->num_plugins + 1, sizeof *first);
    if (first == NULL)
        return NULL;
    size_t at = 0;
    for (uint32_t i = 0; i < v->num_plugins; i++) {
        first[i] = at;
        at += transports ? v->plugins[i].num_transports : v->plugins[i].num_iterators;
    }
    first[v->num_plugins] = at;
    return first;
}

/** Fills *v from the registry. Returns CLI_OK or CLI_ERROR (reported). */
static int gather_registry(registry_view *v) {
    memset(v, 0, sizeof *v);
    v->num_plugins = mxk_plugin_count();
    v->plugins = calloc(v->num_plugins + 1, sizeof *v->plugins);
    if (v->plugins == NULL)
        return cli_error("out of memory");
    for (uint32_t i = 0; i < v->num_plugins; i++) {
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
            if (v->num_kernels == cap) {
                cap = cap ? 2 * cap : 64;
                kernel_info *grown = realloc(v->kernels, cap * sizeof *grown);
                if (grown == NULL)
                    return cli_error("out of memory");
                v->kernels = grown;
            }
            v->kernels[v->num_kernels++] = ki;
        }
    }

    cap = 0;
    for (uint32_t d = 0;; d++) {
        device_info di = {0, NULL, NULL};
        if (mxk_device_get(d, &di.dev_type, &di.name, &di.plugin) != MXK_OK)
            break;
        if (v->num_devices == cap) {
            cap = cap ? 2 * cap : 8;
            device_info *grown = realloc(v->devices, cap * sizeof *grown);
            if (grown == NULL)
                return cli_error("out of memory");
            v->devices = grown;
        }
        v->devices[v->num_devices++] = di;
    }

    const char *name;
    for (uint32_t i = 0; (name = mxk_iterator_name(i)) != NULL; i++)
        if (list_push(&v->iterators, name) != 0)
            return cli_error("out of memory");
    for (uint32_t i = 0; (name = mxk_kvstore_transport_name(i)) != NULL; i++)
        if (list_push(&v->transports, name) != 0)
            return cli_error("out of memory");
    v->iter_first = attribute_names(v, &v->iterators, 0);
    v->transport_first = attribute_names(v, &v->transports, 1);
    return CLI_OK;
}

/** The operators defined by plugin `plugin`, in registration order. */
static int plugin_operators(const char *plugin, str_list *out) {
    uint32_t num_ops = mxk_op_count();
    for (uint32_t j = 0; j < num_ops; j++) {
        const char *op = mxk_op_name(j);
        if (op != NULL && same_name(mxk_op_plugin(op), plugin) && list_push(out, op) != 0)
            return -1;
    }
    return 0;
}

/** The names of plugin i in an attributed list (empty when not attributable). */
static str_list plugin_slice(const str_list *all, const size_t *first, uint32_t i) {
    str_list s = {NULL, 0, 0};
    if (first != NULL) {
        s.items = all->items + first[i];
        s.n = first[i + 1] - first[i];
    }
    return s;
}

/** A JSON array of strings. */
static json_t *json_string_array(const str_list *l) {
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < l->n; i++)
        json_array_append_new(a, json_string(l->items[i]));
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

    str_list ops = {NULL, 0, 0};
    plugin_operators(r->name, &ops);
    json_object_set_new(o, "operators", json_string_array(&ops));
    list_free(&ops);

    json_t *kernels = json_array();
    for (size_t k = 0; kernels != NULL && k < v->num_kernels; k++) {
        const kernel_info *ki = &v->kernels[k];
        if (!same_name(ki->plugin, r->name))
            continue;
        json_t *ko = json_object();
        json_object_set_new(ko, "op", json_string(ki->op));
        json_object_set_new(ko, "device", json_string(cli_dev_type_name(ki->dev_type)));
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
        json_object_set_new(dobj, "device", json_string(cli_dev_type_name(di->dev_type)));
        json_object_set_new(dobj, "name", json_string(di->name ? di->name : ""));
        json_object_set_new(dobj, "count", json_integer(mxk_device_count(di->dev_type)));
        json_array_append_new(devices, dobj);
    }
    json_object_set_new(o, "devices", devices);

    str_list iters = plugin_slice(&v->iterators, v->iter_first, i);
    str_list transports = plugin_slice(&v->transports, v->transport_first, i);
    json_object_set_new(o, "iterators", json_string_array(&iters));
    json_object_set_new(o, "kvstore_transports", json_string_array(&transports));
    return o;
}

/** Prints the whole listing as one JSON object. */
static int print_json(const registry_view *v) {
    json_t *root = json_object();
    if (root == NULL)
        return cli_json_print(NULL, 0);
    json_object_set_new(root, "config_dir", json_string(mxk_config_dir()));
    json_object_set_new(root, "backend_preference", json_string(mxk_get_backend_preference()));
    json_t *plugins = json_array();
    for (uint32_t i = 0; plugins != NULL && i < v->num_plugins; i++)
        json_array_append_new(plugins, plugin_json(v, i));
    json_object_set_new(root, "plugins", plugins);
    /* Names the plugin records do not account for are listed here instead. */
    if (v->iter_first == NULL && v->iterators.n > 0)
        json_object_set_new(root, "iterators", json_string_array(&v->iterators));
    if (v->transport_first == NULL && v->transports.n > 0)
        json_object_set_new(root, "kvstore_transports", json_string_array(&v->transports));
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
        const char *dev = cli_dev_type_name(g->dev_type);
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

/** Prints plugin i in the human listing. */
static void print_plugin(const registry_view *v, uint32_t i, int width) {
    const mxk_plugin_record *r = &v->plugins[i];
    printf("%s %s", r->name ? r->name : "?", r->version ? r->version : "");
    if (r->description != NULL && r->description[0] != '\0')
        printf("  -  %s", r->description);
    putchar('\n');
    print_label("path");
    printf("%s\n", r->path ? r->path : "");
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
        printf("%s%s \"%s\" (%d device%s)", any++ ? ", " : "", cli_dev_type_name(di->dev_type),
               di->name ? di->name : "", (int)count, count == 1 ? "" : "s");
    }
    puts(any ? "" : "-");

    str_list ops = {NULL, 0, 0};
    plugin_operators(r->name, &ops);
    print_label("operators");
    if (ops.n > 0) {
        char count[32];
        int col = LABEL_COL + snprintf(count, sizeof count, "%zu: ", ops.n);
        fputs(count, stdout);
        cli_print_wrapped(stdout, ops.items, ops.n, col, LABEL_COL, width);
    } else {
        puts("-");
    }
    print_kernels(v, r, &ops, width);
    list_free(&ops);

    str_list iters = plugin_slice(&v->iterators, v->iter_first, i);
    str_list transports = plugin_slice(&v->transports, v->transport_first, i);
    print_label("iterators");
    if (v->iter_first == NULL && r->num_iterators > 0)
        printf("%u (names listed below)\n", (unsigned)r->num_iterators);
    else
        cli_print_wrapped(stdout, iters.items, iters.n, LABEL_COL, LABEL_COL, width);
    print_label("transports");
    if (v->transport_first == NULL && r->num_transports > 0)
        printf("%u (names listed below)\n", (unsigned)r->num_transports);
    else
        cli_print_wrapped(stdout, transports.items, transports.n, LABEL_COL, LABEL_COL, width);
}

/** Prints the human-readable listing. */
static int print_human(const registry_view *v) {
    int width = cli_output_width();
    const char *dir = mxk_config_dir();
    const char *pref = mxk_get_backend_preference();
    printf("config dir:          %s\n", dir && dir[0] ? dir : "(none found)");
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
    if (v->iter_first == NULL && v->iterators.n > 0) {
        fputs("\niterators:  ", stdout);
        cli_print_wrapped(stdout, v->iterators.items, v->iterators.n, 12, 12, width);
    }
    if (v->transport_first == NULL && v->transports.n > 0) {
        fputs("\ntransports: ", stdout);
        cli_print_wrapped(stdout, v->transports.items, v->transports.n, 12, 12, width);
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

/** Runs `mxk plugins [--json]`. */
static int run_plugins(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            continue;
        if (cli_is_option(argv[i]))
            return cli_usage_error(self, "unknown option '%s'", argv[i]);
        return cli_usage_error(self, "unexpected argument '%s'", argv[i]);
    }
    int rc = cli_init_library(g);
    if (rc != CLI_OK)
        return rc;
    registry_view v;
    rc = gather_registry(&v);
    if (rc == CLI_OK)
        rc = g->json ? print_json(&v) : print_human(&v);
    registry_free(&v);
    mxk_shutdown();
    return rc;
}

/** The `plugins` command. */
const cli_command cli_cmd_plugins = {
    .name = "plugins",
    .summary = "list loaded plugins, what they registered, and rejected candidates",
    .usage = "mxk plugins [--config-dir DIR] [--backend LIST] [--json]",
    .help = "Loads the plugins of the config directory (plugins.d/*.conf) as any program\n"
            "using mxk would, then lists the config directory in use, the backend\n"
            "preference, and for every loaded plugin: name, version, path, ABI version it\n"
            "was built for and the minor negotiated with the library, the operators it\n"
            "defines, its kernels per device type and backend, its device backends, data\n"
            "iterators and KVStore transports. Candidates that were not loaded are listed\n"
            "last, each with the reason (missing library, ABI mismatch, duplicate name...).\n"
            "\n"
            "--json prints one object:\n"
            "  {\"config_dir\", \"backend_preference\",\n"
            "   \"plugins\": [{\"name\", \"version\", \"description\", \"abi\": \"MAJOR.MINOR\",\n"
            "                \"negotiated_minor\", \"path\", \"operators\": [...],\n"
            "                \"kernels\": [{\"op\", \"device\", \"backend\"}],\n"
            "                \"devices\": [{\"device\", \"name\", \"count\"}],\n"
            "                \"iterators\": [...], \"kvstore_transports\": [...]}],\n"
            "   \"rejected\": [{\"path\", \"reason\"}]}\n",
    .run = run_plugins,
};
