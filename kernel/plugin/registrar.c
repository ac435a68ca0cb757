/*
 * The registrar handed to plugin init: validates definitions, deep-copies them
 * into zero-filled host-size structs (so slots an older plugin does not know read
 * as NULL/0) and stages them until the plugin's init succeeds.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "error.h"
#include "registry_internal.h"

/* Smallest struct sizes accepted for ABI 1.0: everything up to the last required slot. */
#define END_OF(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
#define MIN_ATTR_DEF_SIZE END_OF(mxk_attr_def, type)
#define MIN_OP_DEF_SIZE END_OF(mxk_op_def, infer_shape)
#define MIN_KERNEL_DEF_SIZE END_OF(mxk_op_kernel_def, forward)
#define MIN_DEVICE_DEF_SIZE END_OF(mxk_device_def, fill)
#define MIN_ITER_DEF_SIZE END_OF(mxk_iter_def, describe)
#define MIN_TRANSPORT_DEF_SIZE END_OF(mxk_kvstore_transport_def, barrier)

/* Records the first failure of this plugin's registrations and returns the code. */
static mxk_status fail(mxk_staging *st, mxk_error_sink *err, mxk_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static mxk_status fail(mxk_staging *st, mxk_error_sink *err, mxk_status code, const char *fmt,
                       ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (st->first_error == MXK_OK) {
        st->first_error = code;
        snprintf(st->first_error_msg, sizeof st->first_error_msg, "%s", msg);
    }
    return mxki_sink_set(err, code, "%s", msg);
}

/* Copies min(src_size, dst_size) bytes into a zero-filled dst. */
static void copy_struct(void *dst, size_t dst_size, const void *src, size_t src_size) {
    memset(dst, 0, dst_size);
    memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
}

static int valid_op_name(const char *s) {
    if (s == NULL || !(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

static int valid_backend_name(const char *s) {
    if (s == NULL || *s == '\0')
        return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '-' || *s == '.'))
            return 0;
    return 1;
}

static int valid_dev_type(int32_t t) {
    return t == MXK_DEV_CPU || t == MXK_DEV_GPU || t == MXK_DEV_CPU_PINNED;
}

/* strdup that accepts NULL. Returns 0 on allocation failure of a non-NULL string. */
static int dup_str(const char **dst, const char *src) {
    if (src == NULL) {
        *dst = NULL;
        return 1;
    }
    *dst = strdup(src);
    return *dst != NULL;
}

/* Duplicates a NULL-terminated string list. */
static int dup_list(const char *const **dst, const char *const *src) {
    *dst = NULL;
    if (src == NULL)
        return 1;
    size_t n = 0;
    while (src[n])
        n++;
    char **c = calloc(n + 1, sizeof *c);
    if (c == NULL)
        return 0;
    for (size_t i = 0; i < n; i++) {
        c[i] = strdup(src[i]);
        if (c[i] == NULL) {
            for (size_t j = 0; j < i; j++)
                free(c[j]);
            free(c);
            return 0;
        }
    }
    *dst = (const char *const *)c;
    return 1;
}

static void free_list(const char *const *l) {
    if (l == NULL)
        return;
    for (size_t i = 0; l[i]; i++)
        free((char *)l[i]);
    free((void *)l);
}

/* Validates and copies an attribute schema (elements strided by attrs[0].struct_size). */
static mxk_status copy_schema(mxk_staging *st, const char *owner, const mxk_attr_def *src,
                              uint32_t n, const mxk_attr_def **dst, mxk_error_sink *err) {
    *dst = NULL;
    if (n == 0)
        return MXK_OK;
    if (src == NULL)
        return fail(st, err, MXK_ERR_ABI, "%s: num_attrs is %u but attrs is NULL", owner, n);
    size_t stride = src->struct_size;
    if (stride < MIN_ATTR_DEF_SIZE)
        return fail(st, err, MXK_ERR_ABI, "%s: mxk_attr_def.struct_size %zu is smaller than %zu",
                    owner, stride, (size_t)MIN_ATTR_DEF_SIZE);
    mxk_attr_def *c = calloc(n, sizeof *c);
    if (c == NULL)
        return fail(st, err, MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", owner);
    for (uint32_t i = 0; i < n; i++) {
        const mxk_attr_def *s = (const mxk_attr_def *)((const char *)src + i * stride);
        copy_struct(&c[i], sizeof c[i], s, stride);
        c[i].struct_size = sizeof c[i];
        mxk_error_sink inner;
        mxki_error_sink_clear(&inner);
        mxk_status rc = mxki_attr_def_validate(&c[i], &inner);
        for (uint32_t j = 0; rc == MXK_OK && j < i; j++)
            if (strcmp(c[j].name, c[i].name) == 0)
                rc = mxki_sink_set(&inner, MXK_ERR_ABI, "attribute '%s' is declared twice",
                                   c[i].name);
        if (rc != MXK_OK) {
            free(c);
            return fail(st, err, MXK_ERR_ABI, "%s: %s", owner, inner.msg);
        }
    }
    /* Now deep-copy the strings (validation used the plugin's pointers). */
    for (uint32_t i = 0; i < n; i++) {
        if (!dup_str(&c[i].name, c[i].name) || !dup_str(&c[i].default_value, c[i].default_value) ||
            !dup_str(&c[i].enum_values, c[i].enum_values) || !dup_str(&c[i].doc, c[i].doc)) {
            *dst = c; /* partially copied; freed by the caller through free_schema */
            return fail(st, err, MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", owner);
        }
    }
    *dst = c;
    return MXK_OK;
}

static void free_schema(const mxk_attr_def *s, uint32_t n) {
    if (s == NULL)
        return;
    for (uint32_t i = 0; i < n; i++) {
        free((char *)s[i].name);
        free((char *)s[i].default_value);
        free((char *)s[i].enum_values);
        free((char *)s[i].doc);
    }
    free((void *)s);
}

void mxki_op_entry_free(mxk_op_entry *e) {
    if (e == NULL)
        return;
    free((char *)e->def.name);
    free((char *)e->def.description);
    free_schema(e->def.attrs, e->def.num_attrs);
    free_list(e->def.arguments);
    free_list(e->def.outputs);
    free_list(e->def.aux_states);
    free_list(e->def.aliases);
    free(e);
}

void mxki_kernel_entry_free(mxk_kernel_entry *e) {
    if (e == NULL)
        return;
    free((char *)e->def.op_name);
    free((char *)e->def.backend);
    free(e);
}

/* Appends p to a staged pointer array. */
static int stage_push(void ***arr, uint32_t *n, void *p) {
    void **a = realloc(*arr, (*n + 1) * sizeof *a);
    if (a == NULL)
        return 0;
    a[(*n)++] = p;
    *arr = a;
    return 1;
}

/* Owner of the operator name or alias `name` among registered and staged operators, or NULL. */
static const mxk_plugin_entry *op_name_owner(const mxk_staging *st, const char *name) {
    const mxk_plugin_entry *owner = mxki_registry_owner_of_op(name);
    for (uint32_t i = 0; owner == NULL && i < st->num_ops; i++)
        if (mxki_op_entry_named(st->ops[i], name))
            owner = st->plugin;
    return owner;
}

/* Checks an operator's name and aliases: valid, distinct, and not taken by any operator
 * (name or alias) registered or staged. MXK_ERR_ABI / MXK_ERR_DUPLICATE with the name. */
static mxk_status check_op_names(mxk_staging *st, const char *name, const char *const *aliases,
                                 mxk_error_sink *err) {
    for (size_t i = 0; aliases != NULL && aliases[i] != NULL; i++) {
        if (!valid_op_name(aliases[i]))
            return fail(st, err, MXK_ERR_ABI, "operator '%s': alias '%s' is not a valid name", name,
                        aliases[i]);
        if (strcmp(aliases[i], name) == 0)
            return fail(st, err, MXK_ERR_ABI, "operator '%s': alias '%s' is its own name", name,
                        aliases[i]);
        for (size_t j = 0; j < i; j++)
            if (strcmp(aliases[j], aliases[i]) == 0)
                return fail(st, err, MXK_ERR_ABI, "operator '%s': alias '%s' is listed twice", name,
                            aliases[i]);
    }
    const char *taken = name;
    const mxk_plugin_entry *owner = op_name_owner(st, name);
    for (size_t i = 0; owner == NULL && aliases != NULL && aliases[i] != NULL; i++)
        owner = op_name_owner(st, taken = aliases[i]);
    if (owner != NULL)
        return fail(st, err, MXK_ERR_DUPLICATE,
                    "operator '%s' from plugin '%s' is already registered by plugin '%s'", taken,
                    st->plugin->name, owner->name);
    return MXK_OK;
}

static mxk_status register_op(mxk_registrar *reg, const mxk_op_def *def, mxk_error_sink *err) {
    mxk_staging *st = reg->impl;
    if (def == NULL)
        return fail(st, err, MXK_ERR_INVALID_ARGUMENT, "register_op: NULL definition");
    if (def->struct_size < MIN_OP_DEF_SIZE)
        return fail(
            st, err, MXK_ERR_ABI,
            "register_op: mxk_op_def.struct_size %u is smaller than the ABI 1.0 minimum %zu",
            def->struct_size, (size_t)MIN_OP_DEF_SIZE);
    if (!valid_op_name(def->name))
        return fail(st, err, MXK_ERR_ABI, "register_op: '%s' is not a valid operator name",
                    def->name ? def->name : "(null)");
    if (def->infer_shape == NULL)
        return fail(st, err, MXK_ERR_ABI, "operator '%s': infer_shape is required", def->name);
    if (def->parse_param != NULL && def->struct_size >= END_OF(mxk_op_def, free_param) &&
        def->free_param == NULL)
        return fail(st, err, MXK_ERR_ABI, "operator '%s': parse_param needs free_param", def->name);
    const char *const *aliases =
        def->struct_size >= END_OF(mxk_op_def, aliases) ? def->aliases : NULL;
    mxk_status rc = check_op_names(st, def->name, aliases, err);
    if (rc != MXK_OK)
        return rc;
    mxk_op_entry *e = calloc(1, sizeof *e);
    if (e == NULL)
        return fail(st, err, MXK_ERR_OUT_OF_MEMORY, "register_op: out of memory");
    copy_struct(&e->def, sizeof e->def, def, def->struct_size);
    e->def.struct_size = sizeof e->def;
    e->plugin = st->plugin;
    /* Strings and lists are replaced by owned copies; clear first so free is safe. */
    const char *name = e->def.name, *desc = e->def.description;
    const char *const *args = e->def.arguments, *const *outs = e->def.outputs,
                      *const *aux = e->def.aux_states;
    const mxk_attr_def *schema = e->def.attrs;
    e->def.name = e->def.description = NULL;
    e->def.arguments = e->def.outputs = e->def.aux_states = e->def.aliases = NULL;
    e->def.attrs = NULL;
    char owner_desc[160];
    snprintf(owner_desc, sizeof owner_desc, "operator '%s'", name);
    if (!dup_str(&e->def.name, name) || !dup_str(&e->def.description, desc) ||
        !dup_list(&e->def.arguments, args) || !dup_list(&e->def.outputs, outs) ||
        !dup_list(&e->def.aux_states, aux) || !dup_list(&e->def.aliases, aliases)) {
        mxki_op_entry_free(e);
        return fail(st, err, MXK_ERR_OUT_OF_MEMORY, "register_op: out of memory");
    }
    rc = copy_schema(st, owner_desc, schema, e->def.num_attrs, &e->def.attrs, err);
    if (rc != MXK_OK) {
        mxki_op_entry_free(e);
        return rc;
    }
    if (!stage_push((void ***)&st->ops, &st->num_ops, e)) {
        mxki_op_entry_free(e);
        return fail(st, err, MXK_ERR_OUT_OF_MEMORY, "register_op: out of memory");
    }
    return MXK_OK;
}

static mxk_status register_kernel(mxk_registrar *reg, const mxk_op_kernel_def *def,
                                  mxk_error_sink *err) {
    mxk_staging *st = reg->impl;
    if (def == NULL)
        return fail(st, err, MXK_ERR_INVALID_ARGUMENT, "register_kernel: NULL definition");
    if (def->struct_size < MIN_KERNEL_DEF_SIZE)
        return fail(st, err, MXK_ERR_ABI,
                    "register_kernel: mxk_op_kernel_def.struct_size %u is smaller than the ABI "
                    "1.0 minimum %zu",
                    def->struct_size, (size_t)MIN_KERNEL_DEF_SIZE);
    if (!valid_op_name(def->op_name))
        return fail(st, err, MXK_ERR_ABI, "register_kernel: '%s' is not a valid operator name",
                    def->op_name ? def->op_name : "(null)");
    if (!valid_dev_type(def->dev_type))
        return fail(st, err, MXK_ERR_ABI, "kernel of '%s': unknown device type %d", def->op_name,
                    def->dev_type);
    if (def->forward == NULL)
        return fail(st, err, MXK_ERR_ABI, "kernel of '%s': forward is required", def->op_name);
    const char *backend = def->backend ? def->backend : st->plugin->name;
    if (!valid_backend_name(backend))
        return fail(st, err, MXK_ERR_ABI, "kernel of '%s': '%s' is not a valid backend name",
                    def->op_name, backend);
    if (def->struct_size >= END_OF(mxk_op_kernel_def, destroy_state) && def->create_state != NULL &&
        def->destroy_state == NULL)
        return fail(st, err, MXK_ERR_ABI, "kernel of '%s': create_state needs destroy_state",
                    def->op_name);
    if (def->struct_size >= END_OF(mxk_op_kernel_def, free_param) && def->parse_param != NULL &&
        def->free_param == NULL)
        return fail(st, err, MXK_ERR_ABI, "kernel of '%s': parse_param needs free_param",
                    def->op_name);
    const mxk_plugin_entry *owner =
        mxki_registry_owner_of_kernel(def->op_name, def->dev_type, backend);
    for (uint32_t i = 0; owner == NULL && i < st->num_kernels; i++) {
        const mxk_op_kernel_def *k = &st->kernels[i]->def;
        if (strcmp(k->op_name, def->op_name) == 0 && k->dev_type == def->dev_type &&
            strcmp(k->backend, backend) == 0)
            owner = st->plugin;
    }
    if (owner != NULL)
        return fail(st, err, MXK_ERR_DUPLICATE,
                    "kernel of operator '%s' for device type %d and backend '%s' from plugin "
                    "'%s' is already registered by plugin '%s'",
                    def->op_name, def->dev_type, backend, st->plugin->name, owner->name);
    mxk_kernel_entry *e = calloc(1, sizeof *e);
    if (e == NULL)
        return fail(st, err, MXK_ERR_OUT_OF_MEMORY, "register_kernel: out of memory");
    copy_struct(&e->def, sizeof e->def, def, def->struct_size);
    e->def.struct_size = sizeof e->def;
    e->def.op_name = e->def.backend = NULL;
    e->def.priority += st->priority_bonus;
    e->plugin = st->plugin;
    if (!dup_str(&e->def.op_name, def->op_name) || !dup_str(&e->def.backend, backend) ||
        !stage_push((void ***)&st->kernels, &st->num_kernels, e)) {
        mxki_kernel_entry_free(e);
        return fail(st, err, MXK_ERR_OUT_OF_MEMORY, "register_kernel: out of memory");
    }
    return MXK_OK;
}

static mxk_status register_device(mxk_registrar *reg, const mxk_device_def *def,
                                  mxk_error_sink *err) {
    mxk_staging *st = reg->impl;
    if (def == NULL)
        return fail(st, err, MXK_ERR_INVALID_ARGUMENT, "register_device: NULL definition");
    if (def->struct_size < MIN_DEVICE_DEF_SIZE)
        return fail(st, err, MXK_ERR_ABI,
                    "register_device: mxk_device_def.struct_size %u is smaller than the ABI 1.0 "
                    "minimum %zu",
                    def->struct_size, (size_t)MIN_DEVICE_DEF_SIZE);
    if (!valid_dev_type(def->dev_type))
        return fail(st, err, MXK_ERR_ABI, "register_device: unknown device type %d", def->dev_type);
    if (!valid_backend_name(def->name) || !def->device_count || !def->get_properties ||
        !def->alloc || !def->free || !def->copy || !def->fill)
        return fail(st, err, MXK_ERR_ABI,
                    "register_device: device type %d needs a name and the slots device_count, "
                    "get_properties, alloc, free, copy and fill",
                    def->dev_type);
    /* ABI 1.4 slots: read only when the plugin's struct covers them. */
    if (def->struct_size >= END_OF(mxk_device_def, host_alloc) && def->host_alloc != NULL &&
        (def->struct_size < END_OF(mxk_device_def, host_free) || def->host_free == NULL))
        return fail(st, err, MXK_ERR_ABI,
                    "register_device: device type %d: host_alloc needs host_free", def->dev_type);
    const mxk_plugin_entry *owner = mxki_registry_owner_of_device(def->dev_type);
    for (uint32_t i = 0; owner == NULL && i < st->num_devices; i++)
        if (st->devices[i]->def.dev_type == def->dev_type)
            owner = st->plugin;
    if (owner != NULL)
        return fail(st, err, MXK_ERR_DUPLICATE,
                    "device backend for device type %d from plugin '%s' is already registered "
                    "by plugin '%s'",
                    def->dev_type, st->plugin->name, owner->name);
    mxk_device_entry *e = calloc(1, sizeof *e);
    if (e == NULL)
        return fail(st, err, MXK_ERR_OUT_OF_MEMORY, "register_device: out of memory");
    copy_struct(&e->def, sizeof e->def, def, def->struct_size);
    e->def.struct_size = sizeof e->def;
    e->plugin = st->plugin;
    if (!dup_str(&e->def.name, def->name) ||
        !stage_push((void ***)&st->devices, &st->num_devices, e)) {
        free((char *)e->def.name);
        free(e);
        return fail(st, err, MXK_ERR_OUT_OF_MEMORY, "register_device: out of memory");
    }
    return MXK_OK;
}

/*
 * The parts iterators and transports share: a name, a description and an
 * attribute schema, which `copy_named` replaces by owned copies in an entry
 * whose struct was already copied from the plugin's.
 */
typedef struct named_fields {
    const char **name;
    const char **description;
    const mxk_attr_def **attrs;
    uint32_t num_attrs;
} named_fields;

static void free_named(named_fields f) {
    free((char *)*f.name);
    free((char *)*f.description);
    free_schema(*f.attrs, f.num_attrs);
}

static mxk_status copy_named(mxk_staging *st, const char *kind, named_fields f,
                             mxk_error_sink *err) {
    const char *name = *f.name, *desc = *f.description;
    const mxk_attr_def *attrs = *f.attrs;
    *f.name = *f.description = NULL;
    *f.attrs = NULL;
    char owner_desc[160];
    snprintf(owner_desc, sizeof owner_desc, "%s '%s'", kind, name);
    if (!dup_str(f.name, name) || !dup_str(f.description, desc))
        return fail(st, err, MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", owner_desc);
    return copy_schema(st, owner_desc, attrs, f.num_attrs, f.attrs, err);
}

/* Validates a name-keyed definition's header: size, name, required slots, uniqueness. */
static mxk_status check_named(mxk_staging *st, const char *kind, const char *fn, uint32_t size,
                              size_t min_size, const char *name, int slots_ok,
                              const char *slot_names, const mxk_plugin_entry *owner,
                              mxk_error_sink *err) {
    if (size < min_size)
        return fail(st, err, MXK_ERR_ABI,
                    "%s: struct_size %u is smaller than the ABI 1.0 minimum %zu", fn, size,
                    min_size);
    if (!valid_op_name(name) || !slots_ok)
        return fail(st, err, MXK_ERR_ABI, "%s: '%s' needs a valid name and the slots %s", fn,
                    name ? name : "(null)", slot_names);
    if (owner != NULL)
        return fail(st, err, MXK_ERR_DUPLICATE,
                    "%s '%s' from plugin '%s' is already registered by plugin '%s'", kind, name,
                    st->plugin->name, owner->name);
    return MXK_OK;
}

static mxk_status register_iterator(mxk_registrar *reg, const mxk_iter_def *def,
                                    mxk_error_sink *err) {
    mxk_staging *st = reg->impl;
    if (def == NULL)
        return fail(st, err, MXK_ERR_INVALID_ARGUMENT, "register_iterator: NULL definition");
    int slots = def->struct_size >= MIN_ITER_DEF_SIZE && def->create && def->destroy &&
                def->reset && def->next && def->current && def->describe;
    const mxk_plugin_entry *owner = NULL;
    if (slots && def->name) {
        owner = mxki_registry_owner_of_iterator(def->name);
        for (uint32_t i = 0; owner == NULL && i < st->num_iters; i++)
            if (strcmp(st->iters[i]->def.name, def->name) == 0)
                owner = st->plugin;
    }
    mxk_status rc = check_named(st, "iterator", "register_iterator", def->struct_size,
                                MIN_ITER_DEF_SIZE, def->name, slots,
                                "create, destroy, reset, next, current and describe", owner, err);
    if (rc != MXK_OK)
        return rc;
    mxk_iter_entry *e = calloc(1, sizeof *e);
    if (e == NULL)
        return fail(st, err, MXK_ERR_OUT_OF_MEMORY, "register_iterator: out of memory");
    copy_struct(&e->def, sizeof e->def, def, def->struct_size);
    e->def.struct_size = sizeof e->def;
    e->plugin = st->plugin;
    named_fields f = {&e->def.name, &e->def.description, &e->def.attrs, e->def.num_attrs};
    rc = copy_named(st, "iterator", f, err);
    if (rc == MXK_OK && !stage_push((void ***)&st->iters, &st->num_iters, e))
        rc = fail(st, err, MXK_ERR_OUT_OF_MEMORY, "register_iterator: out of memory");
    if (rc != MXK_OK) {
        free_named(f);
        free(e);
    }
    return rc;
}

static mxk_status register_transport(mxk_registrar *reg, const mxk_kvstore_transport_def *def,
                                     mxk_error_sink *err) {
    mxk_staging *st = reg->impl;
    if (def == NULL)
        return fail(st, err, MXK_ERR_INVALID_ARGUMENT,
                    "register_kvstore_transport: NULL definition");
    int slots = def->struct_size >= MIN_TRANSPORT_DEF_SIZE && def->create && def->destroy &&
                def->rank && def->num_workers && def->init && def->push && def->pull &&
                def->barrier;
    const mxk_plugin_entry *owner = NULL;
    if (slots && def->name) {
        owner = mxki_registry_owner_of_transport(def->name);
        for (uint32_t i = 0; owner == NULL && i < st->num_transports; i++)
            if (strcmp(st->transports[i]->def.name, def->name) == 0)
                owner = st->plugin;
    }
    mxk_status rc =
        check_named(st, "KVStore transport", "register_kvstore_transport", def->struct_size,
                    MIN_TRANSPORT_DEF_SIZE, def->name, slots,
                    "create, destroy, rank, num_workers, init, push, pull and barrier", owner, err);
    if (rc != MXK_OK)
        return rc;
    /* ABI 1.5: the server slots come together. */
    if (def->struct_size >= END_OF(mxk_kvstore_transport_def, run_server)) {
        int n = (def->is_server != NULL) + (def->send_command != NULL) + (def->run_server != NULL);
        if (n != 0 && n != 3)
            return fail(st, err, MXK_ERR_ABI,
                        "register_kvstore_transport: transport '%s': is_server, send_command and "
                        "run_server are set together or not at all",
                        def->name);
    }
    mxk_transport_entry *e = calloc(1, sizeof *e);
    if (e == NULL)
        return fail(st, err, MXK_ERR_OUT_OF_MEMORY, "register_kvstore_transport: out of memory");
    copy_struct(&e->def, sizeof e->def, def, def->struct_size);
    e->def.struct_size = sizeof e->def;
    e->plugin = st->plugin;
    named_fields f = {&e->def.name, &e->def.description, &e->def.attrs, e->def.num_attrs};
    rc = copy_named(st, "KVStore transport", f, err);
    if (rc == MXK_OK && !stage_push((void ***)&st->transports, &st->num_transports, e))
        rc = fail(st, err, MXK_ERR_OUT_OF_MEMORY, "register_kvstore_transport: out of memory");
    if (rc != MXK_OK) {
        free_named(f);
        free(e);
    }
    return rc;
}

void mxki_registrar_init(mxk_registrar *reg, mxk_staging *st) {
    memset(reg, 0, sizeof *reg);
    reg->struct_size = sizeof *reg;
    reg->impl = st;
    reg->register_op = register_op;
    reg->register_kernel = register_kernel;
    reg->register_device = register_device;
    reg->register_iterator = register_iterator;
    reg->register_kvstore_transport = register_transport;
}

void mxki_staging_discard(mxk_staging *st) {
    for (uint32_t i = 0; i < st->num_ops; i++)
        mxki_op_entry_free(st->ops[i]);
    for (uint32_t i = 0; i < st->num_kernels; i++)
        mxki_kernel_entry_free(st->kernels[i]);
    for (uint32_t i = 0; i < st->num_devices; i++) {
        free((char *)st->devices[i]->def.name);
        free(st->devices[i]);
    }
    for (uint32_t i = 0; i < st->num_iters; i++) {
        mxk_iter_def *d = &st->iters[i]->def;
        free_named((named_fields){&d->name, &d->description, &d->attrs, d->num_attrs});
        free(st->iters[i]);
    }
    for (uint32_t i = 0; i < st->num_transports; i++) {
        mxk_kvstore_transport_def *d = &st->transports[i]->def;
        free_named((named_fields){&d->name, &d->description, &d->attrs, d->num_attrs});
        free(st->transports[i]);
    }
    free(st->ops);
    free(st->kernels);
    free(st->devices);
    free(st->iters);
    free(st->transports);
    st->ops = NULL;
    st->kernels = NULL;
    st->devices = NULL;
    st->iters = NULL;
    st->transports = NULL;
    st->num_ops = st->num_kernels = st->num_devices = st->num_iters = st->num_transports = 0;
}
