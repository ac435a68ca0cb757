/*
 * `mxk symbol`: inspects an MXNet symbol JSON file (current or legacy form).
 *
 *   mxk symbol summary FILE --shape NAME=d1,d2,... [--shape ...] [--backends] [--json]
 *   mxk symbol summary FILE --shape ... --profile [--iterations N] [--is-train] [--json]
 *   mxk symbol dot FILE [--shape NAME=d1,d2,...] [--json]
 *
 * `summary` is MXNet's print_summary (python/mxnet/visualization.py): one row per
 * layer (the input variables given by --shape, then every operator node in the
 * file's node order) with its output shape, its number of parameters and the
 * layers feeding it, then the total. Shapes come from shape inference over the
 * symbol's internals (mxk_symbol_infer_shape). A layer's parameters are the
 * values of the variables it reads that are neither inputs (--shape) nor labels
 * (names ending in "label", MXNet's convention: softmax_label), each variable
 * counted once, at its first reader; aux states are not parameters (MXNet counts
 * BatchNorm's gamma and beta, not its moving statistics). For MXNet's layers this
 * gives print_summary's numbers: FullyConnected (K+1)*H, Convolution
 * C*F*kh*kw + F, BatchNorm 2*C. With --backends the symbol is bound on the CPU
 * and a column gives the backend each operator node runs (mxk_executor_node_backend);
 * --profile prints the per-node kernel times instead (symbol_bind.c).
 *
 * `dot` prints the graph in GraphViz's language as MXNet.jl's to_graphviz
 * (src/visualize.jl): operator nodes as filled boxes (FullyConnected and
 * Convolution labelled with their sizes), input variables as nodes of their own,
 * and an edge "input" -> "consumer" per input with MXNet.jl's attributes
 * (dir=back, arrowtail=open), labelled with the input's shape without the batch
 * axis when --shape is given. Variables that
 * look like parameters (MXNet's plot_network rule: *_weight, *_bias, *_gamma,
 * *_beta, *_moving_mean, *_moving_var, ...) are left out. --json prints the same
 * text as {"dot": TEXT}.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "symbol_bind.h"

/** Most --shape options. */
#define MAX_SHAPES 64

/** What `mxk symbol` was asked to do. */
typedef struct symbol_request {
    const cli_command *cmd;
    int dot; /**< 1: dot, 0: summary */
    const char *path;
    uint32_t num_shapes;
    const char *names[MAX_SHAPES];
    mxk_shape shapes[MAX_SHAPES];
    int backends;       /**< summary --backends: the backend column */
    int profile;        /**< summary --profile: the per-node kernel times instead */
    int is_train;       /**< --profile --is-train: forward and backward */
    int64_t iterations; /**< --profile --iterations N (0: not given, 10) */
} symbol_request;

/** 1 when `name` is a label by MXNet's convention ("label", "softmax_label"). */
static int is_label(const char *name) {
    size_t n = strlen(name);
    return n >= 5 && strcmp(name + n - 5, "label") == 0;
}

/** Index of `name` among the --shape names, or -1. */
static int given_index(const symbol_request *req, const char *name) {
    for (uint32_t i = 0; i < req->num_shapes; i++)
        if (strcmp(req->names[i], name) == 0)
            return (int)i;
    return -1;
}

/** Product of a known shape's dims (0 for an unknown shape). */
static uint64_t shape_count(const mxk_shape *s) {
    if (s->ndim <= 0)
        return 0;
    uint64_t n = 1;
    for (int d = 0; d < s->ndim && d < MXK_MAX_NDIM; d++)
        n *= (uint64_t)(s->dims[d] > 0 ? s->dims[d] : 0);
    return n;
}

/** A JSON array of a shape's dims. */
static json_t *shape_json(const mxk_shape *s) {
    json_t *a = json_array();
    for (int d = 0; a != NULL && d < s->ndim && d < MXK_MAX_NDIM; d++)
        json_array_append_new(a, json_integer(s->dims[d]));
    return a;
}

