/*
 * Symbols (mxk.h "Symbol"): variables, composition by operator name with MXNet's
 * automatic names, groups, deep copy, outputs and internals, name lists and
 * attributes.
 *
 * Semantics: dmlc/nnvm src/core/symbolic.cc (Symbol::Compose, CreateFunctor,
 * CreateGroup, Copy, GetInternals, ListInputs, ListOutputNames, GetAttr,
 * SetAttrs, ListAttrs), MXNet src/c_api/c_api_symbolic.cc (hidden keys on
 * MXSymbolCreateAtomicSymbol / MXSymbolSetAttr / MXSymbolGetAttr) and
 * python/mxnet/name.py (NameManager: lower-cased operator name + counter).
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "symbol_internal.h"

/* ------------------------------------------------------------------------- */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------- */

/** MXNet's kHiddenKeys (src/c_api/c_api_common.h, 1.9.1). */
static const char *const mxnet_hidden_keys[] = {
    "ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage", "profiler_scope",
};

/**
 * Keys mxk_symbol_set_attr / get_attr store as "__key__": MXNet's hidden keys plus
 * the variable attributes mxk documents (init, dtype, shape), as MXNet's
 * Variable(init=, dtype=, shape=) stores them.
 */
static const char *const setattr_hidden_keys[] = {
    "ctx_group",      "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
    "profiler_scope", "init",    "dtype",   "shape",
};

#define COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

const char *mxki_mxnet_hidden_key(size_t i) {
    return i < COUNTOF(mxnet_hidden_keys) ? mxnet_hidden_keys[i] : NULL;
}

/**
 * Writes the stored form of `key` into buf: "__key__" when key is one of the n
 * `hidden` keys, else key itself. Returns buf, or NULL when it does not fit.
 */
static const char *stored_key(const char *key, const char *const *hidden, size_t n, char *buf,
                              size_t size) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(key, hidden[i]) == 0) {
            int w = snprintf(buf, size, "__%s__", key);
            return w > 0 && (size_t)w < size ? buf : NULL;
        }
    }
    int w = snprintf(buf, size, "%s", key);
    return w >= 0 && (size_t)w < size ? buf : NULL;
}

mxk_status mxki_attrs_merge(mxk_attrs *dst, const mxk_attrs *src) {
    for (uint32_t i = 0; src != NULL && i < src->count; i++) {
        mxk_status st = mxki_attrs_set(dst, src->keys[i], src->values[i]);
        if (st != MXK_OK)
            return mxk_set_error(st, "out of memory copying attributes");
    }
    return MXK_OK;
}

/** A new dictionary with the entries of src (NULL on out-of-memory, last error set). */
static mxk_attrs *attrs_copy(const mxk_attrs *src) {
    mxk_attrs *a = mxki_attrs_new();
    if (a == NULL) {
        mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory copying attributes");
        return NULL;
    }
    if (mxki_attrs_merge(a, src) != MXK_OK) {
        mxki_attrs_free(a);
        return NULL;
    }
    return a;
}

/** Frees a NULL-terminated list of strings (mxk_string_list_free). */
void mxk_string_list_free(char **list) {
    if (list == NULL)
        return;
    for (char **p = list; *p != NULL; p++)
        free(*p);
    free(list);
}

/* ------------------------------------------------------------------------- */
/* Node maps and graph traversal                                             */
/* ------------------------------------------------------------------------- */

/** Hash of a node pointer (Fibonacci hashing of the address bits). */
static uint32_t ptr_hash(const mxk_gnode *p, uint32_t mask) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 32) & mask;
}

mxk_status mxki_node_index_init(mxk_node_index *m, uint32_t expected) {
    memset(m, 0, sizeof *m);
    uint32_t cap = 16;
    while (cap < 2u * expected && cap < (1u << 30))
        cap <<= 1;
    m->keys = calloc(cap, sizeof *m->keys);
    m->values = calloc(cap, sizeof *m->values);
    if (m->keys == NULL || m->values == NULL) {
        mxki_node_index_free(m);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory indexing graph nodes");
    }
    m->capacity = cap;
    return MXK_OK;
}

void mxki_node_index_free(mxk_node_index *m) {
    free(m->keys);
    free(m->values);
    memset(m, 0, sizeof *m);
}

/** Inserts without growing (capacity must have room). */
static void index_insert(mxk_node_index *m, const mxk_gnode *key, uint32_t value) {
    uint32_t mask = m->capacity - 1, h = ptr_hash(key, mask);
    while (m->keys[h] != NULL && m->keys[h] != key)
        h = (h + 1) & mask;
    if (m->keys[h] == NULL)
        m->count++;
    m->keys[h] = key;
    m->values[h] = value;
}

