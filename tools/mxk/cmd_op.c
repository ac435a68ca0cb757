/*
 * `mxk op [describe] NAME`: the help of one operator, as MXNet's operator docs give
 * it (`help(mx.sym.Flatten)`): its canonical name and aliases, the plugin that
 * defines it, its description, its attributes (type, default or required, enum
 * values, doc), the arguments, outputs and aux states of a node with default
 * attributes, its kernels, and how its CPU backend is chosen: the backends with a
 * CPU kernel, the preference list and where it comes from (--backend,
 * MXK_BACKEND, mxk.conf's `backend =`), the [op_backend] override, and the backend
 * that wins now (mxk_resolve_backend).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/** Largest number of names listed per kind (arguments, outputs, aux states). */
#define MAX_NAMES 64

/** The names of one kind of a default node, or n = 0 when none could be built. */
typedef struct name_set {
    char **items;
    uint32_t n;
} name_set;

/**
 * Lists the arguments, outputs and aux states of a node of `op` with default
 * attributes (variables created for every input). An operator with required
 * attributes cannot be built that way: the sets stay empty and *built is 0.
 */
static void default_node_names(const char *op, name_set sets[3], int *built) {
    mxk_symbol *s = NULL;
    *built = mxk_symbol_create(op, "x", 0, NULL, NULL, 0, NULL, NULL, &s) == MXK_OK;
    static const mxk_symbol_names kinds[3] = {MXK_SYMBOL_ARGUMENTS, MXK_SYMBOL_OUTPUTS,
                                              MXK_SYMBOL_AUX_STATES};
    for (int k = 0; k < 3; k++) {
        sets[k] = (name_set){NULL, 0};
        if (*built && mxk_symbol_list_names(s, kinds[k], &sets[k].n, &sets[k].items) != MXK_OK)
            sets[k] = (name_set){NULL, 0};
    }
    mxk_symbol_free(s);
}

/** Prints one attribute line: "  name  type, required|optional, default=V  {enum}  doc". */
static void print_attr(const mxk_op_attr_doc *a) {
    printf("  %-20s %s", a->name, a->type);
    if (a->required)
        printf(", required");
    else if (a->default_value != NULL)
        printf(", optional, default=%s", a->default_value);
    else
        printf(", optional");
    if (a->enum_values != NULL)
        printf(", one of %s", a->enum_values);
    if (a->doc[0] != '\0')
        printf("\n  %-20s %s", "", a->doc);
    putchar('\n');
}

/** How the operator's CPU backend is chosen now (see the file comment). */
typedef struct backend_choice {
    const char *cpu_backends[16]; /**< backends with a CPU kernel, registration order */
    uint32_t num_cpu_backends;
    const char *preference;  /**< the effective list, "" when none */
    const char *pref_source; /**< "--backend", "MXK_BACKEND", "mxk.conf" or NULL (none) */
    char conf_path[4096];    /**< the mxk.conf the preference or override came from */
    char override[64];       /**< the [op_backend] override, "" when none */
    const char *resolved;    /**< the backend that runs it on the CPU now, or NULL */
} backend_choice;

/**
 * Fills *c for operator `op`. The preference's source follows the library's
 * precedence (mxk_set_backend_preference): the CLI's --backend (passed to mxk_init
 * as the API-level list), else MXK_BACKEND, else mxk.conf. Overrides come only from
 * mxk.conf here: the CLI sets none through mxk_set_op_backend.
 */
static void backend_choice_get(const cli_globals *g, const char *op, backend_choice *c) {
    memset(c, 0, sizeof *c);
    uint32_t nk = mxk_op_kernel_count(op);
    for (uint32_t i = 0; i < nk; i++) {
        int32_t dev = 0;
        const char *backend = NULL, *plugin = NULL;
        if (mxk_op_kernel_get(op, i, &dev, &backend, &plugin) != MXK_OK || dev != MXK_DEV_CPU)
            continue;
        uint32_t k = 0;
        while (k < c->num_cpu_backends && strcmp(c->cpu_backends[k], backend) != 0)
            k++;
        if (k == c->num_cpu_backends && k < 16)
            c->cpu_backends[c->num_cpu_backends++] = backend;
    }
    c->preference = mxk_get_backend_preference();
    const char *env = getenv("MXK_BACKEND");
    if (g->backend != NULL && g->backend[0] != '\0')
        c->pref_source = "--backend";
    else if (env != NULL && env[0] != '\0')
        c->pref_source = "MXK_BACKEND";
    else if (c->preference[0] != '\0')
        c->pref_source = "mxk.conf";
    snprintf(c->conf_path, sizeof c->conf_path, "%s/mxk.conf", mxk_config_dir());
    if (mxk_get_op_backend(op, c->override, sizeof c->override) != MXK_OK)
        c->override[0] = '\0';
    if (mxk_resolve_backend(op, MXK_DEV_CPU, &c->resolved) != MXK_OK)
        c->resolved = NULL;
}

