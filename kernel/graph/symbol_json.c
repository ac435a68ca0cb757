/*
 * MXNet symbol JSON (mxk.h mxk_symbol_to_json / _from_json / _save / _load).
 *
 * Saving writes the current nnvm form exactly as MXNet 1.9.1 does (dmlc/nnvm
 * src/pass/saveload_json.cc SaveJSON with dmlc-core's JSONWriter layout): nodes
 * in DFSVisit order, each {"op" ("null" for a variable), "name", "attrs" (sorted
 * by key, omitted when empty), "inputs": [[node, index, version], ...]} (the
 * version counts the mutations of a variable, as nnvm does), then "arg_nodes"
 * (every variable), "node_row_ptr" (prefix sums of output counts), "heads" and
 * "attrs": {"mxnet_version": ["int", 10901]}.
 *
 * Loading reads that form and the legacy one (MXNet <= 0.8: node keys "param"
 * and "attr", two-element inputs, "backward_source_id"), merges attrs/attr/param
 * as nnvm's LoadJSON does, and applies upstream's upgrades by the file's version
 * (src/nnvm/legacy_json_util.cc; a file without one is 0.8.0): hidden keys
 * (lr_mult, "weight_lr_mult", ...) become "__key__" on the node or on the input
 * variable they name (files older than 1.9.1); missing inputs are appended as
 * variables "<node>_<input>" carrying the node's attributes (before 0.9.0: the
 * aux states MXNet did not store); BatchNorm's moving_mean/moving_var get their
 * "__init__" hints (before 0.9.4); argmax/argmin drop axis=-1 (before 0.9.5).
 *
 * Validation (nnvm's LoadJSON, src/pass/saveload_json.cc, requires nodes in
 * topological order): every malformed input is MXK_ERR_FORMAT with a message that
 * starts "symbol JSON: " and says where ("node 3 ('fc1'): input 0 refers to node
 * 7, but only nodes before it may be inputs"); an unknown operator or attribute
 * name is MXK_ERR_NOT_FOUND naming it and the node; "subgraphs" (control-flow
 * operators) are MXK_ERR_UNSUPPORTED. Never crashes on bad input.
 *
 * Files: mxk_symbol_save writes atomically and only when the content changed;
 * mxk_symbol_load reads only a regular file of at most MXK_SYMBOL_JSON_MAX_BYTES
 * (mxk_file_read; a FIFO or /dev/zero is refused, not waited on or read forever).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "error.h"
#include "mxk.h"
#include "symbol_internal.h"

/** The MXNet version mxk writes and claims (1.9.1 = major*10000 + minor*100 + patch). */
#define MXK_MXNET_VERSION 10901
/** The version of a file without "mxnet_version" (upstream LoadLegacyJSONPass). */
#define MXNET_VERSION_LEGACY 800

/** Largest number of nodes a file may have. */
#define MAX_JSON_NODES (1u << 28)

/**
 * Largest symbol file mxk_symbol_load reads (bytes): far above any real network
 * (ResNet-152's JSON is about 300 KiB), low enough that a wrong file is refused
 * before it is read whole.
 */
#define MXK_SYMBOL_JSON_MAX_BYTES (256u << 20)

/* ------------------------------------------------------------------------- */
/* Writing                                                                   */
/* ------------------------------------------------------------------------- */

/** Deepest nesting the writer uses (top object, nodes array, node, attrs/inputs, entry). */
#define JW_MAX_DEPTH 8

/**
 * A growable output buffer with dmlc::JSONWriter's layout rules: a scope is
 * multi-line or not; items of a multi-line scope go on their own line indented
 * two spaces per open scope, separated by ", " (the trailing space is dmlc's).
 */
typedef struct jwriter {
    char *p;
    size_t len, cap;
    int oom;
    int depth;
    int multi_line[JW_MAX_DEPTH];
    uint32_t count[JW_MAX_DEPTH];
} jwriter;

/** Appends n bytes. */
static void jw_raw(jwriter *w, const char *s, size_t n) {
    if (w->oom)
        return;
    if (w->len + n + 1 > w->cap) {
        size_t c = w->cap ? w->cap : 4096;
        while (c < w->len + n + 1)
            c *= 2;
        char *p = realloc(w->p, c);
        if (p == NULL) {
            w->oom = 1;
            return;
        }
        w->p = p;
        w->cap = c;
    }
    memcpy(w->p + w->len, s, n);
    w->len += n;
    w->p[w->len] = '\0';
}

/** Appends a C string. */
static void jw_str(jwriter *w, const char *s) {
    jw_raw(w, s, strlen(s));
}

/** dmlc WriteSeperator: a newline and indentation when the current scope is multi-line. */
static void jw_sep(jwriter *w) {
    if (w->depth == 0 || w->multi_line[w->depth - 1]) {
        jw_raw(w, "\n", 1);
        for (int i = 0; i < w->depth; i++)
            jw_raw(w, "  ", 2);
    }
}

/** Opens an object ('{') or array ('[') scope. */
static void jw_begin(jwriter *w, char c, int multi_line) {
    jw_raw(w, &c, 1);
    if (w->depth < JW_MAX_DEPTH) {
        w->multi_line[w->depth] = multi_line;
        w->count[w->depth] = 0;
    }
    w->depth++;
}

/** Closes the current scope with c. */
static void jw_end(jwriter *w, char c) {
    w->depth--;
    if (w->multi_line[w->depth] && w->count[w->depth] != 0)
        jw_sep(w);
    jw_raw(w, &c, 1);
}

/**
 * Writes a JSON string. dmlc escapes \r \n \\ \t and \"; other control bytes are
 * written as \u00XX so the output stays valid JSON.
 */
