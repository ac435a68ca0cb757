/*
 * `mxk op [describe] NAME [--attr KEY=VALUE ...] [--shape d1,d2,... ...]`: the help
 * of one operator, as MXNet's operator docs give it (`help(mx.sym.Flatten)`): its
 * canonical name and aliases, the plugin that defines it, its description, its
 * attributes (type, default or required, the allowed values of an enum, doc), the
 * arguments, outputs and aux states of a node with the given (else default)
 * attributes, its kernels, and how its CPU backend is chosen: the backends with a
 * CPU kernel, the preference list and where it comes from (--backend,
 * MXK_BACKEND, mxk.conf's `backend =`), the [op_backend] override, and the backend
 * that wins now (mxk_resolve_backend). With --shape (op_node.h: the first
 * arguments' shapes, the others inferred) it also binds one node on the CPU
 * (mxk_op_instance_create) and prints its inferred shapes, the backend its kernel
 * comes from, what its backward reads (MXNet's DeclareBackwardDependency) and the
 * resources of each phase (MXNet's ResourceRequest).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "op_node.h"

/** The names of one kind of a node, or n = 0 when none could be built. */
typedef struct name_set {
    char **items;
    uint32_t n;
} name_set;

/**
 * Lists the arguments, outputs and aux states of a node "x" of the operator with
 * the node's attributes (variables created for every input), without the node's
 * "x_" prefix. An operator whose required attributes are not given cannot be
 * built that way: the sets stay empty and *built is 0.
 */
