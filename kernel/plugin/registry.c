/* The registry store: loaded plugins, their registrations, lookups and public queries. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "error.h"
#include "registry_internal.h"
#include "suggest.h"

/* A growable array of pointers. */
typedef struct ptr_array {
    void **items;
    uint32_t count;
    uint32_t capacity;
} ptr_array;

/* A rejected plugin candidate. */
typedef struct rejection {
    char *path;
    char *reason;
} rejection;

/*
 * The registry. Writers hold `lock`; readers too (lookups are rare: bind time
 * and imperative dispatch), which keeps the model simple. Entries never move.
 */
static struct {
    pthread_mutex_t lock;
    ptr_array plugins;    /* mxk_plugin_entry* */
    ptr_array ops;        /* mxk_op_entry* */
    ptr_array kernels;    /* mxk_kernel_entry* */
    ptr_array devices;    /* mxk_device_entry* */
    ptr_array iters;      /* mxk_iter_entry* */
    ptr_array transports; /* mxk_transport_entry* */
    ptr_array rejected;   /* rejection* */
    int shut_down;
} R = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int ptr_push(ptr_array *a, void *p) {
    if (a->count == a->capacity) {
        uint32_t cap = a->capacity ? a->capacity * 2 : 16;
        void **n = realloc(a->items, cap * sizeof *n);
        if (n == NULL)
            return 0;
        a->items = n;
        a->capacity = cap;
    }
    a->items[a->count++] = p;
    return 1;
}

/* Reserves room for `extra` more items so that a later sequence of pushes cannot fail. */
static int ptr_reserve(ptr_array *a, uint32_t extra) {
    if (a->count + extra <= a->capacity)
        return 1;
    uint32_t cap = a->capacity ? a->capacity : 16;
    while (cap < a->count + extra)
        cap *= 2;
    void **n = realloc(a->items, cap * sizeof *n);
    if (n == NULL)
        return 0;
    a->items = n;
    a->capacity = cap;
    return 1;
}

/* ---- ownership checks (caller may or may not hold the lock: take it) ---- */

int mxki_op_entry_named(const mxk_op_entry *op, const char *name) {
    if (strcmp(op->def.name, name) == 0)
        return 1;
    for (const char *const *a = op->def.aliases; a != NULL && *a != NULL; a++)
        if (strcmp(*a, name) == 0)
            return 1;
    return 0;
}

/* The operator called `name` (its name or an alias), or NULL. Caller holds the lock. */
static const mxk_op_entry *find_op_locked(const char *name) {
    for (uint32_t i = 0; i < R.ops.count; i++) {
        const mxk_op_entry *e = R.ops.items[i];
        if (mxki_op_entry_named(e, name))
            return e;
    }
    return NULL;
}

static const mxk_plugin_entry *owner_of_op_locked(const char *name) {
    const mxk_op_entry *e = find_op_locked(name);
    return e ? e->plugin : NULL;
}

/* The first of the staged op's name and aliases already registered, or NULL; sets *owner. */
static const char *taken_op_name_locked(const mxk_op_entry *op, const mxk_plugin_entry **owner) {
    if ((*owner = owner_of_op_locked(op->def.name)) != NULL)
        return op->def.name;
    for (const char *const *a = op->def.aliases; a != NULL && *a != NULL; a++)
        if ((*owner = owner_of_op_locked(*a)) != NULL)
            return *a;
    return NULL;
}

const mxk_plugin_entry *mxki_registry_owner_of_op(const char *name) {
    pthread_mutex_lock(&R.lock);
    const mxk_plugin_entry *p = owner_of_op_locked(name);
    pthread_mutex_unlock(&R.lock);
    return p;
}

static const mxk_plugin_entry *owner_of_device_locked(int32_t dev_type) {
    for (uint32_t i = 0; i < R.devices.count; i++) {
        const mxk_device_entry *e = R.devices.items[i];
        if (e->def.dev_type == dev_type)
            return e->plugin;
    }
    return NULL;
}

const mxk_plugin_entry *mxki_registry_owner_of_device(int32_t dev_type) {
    pthread_mutex_lock(&R.lock);
    const mxk_plugin_entry *p = owner_of_device_locked(dev_type);
    pthread_mutex_unlock(&R.lock);
    return p;
}