mxk_status mxki_node_index_put(mxk_node_index *m, const mxk_gnode *key, uint32_t value) {
    if (m->capacity == 0 && mxki_node_index_init(m, 8) != MXK_OK)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "symbol: out of memory");
    if (2u * (m->count + 1) > m->capacity) {
        if (m->capacity >= (1u << 30))
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "graph too large to index");
        mxk_node_index bigger = {0};
        bigger.capacity = m->capacity * 2;
        bigger.keys = calloc(bigger.capacity, sizeof *bigger.keys);
        bigger.values = calloc(bigger.capacity, sizeof *bigger.values);
        if (bigger.keys == NULL || bigger.values == NULL) {
            mxki_node_index_free(&bigger);
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory indexing graph nodes");
        }
        for (uint32_t i = 0; i < m->capacity; i++)
            if (m->keys[i] != NULL)
                index_insert(&bigger, m->keys[i], m->values[i]);
        mxki_node_index_free(m);
        *m = bigger;
    }
    index_insert(m, key, value);
    return MXK_OK;
}

uint32_t mxki_node_index_get(const mxk_node_index *m, const mxk_gnode *key) {
    if (m->capacity == 0)
        return UINT32_MAX;
    uint32_t mask = m->capacity - 1, h = ptr_hash(key, mask);
    while (m->keys[h] != NULL) {
        if (m->keys[h] == key)
            return m->values[h];
        h = (h + 1) & mask;
    }
    return UINT32_MAX;
}

/** One frame of the depth-first traversal: a node and the next input to look at. */
typedef struct dfs_frame {
    mxk_gnode *node;
    uint32_t next;
} dfs_frame;

/** Grows a malloc'd array to hold at least `need` elements of `size` bytes. */
static int grow(void **arr, uint32_t *cap, uint32_t need, size_t size) {
    if (need <= *cap)
        return 1;
    uint32_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > UINT32_MAX / 2)
            return 0;
        c *= 2;
    }
    void *p = realloc(*arr, (size_t)c * size);
    if (p == NULL)
        return 0;
    *arr = p;
    *cap = c;
    return 1;
}

/**
 * Marks `node` seen and pushes it (its first input next) onto the depth-first stack of
 * mxki_graph_post_order, growing the stack as needed. 0 when out of memory.
 */
static int dfs_push(dfs_frame **stack, uint32_t *cap, uint32_t *depth, mxk_node_index *seen,
                    mxk_gnode *node) {
    if (!grow((void **)stack, cap, *depth + 1, sizeof **stack) ||
        mxki_node_index_put(seen, node, 0) != MXK_OK)
        return 0;
    (*stack)[(*depth)++] = (dfs_frame){node, 0};
    return 1;
}

mxk_status mxki_graph_post_order(const mxk_gentry *heads, uint32_t num_heads, mxk_gnode ***nodes,
                                 uint32_t *num) {
    *nodes = NULL;
    *num = 0;
    mxk_node_index seen;
    if (mxki_node_index_init(&seen, 64) != MXK_OK)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "symbol: out of memory");
    dfs_frame *stack = NULL;
    uint32_t stack_cap = 0, depth = 0;
    mxk_gnode **order = NULL;
    uint32_t order_cap = 0, count = 0;
    mxk_status st = MXK_OK;
    for (uint32_t h = 0; h < num_heads && st == MXK_OK; h++) {
        mxk_gnode *head = heads[h].node;
        if (mxki_node_index_get(&seen, head) != UINT32_MAX)
            continue;
        if (!dfs_push(&stack, &stack_cap, &depth, &seen, head)) {
            st = MXK_ERR_OUT_OF_MEMORY;
            break;
        }
        while (depth > 0) {
            dfs_frame *top = &stack[depth - 1];
            if (top->next == top->node->num_inputs) {
                if (!grow((void **)&order, &order_cap, count + 1, sizeof *order)) {
                    st = MXK_ERR_OUT_OF_MEMORY;
                    break;
                }
                order[count++] = top->node;
                depth--;
                continue;
            }
            mxk_gnode *in = top->node->inputs[top->next++].node;
            if (mxki_node_index_get(&seen, in) != UINT32_MAX)
                continue;
            if (!dfs_push(&stack, &stack_cap, &depth, &seen, in)) {
                st = MXK_ERR_OUT_OF_MEMORY;
                break;
            }
        }
    }
    free(stack);
    mxki_node_index_free(&seen);
    if (st != MXK_OK) {
        free(order);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory traversing the graph");
    }
    *nodes = order;
    *num = count;
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* Symbols from entries                                                      */
/* ------------------------------------------------------------------------- */

mxk_status mxki_symbol_from_entries(uint32_t num, const mxk_gentry *entries, mxk_symbol **out) {
    mxk_symbol *s = calloc(1, sizeof *s);
    mxk_gentry *o = calloc(num ? num : 1, sizeof *o);
    if (s == NULL || o == NULL) {
        free(s);
        free(o);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory creating a symbol");
    }
    for (uint32_t i = 0; i < num; i++) {
        o[i] = entries[i];
        mxki_gnode_retain(o[i].node);
    }
    s->num_outputs = num;
    s->outputs = o;
    *out = s;
    return MXK_OK;
}