static void node_names(const cli_op_node *node, const char *op, name_set sets[3], int *built) {
    mxk_symbol *s = NULL;
    *built = mxk_symbol_create(op, "x", node->num_attrs, node->keys, node->vals, 0, NULL, NULL,
                               &s) == MXK_OK;
    static const mxk_symbol_names kinds[3] = {MXK_SYMBOL_ARGUMENTS, MXK_SYMBOL_OUTPUTS,
                                              MXK_SYMBOL_AUX_STATES};
    for (int k = 0; k < 3; k++) {
        sets[k] = (name_set){NULL, 0};
        if (*built && mxk_symbol_list_names(s, kinds[k], &sets[k].n, &sets[k].items) != MXK_OK)
            sets[k] = (name_set){NULL, 0};
        for (uint32_t i = 0; i < sets[k].n; i++)
            if (strncmp(sets[k].items[i], "x_", 2) == 0)
                memmove(sets[k].items[i], sets[k].items[i] + 2, strlen(sets[k].items[i]) - 1);
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

/** What `mxk op` was asked: the operator node (--attr, --shape). */
typedef struct op_request {
    const cli_command *cmd;
    cli_op_node node;
} op_request;

/** Most slots of one kind a bound node may have here (CLI_OP_NODE_MAX). */
#define NODE_SLOTS CLI_OP_NODE_MAX

/** What a node bound from --shape shows (see the file comment). */
typedef struct bound_node {
    mxk_op_instance *inst;
    uint32_t counts[3]; /**< inputs, outputs, aux states */
    uint32_t num_visible;
    uint8_t need[3][NODE_SLOTS]; /**< backward reads: out_grad, in_data, out_data */
    uint32_t num_res[2];         /**< forward, backward */
    mxk_op_resource_info res[2][4];
} bound_node;

/** Prints the library's last error with the operator's name once ("OP: ..."). */
static int node_error(const char *op) {
    const char *m = mxk_get_last_error();
    size_t n = strlen(op);
    int named = strncmp(m, op, n) == 0 && m[n] == ':';
    return cli_error("%s%s%s", named ? "" : op, named ? "" : ": ", m);
}

/**
 * Binds the node on the CPU (the shapes after the last --shape inferred). CLI_OK
 * with b->inst set, or CLI_ERROR after printing "OP: MESSAGE".
 */
static int bind_node(cli_op_node *node, const char *op, bound_node *b) {
    memset(b, 0, sizeof *b);
    int rc = cli_op_node_fill_shapes(node, "");
    if (rc != CLI_OK)
        return rc;
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxk_status st = mxk_op_instance_create(op, node->num_attrs, node->keys, node->vals, cpu,
                                           node->num_shapes, node->shapes, NULL, &b->inst);
    if (st != MXK_OK)
        return node_error(op);
    mxk_op_instance_counts(b->inst, &b->counts[0], &b->counts[1], &b->num_visible, &b->counts[2]);
    if (b->counts[0] > NODE_SLOTS || b->counts[1] > NODE_SLOTS || b->counts[2] > NODE_SLOTS) {
        mxk_op_instance_free(b->inst);
        b->inst = NULL;
        return cli_error("op %s: more than %d slots of one kind", op, NODE_SLOTS);
    }
    mxk_op_instance_backward_dependency(b->inst, b->need[0], b->need[1], b->need[2]);
    for (int phase = 0; phase < 2; phase++)
        b->num_res[phase] = mxk_op_instance_resources(b->inst, phase, b->res[phase], 4);
    return CLI_OK;
}

/** Slot kinds of mxk_op_instance_shape / _name for the backward-read kinds. */
static const int32_t read_kinds[3] = {1, 0, 1};
static const char *const read_names[3] = {"out_grad", "in_data", "out_data"};
static const char *const slot_kinds[3] = {"inputs", "outputs", "aux_states"};

/** Number of flags of backward-read kind k. */
static uint32_t read_count(const bound_node *b, int k) {
    return k == 0 ? b->num_visible : b->counts[read_kinds[k]];
}

/** "temp_space" or "random" (mxk_resource_type). */
static const char *resource_name(int32_t type) {
    return type == 1 ? "temp_space" : type == 2 ? "random" : "?";
}

/** Prints the bound node's lines. */
static void print_bound(const bound_node *b) {
    printf("\nnode on cpu (the shapes given, the others inferred):\n");
    for (int k = 0; k < 3; k++) {
        printf("  %-15s", slot_kinds[k]);
        for (uint32_t i = 0; i < b->counts[k]; i++) {
            mxk_shape sh;
            int32_t dt = 0;
            char sb[160];
            mxk_op_instance_shape(b->inst, k, i, &sh, &dt);
            cli_format_shape(&sh, sb, sizeof sb);
            printf("%s %s %s %s", i ? "," : "", mxk_op_instance_name(b->inst, k, i), sb,
                   mxk_dtype_name(dt));
        }
        puts(b->counts[k] ? "" : " -");
    }
    printf("  %-15s %s\n", "backend", mxk_op_instance_backend(b->inst));
    printf("  %-15s", "backward reads");
    for (int k = 0; k < 3; k++) {
        printf("%s %s:", k ? ";" : "", read_names[k]);
        int any = 0;
        for (uint32_t i = 0; i < read_count(b, k); i++)
            if (b->need[k][i])
                printf("%s %s", any++ ? "," : "", mxk_op_instance_name(b->inst, read_kinds[k], i));
        if (!any)
            printf(" -");
    }
    putchar('\n');
    for (int phase = 0; phase < 2; phase++) {
        printf("  %-15s", phase ? "resources bwd" : "resources fwd");
        for (uint32_t r = 0; r < b->num_res[phase] && r < 4; r++) {
            const mxk_op_resource_info *ri = &b->res[phase][r];
            printf("%s %s", r ? "," : "", resource_name(ri->type));
            if (ri->type == 1 && ri->temp_bytes)
                printf(" (%llu bytes)", (unsigned long long)ri->temp_bytes);
            else if (ri->type == 1)
                printf(" (size at run time)");
        }
        puts(b->num_res[phase] ? "" : " none");
    }
}

/** The bound node as JSON (see the command's help). */
static json_t *bound_json(const bound_node *b) {
    json_t *o = json_object();
    for (int k = 0; o != NULL && k < 3; k++) {
        json_t *list = json_array();
        for (uint32_t i = 0; list != NULL && i < b->counts[k]; i++) {
            mxk_shape sh;
            int32_t dt = 0;
            mxk_op_instance_shape(b->inst, k, i, &sh, &dt);
            json_t *slot = json_object(), *dims = json_array();
            for (int32_t d = 0; dims != NULL && d < sh.ndim; d++)
                json_array_append_new(dims, json_integer(sh.dims[d]));
            json_object_set_new(slot, "name", json_string(mxk_op_instance_name(b->inst, k, i)));
            json_object_set_new(slot, "shape", dims);
            json_object_set_new(slot, "dtype", json_string(mxk_dtype_name(dt)));
            json_array_append_new(list, slot);
        }
        json_object_set_new(o, slot_kinds[k], list);
    }
    json_object_set_new(o, "backend", json_string(mxk_op_instance_backend(b->inst)));
    json_t *reads = json_object(), *res = json_object();
    for (int k = 0; reads != NULL && k < 3; k++) {
        json_t *list = json_array();
        for (uint32_t i = 0; list != NULL && i < read_count(b, k); i++)
            if (b->need[k][i])
                json_array_append_new(list,
                                      json_string(mxk_op_instance_name(b->inst, read_kinds[k], i)));
        json_object_set_new(reads, read_names[k], list);
    }
    for (int phase = 0; res != NULL && phase < 2; phase++) {
        json_t *list = json_array();
        for (uint32_t r = 0; list != NULL && r < b->num_res[phase] && r < 4; r++) {
            json_t *ro = json_object();
            json_object_set_new(ro, "type", json_string(resource_name(b->res[phase][r].type)));
            json_object_set_new(ro, "bytes", json_integer((json_int_t)b->res[phase][r].temp_bytes));
            json_array_append_new(list, ro);
        }
        json_object_set_new(res, phase ? "backward" : "forward", list);
    }
    json_object_set_new(o, "backward_reads", reads);
    json_object_set_new(o, "resources", res);
    return o;
}

/** The attributes as a JSON array (see the command's help). */
static json_t *attrs_json(const mxk_op_doc *doc) {
    json_t *attrs = json_array();
    for (uint32_t i = 0; attrs != NULL && i < doc->num_attrs; i++) {
        mxk_op_attr_doc a;
        if (mxk_op_get_attr_doc(doc->name, i, &a) != MXK_OK)
            continue;
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(a.name));
        json_object_set_new(o, "type", json_string(a.type));
        json_object_set_new(o, "required", json_boolean(a.required));
        json_object_set_new(o, "default",
                            a.default_value ? json_string(a.default_value) : json_null());
        json_object_set_new(o, "enum", a.enum_values ? json_string(a.enum_values) : json_null());
        json_object_set_new(o, "doc", json_string(a.doc));
        json_array_append_new(attrs, o);
    }
    return attrs;
}

/** Prints the kernels line: "kernels: cpu (backend X), ...". */
static void print_kernels(const char *op) {
    printf("\nkernels:");
    uint32_t nk = mxk_op_kernel_count(op);
    for (uint32_t i = 0; i < nk; i++) {
        int32_t dev = 0;
        const char *backend = NULL, *plugin = NULL;
        if (mxk_op_kernel_get(op, i, &dev, &backend, &plugin) == MXK_OK)
            printf("%s %s (backend %s)", i ? "," : "", mxk_dev_type_name(dev), backend);
    }
    puts(nk ? "" : " none");
}

/** The kernels as JSON: [{"device", "backend", "plugin"}]. */
static json_t *kernels_json(const char *op) {
    json_t *list = json_array();
    uint32_t nk = mxk_op_kernel_count(op);
    for (uint32_t i = 0; list != NULL && i < nk; i++) {
        int32_t dev = 0;
        const char *backend = NULL, *plugin = NULL;
        if (mxk_op_kernel_get(op, i, &dev, &backend, &plugin) != MXK_OK)
            continue;
        json_t *k = json_object();
        json_object_set_new(k, "device", json_string(mxk_dev_type_name(dev)));
        json_object_set_new(k, "backend", json_string(backend));
        json_object_set_new(k, "plugin", json_string(plugin));
        json_array_append_new(list, k);
    }
    return list;
}

/** Prints the help of the operator of the op_request `arg`. */
static int describe(const cli_globals *g, void *arg) {
    op_request *req = arg;
    const char *name = req->node.op;
    mxk_op_doc doc;
    mxk_status st = mxk_op_get_doc(name, &doc);
    if (st != MXK_OK)
        return cli_api_error(st, "looking up operator %s", name);
    bound_node bound = {0};
    if (req->node.num_shapes > 0 && bind_node(&req->node, doc.name, &bound) != CLI_OK)
        return CLI_ERROR;
    const char *const *aliases = mxk_op_aliases(name);
    name_set sets[3];
    int built = 0;
    node_names(&req->node, doc.name, sets, &built);
    if (!built && req->node.num_attrs > 0) { /* the attributes given are wrong: say why */
        mxk_symbol *unnamed = NULL;          /* (an unnamed node's error names no node) */
        mxk_symbol_create(doc.name, NULL, req->node.num_attrs, req->node.keys, req->node.vals, 0,
                          NULL, NULL, &unnamed);
        mxk_symbol_free(unnamed);
        mxk_op_instance_free(bound.inst);
        return node_error(doc.name);
    }
    static const char *const set_names[3] = {"arguments", "outputs", "aux_states"};
    backend_choice choice;
    backend_choice_get(g, doc.name, &choice);
    int rc = CLI_OK;
    if (g->json) {
        json_t *root = json_object(), *al = json_array();
        for (size_t i = 0; al != NULL && aliases && aliases[i]; i++)
            json_array_append_new(al, json_string(aliases[i]));
        json_object_set_new(root, "name", json_string(doc.name));
        json_object_set_new(root, "aliases", al);
        json_object_set_new(root, "plugin", json_string(doc.plugin));
        json_object_set_new(root, "description", json_string(doc.description));
        json_object_set_new(root, "attributes", attrs_json(&doc));
        for (int k = 0; k < 3; k++)
            json_object_set_new(root, set_names[k], built ? names_json(&sets[k]) : json_null());
        json_object_set_new(root, "kernels", kernels_json(doc.name));
        json_object_set_new(root, "backend", backend_choice_json(&choice));
        json_object_set_new(root, "node", bound.inst ? bound_json(&bound) : json_null());
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
            printf("\n%s:\n", req->node.num_attrs ? "a node with the given attributes"
                                                  : "a node with default attributes");
            for (int k = 0; k < 3; k++) {
                printf("  %-11s", set_names[k]);
                for (uint32_t i = 0; i < sets[k].n; i++)
                    printf("%s %s", i ? "," : "", sets[k].items[i]);
                puts(sets[k].n ? "" : " -");
            }
        }
        print_kernels(doc.name);
        print_backend_choice(&choice);
        if (bound.inst)
            print_bound(&bound);
        else
            printf("\n(--shape binds a node: its shapes, backend, backward reads and resources)\n");
    }
    for (int k = 0; k < 3; k++)
        mxk_string_list_free(sets[k].items);
    mxk_op_instance_free(bound.inst);
    return rc;
}