/** Writes a shape without its first (batch) axis as "d1xd2" (print_summary's form). */
static void format_no_batch(const mxk_shape *s, const char *sep, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int d = 1; d < s->ndim && d < MXK_MAX_NDIM && used < size; d++) {
        int w =
            snprintf(buf + used, size - used, "%s%lld", d > 1 ? sep : "", (long long)s->dims[d]);
        used += w > 0 ? (size_t)w : 0;
    }
}

/** A list of names with their shapes from the library (names freed by the caller). */
typedef struct named_shapes {
    uint32_t num;
    char **names;
    mxk_shape *shapes;
} named_shapes;

/** Frees a named_shapes. */
static void named_shapes_free(named_shapes *ns) {
    mxk_string_list_free(ns->names);
    free(ns->shapes);
    memset(ns, 0, sizeof *ns);
}

/** Shape of `name` in ns, or NULL. */
static const mxk_shape *named_shape(const named_shapes *ns, const char *name) {
    for (uint32_t i = 0; i < ns->num; i++)
        if (strcmp(ns->names[i], name) == 0)
            return &ns->shapes[i];
    return NULL;
}

/** Everything shape inference says about the internals of a symbol. */
typedef struct shape_info {
    named_shapes args, outs, aux;
} shape_info;

/**
 * Infers the shapes of every internal output, argument and aux state from the
 * --shape values. Incomplete inference is an error here (as print_summary's
 * "Input shape is incomplete"), naming the arguments still unknown.
 */
static int infer_shapes(const symbol_request *req, const mxk_symbol *sym, shape_info *info) {
    memset(info, 0, sizeof *info);
    mxk_symbol *internals = NULL;
    mxk_status st = mxk_symbol_get_internals(sym, &internals);
    if (st != MXK_OK)
        return cli_api_error(st, "get_internals failed");
    named_shapes *lists[3] = {&info->args, &info->outs, &info->aux};
    mxk_symbol_names kinds[3] = {MXK_SYMBOL_ARGUMENTS, MXK_SYMBOL_OUTPUTS, MXK_SYMBOL_AUX_STATES};
    int rc = CLI_OK;
    for (int k = 0; k < 3 && rc == CLI_OK; k++) {
        st = mxk_symbol_list_names(internals, kinds[k], &lists[k]->num, &lists[k]->names);
        if (st != MXK_OK) {
            rc = cli_api_error(st, "listing names failed");
            break;
        }
        lists[k]->shapes = calloc(lists[k]->num + 1, sizeof(mxk_shape));
        if (lists[k]->shapes == NULL)
            rc = cli_error("out of memory");
    }
    int32_t complete = 0;
    if (rc == CLI_OK) {
        st = mxk_symbol_infer_shape(internals, req->num_shapes, req->names, req->shapes,
                                    info->args.shapes, info->outs.shapes, info->aux.shapes,
                                    &complete);
        if (st != MXK_OK)
            rc = cli_api_error(st, "shape inference failed");
    }
    if (rc == CLI_OK && !complete) {
        char unknown[1024];
        size_t used = 0;
        unknown[0] = '\0';
        for (uint32_t i = 0; i < info->args.num && used < sizeof unknown; i++) {
            if (shape_count(&info->args.shapes[i]) > 0)
                continue;
            int w = snprintf(unknown + used, sizeof unknown - used, "%s%s", used ? ", " : "",
                             info->args.names[i]);
            used += w > 0 ? (size_t)w : 0;
        }
        rc = cli_error("the input shapes are incomplete: cannot infer the shape of %s",
                       used ? unknown : "some outputs");
        symbol_inputs given = {req->num_shapes, req->names, req->shapes};
        symbol_note_inputs(sym, &given);
    }
    mxk_symbol_free(internals);
    if (rc != CLI_OK) {
        for (int k = 0; k < 3; k++)
            named_shapes_free(lists[k]);
    }
    return rc;
}

/** Frees what infer_shapes filled. */
static void shape_info_free(shape_info *info) {
    named_shapes_free(&info->args);
    named_shapes_free(&info->outs);
    named_shapes_free(&info->aux);
}

