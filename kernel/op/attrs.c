/*
 * Operator attributes: parsing and validation of string attributes against an
 * operator's declared attribute table (see attrs.h).
 */
#include "attrs.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "suggest.h"

mxk_attrs *mxki_attrs_new(void) {
    mxk_attrs *a = calloc(1, sizeof *a);
    if (a == NULL)
        mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory creating an attribute dictionary");
    return a;
}

void mxki_attrs_free(mxk_attrs *a) {
    if (a == NULL)
        return;
    for (uint32_t i = 0; i < a->count; i++) {
        free(a->keys[i]);
        free(a->values[i]);
    }
    free(a->keys);
    free(a->values);
    free(a->slots);
    free(a);
}

/* FNV-1a, 32 bits. */
static uint32_t str_hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The name of entry i of a table being indexed (dictionary keys, schema names). */
typedef const char *(*name_at_fn)(const void *table, uint32_t i);

/*
 * Linear probing in a hash index of `nslots` (a power of two, never full) whose
 * slots hold position + 1 of entries of `table`: the slot holding `key`, or the
 * empty slot where it would go.
 */
static uint32_t *probe(uint32_t *slots, uint32_t nslots, const void *table, name_at_fn name_at,
                       const char *key) {
    uint32_t mask = nslots - 1;
    for (uint32_t i = str_hash(key) & mask;; i = (i + 1) & mask)
        if (slots[i] == 0 || strcmp(name_at(table, slots[i] - 1), key) == 0)
            return &slots[i];
}

/* A hash index of size `nslots` over entries [0, n) of `table` with unique names; NULL on OOM. */
static uint32_t *index_build(uint32_t nslots, const void *table, name_at_fn name_at, uint32_t n) {
    uint32_t *slots = calloc(nslots, sizeof *slots);
    for (uint32_t i = 0; slots != NULL && i < n; i++)
        *probe(slots, nslots, table, name_at, name_at(table, i)) = i + 1;
    return slots;
}

static const char *attrs_key_at(const void *table, uint32_t i) {
    return ((const mxk_attrs *)table)->keys[i];
}

const char *mxki_attrs_get(const mxk_attrs *a, const char *key) {
    if (a == NULL || a->count == 0 || key == NULL)
        return NULL;
    uint32_t pos = *probe(a->slots, a->nslots, a, attrs_key_at, key);
    return pos ? a->values[pos - 1] : NULL;
}

/* Doubles the room of `a` (arrays and index); the dictionary is unchanged on failure. */
static mxk_status attrs_grow(mxk_attrs *a, const char *key) {
    if (a->capacity >= MXK_ATTRS_MAX)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "attribute '%s': more than %u attributes",
                             key, (unsigned)MXK_ATTRS_MAX);
    uint32_t cap = a->capacity ? a->capacity * 2 : 8;
    char **k = realloc(a->keys, cap * sizeof *k);
    if (k != NULL)
        a->keys = k;
    char **v = k ? realloc(a->values, cap * sizeof *v) : NULL;
    if (v != NULL)
        a->values = v;
    uint32_t *slots = v ? index_build(2 * cap, a, attrs_key_at, a->count) : NULL;
    if (slots == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory setting attribute '%s'", key);
    free(a->slots);
    a->slots = slots;
    a->nslots = 2 * cap;
    a->capacity = cap;
    return MXK_OK;
}

mxk_status mxki_attrs_set(mxk_attrs *a, const char *key, const char *value) {
    char *v = strdup(value);
    if (v == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory setting attribute '%s'", key);
    uint32_t *slot = a->count ? probe(a->slots, a->nslots, a, attrs_key_at, key) : NULL;
    if (slot != NULL && *slot != 0) {
        free(a->values[*slot - 1]);
        a->values[*slot - 1] = v;
        return MXK_OK;
    }
    char *k = strdup(key);
    mxk_status st = MXK_OK;
    if (k == NULL)
        st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory setting attribute '%s'", key);
    else if (a->count == a->capacity)
        st = attrs_grow(a, key);
    if (st != MXK_OK) {
        free(k);
        free(v);
        return st;
    }
    a->keys[a->count] = k;
    a->values[a->count] = v;
    a->count++;
    *probe(a->slots, a->nslots, a, attrs_key_at, key) = a->count;
    return MXK_OK;
}

mxk_attrs *mxki_attrs_from_arrays(uint32_t n, const char *const *keys, const char *const *values) {
    mxk_attrs *a = mxki_attrs_new();
    if (a == NULL)
        return NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (keys[i] == NULL || values[i] == NULL) {
            mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "attribute %u has a NULL key or value", i);
            mxki_attrs_free(a);
            return NULL;
        }
        if (mxki_attrs_set(a, keys[i], values[i]) != MXK_OK) {
            mxki_attrs_free(a);
            return NULL;
        }
    }
    return a;
}

int mxki_attr_key_is_hidden(const char *key) {
    size_t n = strlen(key);
    return n > 4 && strncmp(key, "__", 2) == 0 && strcmp(key + n - 2, "__") == 0;
}