/** Runs `mxk op [describe] NAME [--attr KEY=VALUE ...] [--shape d1,... ...] [--json]`. */
static int run_op(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    op_request req = {.cmd = self};
    int words = 0, positional_only = 0, rc = CLI_OK;
    for (int i = 0; i < argc && rc == CLI_OK; i++) {
        int m = 0;
        if (!positional_only && strcmp(argv[i], "--") == 0) {
            positional_only = 1;
        } else if (!positional_only &&
                   (m = cli_op_node_option(&req.node, self, argc, argv, &i)) != 0) {
            rc = m < 0 ? CLI_USAGE : CLI_OK;
        } else if (!positional_only && cli_is_option(argv[i])) {
            rc = cli_reject_argument(self, argv[i]);
        } else if (words++ == 0 && strcmp(argv[i], "describe") == 0 && i + 1 < argc) {
            continue; /* `mxk op describe NAME` (an operator named describe: `mxk op describe`) */
        } else if (req.node.op != NULL) {
            rc = cli_reject_argument(self, argv[i]);
        } else {
            req.node.op = argv[i];
        }
    }
    if (rc == CLI_OK && req.node.op == NULL)
        rc = cli_usage_error(self, "missing the operator name");
    if (rc == CLI_OK)
        rc = cli_with_library(g, describe, &req);
    cli_op_node_free(&req.node);
    return rc;
}