/**
 * Output shape of node `name` as print_summary reads it: "<name>_output", else the
 * first internal output "<name>_..." (multi-output operators), else NULL.
 */
static const mxk_shape *node_output_shape(const shape_info *info, const char *name) {
    char key[512];
    snprintf(key, sizeof key, "%s_output", name);
    const mxk_shape *s = named_shape(&info->outs, key);
    size_t n = strlen(name);
    for (uint32_t i = 0; s == NULL && i < info->outs.num; i++)
        if (strncmp(info->outs.names[i], name, n) == 0 && info->outs.names[i][n] == '_')
            s = &info->outs.shapes[i];
    return s;
}

/** The symbol's JSON as a Jansson document (the node list the reports walk). */
static json_t *symbol_document(const mxk_symbol *sym) {
    char *text = NULL;
    mxk_status st = mxk_symbol_to_json(sym, &text);
    if (st != MXK_OK) {
        cli_api_error(st, "cannot serialise the symbol");
        return NULL;
    }
    json_error_t err;
    json_t *doc = json_loads(text, 0, &err);
    mxk_free(text);
    if (doc == NULL)
        cli_error("cannot read back the symbol's JSON: %s", err.text);
    return doc;
}

/** Field `key` of node object n as a string ("" when absent). */
static const char *node_str(const json_t *n, const char *key) {
    const char *s = json_string_value(json_object_get(n, key));
    return s ? s : "";
}

/** 1 when node i of `nodes` is shown as a layer (operators; variables given by --shape). */
static int is_layer(const symbol_request *req, const json_t *nodes, size_t i) {
    const json_t *n = json_array_get(nodes, i);
    if (strcmp(node_str(n, "op"), "null") != 0)
        return 1;
    const char *name = node_str(n, "name");
    return given_index(req, name) >= 0 && !is_label(name);
}

/** One row of the summary. */
typedef struct layer_row {
    const char *name, *op;
    const char *backend;    /**< --backends: the operator node's backend, else NULL */
    const mxk_shape *shape; /**< NULL when unknown */
    uint64_t params;
    const json_t *node;
} layer_row;

/** print_summary's print_row: fields cut and padded to the column positions, right-trimmed. */
static void print_row(const char *const *fields, const int *positions, int n) {
    char line[512];
    int len = 0;
    for (int i = 0; i < n; i++) {
        len += snprintf(line + len, sizeof line - (size_t)len, "%s", fields[i]);
        if (len > positions[i])
            len = positions[i];
        while (len < positions[i])
            line[len++] = ' ';
    }
    while (len > 0 && line[len - 1] == ' ')
        len--;
    line[len] = '\0';
    puts(line);
}

/** Prints a rule of `c` of `width` (at most 160) characters. */
static void rule(char c, int width) {
    char line[161];
    memset(line, c, (size_t)width);
    line[width] = '\0';
    puts(line);
}

/**
 * Prints the summary as MXNet's print_summary does (without its FLOPS columns);
 * with `backends` a "Backend" column of 14 characters comes before "Previous Layer".
 */