/** Prints the backend lines of the human help. */
static void print_backend_choice(const backend_choice *c) {
    printf("backends on cpu:");
    for (uint32_t i = 0; i < c->num_cpu_backends; i++)
        printf("%s %s", i ? "," : "", c->cpu_backends[i]);
    puts(c->num_cpu_backends ? "" : " none");
    if (c->pref_source == NULL)
        printf("preference:      none (kernel priorities decide)\n");
    else if (strcmp(c->pref_source, "mxk.conf") == 0)
        printf("preference:      %s (from %s)\n", c->preference, c->conf_path);
    else
        printf("preference:      %s (from %s)\n", c->preference, c->pref_source);
    if (c->override[0] != '\0')
        printf("override:        %s (from %s [op_backend])\n", c->override, c->conf_path);
    else
        printf("override:        none\n");
    printf("runs now on cpu: %s\n", c->resolved ? c->resolved : "none (no CPU kernel)");
}

/** The JSON object of the backend choice (see the command's help). */
static json_t *backend_choice_json(const backend_choice *c) {
    json_t *o = json_object(), *list = json_array();
    for (uint32_t i = 0; list != NULL && i < c->num_cpu_backends; i++)
        json_array_append_new(list, json_string(c->cpu_backends[i]));
    if (o == NULL) {
        json_decref(list);
        return NULL;
    }
    json_object_set_new(o, "cpu_backends", list);
    json_object_set_new(o, "preference", json_string(c->preference));
    json_object_set_new(o, "preference_source",
                        c->pref_source ? json_string(c->pref_source) : json_null());
    json_object_set_new(o, "override", c->override[0] ? json_string(c->override) : json_null());
    json_object_set_new(o, "resolved", c->resolved ? json_string(c->resolved) : json_null());
    return o;
}

/** JSON array of a name set. */
static json_t *names_json(const name_set *s) {
    json_t *a = json_array();
    for (uint32_t i = 0; a != NULL && i < s->n; i++)
        json_array_append_new(a, json_string(s->items[i]));
    return a;
}