static void jw_string(jwriter *w, const char *s) {
    jw_raw(w, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        switch (*p) {
        case '\r':
            jw_raw(w, "\\r", 2);
            break;
        case '\n':
            jw_raw(w, "\\n", 2);
            break;
        case '\\':
            jw_raw(w, "\\\\", 2);
            break;
        case '\t':
            jw_raw(w, "\\t", 2);
            break;
        case '"':
            jw_raw(w, "\\\"", 2);
            break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                jw_str(w, esc);
            } else {
                jw_raw(w, (const char *)p, 1);
            }
        }
    }
    jw_raw(w, "\"", 1);
}

/** Starts the value of `key` in the current object. */
static void jw_key(jwriter *w, const char *key) {
    if (w->count[w->depth - 1] > 0)
        jw_raw(w, ", ", 2);
    jw_sep(w);
    jw_string(w, key);
    jw_raw(w, ": ", 2);
    w->count[w->depth - 1]++;
}

/** Starts the next item of the current array. */
static void jw_item(jwriter *w) {
    if (w->count[w->depth - 1] > 0)
        jw_raw(w, ", ", 2);
    w->count[w->depth - 1]++;
    jw_sep(w);
}

/** Writes an unsigned number. */
static void jw_uint(jwriter *w, uint64_t v) {
    char b[24];
    snprintf(b, sizeof b, "%llu", (unsigned long long)v);
    jw_str(w, b);
}

/** Writes a [node, index, version] entry (nnvm JSONNode::Entry::Save: one line). */
static void jw_entry(jwriter *w, uint32_t node, uint32_t index, uint32_t version) {
    jw_begin(w, '[', 0);
    jw_item(w);
    jw_uint(w, node);
    jw_item(w);
    jw_uint(w, index);
    jw_item(w);
    jw_uint(w, version);
    jw_end(w, ']');
}

/** 1 when op node n mutates its input k: an aux state, or one its mutate_inputs lists. */
static int mutates_input(const mxk_gnode *n, uint32_t k) {
    if (k >= n->op->in_names->count)
        return 1;
    const mxk_op_def *d = &n->op->op->def;
    uint32_t idx[MXK_MAX_INPLACE];
    uint32_t m = d->mutate_inputs ? d->mutate_inputs(n->op->param, idx, MXK_MAX_INPLACE) : 0;
    for (uint32_t i = 0; i < m && i < MXK_MAX_INPLACE; i++)
        if (idx[i] == k)
            return 1;
    return 0;
}

/**
 * The versions of op node n's input entries, as nnvm's UpdateNodeVersion gives them
 * when the node is composed (nnvm/src/core/symbolic.cc): a variable input records its
 * variable's version, and a mutated one first increments it; other entries are 0.
 * `counter` holds every variable's version by node id and is updated; nodes must be
 * visited in post order (the order they were composed in).
 */
static void input_versions(const mxk_gnode *n, const mxk_node_index *index, uint32_t *counter,
                           uint32_t *versions) {
    for (uint32_t k = 0; k < n->num_inputs; k++) {
        const mxk_gnode *in = n->inputs[k].node;
        versions[k] = in->op == NULL ? counter[mxki_node_index_get(index, in)] : 0;
    }
    for (uint32_t k = 0; k < n->num_inputs; k++) {
        const mxk_gnode *in = n->inputs[k].node;
        if (in->op == NULL && mutates_input(n, k))
            versions[k] = ++counter[mxki_node_index_get(index, in)];
    }
}

/** Writes an array of numbers (dmlc: multi-line when more than 10 elements). */
static void jw_uint_array(jwriter *w, const uint32_t *v, uint32_t n) {
    jw_begin(w, '[', n > 10);
    for (uint32_t i = 0; i < n; i++) {
        jw_item(w);
        jw_uint(w, v[i]);
    }
    jw_end(w, ']');
}

/** One attribute of a node being written. */
typedef struct jattr {
    const char *key, *value;
} jattr;

/** qsort comparator: keys bytewise (std::map's order; keys of one node are unique). */
static int jattr_cmp(const void *a, const void *b) {
    return strcmp(((const jattr *)a)->key, ((const jattr *)b)->key);
}

/**
 * Writes one node (nnvm JSONNode::Save). `index` maps nodes to their ids; `counter`
 * holds the variables' versions (input_versions).
 */