static void print_summary_text(const json_t *nodes, const layer_row *rows, size_t num_rows,
                               const uint8_t *shown, uint64_t total, int backends) {
    /* print_summary: .44, .64, .74, 1. of 120 characters */
    static const int plain[4] = {52, 76, 88, 120}, with_backend[5] = {52, 76, 88, 102, 134};
    const int *positions = backends ? with_backend : plain;
    int nf = backends ? 5 : 4, width = positions[nf - 1];
    const char *header[5] = {"Layer (type)", "Output Shape", "Param #", "Previous Layer"};
    if (backends) {
        header[3] = "Backend";
        header[4] = "Previous Layer";
    }
    rule('_', width);
    print_row(header, positions, nf);
    rule('=', width);
    for (size_t r = 0; r < num_rows; r++) {
        const layer_row *row = &rows[r];
        char first[256], shape[256], params[32];
        snprintf(first, sizeof first, "%s(%s)", row->name, row->op);
        shape[0] = '\0';
        if (row->shape != NULL)
            format_no_batch(row->shape, "x", shape, sizeof shape);
        snprintf(params, sizeof params, "%llu", (unsigned long long)row->params);
        /* previous layers: inputs shown as layers */
        const json_t *inputs = json_object_get(row->node, "inputs");
        const char *prev[64];
        size_t np = 0;
        for (size_t k = 0; k < json_array_size(inputs) && np < 64; k++) {
            json_int_t id = json_integer_value(json_array_get(json_array_get(inputs, k), 0));
            if (id >= 0 && (size_t)id < json_array_size(nodes) && shown[id])
                prev[np++] = node_str(json_array_get(nodes, (size_t)id), "name");
        }
        const char *fields[5] = {first, shape, params, np ? prev[0] : "", NULL};
        if (backends) {
            fields[3] = row->backend ? row->backend : "";
            fields[4] = np ? prev[0] : "";
        }
        print_row(fields, positions, nf);
        for (size_t k = 1; k < np; k++) {
            const char *more[5] = {"", "", "", backends ? "" : prev[k], prev[k]};
            print_row(more, positions, nf);
        }
        rule(r + 1 == num_rows ? '=' : '_', width);
    }
    printf("Total params: %llu\n", (unsigned long long)total);
    rule('_', width);
}

/** Prints the summary as JSON (see the command's help). */
static int print_summary_json(const layer_row *rows, size_t num_rows, const shape_info *info,
                              uint64_t total, int backends) {
    json_t *root = json_object();
    json_t *layers = json_array();
    for (size_t r = 0; layers != NULL && r < num_rows; r++) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(rows[r].name));
        json_object_set_new(o, "op", json_string(rows[r].op));
        json_object_set_new(o, "output_shape",
                            rows[r].shape ? shape_json(rows[r].shape) : json_array());
        json_object_set_new(o, "params", json_integer((json_int_t)rows[r].params));
        if (backends)
            json_object_set_new(o, "backend",
                                rows[r].backend ? json_string(rows[r].backend) : json_null());
        json_array_append_new(layers, o);
    }
    json_object_set_new(root, "layers", layers);
    json_t *args = json_object(), *aux = json_object();
    for (uint32_t i = 0; args != NULL && i < info->args.num; i++)
        json_object_set_new(args, info->args.names[i], shape_json(&info->args.shapes[i]));
    for (uint32_t i = 0; aux != NULL && i < info->aux.num; i++)
        json_object_set_new(aux, info->aux.names[i], shape_json(&info->aux.shapes[i]));
    json_object_set_new(root, "arguments", args);
    json_object_set_new(root, "aux_states", aux);
    json_object_set_new(root, "total_params", json_integer((json_int_t)total));
    return cli_json_print(root, 0);
}