static const char *skip_space(const char *s) {
    while (isspace((unsigned char)*s))
        s++;
    return s;
}

mxk_status mxki_parse_int(const char *key, const char *s, int64_t *out, mxk_error_sink *err) {
    const char *p = skip_space(s);
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || *skip_space(end) != '\0' || errno == ERANGE)
        return mxki_sink_set(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': expected an integer, got '%s'", key, s);
    *out = v;
    return MXK_OK;
}

mxk_status mxki_parse_float(const char *key, const char *s, double *out, mxk_error_sink *err) {
    const char *p = skip_space(s);
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || *skip_space(end) != '\0' || errno == ERANGE)
        return mxki_sink_set(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': expected a real number, got '%s'", key, s);
    *out = v;
    return MXK_OK;
}

mxk_status mxki_parse_bool(const char *key, const char *s, int32_t *out, mxk_error_sink *err) {
    static const char *const yes[] = {"1", "true", "True", "TRUE"};
    static const char *const no[] = {"0", "false", "False", "FALSE"};
    for (size_t i = 0; i < 4; i++) {
        if (strcmp(s, yes[i]) == 0) {
            *out = 1;
            return MXK_OK;
        }
        if (strcmp(s, no[i]) == 0) {
            *out = 0;
            return MXK_OK;
        }
    }
    return mxki_sink_set(err, MXK_ERR_INVALID_ARGUMENT,
                         "attribute '%s': expected a boolean (true/false/1/0), got '%s'", key, s);
}

mxk_status mxki_parse_shape(const char *key, const char *s, mxk_shape *out, mxk_error_sink *err) {
    mxk_shape r;
    memset(&r, 0, sizeof r);
    const char *p = skip_space(s);
    char close = '\0';
    if (*p == '(' || *p == '[') {
        close = *p == '(' ? ')' : ']';
        p = skip_space(p + 1);
    }
    while (*p != '\0' && *p != close) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno == ERANGE)
            goto bad;
        if (r.ndim == MXK_MAX_NDIM)
            return mxki_sink_set(err, MXK_ERR_INVALID_ARGUMENT,
                                 "attribute '%s': more than %d entries in '%s'", key, MXK_MAX_NDIM,
                                 s);
        r.dims[r.ndim++] = v;
        p = skip_space(end);
        if (*p == ',')
            p = skip_space(p + 1);
        else if (*p != close && *p != '\0')
            goto bad;
    }
    if (*p != close)
        goto bad;
    if (close != '\0')
        p = skip_space(p + 1);
    if (*p != '\0')
        goto bad;
    *out = r;
    return MXK_OK;
bad:
    return mxki_sink_set(err, MXK_ERR_INVALID_ARGUMENT,
                         "attribute '%s': expected a tuple of integers like (2,2), got '%s'", key,
                         s);
}

/* True when word is one of the '|'-separated entries of list. */
static int enum_contains(const char *list, const char *word) {
    size_t n = strlen(word);
    const char *p = list;
    while (*p) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0)
            return 1;
        if (bar == NULL)
            break;
        p = bar + 1;
    }
    return 0;
}

/* Parses `value` as the attribute type of `def`, for validation only. */
static mxk_status check_value(const mxk_attr_def *def, const char *value, mxk_error_sink *err) {
    int64_t i;
    double f;
    int32_t b;
    mxk_shape s;
    switch (def->type) {
    case MXK_ATTR_INT:
        return mxki_parse_int(def->name, value, &i, err);
    case MXK_ATTR_FLOAT:
        return mxki_parse_float(def->name, value, &f, err);
    case MXK_ATTR_BOOL:
        return mxki_parse_bool(def->name, value, &b, err);
    case MXK_ATTR_SHAPE:
        return mxki_parse_shape(def->name, value, &s, err);
    case MXK_ATTR_STRING:
        return MXK_OK;
    case MXK_ATTR_ENUM:
        if (enum_contains(def->enum_values, value))
            return MXK_OK;
        return mxki_sink_set(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': '%s' is not one of {%s}", def->name, value,
                             def->enum_values);
    }
    return mxki_sink_set(err, MXK_ERR_ABI, "attribute '%s': unknown type %d", def->name,
                         (int)def->type);
}