/** Prints the help of operator *(const char **)arg. */
static int describe(const cli_globals *g, void *arg) {
    const char *name = *(const char **)arg;
    mxk_op_doc doc;
    mxk_status st = mxk_op_get_doc(name, &doc);
    if (st != MXK_OK)
        return cli_api_error(st, "looking up operator %s", name);
    const char *const *aliases = mxk_op_aliases(name);
    name_set sets[3];
    int built = 0;
    default_node_names(doc.name, sets, &built);
    static const char *const set_names[3] = {"arguments", "outputs", "aux_states"};
    backend_choice choice;
    backend_choice_get(g, doc.name, &choice);
    int rc = CLI_OK;
    if (g->json) {
        json_t *root = json_object(), *al = json_array(), *attrs = json_array();
        for (size_t i = 0; al != NULL && aliases && aliases[i]; i++)
            json_array_append_new(al, json_string(aliases[i]));
        for (uint32_t i = 0; attrs != NULL && i < doc.num_attrs; i++) {
            mxk_op_attr_doc a;
            if (mxk_op_get_attr_doc(doc.name, i, &a) != MXK_OK)
                continue;
            json_t *o = json_object();
            json_object_set_new(o, "name", json_string(a.name));
            json_object_set_new(o, "type", json_string(a.type));
            json_object_set_new(o, "required", json_boolean(a.required));
            json_object_set_new(o, "default",
                                a.default_value ? json_string(a.default_value) : json_null());
            json_object_set_new(o, "enum",
                                a.enum_values ? json_string(a.enum_values) : json_null());
            json_object_set_new(o, "doc", json_string(a.doc));
            json_array_append_new(attrs, o);
        }
        json_object_set_new(root, "name", json_string(doc.name));
        json_object_set_new(root, "aliases", al);
        json_object_set_new(root, "plugin", json_string(doc.plugin));
        json_object_set_new(root, "description", json_string(doc.description));
        json_object_set_new(root, "attributes", attrs);
        for (int k = 0; k < 3; k++)
            json_object_set_new(root, set_names[k], built ? names_json(&sets[k]) : json_null());
        json_object_set_new(root, "backend", backend_choice_json(&choice));
        rc = cli_json_print(root, 0);
    } else {
        printf("%s  (plugin %s)\n", doc.name, doc.plugin);
        if (aliases && aliases[0]) {
            printf("aliases:");
            for (size_t i = 0; aliases[i]; i++)
                printf("%s %s", i ? "," : "", aliases[i]);
            putchar('\n');
        }
        if (doc.description[0] != '\0')
            printf("\n%s\n", doc.description);
        printf("\nattributes:%s\n", doc.num_attrs ? "" : " none");
        for (uint32_t i = 0; i < doc.num_attrs; i++) {
            mxk_op_attr_doc a;
            if (mxk_op_get_attr_doc(doc.name, i, &a) == MXK_OK)
                print_attr(&a);
        }
        if (built) {
            printf("\nwith default attributes (node named x):\n");
            for (int k = 0; k < 3; k++) {
                printf("  %-11s", set_names[k]);
                for (uint32_t i = 0; i < sets[k].n; i++)
                    printf("%s %s", i ? "," : "", sets[k].items[i]);
                puts(sets[k].n ? "" : " -");
            }
        }
        printf("\nkernels:");
        uint32_t nk = mxk_op_kernel_count(doc.name);
        for (uint32_t i = 0; i < nk; i++) {
            int32_t dev = 0;
            const char *backend = NULL, *plugin = NULL;
            if (mxk_op_kernel_get(doc.name, i, &dev, &backend, &plugin) == MXK_OK)
                printf("%s %s (backend %s)", i ? "," : "", mxk_dev_type_name(dev), backend);
        }
        puts(nk ? "" : " none");
        print_backend_choice(&choice);
    }
    for (int k = 0; k < 3; k++)
        mxk_string_list_free(sets[k].items);
    return rc;
}

/** Runs `mxk op [describe] NAME [--json]`. */
static int run_op(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    const char *name = NULL;
    int words = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            continue;
        if (words++ == 0 && strcmp(argv[i], "describe") == 0 && i + 1 < argc)
            continue; /* `mxk op describe NAME` (an operator named describe: `mxk op describe`) */
        if (argv[i][0] == '-' || name != NULL)
            return cli_no_arguments(self, 1, argv + i);
        name = argv[i];
    }
    if (name == NULL)
        return cli_usage_error(self, "missing the operator name");
    return cli_with_library(g, describe, &name);
}

/** The `op` command. */
const cli_command cli_cmd_op = {
    .name = "op",
    .summary = "show an operator's help: aliases, attributes, arguments, kernels, backend",
    .usage = "mxk op [describe] NAME [--config-dir DIR] [--backend LIST] [--json]",
    .help =
        "Loads the plugins of the config directory and prints the help of operator\n"
        "NAME (its name or one of its aliases, as MXNet's add_alias registers them):\n"
        "canonical name, aliases, defining plugin, description, every attribute\n"
        "(type, required or default, enum values, doc), the arguments, outputs and\n"
        "aux states of a node with default attributes (when none is required),\n"
        "the kernels per device type and backend, and how the CPU backend is chosen:\n"
        "the backends with a CPU kernel, the preference list and where it comes from\n"
        "(--backend, else MXK_BACKEND, else `backend =` in mxk.conf), the operator's\n"
        "[op_backend] override in mxk.conf, and the backend that runs it now. A kernel\n"
        "may still decline a node's configuration (then the next backend runs it):\n"
        "`mxk symbol summary --backends` shows what each node of a graph runs.\n"
        "`mxk op describe NAME` is the same.\n"
        "\n"
        "--json prints {\"name\", \"aliases\", \"plugin\", \"description\",\n"
        "  \"attributes\": [{\"name\", \"type\", \"required\", \"default\", \"enum\", \"doc\"}],\n"
        "  \"arguments\", \"outputs\", \"aux_states\" (null when not buildable),\n"
        "  \"backend\": {\"cpu_backends\": [...], \"preference\", \"preference_source\"\n"
        "  (\"--backend\", \"MXK_BACKEND\", \"mxk.conf\" or null), \"override\" (or null),\n"
        "  \"resolved\" (or null)}}.\n",
    .run = run_op,
};