/** `mxk symbol summary`: see the file comment. */
static int run_summary(const cli_globals *g, const symbol_request *req, const mxk_symbol *sym) {
    symbol_inputs given = {req->num_shapes, req->names, req->shapes};
    shape_info info;
    int rc = infer_shapes(req, sym, &info);
    if (rc != CLI_OK)
        return rc;
    if (req->profile) {
        shape_info_free(&info);
        return symbol_profile(g, sym, &given, req->iterations ? req->iterations : 10,
                              req->is_train);
    }
    mxk_executor *ex = NULL;
    if (req->backends && (rc = symbol_bind(sym, &given, 0, &ex)) != CLI_OK) {
        shape_info_free(&info);
        return rc;
    }
    json_t *doc = symbol_document(sym);
    if (doc == NULL) {
        shape_info_free(&info);
        return CLI_ERROR;
    }
    const json_t *nodes = json_object_get(doc, "nodes");
    size_t nn = json_array_size(nodes);
    layer_row *rows = calloc(nn + 1, sizeof *rows);
    uint8_t *shown = calloc(nn + 1, 1), *counted = calloc(nn + 1, 1);
    if (rows == NULL || shown == NULL || counted == NULL)
        rc = cli_error("out of memory");
    size_t num_rows = 0;
    uint64_t total = 0;
    for (size_t i = 0; rc == CLI_OK && i < nn; i++) {
        shown[i] = (uint8_t)is_layer(req, nodes, i);
        if (!shown[i])
            continue;
        const json_t *n = json_array_get(nodes, i);
        layer_row *row = &rows[num_rows++];
        row->node = n;
        row->name = node_str(n, "name");
        row->op = node_str(n, "op");
        if (strcmp(row->op, "null") == 0) {
            row->shape = named_shape(&info.args, row->name);
            continue;
        }
        row->shape = node_output_shape(&info, row->name);
        if (ex != NULL && mxk_executor_node_backend(ex, row->name, &row->backend) != MXK_OK)
            row->backend = NULL;
        const json_t *inputs = json_object_get(n, "inputs");
        for (size_t k = 0; k < json_array_size(inputs); k++) {
            json_int_t id = json_integer_value(json_array_get(json_array_get(inputs, k), 0));
            if (id < 0 || (size_t)id >= nn || counted[id])
                continue;
            const json_t *in = json_array_get(nodes, (size_t)id);
            const char *in_name = node_str(in, "name");
            if (strcmp(node_str(in, "op"), "null") != 0 || given_index(req, in_name) >= 0 ||
                is_label(in_name))
                continue;
            const mxk_shape *s = named_shape(&info.args, in_name); /* NULL: an aux state */
            if (s == NULL)
                continue;
            counted[id] = 1;
            row->params += shape_count(s);
        }
        total += row->params;
    }
    if (rc == CLI_OK) {
        if (g->json) {
            rc = print_summary_json(rows, num_rows, &info, total, req->backends);
        } else {
            print_summary_text(nodes, rows, num_rows, shown, total, req->backends);
        }
    }
    mxk_executor_free(ex);
    free(rows);
    free(shown);
    free(counted);
    json_decref(doc);
    shape_info_free(&info);
    return rc;
}

/** Writes s to f as a quoted DOT string (MXNet.jl's _simple_escape, plus \" and \\). */
static void dot_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '\n')
            fputs("\\n", f);
        else if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

/** Digits of a tuple attribute as "(a,b)" (MXNet.jl's _extract_shape, row-major order). */
static void tuple_text(const char *s, char *buf, size_t size) {
    size_t used = 0;
    int first = 1;
    used += (size_t)snprintf(buf, size, "(");
    while (s && *s && used < size) {
        if (*s >= '0' && *s <= '9') {
            char *end = NULL;
            unsigned long long v = strtoull(s, &end, 10);
            used += (size_t)snprintf(buf + used, size - used, "%s%llu", first ? "" : ",", v);
            first = 0;
            s = end;
        } else {
            s++;
        }
    }
    if (used < size)
        snprintf(buf + used, size - used, ")");
}