static int valid_identifier(const char *s) {
    if (s == NULL || !(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

mxk_status mxki_attr_def_validate(const mxk_attr_def *def, mxk_error_sink *err) {
    if (!valid_identifier(def->name))
        return mxki_sink_set(err, MXK_ERR_ABI, "attribute name '%s' is not a valid identifier",
                             def->name ? def->name : "(null)");
    if ((int)def->type < MXK_ATTR_INT || (int)def->type > MXK_ATTR_ENUM)
        return mxki_sink_set(err, MXK_ERR_ABI, "attribute '%s': unknown type %d", def->name,
                             (int)def->type);
    if (def->type == MXK_ATTR_ENUM && (def->enum_values == NULL || def->enum_values[0] == '\0'))
        return mxki_sink_set(err, MXK_ERR_ABI, "attribute '%s': enum without enum_values",
                             def->name);
    if (!def->required && def->default_value != NULL) {
        mxk_error_sink inner;
        mxki_error_sink_clear(&inner);
        if (check_value(def, def->default_value, &inner) != MXK_OK)
            return mxki_sink_set(err, MXK_ERR_ABI, "default value is invalid: %s", inner.msg);
    }
    return MXK_OK;
}

/* Writes "a, b, c" (the schema's attribute names) into buf. */
static void list_names(const mxk_attr_def *schema, uint32_t n, char *buf, size_t size) {
    size_t pos = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < n && pos + 1 < size; i++)
        pos += (size_t)snprintf(buf + pos, size - pos, i ? ", %s" : "%s", schema[i].name);
    if (n == 0)
        snprintf(buf, size, "(none)");
}

static const char *schema_name_at(const void *table, uint32_t i) {
    return ((const mxk_attr_def *)table)[i].name;
}

mxk_status mxki_attrs_validate(const mxk_attr_def *schema, uint32_t n, const mxk_attrs *given,
                               mxk_attrs **out, mxk_error_sink *err) {
    /* schema names are unique (checked at registration); index them for the lookups */
    uint32_t nslots = 8;
    while (nslots < 2 * (uint64_t)n)
        nslots *= 2;
    uint32_t *index = index_build(nslots, schema, schema_name_at, n);
    mxk_attrs *r = index ? mxki_attrs_new() : NULL;
    if (r == NULL) {
        free(index);
        return mxki_sink_set(err, MXK_ERR_OUT_OF_MEMORY, "out of memory validating attributes");
    }
    uint32_t ngiven = given ? given->count : 0;
    mxk_status st = MXK_OK;
    for (uint32_t i = 0; i < ngiven && st == MXK_OK; i++) {
        const char *key = given->keys[i];
        if (mxki_attr_key_is_hidden(key))
            continue;
        uint32_t pos = *probe(index, nslots, schema, schema_name_at, key);
        if (pos == 0) {
            char names[1024], hint[256];
            list_names(schema, n, names, sizeof names);
            mxki_suggest_from(key, schema, n, schema_name_at, hint, sizeof hint);
            st = mxki_sink_set(err, MXK_ERR_NOT_FOUND,
                               "unknown attribute '%s'; valid attributes: %s%s", key, names, hint);
        } else if (check_value(&schema[pos - 1], given->values[i], err) != MXK_OK) {
            st = err ? err->code : MXK_ERR_INVALID_ARGUMENT;
        } else if (mxki_attrs_set(r, key, given->values[i]) != MXK_OK) {
            st = mxki_sink_set(err, mxki_last_error_code(), "%s", mxki_last_error_message());
        }
    }
    free(index);
    for (uint32_t j = 0; j < n && st == MXK_OK; j++) {
        if (mxki_attrs_get(r, schema[j].name) != NULL)
            continue;
        if (schema[j].required)
            st = mxki_sink_set(err, MXK_ERR_INVALID_ARGUMENT,
                               "required attribute '%s' is missing%s%s%s", schema[j].name,
                               schema[j].doc ? " (" : "", schema[j].doc ? schema[j].doc : "",
                               schema[j].doc ? ")" : "");
        else if (schema[j].default_value != NULL &&
                 mxki_attrs_set(r, schema[j].name, schema[j].default_value) != MXK_OK)
            st = mxki_sink_set(err, mxki_last_error_code(), "%s", mxki_last_error_message());
    }
    if (st != MXK_OK) {
        mxki_attrs_free(r);
        return st;
    }
    *out = r;
    return MXK_OK;
}

mxk_name_list *mxki_name_list_new(void) {
    return calloc(1, sizeof(mxk_name_list));
}

void mxki_name_list_free(mxk_name_list *l) {
    if (l == NULL)
        return;
    for (uint32_t i = 0; i < l->count; i++)
        free(l->names[i]);
    free(l->names);
    free(l);
}

mxk_status mxki_name_list_add(mxk_name_list *l, const char *name, mxk_error_sink *err) {
    if (name == NULL)
        return mxki_sink_set(err, MXK_ERR_INVALID_ARGUMENT, "name_list_add: NULL name");
    if (l->count == l->capacity) {
        uint32_t cap = l->capacity ? l->capacity * 2 : 8;
        char **n = realloc(l->names, cap * sizeof *n);
        if (n == NULL)
            return mxki_sink_set(err, MXK_ERR_OUT_OF_MEMORY, "out of memory in name_list_add");
        l->names = n;
        l->capacity = cap;
    }
    char *c = strdup(name);
    if (c == NULL)
        return mxki_sink_set(err, MXK_ERR_OUT_OF_MEMORY, "out of memory in name_list_add");
    l->names[l->count++] = c;
    return MXK_OK;
}