static const mxk_plugin_entry *owner_of_iterator_locked(const char *name) {
    for (uint32_t i = 0; i < R.iters.count; i++) {
        const mxk_iter_entry *e = R.iters.items[i];
        if (strcmp(e->def.name, name) == 0)
            return e->plugin;
    }
    return NULL;
}

const mxk_plugin_entry *mxki_registry_owner_of_iterator(const char *name) {
    pthread_mutex_lock(&R.lock);
    const mxk_plugin_entry *p = owner_of_iterator_locked(name);
    pthread_mutex_unlock(&R.lock);
    return p;
}

static const mxk_plugin_entry *owner_of_transport_locked(const char *name) {
    for (uint32_t i = 0; i < R.transports.count; i++) {
        const mxk_transport_entry *e = R.transports.items[i];
        if (strcmp(e->def.name, name) == 0)
            return e->plugin;
    }
    return NULL;
}

const mxk_plugin_entry *mxki_registry_owner_of_transport(const char *name) {
    pthread_mutex_lock(&R.lock);
    const mxk_plugin_entry *p = owner_of_transport_locked(name);
    pthread_mutex_unlock(&R.lock);
    return p;
}

static const mxk_plugin_entry *owner_of_kernel_locked(const char *op, int32_t dev_type,
                                                      const char *backend) {
    for (uint32_t i = 0; i < R.kernels.count; i++) {
        const mxk_kernel_entry *e = R.kernels.items[i];
        if (e->def.dev_type == dev_type && strcmp(e->def.op_name, op) == 0 &&
            strcmp(e->def.backend, backend) == 0)
            return e->plugin;
    }
    return NULL;
}

const mxk_plugin_entry *mxki_registry_owner_of_kernel(const char *op, int32_t dev_type,
                                                      const char *backend) {
    pthread_mutex_lock(&R.lock);
    const mxk_plugin_entry *p = owner_of_kernel_locked(op, dev_type, backend);
    pthread_mutex_unlock(&R.lock);
    return p;
}

const mxk_plugin_entry *mxki_registry_plugin_by_path(const char *real_path) {
    const mxk_plugin_entry *r = NULL;
    pthread_mutex_lock(&R.lock);
    for (uint32_t i = 0; i < R.plugins.count && r == NULL; i++) {
        const mxk_plugin_entry *p = R.plugins.items[i];
        if (strcmp(p->path, real_path) == 0)
            r = p;
    }
    pthread_mutex_unlock(&R.lock);
    return r;
}

const mxk_plugin_entry *mxki_registry_plugin_by_name(const char *name) {
    const mxk_plugin_entry *r = NULL;
    pthread_mutex_lock(&R.lock);
    for (uint32_t i = 0; i < R.plugins.count && r == NULL; i++) {
        const mxk_plugin_entry *p = R.plugins.items[i];
        if (strcmp(p->name, name) == 0)
            r = p;
    }
    pthread_mutex_unlock(&R.lock);
    return r;
}

/* ---- commit ---- */