/** Writes the dot text of `doc` (the symbol's JSON) to f; info: the shapes, or NULL. */
static void write_dot(FILE *f, const json_t *doc, const shape_info *info) {
    static const char *const cm[8] = {"#8dd3c7", "#fb8072", "#ffffb3", "#bebada",
                                      "#80b1d3", "#fdb462", "#b3de69", "#fccde5"};
    const json_t *nodes = json_object_get(doc, "nodes");
    size_t nn = json_array_size(nodes);
    fprintf(f, "digraph \"Network Visualization\" {\nnode [fontsize=10];\n");
    for (size_t i = 0; i < nn; i++) {
        const json_t *n = json_array_get(nodes, i);
        const char *op = node_str(n, "op"), *name = node_str(n, "name");
        const json_t *attrs = json_object_get(n, "attrs");
        char label[512];
        const char *color = cm[7];
        if (strcmp(op, "null") == 0) {
            if (symbol_looks_like_param(name))
                continue;
            snprintf(label, sizeof label, "%s", name);
            color = cm[0];
        } else if (strcmp(op, "Convolution") == 0) {
            char k[64], s[64];
            tuple_text(json_string_value(json_object_get(attrs, "kernel")), k, sizeof k);
            const char *st = json_string_value(json_object_get(attrs, "stride"));
            tuple_text(st ? st : "(1,1)", s, sizeof s);
            const char *nf = json_string_value(json_object_get(attrs, "num_filter"));
            snprintf(label, sizeof label, "Convolution\nkernel=%s,stride=%s,n-filter=%s", k, s,
                     nf ? nf : "?");
            color = cm[1];
        } else if (strcmp(op, "FullyConnected") == 0) {
            const char *nh = json_string_value(json_object_get(attrs, "num_hidden"));
            snprintf(label, sizeof label, "FullyConnected\nnum-hidden=%s", nh ? nh : "?");
            color = cm[1];
        } else {
            snprintf(label, sizeof label, "%s", op);
        }
        dot_string(f, name);
        fprintf(f, " [label=");
        dot_string(f, label);
        fprintf(f, ",shape=box,fixedsize=true,width=1.3,height=0.8034,style=filled,fillcolor=");
        dot_string(f, color);
        fprintf(f, "];\n");
    }
    for (size_t i = 0; i < nn; i++) {
        const json_t *n = json_array_get(nodes, i);
        if (strcmp(node_str(n, "op"), "null") == 0)
            continue;
        const json_t *inputs = json_object_get(n, "inputs");
        for (size_t k = 0; k < json_array_size(inputs); k++) {
            json_int_t id = json_integer_value(json_array_get(json_array_get(inputs, k), 0));
            if (id < 0 || (size_t)id >= nn)
                continue;
            const json_t *in = json_array_get(nodes, (size_t)id);
            const char *in_name = node_str(in, "name");
            int is_var = strcmp(node_str(in, "op"), "null") == 0;
            if (is_var && symbol_looks_like_param(in_name))
                continue;
            dot_string(f, in_name);
            fprintf(f, " -> ");
            dot_string(f, node_str(n, "name"));
            fprintf(f, " [");
            const mxk_shape *s = NULL;
            if (info != NULL)
                s = is_var ? named_shape(&info->args, in_name) : node_output_shape(info, in_name);
            if (s != NULL) {
                char shape[256], label[260];
                format_no_batch(s, ",", shape, sizeof shape);
                snprintf(label, sizeof label, "(%s)", shape);
                fprintf(f, "label=");
                dot_string(f, label);
                fprintf(f, ",");
            }
            fprintf(f, "dir=back,arrowtail=open];\n");
        }
    }
    fprintf(f, "}\n");
}

/**
 * `mxk symbol dot`: see the file comment. With --json the text is printed as
 * {"dot": TEXT}.
 */
static int run_dot(const cli_globals *g, const symbol_request *req, const mxk_symbol *sym) {
    shape_info info;
    int have_shapes = req->num_shapes > 0;
    if (have_shapes) {
        int rc = infer_shapes(req, sym, &info);
        if (rc != CLI_OK)
            return rc;
    }
    json_t *doc = symbol_document(sym);
    int rc = doc == NULL ? CLI_ERROR : CLI_OK;
    if (doc != NULL && !g->json) {
        write_dot(stdout, doc, have_shapes ? &info : NULL);
    } else if (doc != NULL) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (f != NULL) {
            write_dot(f, doc, have_shapes ? &info : NULL);
            fclose(f);
        }
        json_t *root = text ? json_object() : NULL;
        if (root != NULL)
            json_object_set_new(root, "dot", json_stringn(text, len));
        rc = root ? cli_json_print(root, 0) : cli_error("out of memory");
        free(text);
    }
    json_decref(doc);
    if (have_shapes)
        shape_info_free(&info);
    return rc;
}

/** Loads the file and runs the report (with the library initialised). */
static int symbol_body(const cli_globals *g, void *arg) {
    const symbol_request *req = arg;
    mxk_symbol *sym = NULL;
    mxk_status st = mxk_symbol_load(req->path, &sym);
    if (st != MXK_OK) {
        cli_api_error(st, "cannot load symbol file '%s'", req->path);
        if (st == MXK_ERR_NOT_FOUND && mxk_op_count() == 0)
            cli_note("no operators are loaded (they come from plugins such as cpu-blas); check "
                     "'mxk plugins'");
        return CLI_ERROR;
    }
    int rc = req->dot ? run_dot(g, req, sym) : run_summary(g, req, sym);
    mxk_symbol_free(sym);
    return rc;
}