/** The `op` command. */
const cli_command cli_cmd_op = {
    .name = "op",
    .summary = "show an operator's help: aliases, attributes, arguments, kernels, backend",
    .usage = "mxk op [describe] NAME [--attr KEY=VALUE ...] [--shape d1,d2,... ...] "
             "[--config-dir DIR] [--backend LIST] [--json]",
    .help =
        "Loads the plugins of the config directory and prints the help of operator\n"
        "NAME (its name or one of its aliases, as MXNet's add_alias registers them):\n"
        "canonical name, aliases, defining plugin, description, every attribute\n"
        "(type, required or default, the allowed values of an enum, doc), the\n"
        "arguments, outputs and aux states of a node with the --attr attributes\n"
        "(default ones otherwise; none when a required one is missing), the kernels\n"
        "per device type and backend, and how the CPU backend is chosen: the backends\n"
        "with a CPU kernel, the preference list and where it comes from (--backend,\n"
        "else MXK_BACKEND, else `backend =` in mxk.conf), the operator's [op_backend]\n"
        "override in mxk.conf, and the backend that runs it now. A kernel may still\n"
        "decline a node's configuration (then the next backend runs it): --shape\n"
        "binds one node on the CPU and shows what it runs, as `mxk symbol summary\n"
        "--backends` does for each node of a graph. `mxk op describe NAME` is the same.\n"
        "\n"
        "Options:\n"
        "  --attr KEY=VALUE   an attribute of the node (MXNet's names), repeatable\n"
        "  --shape d1,d2,...  the shape of the next argument, in argument order (0: left\n"
        "                     to inference, as are the arguments after the last one);\n"
        "                     binds the node and prints its inferred shapes and dtypes,\n"
        "                     the backend of its kernel, what its backward reads\n"
        "                     (MXNet's DeclareBackwardDependency: out_grad, in_data,\n"
        "                     out_data) and the resources of its forward and backward\n"
        "                     (MXNet's ResourceRequest: temp_space with its bytes, random)\n"
        "\n"
        "--json prints {\"name\", \"aliases\", \"plugin\", \"description\",\n"
        "  \"attributes\": [{\"name\", \"type\", \"required\", \"default\", \"enum\", \"doc\"}],\n"
        "  \"arguments\", \"outputs\", \"aux_states\" (null when not buildable),\n"
        "  \"kernels\": [{\"device\", \"backend\", \"plugin\"}],\n"
        "  \"backend\": {\"cpu_backends\": [...], \"preference\", \"preference_source\"\n"
        "  (\"--backend\", \"MXK_BACKEND\", \"mxk.conf\" or null), \"override\" (or null),\n"
        "  \"resolved\" (or null)}, \"node\": null without --shape, else {\"inputs\",\n"
        "  \"outputs\", \"aux_states\": [{\"name\", \"shape\", \"dtype\"}], \"backend\",\n"
        "  \"backward_reads\": {\"out_grad\", \"in_data\", \"out_data\": [names]},\n"
        "  \"resources\": {\"forward\", \"backward\": [{\"type\", \"bytes\"}]}}}.\n",
    .run = run_op,
};