mxk_status mxki_registry_commit(mxk_staging *st) {
    pthread_mutex_lock(&R.lock);
    const char *what = NULL, *name = NULL;
    const mxk_plugin_entry *owner = NULL;
    for (uint32_t i = 0; owner == NULL && i < st->num_ops; i++)
        if ((name = taken_op_name_locked(st->ops[i], &owner)) != NULL)
            what = "operator";
    for (uint32_t i = 0; owner == NULL && i < st->num_iters; i++)
        if ((owner = owner_of_iterator_locked(st->iters[i]->def.name)) != NULL)
            what = "iterator", name = st->iters[i]->def.name;
    for (uint32_t i = 0; owner == NULL && i < st->num_transports; i++)
        if ((owner = owner_of_transport_locked(st->transports[i]->def.name)) != NULL)
            what = "KVStore transport", name = st->transports[i]->def.name;
    for (uint32_t i = 0; owner == NULL && i < st->num_kernels; i++) {
        const mxk_op_kernel_def *k = &st->kernels[i]->def;
        if ((owner = owner_of_kernel_locked(k->op_name, k->dev_type, k->backend)) != NULL)
            what = "kernel of operator", name = k->op_name;
    }
    for (uint32_t i = 0; owner == NULL && i < st->num_devices; i++)
        if ((owner = owner_of_device_locked(st->devices[i]->def.dev_type)) != NULL)
            what = "device backend", name = mxk_dev_type_name(st->devices[i]->def.dev_type);
    if (owner != NULL) {
        pthread_mutex_unlock(&R.lock);
        return mxk_set_error(MXK_ERR_DUPLICATE,
                             "%s '%s' from plugin '%s' is already registered by plugin '%s'", what,
                             name, st->plugin->name, owner->name);
    }
    if (!ptr_reserve(&R.ops, st->num_ops) || !ptr_reserve(&R.kernels, st->num_kernels) ||
        !ptr_reserve(&R.devices, st->num_devices) || !ptr_reserve(&R.iters, st->num_iters) ||
        !ptr_reserve(&R.transports, st->num_transports) || !ptr_reserve(&R.plugins, 1)) {
        pthread_mutex_unlock(&R.lock);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory committing plugin '%s'",
                             st->plugin->name);
    }
    for (uint32_t i = 0; i < st->num_ops; i++)
        ptr_push(&R.ops, st->ops[i]);
    for (uint32_t i = 0; i < st->num_kernels; i++)
        ptr_push(&R.kernels, st->kernels[i]);
    for (uint32_t i = 0; i < st->num_devices; i++)
        ptr_push(&R.devices, st->devices[i]);
    for (uint32_t i = 0; i < st->num_iters; i++)
        ptr_push(&R.iters, st->iters[i]);
    for (uint32_t i = 0; i < st->num_transports; i++)
        ptr_push(&R.transports, st->transports[i]);
    mxk_plugin_entry *p = st->plugin;
    p->num_ops = st->num_ops;
    p->num_kernels = st->num_kernels;
    p->num_devices = st->num_devices;
    p->num_iterators = st->num_iters;
    p->num_transports = st->num_transports;
    ptr_push(&R.plugins, p);
    pthread_mutex_unlock(&R.lock);
    /* The entries now belong to the registry; free only the staging arrays. */
    free(st->ops);
    free(st->kernels);
    free(st->devices);
    free(st->iters);
    free(st->transports);
    memset(st, 0, sizeof *st);
    return MXK_OK;
}

void mxki_registry_reject(const char *path, const char *reason, int warn) {
    path = path ? path : "";
    reason = reason ? reason : "";
    pthread_mutex_lock(&R.lock);
    for (uint32_t i = 0; i < R.rejected.count; i++) {
        const rejection *old = R.rejected.items[i];
        if (strcmp(old->path, path) == 0 && strcmp(old->reason, reason) == 0) {
            pthread_mutex_unlock(&R.lock);
            return; /* recorded (and warned about) once per process */
        }
    }
    rejection *r = calloc(1, sizeof *r);
    if (r != NULL && ((r->path = strdup(path)) == NULL || (r->reason = strdup(reason)) == NULL ||
                      !ptr_push(&R.rejected, r))) {
        free(r->path);
        free(r->reason);
        free(r);
    }
    pthread_mutex_unlock(&R.lock);
    if (warn)
        mxki_log(MXK_LOG_WARNING, "plugin candidate %s rejected: %s", path, reason);
}

const char *mxk_plugin_origin(const char *name) {
    const mxk_plugin_entry *p = name ? mxki_registry_plugin_by_name(name) : NULL;
    return p ? p->origin : NULL;
}

void mxki_registry_shutdown_plugins(void) {
    pthread_mutex_lock(&R.lock);
    int already = R.shut_down;
    R.shut_down = 1;
    pthread_mutex_unlock(&R.lock);
    if (already)
        return;
    for (uint32_t i = R.plugins.count; i-- > 0;) {
        const mxk_plugin_entry *p = R.plugins.items[i];
        if (p->shutdown)
            p->shutdown();
    }
}

/* ---- lookups ---- */

const mxk_op_entry *mxki_registry_find_op(const char *name) {
    if (name == NULL)
        return NULL;
    pthread_mutex_lock(&R.lock);
    const mxk_op_entry *r = find_op_locked(name);
    pthread_mutex_unlock(&R.lock);
    return r;
}

const mxk_device_def *mxki_registry_device(int32_t dev_type) {
    const mxk_device_def *r = NULL;
    pthread_mutex_lock(&R.lock);
    for (uint32_t i = 0; i < R.devices.count && r == NULL; i++) {
        const mxk_device_entry *e = R.devices.items[i];
        if (e->def.dev_type == dev_type)
            r = &e->def;
    }
    pthread_mutex_unlock(&R.lock);
    return r;
}