/** Runs `mxk symbol (summary|dot) FILE [--shape NAME=dims]...`. */
static int run_symbol(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    symbol_request *req = calloc(1, sizeof *req);
    if (req == NULL)
        return cli_error("out of memory");
    req->cmd = self;
    const char *action = NULL;
    int positional_only = 0, rc = CLI_OK;
    for (int i = 0; i < argc && rc == CLI_OK; i++) {
        if (!positional_only && strcmp(argv[i], "--") == 0) {
            positional_only = 1;
            continue;
        }
        const char *value = NULL;
        int r = positional_only ? 0 : cli_option_value(argc, argv, &i, "--iterations", &value);
        if (r != 0) {
            uint64_t n = 0;
            if (r < 0 || !cli_parse_uint(value, 1000000, &n) || n == 0)
                rc = cli_usage_error(self, "--iterations needs a number from 1 to 1000000");
            req->iterations = (int64_t)n;
            continue;
        }
        if (!positional_only &&
            (strcmp(argv[i], "--backends") == 0 || strcmp(argv[i], "--profile") == 0 ||
             strcmp(argv[i], "--is-train") == 0)) {
            int *flag = argv[i][2] == 'b'   ? &req->backends
                        : argv[i][2] == 'p' ? &req->profile
                                            : &req->is_train;
            *flag = 1;
            continue;
        }
        r = positional_only ? 0 : cli_option_value(argc, argv, &i, "--shape", &value);
        if (r < 0) {
            rc = cli_usage_error(self, "option --shape needs NAME=d1,d2,...");
        } else if (r > 0) {
            size_t nlen = 0;
            mxk_shape shape;
            if (!cli_parse_shape_option(value, &nlen, &shape)) {
                rc = cli_usage_error(self,
                                     "--shape expects NAME=d1,d2,... with positive dims (at most "
                                     "%d), got '%s'",
                                     MXK_MAX_NDIM, value);
            } else if (req->num_shapes >= MAX_SHAPES) {
                rc = cli_usage_error(self, "too many --shape options (at most %d)", MAX_SHAPES);
            } else {
                char *name = strndup(value, nlen);
                if (name == NULL) {
                    rc = cli_error("out of memory");
                } else if (given_index(req, name) >= 0) {
                    rc = cli_usage_error(self, "duplicate shapes are provided for argument '%s'",
                                         name);
                    free(name);
                } else {
                    req->names[req->num_shapes] = name;
                    req->shapes[req->num_shapes++] = shape;
                }
            }
        } else if (!positional_only && cli_is_option(argv[i])) {
            rc = cli_reject_argument(self, argv[i]);
        } else if (action == NULL) {
            action = argv[i];
        } else if (req->path == NULL) {
            req->path = argv[i];
        } else {
            rc = cli_usage_error(self, "expected one FILE, got '%s' and '%s'", req->path, argv[i]);
        }
    }
    if (rc == CLI_OK) {
        if (action == NULL)
            rc = cli_usage_error(self, "missing ACTION (summary or dot)");
        else if (strcmp(action, "summary") != 0 && strcmp(action, "dot") != 0)
            rc = cli_usage_error(self, "unknown action '%s' (summary or dot)", action);
        else if (req->path == NULL)
            rc = cli_usage_error(self, "missing FILE");
        else if (strcmp(action, "summary") == 0 && req->num_shapes == 0)
            rc = cli_usage_error(self, "summary needs the input shapes: --shape NAME=d1,d2,...");
        else if (strcmp(action, "summary") != 0 && (req->backends || req->profile))
            rc = cli_usage_error(self, "--backends and --profile belong to summary");
        else if (!req->profile && (req->iterations || req->is_train))
            rc = cli_usage_error(self, "--iterations and --is-train belong to --profile");
    }
    if (rc == CLI_OK) {
        req->dot = strcmp(action, "dot") == 0;
        rc = cli_with_library(g, symbol_body, req);
    }
    for (uint32_t i = 0; i < req->num_shapes; i++)
        free((char *)req->names[i]);
    free(req);
    return rc;
}