/** A symbol of the visible outputs of node n (retained). */
static mxk_status symbol_of_node(mxk_gnode *n, mxk_symbol **out) {
    uint32_t nv = mxki_gnode_num_visible(n);
    mxk_gentry *e = calloc(nv, sizeof *e);
    if (e == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory creating a symbol");
    for (uint32_t i = 0; i < nv; i++)
        e[i] = (mxk_gentry){n, i};
    mxk_status st = mxki_symbol_from_entries(nv, e, out);
    free(e);
    return st;
}

mxk_gnode *mxki_symbol_single_node(const mxk_symbol *sym) {
    if (sym == NULL || sym->num_outputs == 0)
        return NULL;
    mxk_gnode *n = sym->outputs[0].node;
    for (uint32_t i = 1; i < sym->num_outputs; i++)
        if (sym->outputs[i].node != n)
            return NULL;
    return n;
}

void mxk_symbol_free(mxk_symbol *sym) {
    if (sym == NULL)
        return;
    for (uint32_t i = 0; i < sym->num_outputs; i++)
        mxki_gnode_release(sym->outputs[i].node);
    free(sym->outputs);
    free(sym);
}

uint32_t mxk_symbol_num_outputs(const mxk_symbol *sym) {
    return sym ? sym->num_outputs : 0;
}

mxk_status mxk_symbol_variable(const char *name, mxk_symbol **out) {
    if (out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_variable: out is NULL");
    *out = NULL;
    if (name == NULL || name[0] == '\0')
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_symbol_variable: a variable needs a non-empty name");
    mxk_gnode *n = mxki_gnode_variable(name);
    if (n == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "symbol: out of memory");
    mxk_status st = symbol_of_node(n, out);
    mxki_gnode_release(n);
    return st;
}

/* ------------------------------------------------------------------------- */
/* Automatic names                                                           */
/* ------------------------------------------------------------------------- */

/** One automatic-name counter: the hint (lower-cased operator name) and its next number. */
typedef struct name_counter {
    char *hint;
    uint64_t next;
} name_counter;

/** Process-wide counters of MXNet's NameManager, guarded by name_lock. */
static pthread_mutex_t name_lock = PTHREAD_MUTEX_INITIALIZER;
static name_counter *name_counters;
static uint32_t num_name_counters, cap_name_counters;

/**
 * MXNet's automatic name (python/mxnet/name.py NameManager.get): the lower-cased
 * operator name followed by a per-name counter starting at 0 ("fullyconnected0",
 * "fullyconnected1"). Thread-safe. *out is malloc'd. MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status auto_name(const char *op, char **out) {
    size_t n = strlen(op);
    char *hint = malloc(n + 1);
    if (hint == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory naming a node");
    for (size_t i = 0; i <= n; i++)
        hint[i] = (char)tolower((unsigned char)op[i]);
    pthread_mutex_lock(&name_lock);
    name_counter *c = NULL;
    for (uint32_t i = 0; i < num_name_counters && c == NULL; i++)
        if (strcmp(name_counters[i].hint, hint) == 0)
            c = &name_counters[i];
    if (c == NULL) {
        if (!grow((void **)&name_counters, &cap_name_counters, num_name_counters + 1,
                  sizeof *name_counters)) {
            pthread_mutex_unlock(&name_lock);
            free(hint);
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory naming a node");
        }
        c = &name_counters[num_name_counters++];
        c->hint = hint;
        c->next = 0;
        hint = NULL;
    }
    uint64_t number = c->next++;
    size_t len = strlen(c->hint) + 24;
    char *name = malloc(len);
    if (name != NULL)
        snprintf(name, len, "%s%llu", c->hint, (unsigned long long)number);
    pthread_mutex_unlock(&name_lock);
    free(hint);
    if (name == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory naming a node");
    *out = name;
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* Composition                                                               */
/* ------------------------------------------------------------------------- */

/**
 * Builds the node's attribute dictionary from the caller's key/value pairs
 * (MXSymbolCreateAtomicSymbol): a key equal to one of MXNet's hidden keys
 * ("lr_mult") is stored as "__lr_mult__"; "<arg>_<hidden key>" ("weight_lr_mult")
 * is rejected as MXNet does, since such attributes belong on the variable; a key
 * given twice is an error. Errors: MXK_ERR_INVALID_ARGUMENT, MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status build_node_attrs(const char *op, uint32_t n, const char *const *keys,
                                   const char *const *vals, mxk_attrs **out) {
    mxk_attrs *a = mxki_attrs_new();
    if (a == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        if (keys[i] == NULL || vals[i] == NULL || keys[i][0] == '\0') {
            mxki_attrs_free(a);
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: attribute %u has a %s", op, i,
                                 keys[i] == NULL || keys[i][0] == '\0' ? "NULL or empty key"
                                                                       : "NULL value");
        }
        for (size_t h = 0; h < COUNTOF(mxnet_hidden_keys); h++) {
            size_t kl = strlen(keys[i]), hl = strlen(mxnet_hidden_keys[h]);
            if (kl > hl + 1 && strcmp(keys[i] + kl - hl, mxnet_hidden_keys[h]) == 0 &&
                keys[i][kl - hl - 1] == '_') {
                mxki_attrs_free(a);
                return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                     "%s: setting variable attributes with '%s' is not supported "
                                     "(deprecated in MXNet); create the variable with attribute "
                                     "'%s' and pass it as the input instead",
                                     op, keys[i], mxnet_hidden_keys[h]);
            }
        }
        char buf[512];
        const char *k =
            stored_key(keys[i], mxnet_hidden_keys, COUNTOF(mxnet_hidden_keys), buf, sizeof buf);
        if (k == NULL) {
            mxki_attrs_free(a);
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: attribute key too long", op);
        }
        if (mxki_attrs_get(a, k) != NULL) {
            mxki_attrs_free(a);
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: attribute '%s' given twice", op,
                                 keys[i]);
        }
        if (mxki_attrs_set(a, k, vals[i]) != MXK_OK) {
            mxki_attrs_free(a);
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
        }
    }
    *out = a;
    return MXK_OK;
}

/** Index of `name` in a name list, or UINT32_MAX. */
static uint32_t name_index(const mxk_name_list *l, const char *name) {
    for (uint32_t i = 0; l != NULL && i < l->count; i++)
        if (strcmp(l->names[i], name) == 0)
            return i;
    return UINT32_MAX;
}

/** Name of input slot i of an operator: argument i, or aux state i - num_args. */
const char *mxki_op_slot_name(const mxk_op_params *p, uint32_t i) {
    uint32_t na = p->in_names->count;
    return i < na ? p->in_names->names[i] : p->aux_names->names[i - na];
}

/** DefaultVarName's variable "<node>_<arg>" with the node's attributes (symbol_internal.h). */
mxk_gnode *mxki_gnode_default_var(const char *node_name, const char *arg, const mxk_attrs *attrs) {
    size_t len = strlen(node_name) + strlen(arg) + 2;
    char *vname = malloc(len);
    mxk_gnode *v = NULL;
    if (vname != NULL) {
        snprintf(vname, len, "%s%s%s", node_name, node_name[0] ? "_" : "", arg);
        v = mxki_gnode_variable(vname);
        free(vname);
    }
    if (v != NULL && mxki_attrs_merge(v->attrs, attrs) != MXK_OK) {
        mxki_gnode_release(v);
        v = NULL;
    }
    return v;
}

/** Writes "data, weight, bias" (arguments, then aux states) of an operator into buf. */
static const char *slot_names(const mxk_op_params *p, char *buf, size_t size) {
    size_t pos = 0;
    uint32_t total = p->in_names->count + p->aux_names->count;
    buf[0] = '\0';
    for (uint32_t i = 0; i < total && pos < size; i++) {
        int w = snprintf(buf + pos, size - pos, i ? ", %s" : "%s", mxki_op_slot_name(p, i));
        if (w < 0)
            break;
        pos += (size_t)w;
    }
    if (total == 0)
        snprintf(buf, size, "(none)");
    return buf;
}

mxk_status mxki_gnode_set_input_var_hints(mxk_gnode *n) {
    if (n->op == NULL || n->op->op->def.input_var_attrs == NULL)
        return MXK_OK;
    const mxk_op_def *d = &n->op->op->def;
    mxk_status st = MXK_OK;
    for (uint32_t i = 0; i < n->num_inputs && st == MXK_OK; i++) {
        mxk_gnode *v = n->inputs[i].node;
        if (v == NULL || v->op != NULL)
            continue;
        mxk_name_list *kv = mxki_name_list_new();
        if (kv == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", d->name);
        mxk_error_sink sink;
        mxki_error_sink_clear(&sink);
        if (d->input_var_attrs(n->op->param, i, kv, &sink) != MXK_OK)
            st = mxki_set_error_from_sink(&sink, "%s: input %u: ", d->name, i);
        else if (kv->count % 2 != 0)
            st = mxk_set_error(MXK_ERR_ABI,
                               "%s: input_var_attrs for input %u gave %u strings, not key/value "
                               "pairs",
                               d->name, i, kv->count);
        for (uint32_t k = 0; st == MXK_OK && k + 1 < kv->count; k += 2)
            if (mxki_attrs_get(v->attrs, kv->names[k]) == NULL &&
                mxki_attrs_set(v->attrs, kv->names[k], kv->names[k + 1]) != MXK_OK)
                st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", d->name);
        mxki_name_list_free(kv);
    }
    return st;
}

int mxki_op_needs_all_inputs(const mxk_op_params *p) {
    const mxk_op_def *d = &p->op->def;
    mxk_inplace_pair pairs[MXK_MAX_INPLACE];
    return p->in_names->count + p->aux_names->count > 1 && d->no_gradient != NULL &&
           d->no_gradient(p->param) != 0 && d->forward_inplace != NULL &&
           d->forward_inplace(p->param, pairs, MXK_MAX_INPLACE) > 0;
}

/**
 * Fills the input slots of a new operator node (nnvm Symbol::Compose): positional
 * inputs take the first slots, named ones the slot of their argument or aux-state
 * name; every other slot gets a new variable "<name>_<slot>" carrying a copy of
 * the node's attributes, except for an operator that needs all its inputs
 * (mxki_op_needs_all_inputs: MXK_ERR_INVALID_ARGUMENT "Not enough argument to call
 * operator <op>", MXNet's words). `slots` (total entries, zero-filled) receives
 * entries holding one reference each. Errors (nothing held on failure):
 * MXK_ERR_INVALID_ARGUMENT, MXK_ERR_NOT_FOUND, MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status fill_slots(const char *op, const mxk_op_params *p, const char *name,
                             const mxk_attrs *node_attrs, uint32_t num_inputs,
                             const char *const *input_names, mxk_symbol *const *inputs,
                             mxk_gentry *slots) {
    uint32_t total = p->in_names->count + p->aux_names->count;
    char names[1024];
    mxk_status st = MXK_OK;
    if (input_names == NULL && num_inputs > total) {
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "%s: too many inputs: %u given, the operator takes %u (%s)", op,
                             num_inputs, total, slot_names(p, names, sizeof names));
    }
    if (num_inputs < total && mxki_op_needs_all_inputs(p))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "Not enough argument to call operator %s: it takes %u input%s (%s), "
                             "%u given, and creates no variables for the others",
                             op, total, total == 1 ? "" : "s", slot_names(p, names, sizeof names),
                             num_inputs);
    for (uint32_t i = 0; i < num_inputs && st == MXK_OK; i++) {
        uint32_t slot = i;
        if (input_names != NULL) {
            const char *in = input_names[i];
            if (in == NULL) {
                st = mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: input name %u is NULL", op, i);
                break;
            }
            slot = name_index(p->in_names, in);
            if (slot == UINT32_MAX) {
                uint32_t a = name_index(p->aux_names, in);
                slot = a == UINT32_MAX ? UINT32_MAX : p->in_names->count + a;
            }
            if (slot == UINT32_MAX) {
                st = mxk_set_error(MXK_ERR_NOT_FOUND,
                                   "%s: keyword argument '%s' not found; the operator's "
                                   "arguments are: %s",
                                   op, in, slot_names(p, names, sizeof names));
                break;
            }
            if (slots[slot].node != NULL) {
                st = mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: input '%s' given twice", op, in);
                break;
            }
        }
        const mxk_symbol *s = inputs[i];
        if (s == NULL || s->num_outputs != 1) {
            st = mxk_set_error(
                MXK_ERR_INVALID_ARGUMENT, "%s: input %u ('%s') %s; a single output is required", op,
                i, mxki_op_slot_name(p, slot), s == NULL ? "is NULL" : "has several outputs");
            break;
        }
        slots[slot] = s->outputs[0];
        mxki_gnode_retain(slots[slot].node);
    }
    for (uint32_t i = 0; i < total && st == MXK_OK; i++) {
        if (slots[i].node != NULL)
            continue;
        const char *arg = mxki_op_slot_name(p, i);
        mxk_gnode *v = mxki_gnode_default_var(name, arg, node_attrs);
        if (v == NULL) {
            st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory creating variable '%s_%s'",
                               name, arg);
            break;
        }
        slots[i] = (mxk_gentry){v, 0};
    }
    if (st != MXK_OK) {
        for (uint32_t i = 0; i < total; i++) {
            mxki_gnode_release(slots[i].node);
            slots[i].node = NULL;
        }
    }
    return st;
}

mxk_status mxk_symbol_create(const char *op, const char *name, uint32_t num_attrs,
                             const char *const *keys, const char *const *vals, uint32_t num_inputs,
                             const char *const *input_names, mxk_symbol *const *inputs,
                             mxk_symbol **out) {
    if (out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_create: out is NULL");
    *out = NULL;
    if (op == NULL || op[0] == '\0')
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_create: no operator name");
    if ((num_attrs > 0 && (keys == NULL || vals == NULL)) || (num_inputs > 0 && inputs == NULL))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_symbol_create: %s: NULL %s array with a non-zero count", op,
                             num_inputs > 0 && inputs == NULL ? "inputs" : "attribute");
    mxk_attrs *attrs = NULL;
    mxk_status st = build_node_attrs(op, num_attrs, keys, vals, &attrs);
    if (st != MXK_OK)
        return st;
    mxk_op_params *p = NULL;
    st = mxki_op_params_create(op, attrs, &p);
    if (st != MXK_OK) {
        mxki_attrs_free(attrs);
        if (name != NULL && name[0] != '\0') {
            char msg[MXK_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", mxki_last_error_message());
            mxk_set_error(st, "node '%s': %s", name, msg);
        }
        return st;
    }
    char *auto_nm = NULL;
    if (name == NULL || name[0] == '\0') {
        st = auto_name(op, &auto_nm);
        if (st != MXK_OK) {
            mxki_op_params_free(p);
            mxki_attrs_free(attrs);
            return st;
        }
        name = auto_nm;
    }
    uint32_t total = p->in_names->count + p->aux_names->count;
    mxk_gentry *slots = calloc(total ? total : 1, sizeof *slots);
    if (slots == NULL)
        st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == MXK_OK)
        st = fill_slots(op, p, name, attrs, num_inputs, input_names, inputs, slots);
    if (st != MXK_OK) {
        free(slots);
        free(auto_nm);
        mxki_op_params_free(p);
        mxki_attrs_free(attrs);
        return st;
    }
    mxk_gnode *n = mxki_gnode_op(p, name, attrs, total, slots);
    for (uint32_t i = 0; i < total; i++)
        mxki_gnode_release(slots[i].node); /* the node holds its own references now */
    free(slots);
    free(auto_nm);
    if (n == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "symbol: out of memory");
    st = mxki_gnode_set_input_var_hints(n);
    if (st == MXK_OK)
        st = symbol_of_node(n, out);
    mxki_gnode_release(n);
    return st;
}

mxk_status mxk_symbol_group(uint32_t num, mxk_symbol *const *symbols, mxk_symbol **out) {
    if (out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_group: out is NULL");
    *out = NULL;
    if (num == 0 || symbols == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_symbol_group: at least one symbol is required");
    uint64_t total = 0;
    for (uint32_t i = 0; i < num; i++) {
        if (symbols[i] == NULL)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_group: symbol %u is NULL",
                                 i);
        total += symbols[i]->num_outputs;
    }
    if (total > UINT32_MAX / 2)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_group: too many outputs");
    mxk_gentry *e = calloc((size_t)total, sizeof *e);
    if (e == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory grouping symbols");
    uint32_t k = 0;
    for (uint32_t i = 0; i < num; i++)
        for (uint32_t j = 0; j < symbols[i]->num_outputs; j++)
            e[k++] = symbols[i]->outputs[j];
    mxk_status st = mxki_symbol_from_entries(k, e, out);
    free(e);
    return st;
}

mxk_status mxk_symbol_copy(const mxk_symbol *sym, mxk_symbol **out) {
    if (out == NULL || sym == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_copy: NULL argument");
    *out = NULL;
    mxk_gnode **order = NULL;
    uint32_t n = 0;
    mxk_status st = mxki_graph_post_order(sym->outputs, sym->num_outputs, &order, &n);
    if (st != MXK_OK)
        return st;
    mxk_gnode **fresh = calloc(n ? n : 1, sizeof *fresh);
    mxk_node_index idx;
    int have_idx = 0;
    if (fresh == NULL)
        st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory copying a symbol");
    if (st == MXK_OK) {
        st = mxki_node_index_init(&idx, n);
        have_idx = st == MXK_OK;
    }
    for (uint32_t i = 0; i < n && st == MXK_OK; i++) {
        const mxk_gnode *o = order[i];
        st = mxki_node_index_put(&idx, o, i);
        if (st != MXK_OK)
            break;
        mxk_attrs *a = attrs_copy(o->attrs);
        if (a == NULL) {
            st = MXK_ERR_OUT_OF_MEMORY;
            break;
        }
        if (o->op == NULL) {
            fresh[i] = mxki_gnode_variable(o->name);
            if (fresh[i] != NULL) {
                mxki_attrs_free(fresh[i]->attrs);
                fresh[i]->attrs = a;
            } else {
                mxki_attrs_free(a);
            }
        } else {
            mxk_op_params *p = NULL;
            st = mxki_op_params_create(o->op->op->def.name, o->op->attrs, &p);
            if (st != MXK_OK) {
                mxki_attrs_free(a);
                break;
            }
            mxk_gentry *in = calloc(o->num_inputs ? o->num_inputs : 1, sizeof *in);
            if (in == NULL) {
                mxki_op_params_free(p);
                mxki_attrs_free(a);
                st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory copying a symbol");
                break;
            }
            for (uint32_t j = 0; j < o->num_inputs; j++)
                in[j] = (mxk_gentry){fresh[mxki_node_index_get(&idx, o->inputs[j].node)],
                                     o->inputs[j].index};
            fresh[i] = mxki_gnode_op(p, o->name, a, o->num_inputs, in);
            free(in);
        }
        if (fresh[i] == NULL)
            st = MXK_ERR_OUT_OF_MEMORY;
    }
    if (st == MXK_OK) {
        mxk_gentry *e = calloc(sym->num_outputs, sizeof *e);
        if (e == NULL) {
            st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory copying a symbol");
        } else {
            for (uint32_t i = 0; i < sym->num_outputs; i++)
                e[i] = (mxk_gentry){fresh[mxki_node_index_get(&idx, sym->outputs[i].node)],
                                    sym->outputs[i].index};
            st = mxki_symbol_from_entries(sym->num_outputs, e, out);
            free(e);
        }
    }
    for (uint32_t i = 0; fresh != NULL && i < n; i++)
        mxki_gnode_release(fresh[i]); /* the copy (or nothing, on failure) holds them now */
    free(fresh);
    if (have_idx)
        mxki_node_index_free(&idx);
    free(order);
    return st;
}

mxk_status mxk_symbol_get_output(const mxk_symbol *sym, uint32_t i, mxk_symbol **out) {
    if (out == NULL || sym == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_get_output: NULL argument");
    *out = NULL;
    if (i >= sym->num_outputs)
        return mxk_set_error(MXK_ERR_NOT_FOUND,
                             "mxk_symbol_get_output: index %u out of range (the symbol has %u "
                             "output%s)",
                             i, sym->num_outputs, sym->num_outputs == 1 ? "" : "s");
    return mxki_symbol_from_entries(1, &sym->outputs[i], out);
}

mxk_status mxk_symbol_get_internals(const mxk_symbol *sym, mxk_symbol **out) {
    if (out == NULL || sym == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_get_internals: NULL argument");
    *out = NULL;
    mxk_gnode **order = NULL;
    uint32_t n = 0;
    mxk_status st = mxki_graph_post_order(sym->outputs, sym->num_outputs, &order, &n);
    if (st != MXK_OK)
        return st;
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += mxki_gnode_num_visible(order[i]);
    mxk_gentry *e = calloc(total ? (size_t)total : 1, sizeof *e);
    if (e == NULL) {
        free(order);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory listing internals");
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < mxki_gnode_num_visible(order[i]); j++)
            e[k++] = (mxk_gentry){order[i], j};
    st = mxki_symbol_from_entries(k, e, out);
    free(e);
    free(order);
    return st;
}

/* ------------------------------------------------------------------------- */
/* Names                                                                     */
/* ------------------------------------------------------------------------- */

mxk_status mxki_symbol_input_nodes(const mxk_symbol *sym, int aux, mxk_gnode ***nodes,
                                   uint32_t *num) {
    *nodes = NULL;
    *num = 0;
    mxk_gnode **order = NULL;
    uint32_t n = 0;
    mxk_status st = mxki_graph_post_order(sym->outputs, sym->num_outputs, &order, &n);
    if (st != MXK_OK)
        return st;
    mxk_node_index aux_set;
    if (mxki_node_index_init(&aux_set, 16) != MXK_OK) {
        free(order);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "symbol: out of memory");
    }
    for (uint32_t i = 0; i < n && st == MXK_OK; i++) {
        const mxk_gnode *g = order[i];
        if (g->op == NULL)
            continue;
        for (uint32_t j = g->op->in_names->count; j < g->num_inputs && st == MXK_OK; j++)
            if (g->inputs[j].node->op == NULL)
                st = mxki_node_index_put(&aux_set, g->inputs[j].node, 1);
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < n && st == MXK_OK; i++) {
        if (order[i]->op != NULL)
            continue;
        int is_aux = mxki_node_index_get(&aux_set, order[i]) != UINT32_MAX;
        if (is_aux == (aux != 0))
            order[k++] = order[i];
    }
    mxki_node_index_free(&aux_set);
    if (st != MXK_OK) {
        free(order);
        return st;
    }
    *nodes = order;
    *num = k;
    return MXK_OK;
}

char *mxki_gentry_output_name(const mxk_gentry *e) {
    const mxk_gnode *n = e->node;
    const char *suffix = NULL;
    char buf[32];
    if (n->op == NULL) {
        char *s = strdup(n->name);
        if (s == NULL)
            mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
        return s;
    }
    if (e->index < n->op->out_names->count) {
        suffix = n->op->out_names->names[e->index];
    } else {
        snprintf(buf, sizeof buf, "output%u", e->index);
        suffix = buf;
    }
    size_t len = strlen(n->name) + strlen(suffix) + 2;
    char *s = malloc(len);
    if (s == NULL) {
        mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    if (n->name[0] == '\0')
        snprintf(s, len, "%s", suffix);
    else
        snprintf(s, len, "%s_%s", n->name, suffix);
    return s;
}

/** A NULL-terminated list for `count` strings (zero-filled), or NULL (last error set). */
static char **string_list_new(uint64_t count) {
    if (count >= UINT32_MAX) {
        mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "list too long");
        return NULL;
    }
    char **l = calloc((size_t)count + 1, sizeof *l);
    if (l == NULL)
        mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory listing names");
    return l;
}

mxk_status mxk_symbol_list_names(const mxk_symbol *sym, mxk_symbol_names kind, uint32_t *num,
                                 char ***names) {
    if (sym == NULL || num == NULL || names == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_list_names: NULL argument");
    *num = 0;
    *names = NULL;
    char **list = NULL;
    uint32_t count = 0;
    if (kind == MXK_SYMBOL_OUTPUTS) {
        list = string_list_new(sym->num_outputs);
        if (list == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "symbol: out of memory");
        for (uint32_t i = 0; i < sym->num_outputs; i++) {
            list[i] = mxki_gentry_output_name(&sym->outputs[i]);
            if (list[i] == NULL) {
                mxk_string_list_free(list);
                return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "symbol: out of memory");
            }
        }
        count = sym->num_outputs;
    } else if (kind == MXK_SYMBOL_ARGUMENTS || kind == MXK_SYMBOL_AUX_STATES) {
        mxk_gnode **nodes = NULL;
        mxk_status st = mxki_symbol_input_nodes(sym, kind == MXK_SYMBOL_AUX_STATES, &nodes, &count);
        if (st != MXK_OK)
            return st;
        list = string_list_new(count);
        for (uint32_t i = 0; list != NULL && i < count; i++) {
            list[i] = strdup(nodes[i]->name);
            if (list[i] == NULL) {
                mxk_string_list_free(list);
                list = NULL;
                mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory listing names");
            }
        }
        free(nodes);
        if (list == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "symbol: out of memory");
    } else {
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_symbol_list_names: unknown kind %d (0 arguments, 1 outputs, "
                             "2 auxiliary states)",
                             (int)kind);
    }
    *num = count;
    *names = list;
    return MXK_OK;
}

const char *mxk_symbol_name(const mxk_symbol *sym) {
    const mxk_gnode *n = mxki_symbol_single_node(sym);
    return n ? n->name : NULL;
}

/* ------------------------------------------------------------------------- */
/* Attributes                                                                */
/* ------------------------------------------------------------------------- */

mxk_status mxk_symbol_set_attr(mxk_symbol *sym, const char *key, const char *value) {
    if (sym == NULL || key == NULL || value == NULL || key[0] == '\0')
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_symbol_set_attr: NULL symbol, key or value, or empty key");
    mxk_gnode *n = mxki_symbol_single_node(sym);
    if (n == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "set_attr works only on a symbol of one node, not on a group "
                             "(key '%s')",
                             key);
    if (strcmp(key, "name") == 0) {
        /* nnvm Symbol::SetAttrs: "name" renames the node. */
        if (value[0] == '\0')
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "set_attr: a name must not be empty");
        char *nm = strdup(value);
        if (nm == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
        free(n->name);
        n->name = nm;
        return MXK_OK;
    }
    char buf[512];
    const char *k =
        stored_key(key, setattr_hidden_keys, COUNTOF(setattr_hidden_keys), buf, sizeof buf);
    if (k == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "set_attr: key too long");
    if (n->op != NULL && !mxki_attr_key_is_hidden(k))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "set_attr: node '%s' (%s): '%s' would change the operator's "
                             "parameters, which are fixed when the node is composed; user "
                             "attributes of operator nodes take the hidden form \"__%s__\"",
                             n->name, n->op->op->def.name, key, key);
    if (mxki_attrs_set(n->attrs, k, value) != MXK_OK)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    return MXK_OK;
}

const char *mxk_symbol_get_attr(const mxk_symbol *sym, const char *key) {
    const mxk_gnode *n = mxki_symbol_single_node(sym);
    if (n == NULL || key == NULL)
        return NULL;
    if (strcmp(key, "name") == 0)
        return n->name;
    if (strcmp(key, "op_name") == 0)
        return n->op ? n->op->op->def.name : "null";
    char buf[512];
    const char *k =
        stored_key(key, setattr_hidden_keys, COUNTOF(setattr_hidden_keys), buf, sizeof buf);
    return k ? mxki_attrs_get(n->attrs, k) : NULL;
}

/** MXNet's kReplacedHiddenKeys (src/c_api/c_api_symbolic.cc, 1.9.1). */
static const char *const replaced_hidden_keys[] = {
    "__ctx_group__", "__lr_mult__", "__wd_mult__", "__force_mirroring__", "__mirror_stage__",
};

/**
 * When `key` is one of the replaced hidden keys ("__lr_mult__"), writes its plain form
 * ("lr_mult") into out (when not NULL; 32 bytes) and returns its length; else 0.
 */
static size_t plain_alias(const char *key, char *out) {
    for (size_t i = 0; i < COUNTOF(replaced_hidden_keys); i++) {
        if (strcmp(key, replaced_hidden_keys[i]) == 0) {
            size_t len = strlen(key) - 4;
            if (out != NULL)
                snprintf(out, 32, "%.*s", (int)len, key + 2);
            return len;
        }
    }
    return 0;
}

/** Appends "<node>$<key>", value at pair *k of list; returns 0 when out of memory. */
static int list_attr_push(char **list, uint32_t *k, const char *node, const char *key,
                          const char *value) {
    size_t len = strlen(node) + strlen(key) + 2;
    char *nk = malloc(len), *val = strdup(value);
    if (nk == NULL || val == NULL) {
        free(nk);
        free(val);
        return 0;
    }
    snprintf(nk, len, "%s$%s", node, key);
    list[2 * *k] = nk;
    list[2 * *k + 1] = val;
    (*k)++;
    return 1;
}

mxk_status mxk_symbol_list_attrs(const mxk_symbol *sym, uint32_t *num, char ***kv) {
    if (sym == NULL || num == NULL || kv == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_symbol_list_attrs: NULL argument");
    *num = 0;
    *kv = NULL;
    mxk_gnode **order = NULL;
    uint32_t n = 0;
    mxk_status st = mxki_graph_post_order(sym->outputs, sym->num_outputs, &order, &n);
    if (st != MXK_OK)
        return st;
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < order[i]->attrs->count; j++)
            total += 1 + (plain_alias(order[i]->attrs->keys[j], NULL) > 0);
    char **list = string_list_new(2 * total);
    uint32_t k = 0;
    for (uint32_t i = 0; list != NULL && i < n; i++) {
        const mxk_gnode *g = order[i];
        for (uint32_t j = 0; list != NULL && j < g->attrs->count; j++) {
            const char *key = g->attrs->keys[j];
            char alias[32];
            size_t alias_len = plain_alias(key, alias);
            for (int pass = 0; pass < 1 + (alias_len > 0); pass++) {
                if (!list_attr_push(list, &k, g->name, pass ? alias : key, g->attrs->values[j])) {
                    mxk_string_list_free(list);
                    list = NULL;
                    mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory listing attributes");
                    break;
                }
            }
        }
    }
    free(order);
    if (list == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "symbol: out of memory");
    *num = k;
    *kv = list;
    return MXK_OK;
}
