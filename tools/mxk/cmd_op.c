/*
 * `mxk op NAME`: the help of one operator, as MXNet's operator docs give it
 * (`help(mx.sym.Flatten)`): its canonical name and aliases, the plugin that
 * defines it, its description, its attributes (type, default or required, enum
 * values, doc), the arguments, outputs and aux states of a node with default
 * attributes, and its kernels.
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
    }
    for (int k = 0; k < 3; k++)
        mxk_string_list_free(sets[k].items);
    return rc;
}

/** Runs `mxk op NAME [--json]`. */
static int run_op(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    const char *name = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            continue;
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
    .summary = "show an operator's help: aliases, attributes, arguments, kernels",
    .usage = "mxk op NAME [--config-dir DIR] [--json]",
    .help =
        "Loads the plugins of the config directory and prints the help of operator\n"
        "NAME (its name or one of its aliases, as MXNet's add_alias registers them):\n"
        "canonical name, aliases, defining plugin, description, every attribute\n"
        "(type, required or default, enum values, doc), the arguments, outputs and\n"
        "aux states of a node with default attributes (when none is required), and\n"
        "the kernels per device type and backend.\n"
        "\n"
        "--json prints {\"name\", \"aliases\", \"plugin\", \"description\",\n"
        "  \"attributes\": [{\"name\", \"type\", \"required\", \"default\", \"enum\", \"doc\"}],\n"
        "  \"arguments\", \"outputs\", \"aux_states\" (null when not buildable)}.\n",
    .run = run_op,
};