static mxk_status jw_node(jwriter *w, const mxk_gnode *n, const mxk_node_index *index,
                          uint32_t *counter) {
    jw_begin(w, '{', 1);
    jw_key(w, "op");
    jw_string(w, n->op ? n->op->op->def.name : "null");
    jw_key(w, "name");
    jw_string(w, n->name);
    uint32_t na = n->attrs->count;
    if (na > 0) {
        jattr *sorted = malloc(na * sizeof *sorted);
        if (sorted == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory writing symbol JSON");
        for (uint32_t i = 0; i < na; i++)
            sorted[i] = (jattr){n->attrs->keys[i], n->attrs->values[i]};
        qsort(sorted, na, sizeof *sorted, jattr_cmp);
        jw_key(w, "attrs");
        jw_begin(w, '{', na > 1);
        for (uint32_t i = 0; i < na; i++) {
            jw_key(w, sorted[i].key);
            jw_string(w, sorted[i].value);
        }
        jw_end(w, '}');
        free(sorted);
    }
    uint32_t *versions = NULL;
    if (n->num_inputs > 0) {
        versions = malloc(n->num_inputs * sizeof *versions);
        if (versions == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory writing symbol JSON");
        input_versions(n, index, counter, versions);
    }
    jw_key(w, "inputs");
    jw_begin(w, '[', n->num_inputs > 10);
    for (uint32_t i = 0; i < n->num_inputs; i++) {
        jw_item(w);
        jw_entry(w, mxki_node_index_get(index, n->inputs[i].node), n->inputs[i].index, versions[i]);
    }
    free(versions);
    jw_end(w, ']');
    jw_end(w, '}');
    return MXK_OK;
}

mxk_status mxk_symbol_to_json(const mxk_symbol *sym, char **json) {
    if (sym == NULL || json == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_to_json: NULL argument");
    *json = NULL;
    mxk_gnode **order = NULL;
    uint32_t n = 0;
    mxk_status st = mxki_graph_post_order(sym->outputs, sym->num_outputs, &order, &n);
    if (st != MXK_OK)
        return st;
    mxk_node_index index;
    uint32_t *args = calloc(n + 1, sizeof *args), *row_ptr = calloc(n + 1, sizeof *row_ptr);
    uint32_t *counter = calloc(n + 1, sizeof *counter), num_args = 0;
    st = mxki_node_index_init(&index, n);
    if (st == MXK_OK && (args == NULL || row_ptr == NULL || counter == NULL))
        st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory writing symbol JSON");
    for (uint32_t i = 0; i < n && st == MXK_OK; i++) {
        st = mxki_node_index_put(&index, order[i], i);
        if (order[i]->op == NULL)
            args[num_args++] = i;
        row_ptr[i + 1] = row_ptr[i] + mxki_gnode_num_outputs(order[i]);
    }
    jwriter w;
    memset(&w, 0, sizeof w);
    if (st == MXK_OK) {
        jw_begin(&w, '{', 1);
        jw_key(&w, "nodes");
        jw_begin(&w, '[', 1);
        for (uint32_t i = 0; i < n && st == MXK_OK; i++) {
            jw_item(&w);
            st = jw_node(&w, order[i], &index, counter);
        }
        jw_end(&w, ']');
        jw_key(&w, "arg_nodes");
        jw_uint_array(&w, args, num_args);
        jw_key(&w, "node_row_ptr");
        jw_uint_array(&w, row_ptr, n + 1);
        jw_key(&w, "heads");
        jw_begin(&w, '[', sym->num_outputs > 10);
        for (uint32_t i = 0; i < sym->num_outputs; i++) {
            jw_item(&w);
            jw_entry(&w, mxki_node_index_get(&index, sym->outputs[i].node), sym->outputs[i].index,
                     0);
        }
        jw_end(&w, ']');
        jw_key(&w, "attrs");
        jw_begin(&w, '{', 0);
        jw_key(&w, "mxnet_version");
        jw_begin(&w, '[', 0);
        jw_item(&w);
        jw_string(&w, "int");
        jw_item(&w);
        jw_uint(&w, MXK_MXNET_VERSION);
        jw_end(&w, ']');
        jw_end(&w, '}');
        jw_end(&w, '}');
        if (st == MXK_OK && w.oom)
            st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory writing symbol JSON");
    }
    mxki_node_index_free(&index);
    free(args);
    free(row_ptr);
    free(counter);
    free(order);
    if (st != MXK_OK) {
        free(w.p);
        return st;
    }
    *json = w.p;
    return MXK_OK;
}

/**
 * Saves the symbol's JSON to `path` atomically (mxk.h "Files"), and only when the
 * file does not already hold exactly that JSON: a checkpoint's prefix-symbol.json
 * is then written once per run, not at every epoch (MXNet's save_checkpoint
 * rewrites it each time, python/mxnet/model.py).
 */
mxk_status mxk_symbol_save(const mxk_symbol *sym, const char *path) {
    if (path == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_save: NULL path");
    char *json = NULL;
    mxk_status st = mxk_symbol_to_json(sym, &json);
    if (st != MXK_OK)
        return st;
    size_t len = strlen(json), old_len = 0;
    char *old = NULL;
    /* a missing, unreadable or longer file is simply rewritten */
    int same = mxk_file_read(path, NULL, len, &old, &old_len) == MXK_OK && old_len == len &&
               memcmp(old, json, len) == 0;
    free(old);
    if (!same)
        st = mxk_file_write(path, json, len);
    free(json);
    return st;
}

/* ------------------------------------------------------------------------- */
/* Reading                                                                   */
/* ------------------------------------------------------------------------- */

/** State of one load: the parsed nodes so far and the file's version. */
typedef struct jreader {
    int version;
    uint32_t num_nodes;
    mxk_gnode **nodes; /**< one creation reference each; NULL where not built yet */
} jreader;

/** Name of a JSON value's type for messages. */
static const char *jtype(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a real number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/** Sets a MXK_ERR_FORMAT error "symbol JSON: <message>" and returns the code. */
static mxk_status fmt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static mxk_status fmt_error(const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mxk_set_error(MXK_ERR_FORMAT, "symbol JSON: %s", msg);
}

/** Writes "node 3 ('fc1')" (or "node 3" when the name is not known yet) into buf. */
static const char *where(char *buf, size_t size, uint32_t i, const char *name) {
    if (name != NULL)
        snprintf(buf, size, "node %u ('%.64s%s')", i, name, strlen(name) > 64 ? "..." : "");
    else
        snprintf(buf, size, "node %u", i);
    return buf;
}

/** Reads a non-negative integer below `limit` into *out; 0 when v is not one. */
static int read_index(const json_t *v, uint64_t limit, uint32_t *out) {
    if (!json_is_integer(v))
        return 0;
    json_int_t x = json_integer_value(v);
    if (x < 0 || (uint64_t)x >= limit || (uint64_t)x > UINT32_MAX)
        return 0;
    *out = (uint32_t)x;
    return 1;
}

/**
 * Reads an entry [node, index] or [node, index, version] (nnvm
 * JSONNode::Entry::Load). `what` names it ("node 3 ('fc1'): input 0", "heads[0]");
 * `limit` is the number of nodes it may refer to (the ones before it for an
 * input: a reference to itself or a later node is a cycle or a forward reference,
 * which nnvm's topologically ordered node list excludes). Checks the output index
 * against the node's outputs.
 */
static mxk_status read_entry(const jreader *r, const json_t *v, const char *what, uint32_t limit,
                             mxk_gentry *out) {
    if (!json_is_array(v))
        return fmt_error("%s must be an array [node, index] or [node, index, version], got %s",
                         what, jtype(v));
    size_t n = json_array_size(v);
    if (n != 2 && n != 3)
        return fmt_error("%s must have 2 or 3 elements [node, index(, version)], got %zu", what, n);
    for (size_t k = 0; k < n; k++) {
        const json_t *x = json_array_get(v, k);
        if (!json_is_integer(x) || json_integer_value(x) < 0 ||
            json_integer_value(x) > (json_int_t)UINT32_MAX)
            return fmt_error("%s: element %zu must be a non-negative integer, got %s", what, k,
                             json_is_integer(x) ? "a negative or too large integer" : jtype(x));
    }
    uint64_t id = (uint64_t)json_integer_value(json_array_get(v, 0));
    uint64_t index = (uint64_t)json_integer_value(json_array_get(v, 1));
    if (id >= r->num_nodes)
        return fmt_error("%s refers to node %llu, but there are only %u nodes", what,
                         (unsigned long long)id, r->num_nodes);
    if (id >= limit)
        return fmt_error("%s refers to node %llu, but only nodes before it may be inputs", what,
                         (unsigned long long)id);
    const mxk_gnode *src = r->nodes[id];
    uint32_t nout = mxki_gnode_num_outputs(src);
    if (index >= nout)
        return fmt_error("%s refers to output %llu of node %llu ('%.64s'), which has %u output%s",
                         what, (unsigned long long)index, (unsigned long long)id, src->name, nout,
                         nout == 1 ? "" : "s");
    *out = (mxk_gentry){r->nodes[id], (uint32_t)index};
    return MXK_OK;
}

/**
 * Merges an attribute object ("attrs", "attr" or "param") into dict: values must
 * be strings. `overwrite` 0 keeps keys already there (nnvm inserts "param" after
 * the others without replacing).
 */
static mxk_status merge_attr_object(const json_t *obj, const char *field, const char *at,
                                    int overwrite, mxk_attrs *dict) {
    if (!json_is_object(obj))
        return fmt_error("%s: \"%s\" must be an object of strings, got %s", at, field, jtype(obj));
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        if (!json_is_string(val))
            return fmt_error("%s: \"%s\" value of '%.64s' must be a string, got %s", at, field, key,
                             jtype(val));
        if (key[0] == '\0')
            return fmt_error("%s: \"%s\" has an empty key", at, field);
        if (!overwrite && mxki_attrs_get(dict, key) != NULL)
            continue;
        if (mxki_attrs_set(dict, key, json_string_value(val)) != MXK_OK)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory reading symbol JSON");
    }
    return MXK_OK;
}

/** Position of the last occurrence of `needle` in `hay`, or SIZE_MAX (std::string::rfind). */
static size_t rfind(const char *hay, const char *needle) {
    size_t hl = strlen(hay), nl = strlen(needle);
    if (nl > hl)
        return SIZE_MAX;
    for (size_t i = hl - nl + 1; i-- > 0;)
        if (memcmp(hay + i, needle, nl) == 0)
            return i;
    return SIZE_MAX;
}

/** 1 when upstream's FixParsing sets `key` aside (it starts or ends with a hidden key). */
static int is_hidden_like(const char *key) {
    size_t len = strlen(key);
    for (size_t h = 0; mxki_mxnet_hidden_key(h) != NULL; h++) {
        const char *hk = mxki_mxnet_hidden_key(h);
        size_t pos = rfind(key, hk);
        if (pos == 0 || (pos != SIZE_MAX && pos == len - strlen(hk)))
            return 1;
    }
    return 0;
}

/**
 * Upstream UpgradeJSON_FixParsing for one node (files older than 1.9.1): keys that
 * start or end with a hidden key are kept out of the operator's parameters (the
 * caller leaves them out); on the node they become "__key__" (exact hidden key),
 * move onto the input variable "<arg>" names as "__key__" ("weight_lr_mult" on fc1
 * sets fc1_weight's "__lr_mult__"; only operator nodes, only when that input is a
 * variable), or stay as they are. `dict` is rewritten in place (the node's
 * attributes); `inputs`/`num_given` are the inputs read so far.
 */
static mxk_status fix_parsing(const mxk_op_params *p, mxk_attrs **dict, const mxk_gentry *inputs,
                              uint32_t num_given) {
    mxk_attrs *out = mxki_attrs_new();
    if (out == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory reading symbol JSON");
    mxk_attrs *src = *dict;
    mxk_status st = MXK_OK;
    for (uint32_t i = 0; i < src->count && st == MXK_OK; i++) {
        const char *key = src->keys[i], *val = src->values[i];
        if (!is_hidden_like(key)) {
            st = mxki_attrs_set(out, key, val);
            continue;
        }
        int placed = 0;
        size_t len = strlen(key);
        for (size_t h = 0; mxki_mxnet_hidden_key(h) != NULL && st == MXK_OK; h++) {
            const char *hk = mxki_mxnet_hidden_key(h);
            size_t hl = strlen(hk), pos = rfind(key, hk);
            if (pos == 0 && hl == len) {
                char buf[64];
                snprintf(buf, sizeof buf, "__%s__", hk);
                st = mxki_attrs_set(out, buf, val);
                placed = 1;
                break;
            }
            if (pos != SIZE_MAX && pos > 1 && pos == len - hl) {
                if (p == NULL)
                    break; /* a variable keeps "weight_lr_mult" as it is */
                char arg[256];
                if (pos - 1 >= sizeof arg)
                    break;
                memcpy(arg, key, pos - 1);
                arg[pos - 1] = '\0';
                uint32_t slot = UINT32_MAX;
                for (uint32_t j = 0; j < p->in_names->count && slot == UINT32_MAX; j++)
                    if (strcmp(p->in_names->names[j], arg) == 0)
                        slot = j;
                for (uint32_t j = 0; j < p->aux_names->count && slot == UINT32_MAX; j++)
                    if (strcmp(p->aux_names->names[j], arg) == 0)
                        slot = p->in_names->count + j;
                if (slot < num_given && inputs[slot].node->op == NULL) {
                    char buf[64];
                    snprintf(buf, sizeof buf, "__%s__", hk);
                    st = mxki_attrs_set(inputs[slot].node->attrs, buf, val);
                    placed = 1;
                }
                break;
            }
        }
        if (!placed && st == MXK_OK)
            st = mxki_attrs_set(out, key, val);
    }
    if (st != MXK_OK) {
        mxki_attrs_free(out);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory reading symbol JSON");
    }
    mxki_attrs_free(src);
    *dict = out;
    return MXK_OK;
}

/** A copy of `dict` without `key` (NULL on out-of-memory). */
static mxk_attrs *attrs_without(const mxk_attrs *dict, const char *key) {
    mxk_attrs *a = mxki_attrs_new();
    for (uint32_t i = 0; a != NULL && i < dict->count; i++) {
        if (strcmp(dict->keys[i], key) == 0)
            continue;
        if (mxki_attrs_set(a, dict->keys[i], dict->values[i]) != MXK_OK) {
            mxki_attrs_free(a);
            a = NULL;
        }
    }
    return a;
}

/**
 * mxki_op_params_create for node `at`, with the error prefixed "symbol JSON: <at>: ".
 * A value that does not parse is a malformed file (MXK_ERR_FORMAT); an unknown
 * operator or attribute name keeps MXK_ERR_NOT_FOUND (the file needs what is not
 * loaded).
 */
static mxk_status create_params(const char *op, const mxk_attrs *attrs, const char *at,
                                mxk_op_params **p) {
    mxk_status st = mxki_op_params_create(op, attrs, p);
    if (st != MXK_OK) {
        char msg[MXK_ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", mxki_last_error_message());
        if (st == MXK_ERR_INVALID_ARGUMENT)
            st = MXK_ERR_FORMAT;
        mxk_set_error(st, "symbol JSON: %s: %s", at, msg);
        *p = NULL;
    }
    return st;
}

/** The node fields nnvm's LoadJSON accepts. */
static const char *const node_fields[] = {
    "op",           "name",      "inputs",
    "attrs",        "attr",      "param",
    "control_deps", "subgraphs", "backward_source_id",
};

/** The validated fields of one node of the file. */
typedef struct jnode {
    const char *op; /**< "null" for a variable */
    const char *name;
    const json_t *inputs; /**< array of [node, index(, version)] entries */
    size_t num_inputs;
    int is_var;
} jnode;

/**
 * Checks node i's fields (nnvm's LoadJSON: known fields, op/name/inputs present
 * and typed, control_deps naming earlier nodes, no subgraphs, a variable without
 * inputs) into *f; `at` receives "node I ('NAME')" for messages. Errors:
 * MXK_ERR_FORMAT, MXK_ERR_UNSUPPORTED (subgraphs).
 */
static mxk_status check_node(uint32_t i, const json_t *jn, char *at, size_t at_size, jnode *f) {
    if (!json_is_object(jn))
        return fmt_error("node %u must be an object, got %s", i, jtype(jn));
    const json_t *jname = json_object_get(jn, "name");
    f->name = json_is_string(jname) ? json_string_value(jname) : NULL;
    where(at, at_size, i, f->name);
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)jn, key, val) {
        int known = 0;
        for (size_t k = 0; k < sizeof node_fields / sizeof node_fields[0] && !known; k++)
            known = strcmp(key, node_fields[k]) == 0;
        if (!known)
            return fmt_error("%s: unknown field '%.64s' (a node has op, name, inputs, attrs, attr, "
                             "param, control_deps, subgraphs, backward_source_id)",
                             at, key);
    }
    const json_t *jop = json_object_get(jn, "op");
    if (jop == NULL || jname == NULL || json_object_get(jn, "inputs") == NULL)
        return fmt_error("%s: missing field '%s'", at,
                         jop == NULL     ? "op"
                         : jname == NULL ? "name"
                                         : "inputs");
    if (!json_is_string(jop))
        return fmt_error("%s: \"op\" must be a string, got %s", at, jtype(jop));
    if (f->name == NULL)
        return fmt_error("%s: \"name\" must be a string, got %s", at, jtype(jname));
    f->inputs = json_object_get(jn, "inputs");
    if (!json_is_array(f->inputs))
        return fmt_error("%s: \"inputs\" must be an array, got %s", at, jtype(f->inputs));
    const json_t *jbs = json_object_get(jn, "backward_source_id");
    if (jbs != NULL && !json_is_integer(jbs))
        return fmt_error("%s: \"backward_source_id\" must be an integer, got %s", at, jtype(jbs));
    const json_t *jcd = json_object_get(jn, "control_deps");
    if (jcd != NULL) {
        /* Validated, then ignored: mxk orders execution by data dependencies only. */
        if (!json_is_array(jcd))
            return fmt_error("%s: \"control_deps\" must be an array, got %s", at, jtype(jcd));
        for (size_t k = 0; k < json_array_size(jcd); k++) {
            uint32_t id;
            if (!read_index(json_array_get(jcd, k), i, &id))
                return fmt_error("%s: control_deps[%zu] must be the id of a node before it", at, k);
        }
    }
    const json_t *jsg = json_object_get(jn, "subgraphs");
    if (jsg != NULL && (!json_is_array(jsg) || json_array_size(jsg) > 0))
        return mxk_set_error(MXK_ERR_UNSUPPORTED,
                             "symbol JSON: %s: subgraphs (control-flow operators) are not "
                             "supported",
                             at);
    f->op = json_string_value(jop);
    f->is_var = strcmp(f->op, "null") == 0;
    f->num_inputs = json_array_size(f->inputs);
    if (f->is_var && f->num_inputs > 0)
        return fmt_error("%s: a variable (op \"null\") has no inputs, got %zu", at, f->num_inputs);
    if (f->num_inputs > 4096)
        return fmt_error("%s: too many inputs (%zu)", at, f->num_inputs);
    return MXK_OK;
}

/**
 * The node's attributes: "attrs" and "attr" into one dict in file order, then
 * "param" without replacing (nnvm JSONNode::Load). *dict is the caller's, also
 * on error.
 */
static mxk_status read_node_attrs(const json_t *jn, const char *at, mxk_attrs **dict) {
    *dict = mxki_attrs_new();
    if (*dict == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory reading symbol JSON");
    mxk_status st = MXK_OK;
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)jn, key, val) {
        if (st == MXK_OK && (strcmp(key, "attrs") == 0 || strcmp(key, "attr") == 0))
            st = merge_attr_object(val, key, at, 1, *dict);
    }
    const json_t *jparam = json_object_get(jn, "param");
    if (st == MXK_OK && jparam != NULL)
        st = merge_attr_object(jparam, "param", at, 0, *dict);
    return st;
}

/** Reads node i's input entries into a new array *in (the caller's, also on error). */
static mxk_status read_node_inputs(const jreader *r, uint32_t i, const jnode *f, const char *at,
                                   mxk_gentry **in) {
    *in = calloc(f->num_inputs ? f->num_inputs : 1, sizeof **in);
    if (*in == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory reading symbol JSON");
    mxk_status st = MXK_OK;
    for (size_t k = 0; k < f->num_inputs && st == MXK_OK; k++) {
        char what[160];
        snprintf(what, sizeof what, "%s: input %zu", at, k);
        st = read_entry(r, json_array_get(f->inputs, k), what, i, &(*in)[k]);
    }
    return st;
}

/**
 * The attribute upgrades of an operator node from an older file: before 0.9.5
 * argmax/argmin with axis=-1 lose the axis; before 1.9.1 (upstream
 * UpgradeJSON_FixParsing then UpgradeJSON_Parse) the node is parsed once without
 * the hidden-like keys to learn its input names, and those keys move to their
 * "__key__" places. *dict may be replaced (the caller's, also on error).
 */
static mxk_status upgrade_node_attrs(const jreader *r, const jnode *f, const char *at,
                                     const mxk_gentry *in, mxk_attrs **dict) {
    const char *axis = mxki_attrs_get(*dict, "axis");
    if (r->version < 905 && (strcmp(f->op, "argmax") == 0 || strcmp(f->op, "argmin") == 0) &&
        axis != NULL && strcmp(axis, "-1") == 0) {
        mxk_attrs *d2 = attrs_without(*dict, "axis");
        if (d2 == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory reading symbol JSON");
        mxki_attrs_free(*dict);
        *dict = d2;
    }
    if (r->version >= MXK_MXNET_VERSION)
        return MXK_OK;
    mxk_attrs *params = mxki_attrs_new();
    for (uint32_t k = 0; params != NULL && k < (*dict)->count; k++)
        if (!is_hidden_like((*dict)->keys[k]) &&
            mxki_attrs_set(params, (*dict)->keys[k], (*dict)->values[k]) != MXK_OK) {
            mxki_attrs_free(params);
            params = NULL;
        }
    if (params == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory reading symbol JSON");
    mxk_op_params *p = NULL;
    mxk_status st = create_params(f->op, params, at, &p);
    mxki_attrs_free(params);
    if (st == MXK_OK)
        st = fix_parsing(p, dict, in, (uint32_t)f->num_inputs);
    mxki_op_params_free(p);
    return st;
}

/**
 * Checks the number of inputs against the operator's arguments and aux states
 * (files before 0.9.0 may leave out aux states: build_op_node adds them).
 */
static mxk_status check_input_count(const jreader *r, const mxk_op_params *p, const jnode *f,
                                    const char *at) {
    uint32_t total = p->in_names->count + p->aux_names->count;
    if (f->num_inputs == total || (f->num_inputs < total && r->version < 900))
        return MXK_OK;
    char names[512];
    size_t pos = 0;
    names[0] = '\0';
    for (uint32_t k = 0; k < total && pos < sizeof names; k++) {
        int w =
            snprintf(names + pos, sizeof names - pos, k ? ", %s" : "%s", mxki_op_slot_name(p, k));
        pos += w > 0 ? (size_t)w : 0;
    }
    /* MXNet's words for an operator its front end cannot compose from fewer inputs. */
    int all = f->num_inputs < total && mxki_op_needs_all_inputs(p);
    return fmt_error("%s: %s%s%s takes %u input%s (%s), the file gives %zu", at,
                     all ? "Not enough argument to call operator " : "operator ", f->op,
                     all ? ": it" : "", total, total == 1 ? "" : "s", names, f->num_inputs);
}

/**
 * Builds the operator node from its parameters, attributes and inputs into *out.
 * Takes *p and *dict (set to NULL). Before 0.9.0 (UpgradeJSON_000800_000900) the
 * aux states MXNet did not store become variables "<node>_<input>" carrying the
 * node's attributes.
 */
static mxk_status build_op_node(const jnode *f, mxk_op_params **p, mxk_attrs **dict,
                                const mxk_gentry *in, mxk_gnode **out) {
    uint32_t total = (*p)->in_names->count + (*p)->aux_names->count;
    uint32_t num_given = (uint32_t)f->num_inputs, num_extra = total - num_given;
    mxk_gentry *all = calloc(total ? total : 1, sizeof *all);
    mxk_gnode **extra = calloc(num_extra ? num_extra : 1, sizeof *extra);
    mxk_status st = MXK_OK;
    if (all == NULL || extra == NULL)
        st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory reading symbol JSON");
    for (uint32_t k = 0; k < num_given && st == MXK_OK; k++)
        all[k] = in[k];
    for (uint32_t k = num_given; k < total && st == MXK_OK; k++) {
        extra[k - num_given] = mxki_gnode_default_var(f->name, mxki_op_slot_name(*p, k), *dict);
        if (extra[k - num_given] == NULL)
            st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory reading symbol JSON");
        else
            all[k] = (mxk_gentry){extra[k - num_given], 0};
    }
    if (st == MXK_OK) { /* mxki_gnode_op takes the parameters and attributes */
        *out = mxki_gnode_op(*p, f->name, *dict, total, all);
        *p = NULL;
        *dict = NULL;
        if (*out == NULL)
            st = MXK_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t k = 0; extra != NULL && k < num_extra; k++)
        mxki_gnode_release(extra[k]);
    free(extra);
    free(all);
    return st;
}

/**
 * Reads node i and builds it into r->nodes[i]. Errors: MXK_ERR_FORMAT,
 * MXK_ERR_NOT_FOUND (unknown operator or attribute), MXK_ERR_UNSUPPORTED
 * (subgraphs), MXK_ERR_OUT_OF_MEMORY; the message names the node.
 */
static mxk_status read_node(jreader *r, uint32_t i, const json_t *jn) {
    char at[128];
    jnode f = {0};
    mxk_status st = check_node(i, jn, at, sizeof at, &f);
    if (st != MXK_OK)
        return st;
    mxk_attrs *dict = NULL;
    mxk_gentry *in = NULL;
    mxk_op_params *p = NULL;
    st = read_node_attrs(jn, at, &dict);
    if (st == MXK_OK)
        st = read_node_inputs(r, i, &f, at, &in);
    if (st == MXK_OK && f.is_var) {
        if (r->version < MXK_MXNET_VERSION)
            st = fix_parsing(NULL, &dict, NULL, 0);
        mxk_gnode *v = st == MXK_OK ? mxki_gnode_variable(f.name) : NULL;
        if (st == MXK_OK && v == NULL)
            st = MXK_ERR_OUT_OF_MEMORY;
        if (v != NULL) { /* the variable takes the attributes */
            mxki_attrs_free(v->attrs);
            v->attrs = dict;
            dict = NULL;
            r->nodes[i] = v;
        }
    } else if (st == MXK_OK) {
        st = upgrade_node_attrs(r, &f, at, in, &dict);
        if (st == MXK_OK)
            st = create_params(f.op, dict, at, &p);
        if (st == MXK_OK)
            st = check_input_count(r, p, &f, at);
        if (st == MXK_OK)
            st = build_op_node(&f, &p, &dict, in, &r->nodes[i]);
        /* Upgrade before 0.9.4 (UpgradeJSON_000903_000904): compose-time variable hints. */
        if (st == MXK_OK && r->version < 904)
            st = mxki_gnode_set_input_var_hints(r->nodes[i]);
    }
    mxki_op_params_free(p);
    mxki_attrs_free(dict);
    free(in);
    return st;
}

/** Reads the optional graph "attrs" and sets r->version (upstream: default 0.8.0). */
static mxk_status read_graph_attrs(jreader *r, const json_t *attrs) {
    r->version = MXNET_VERSION_LEGACY;
    if (attrs == NULL)
        return MXK_OK;
    if (!json_is_object(attrs))
        return fmt_error("\"attrs\" must be an object, got %s", jtype(attrs));
    const json_t *v = json_object_get(attrs, "mxnet_version");
    if (v == NULL)
        return MXK_OK;
    if (!json_is_array(v) || json_array_size(v) != 2 || !json_is_string(json_array_get(v, 0)) ||
        strcmp(json_string_value(json_array_get(v, 0)), "int") != 0 ||
        !json_is_integer(json_array_get(v, 1)))
        return fmt_error("\"mxnet_version\" must be [\"int\", VERSION]");
    json_int_t ver = json_integer_value(json_array_get(v, 1));
    if (ver < 0 || ver > 100000000)
        return fmt_error("\"mxnet_version\" %lld is out of range", (long long)ver);
    r->version = (int)ver;
    return MXK_OK;
}

/** The graph fields nnvm's JSONGraph::Load accepts. */
static const char *const graph_fields[] = {"nodes", "arg_nodes", "node_row_ptr", "heads", "attrs"};

/** Parses a document (Jansson value) into a symbol. */
static mxk_status read_graph(const json_t *root, mxk_symbol **out) {
    if (!json_is_object(root))
        return fmt_error("the document must be an object, got %s", jtype(root));
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)root, key, val) {
        int known = 0;
        for (size_t k = 0; k < sizeof graph_fields / sizeof graph_fields[0] && !known; k++)
            known = strcmp(key, graph_fields[k]) == 0;
        if (!known)
            return fmt_error("unknown top-level field '%.64s' (expected nodes, arg_nodes, "
                             "node_row_ptr, heads, attrs)",
                             key);
    }
    const char *required[3] = {"nodes", "arg_nodes", "heads"};
    for (int k = 0; k < 3; k++) {
        const json_t *v = json_object_get(root, required[k]);
        if (v == NULL)
            return fmt_error("missing field '%s'", required[k]);
        if (!json_is_array(v))
            return fmt_error("\"%s\" must be an array, got %s", required[k], jtype(v));
    }
    jreader r;
    memset(&r, 0, sizeof r);
    mxk_status st = read_graph_attrs(&r, json_object_get(root, "attrs"));
    if (st != MXK_OK)
        return st;
    const json_t *jnodes = json_object_get(root, "nodes");
    size_t nn = json_array_size(jnodes);
    if (nn == 0)
        return fmt_error("\"nodes\" is empty");
    if (nn > MAX_JSON_NODES)
        return fmt_error("too many nodes (%zu)", nn);
    r.num_nodes = (uint32_t)nn;
    r.nodes = calloc(nn, sizeof *r.nodes);
    if (r.nodes == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory reading symbol JSON");
    for (uint32_t i = 0; i < r.num_nodes && st == MXK_OK; i++)
        st = read_node(&r, i, json_array_get(jnodes, i));

    /* arg_nodes: variables, each once (nnvm checks they are variables). */
    const json_t *jargs = json_object_get(root, "arg_nodes");
    uint8_t *seen = st == MXK_OK ? calloc(nn, 1) : NULL;
    if (st == MXK_OK && seen == NULL)
        st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory reading symbol JSON");
    for (size_t k = 0; k < json_array_size(jargs) && st == MXK_OK; k++) {
        uint32_t id;
        const json_t *x = json_array_get(jargs, k);
        if (!read_index(x, nn, &id))
            st = fmt_error("arg_nodes[%zu] must be a node id below %u, got %s", k, r.num_nodes,
                           json_is_integer(x) ? "an integer out of range" : jtype(x));
        else if (r.nodes[id]->op != NULL)
            st = fmt_error("arg_nodes[%zu] is node %u ('%.64s'), which is not a variable", k, id,
                           r.nodes[id]->name);
        else if (seen[id])
            st = fmt_error("arg_nodes[%zu]: node %u is listed twice", k, id);
        else
            seen[id] = 1;
    }
    free(seen);

    /* node_row_ptr (optional): one more entry than nodes, from 0, non-decreasing. */
    const json_t *jrow = json_object_get(root, "node_row_ptr");
    if (st == MXK_OK && jrow != NULL) {
        if (!json_is_array(jrow))
            st = fmt_error("\"node_row_ptr\" must be an array, got %s", jtype(jrow));
        else if (json_array_size(jrow) != nn + 1)
            st = fmt_error("\"node_row_ptr\" must have %zu entries (nodes + 1), got %zu", nn + 1,
                           json_array_size(jrow));
        json_int_t prev = 0;
        for (size_t k = 0; st == MXK_OK && k <= nn; k++) {
            const json_t *x = json_array_get(jrow, k);
            if (!json_is_integer(x) || json_integer_value(x) < prev ||
                (k == 0 && json_integer_value(x) != 0))
                st = fmt_error("node_row_ptr[%zu] must be an integer, 0 first and never "
                               "decreasing, got %s",
                               k, jtype(x));
            else
                prev = json_integer_value(x);
        }
    }

    /* heads: the outputs. */
    const json_t *jheads = json_object_get(root, "heads");
    size_t nh = json_array_size(jheads);
    mxk_gentry *heads = NULL;
    if (st == MXK_OK && nh == 0)
        st = fmt_error("\"heads\" is empty: a symbol needs at least one output");
    if (st == MXK_OK && nh > MAX_JSON_NODES)
        st = fmt_error("too many heads (%zu)", nh);
    if (st == MXK_OK) {
        heads = calloc(nh, sizeof *heads);
        if (heads == NULL)
            st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory reading symbol JSON");
    }
    for (size_t k = 0; k < nh && st == MXK_OK; k++) {
        char what[48];
        snprintf(what, sizeof what, "heads[%zu]", k);
        st = read_entry(&r, json_array_get(jheads, k), what, r.num_nodes, &heads[k]);
    }
    if (st == MXK_OK)
        st = mxki_symbol_from_entries((uint32_t)nh, heads, out);
    free(heads);
    for (uint32_t i = 0; i < r.num_nodes; i++)
        mxki_gnode_release(r.nodes[i]);
    free(r.nodes);
    return st;
}

/** Parses `len` bytes of JSON into a symbol (see mxk_symbol_from_json). */
static mxk_status from_buffer(const char *data, size_t len, mxk_symbol **out) {
    *out = NULL;
    json_error_t err;
    json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &err);
    if (root == NULL)
        return mxk_set_error(MXK_ERR_FORMAT, "symbol JSON: invalid JSON at line %d, column %d: %s",
                             err.line, err.column, err.text);
    mxk_status st = read_graph(root, out);
    json_decref(root);
    if (st != MXK_OK)
        *out = NULL;
    return st;
}

mxk_status mxk_symbol_from_json(const char *json, mxk_symbol **out) {
    if (out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_from_json: out is NULL");
    *out = NULL;
    if (json == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_from_json: json is NULL");
    return from_buffer(json, strlen(json), out);
}

mxk_status mxk_symbol_load(const char *path, mxk_symbol **out) {
    if (out == NULL || path == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_load: NULL argument");
    *out = NULL;
    char *buf = NULL;
    size_t len = 0;
    mxk_status st = mxk_file_read(path, "symbol file", MXK_SYMBOL_JSON_MAX_BYTES, &buf, &len);
    if (st != MXK_OK)
        return st;
    st = from_buffer(buf, len, out);
    free(buf);
    if (st != MXK_OK) {
        char msg[MXK_ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", mxki_last_error_message());
        mxk_set_error(st, "%s: %s", path, msg);
    }
    return st;
}