const mxk_iter_entry *mxki_registry_find_iterator(const char *name) {
    const mxk_iter_entry *r = NULL;
    pthread_mutex_lock(&R.lock);
    for (uint32_t i = 0; i < R.iters.count && r == NULL; i++) {
        const mxk_iter_entry *e = R.iters.items[i];
        if (strcmp(e->def.name, name) == 0)
            r = e;
    }
    pthread_mutex_unlock(&R.lock);
    return r;
}

const mxk_transport_entry *mxki_registry_find_transport(const char *name) {
    const mxk_transport_entry *r = NULL;
    pthread_mutex_lock(&R.lock);
    for (uint32_t i = 0; i < R.transports.count && r == NULL; i++) {
        const mxk_transport_entry *e = R.transports.items[i];
        if (strcmp(e->def.name, name) == 0)
            r = e;
    }
    pthread_mutex_unlock(&R.lock);
    return r;
}

uint32_t mxki_registry_kernels_of(const mxk_op_entry *op, int32_t dev_type,
                                  const mxk_kernel_entry **out, uint32_t max) {
    uint32_t n = 0;
    pthread_mutex_lock(&R.lock);
    for (uint32_t i = 0; i < R.kernels.count && n < max; i++) {
        const mxk_kernel_entry *k = R.kernels.items[i];
        if (k->def.dev_type == dev_type && mxki_op_entry_named(op, k->def.op_name))
            out[n++] = k;
    }
    pthread_mutex_unlock(&R.lock);
    return n;
}

/* ---- the unknown-operator error ---- */

/* Operator i of the registry (an accessor for mxki_suggest_from; table unused). */
static const char *op_name_at(const void *table, uint32_t i) {
    (void)table;
    return mxk_op_name(i);
}

/* Appends "; " (unless first) and `entry` to the list in buf (pos bytes used) when it
 * fits whole with room for a closing "; ..."; else appends "; ..." once. */
static void append_entry(char *buf, size_t size, size_t *pos, const char *entry) {
    size_t need = (*pos ? 2 : 0) + strlen(entry);
    if (*pos + need + sizeof "; ..." <= size) {
        *pos += (size_t)snprintf(buf + *pos, size - *pos, "%s%s", *pos ? "; " : "", entry);
    } else if (*pos + sizeof "; ..." <= size && strcmp(buf + *pos - 3, "...") != 0) {
        *pos += (size_t)snprintf(buf + *pos, size - *pos, "; ...");
    }
}

mxk_status mxki_registry_unknown_op(const char *name) {
    char hint[512], skipped[1536] = "", entry[1024];
    mxki_suggest_from(name, NULL, mxk_op_count(), op_name_at, hint, sizeof hint);
    size_t pos = 0;
    const char *conf = NULL, *path = NULL, *reason = NULL;
    for (uint32_t i = 0; i < mxk_plugin_disabled_count(); i++)
        if (mxk_plugin_disabled_get(i, &conf) == MXK_OK) {
            snprintf(entry, sizeof entry, "%s (enabled = false)", conf);
            append_entry(skipped, sizeof skipped, &pos, entry);
        }
    for (uint32_t i = 0; i < mxk_plugin_rejected_count(); i++)
        if (mxk_plugin_rejected_get(i, &path, &reason) == MXK_OK) {
            snprintf(entry, sizeof entry, "%s (rejected: %s)", path, reason);
            append_entry(skipped, sizeof skipped, &pos, entry);
        }
    return mxk_set_error(
        MXK_ERR_NOT_FOUND, "unknown operator '%s': %s%s%s%s%s", name ? name : "(null)",
        mxk_plugin_count() ? "no loaded plugin registers it" : "no plugins are loaded", hint,
        skipped[0] ? " (plugins not loaded: " : "", skipped, skipped[0] ? ")" : "");
}

/* ---- public queries ---- */

uint32_t mxk_plugin_count(void) {
    pthread_mutex_lock(&R.lock);
    uint32_t n = R.plugins.count;
    pthread_mutex_unlock(&R.lock);
    return n;
}