/** The `symbol` command. */
const cli_command cli_cmd_symbol = {
    .name = "symbol",
    .summary = "summarise an MXNet symbol JSON file or draw it as a GraphViz graph",
    .usage = "mxk symbol summary FILE --shape NAME=d1,d2,... [--shape ...] [--backends] [--json]\n"
             "       mxk symbol summary FILE --shape ... --profile [--iterations N] [--is-train]\n"
             "       mxk symbol dot FILE [--shape NAME=d1,d2,...]... [--json]",
    .help = "Loads FILE, a symbol in MXNet's JSON format (as mx.sym.save or a checkpoint's\n"
            "prefix-symbol.json writes it; legacy MXNet 0.8 files too). Operators come from\n"
            "the loaded plugins.\n"
            "\n"
            "summary  prints every layer as MXNet's print_summary: name (operator), output\n"
            "         shape without the batch axis, number of parameters and the layers\n"
            "         feeding it, then the total. Layers are the inputs given by --shape and\n"
            "         every operator node. A layer's parameters are the values of the\n"
            "         variables it reads that are neither inputs nor labels (names ending in\n"
            "         \"label\"); aux states (BatchNorm's moving mean and variance) are not\n"
            "         counted. Needs the input shapes; shapes are inferred from them.\n"
            "         --backends binds the symbol on the CPU and adds a column with the\n"
            "         backend whose kernel each operator node runs (the preference:\n"
            "         --backend, MXK_BACKEND, mxk.conf; a kernel may decline a node).\n"
            "         --profile binds it instead with random values (inputs in [0,1),\n"
            "         labels random classes, parameters uniform with unit-variance\n"
            "         scaling, moving variances in [0.5,1.5)), runs one untimed warm-up\n"
            "         iteration and N timed ones (forward; with --is-train forward in\n"
            "         training mode and backward) and prints per operator node, in the\n"
            "         graph's order: operator, backend, forward and backward kernel ms\n"
            "         per iteration and share of the kernels' total, then the totals and\n"
            "         the wall time per iteration. Kernel times are wall times of each\n"
            "         kernel call inside the engine (mxk_executor_set_profiling); the\n"
            "         wall time adds what the engine and helper copies cost, and is less\n"
            "         than the kernels' sum when kernels run in parallel.\n"
            "dot      prints the graph in GraphViz's dot language (MXNet.jl's to_graphviz);\n"
            "         with --shape the edges are labelled with the shapes they carry.\n"
            "         Render it with e.g. 'dot -Tsvg'. --json prints {\"dot\": TEXT}.\n"
            "\n"
            "Options:\n"
            "  --shape NAME=d1,d2,...  shape of input NAME (repeatable), e.g. data=100,784\n"
            "  --backends              (summary) the backend column\n"
            "  --profile               (summary) the per-node kernel times\n"
            "  --iterations N          (--profile) timed iterations, 1 to 1000000 (10)\n"
            "  --is-train              (--profile) forward in training mode and backward\n"
            "  --json                  (summary) print {\"layers\": [{\"name\", \"op\",\n"
            "                          \"output_shape\": [...], \"params\"}], \"arguments\":\n"
            "                          {NAME: [shape]}, \"aux_states\": {NAME: [shape]},\n"
            "                          \"total_params\"}; shapes there include the batch axis;\n"
            "                          with --backends each layer has \"backend\" (null for\n"
            "                          inputs). With --profile: {\"iterations\",\n"
            "                          \"is_train\", \"warmup\", \"backend_preference\",\n"
            "                          \"nodes\": [{\"name\", \"op\", \"backend\",\n"
            "                          \"forward_runs\", \"forward_ms\", \"backward_runs\",\n"
            "                          \"backward_ms\", \"share\" (0..1)}], \"forward_ms\",\n"
            "                          \"backward_ms\", \"kernels_ms\", \"wall_ms\"} (ms per\n"
            "                          iteration)\n",
    .run = run_symbol,
};