mxk_status mxk_plugin_get(uint32_t i, mxk_plugin_record *out) {
    if (out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_plugin_get: out is NULL");
    if (out->struct_size < sizeof *out)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_plugin_get: out->struct_size is %u, less than %zu (set it to "
                             "sizeof(mxk_plugin_record))",
                             out->struct_size, sizeof *out);
    pthread_mutex_lock(&R.lock);
    if (i >= R.plugins.count) {
        pthread_mutex_unlock(&R.lock);
        return mxk_set_error(MXK_ERR_NOT_FOUND, "plugin index %u out of range (%u loaded)", i,
                             R.plugins.count);
    }
    const mxk_plugin_entry *p = R.plugins.items[i];
    pthread_mutex_unlock(&R.lock);
    /* A caller built against a later, larger record keeps its struct_size and its
     * further fields untouched. */
    uint32_t size = out->struct_size;
    memset(out, 0, sizeof *out);
    out->struct_size = size;
    out->name = p->name;
    out->version = p->version;
    out->description = p->description;
    out->path = p->path;
    out->abi_major = p->abi_major;
    out->abi_minor = p->abi_minor;
    out->negotiated_minor = p->negotiated_minor;
    out->num_ops = p->num_ops;
    out->num_kernels = p->num_kernels;
    out->num_devices = p->num_devices;
    out->num_iterators = p->num_iterators;
    out->num_transports = p->num_transports;
    return MXK_OK;
}

uint32_t mxk_plugin_rejected_count(void) {
    pthread_mutex_lock(&R.lock);
    uint32_t n = R.rejected.count;
    pthread_mutex_unlock(&R.lock);
    return n;
}

mxk_status mxk_plugin_rejected_get(uint32_t i, const char **path, const char **reason) {
    pthread_mutex_lock(&R.lock);
    if (i >= R.rejected.count) {
        pthread_mutex_unlock(&R.lock);
        return mxk_set_error(MXK_ERR_NOT_FOUND, "rejection index %u out of range", i);
    }
    const rejection *r = R.rejected.items[i];
    pthread_mutex_unlock(&R.lock);
    *path = r->path;
    *reason = r->reason;
    return MXK_OK;
}

/** The number of entries of one of the registry's lists, read under the lock. */
static uint32_t count_of(const ptr_array *list) {
    pthread_mutex_lock(&R.lock);
    uint32_t n = list->count;
    pthread_mutex_unlock(&R.lock);
    return n;
}

uint32_t mxk_op_count(void) {
    return count_of(&R.ops);
}

uint32_t mxk_iterator_count(void) {
    return count_of(&R.iters);
}

uint32_t mxk_kvstore_transport_count(void) {
    return count_of(&R.transports);
}

uint32_t mxk_device_backend_count(void) {
    return count_of(&R.devices);
}

const char *mxk_op_name(uint32_t i) {
    const char *r = NULL;
    pthread_mutex_lock(&R.lock);
    if (i < R.ops.count)
        r = ((const mxk_op_entry *)R.ops.items[i])->def.name;
    pthread_mutex_unlock(&R.lock);
    return r;
}

const char *mxk_op_canonical_name(const char *name) {
    const mxk_op_entry *e = mxki_registry_find_op(name);
    return e ? e->def.name : NULL;
}

const char *const *mxk_op_aliases(const char *name) {
    static const char *const none[1] = {NULL};
    const mxk_op_entry *e = mxki_registry_find_op(name);
    if (e == NULL)
        return NULL;
    return e->def.aliases ? e->def.aliases : none;
}

mxk_status mxk_op_get_doc(const char *name, mxk_op_doc *out) {
    if (name == NULL || out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_op_get_doc: NULL argument");
    const mxk_op_entry *e = mxki_registry_find_op(name);
    if (e == NULL)
        return mxki_registry_unknown_op(name);
    *out = (mxk_op_doc){e->def.name, e->def.description ? e->def.description : "", e->plugin->name,
                        e->def.num_attrs};
    return MXK_OK;
}

mxk_status mxk_op_get_attr_doc(const char *name, uint32_t i, mxk_op_attr_doc *out) {
    static const char *const type_names[] = {"int",    "float",        "boolean",
                                             "string", "Shape(tuple)", "enum"};
    if (name == NULL || out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_op_get_attr_doc: NULL argument");
    const mxk_op_entry *e = mxki_registry_find_op(name);
    if (e == NULL)
        return mxki_registry_unknown_op(name);
    if (i >= e->def.num_attrs)
        return mxk_set_error(MXK_ERR_NOT_FOUND, "operator '%s' has %u attributes; no attribute %u",
                             e->def.name, (unsigned)e->def.num_attrs, (unsigned)i);
    const mxk_attr_def *a = &e->def.attrs[i];
    uint32_t t = (uint32_t)a->type;
    *out = (mxk_op_attr_doc){a->name,
                             t < sizeof type_names / sizeof *type_names ? type_names[t] : "string",
                             a->required ? NULL : a->default_value,
                             a->enum_values,
                             a->doc ? a->doc : "",
                             a->required};
    return MXK_OK;
}

const char *mxk_op_plugin(const char *op) {
    const mxk_op_entry *e = mxki_registry_find_op(op);
    return e ? e->plugin->name : NULL;
}

/* 1 when kernel k computes the operator called `op` (registered under its name or an
 * alias, or named `op` exactly when no such operator is registered). Caller holds the lock. */
static int kernel_for_locked(const mxk_kernel_entry *k, const char *op) {
    const mxk_op_entry *e = find_op_locked(op);
    return e ? mxki_op_entry_named(e, k->def.op_name) : strcmp(k->def.op_name, op) == 0;
}

uint32_t mxk_op_kernel_count(const char *op) {
    uint32_t n = 0;
    pthread_mutex_lock(&R.lock);
    for (uint32_t i = 0; i < R.kernels.count; i++)
        if (kernel_for_locked(R.kernels.items[i], op))
            n++;
    pthread_mutex_unlock(&R.lock);
    return n;
}

mxk_status mxk_op_kernel_get(const char *op, uint32_t idx, int32_t *dev_type, const char **backend,
                             const char **plugin) {
    pthread_mutex_lock(&R.lock);
    for (uint32_t i = 0; i < R.kernels.count; i++) {
        const mxk_kernel_entry *k = R.kernels.items[i];
        if (!kernel_for_locked(k, op))
            continue;
        if (idx-- == 0) {
            pthread_mutex_unlock(&R.lock);
            *dev_type = k->def.dev_type;
            *backend = k->def.backend;
            *plugin = k->plugin->name;
            return MXK_OK;
        }
    }
    pthread_mutex_unlock(&R.lock);
    return mxk_set_error(MXK_ERR_NOT_FOUND, "operator '%s' has no kernel with that index", op);
}

const char *mxk_iterator_name(uint32_t i) {
    const char *r = NULL;
    pthread_mutex_lock(&R.lock);
    if (i < R.iters.count)
        r = ((const mxk_iter_entry *)R.iters.items[i])->def.name;
    pthread_mutex_unlock(&R.lock);
    return r;
}

const char *mxk_kvstore_transport_name(uint32_t i) {
    const char *r = NULL;
    pthread_mutex_lock(&R.lock);
    if (i < R.transports.count)
        r = ((const mxk_transport_entry *)R.transports.items[i])->def.name;
    pthread_mutex_unlock(&R.lock);
    return r;
}

const char *mxk_iterator_plugin(const char *name) {
    const mxk_iter_entry *e = name ? mxki_registry_find_iterator(name) : NULL;
    return e ? e->plugin->name : NULL;
}

const char *mxk_kvstore_transport_plugin(const char *name) {
    const mxk_transport_entry *e = name ? mxki_registry_find_transport(name) : NULL;
    return e ? e->plugin->name : NULL;
}

mxk_status mxk_device_get(uint32_t i, int32_t *dev_type, const char **name, const char **plugin) {
    pthread_mutex_lock(&R.lock);
    if (i >= R.devices.count) {
        pthread_mutex_unlock(&R.lock);
        return mxk_set_error(MXK_ERR_NOT_FOUND, "device backend index %u out of range", i);
    }
    const mxk_device_entry *e = R.devices.items[i];
    pthread_mutex_unlock(&R.lock);
    if (dev_type)
        *dev_type = e->def.dev_type;
    if (name)
        *name = e->def.name;
    if (plugin)
        *plugin = e->plugin->name;
    return MXK_OK;
}

int32_t mxk_device_count(int32_t dev_type) {
    const mxk_device_def *d = mxki_registry_device(dev_type);
    return d ? d->device_count() : 0;
}
