/*
 * Attribute dictionaries, attribute parsing and schema validation, and name
 * lists (kernel-internal). Defines the ABI's opaque mxk_attrs and mxk_name_list.
 *
 * Attribute values are strings, as in MXNet (dmlc::Parameter::Init from kwargs);
 * the schema (mxk_attr_def) gives each attribute a type, default and doc.
 */
#ifndef MXK_ATTRS_H
#define MXK_ATTRS_H

#include "mxk_abi_op.h"

/**
 * An ordered string->string dictionary; keys are unique. Owns its strings.
 * keys[i] / values[i] keep insertion order (serialisation and the ABI's
 * attr_key / attr_value enumerate in that order); lookups go through an
 * open-addressing hash index, so get and set take constant expected time
 * (dmlc::Parameter keeps its kwargs in a std::map; nnvm's NodeAttrs::dict is an
 * std::unordered_map).
 */
struct mxk_attrs {
    uint32_t count;    /**< entries in keys / values */
    uint32_t capacity; /**< room in keys / values */
    char **keys;
    char **values;
    uint32_t *slots; /**< hash index: 0 = empty, else position + 1 */
    uint32_t nslots; /**< size of slots: a power of two >= 2 * capacity (0: none yet) */
};

/** A growable list of owned strings. */
struct mxk_name_list {
    uint32_t count;
    uint32_t capacity;
    char **names;
};

/** Most entries of one dictionary (keeps the hash index's size within 32 bits). */
#define MXK_ATTRS_MAX (UINT32_C(1) << 28)

/** Creates an empty dictionary; NULL on out-of-memory. */
mxk_attrs *mxki_attrs_new(void);
/** Frees a dictionary and its strings. NULL: no-op. */
void mxki_attrs_free(mxk_attrs *a);
/**
 * Sets key to a copy of value (replacing the value, keeping the key's position).
 * MXK_ERR_OUT_OF_MEMORY "out of memory setting attribute '<key>'" on failure (the
 * dictionary is then unchanged); MXK_ERR_INVALID_ARGUMENT "attribute '<key>': more
 * than 268435456 attributes" past MXK_ATTRS_MAX entries. Constant expected time.
 */
mxk_status mxki_attrs_set(mxk_attrs *a, const char *key, const char *value);
/** Value of key, or NULL (also for a NULL dictionary or key). Constant expected time. */
const char *mxki_attrs_get(const mxk_attrs *a, const char *key);
/** Creates a dictionary from parallel key/value arrays (NULL on OOM; last error set). */
mxk_attrs *mxki_attrs_from_arrays(uint32_t n, const char *const *keys, const char *const *values);

/** True for MXNet's hidden keys "__name__" (e.g. __shape__, __lr_mult__), which ops ignore. */
int mxki_attr_key_is_hidden(const char *key);

/**
 * Parsers of attribute strings. Return MXK_OK, or MXK_ERR_INVALID_ARGUMENT with a
 * message naming `key`, the expected type and the value into `err`.
 * Integers: decimal, optional sign, surrounding spaces allowed. Floats: strtod
 * syntax. Bools: 1/0/true/false/True/False. Shapes: "(a,b)", "[a, b]", "()",
 * "(a,)" or "a"; at most MXK_MAX_NDIM entries; entries may be negative (Reshape).
 */
mxk_status mxki_parse_int(const char *key, const char *s, int64_t *out, mxk_error_sink *err);
mxk_status mxki_parse_float(const char *key, const char *s, double *out, mxk_error_sink *err);
mxk_status mxki_parse_bool(const char *key, const char *s, int32_t *out, mxk_error_sink *err);
mxk_status mxki_parse_shape(const char *key, const char *s, mxk_shape *out, mxk_error_sink *err);

/**
 * Validates one attribute definition (registration time): name, type, enum values,
 * and that the default parses as the type. MXK_ERR_ABI with detail into err.
 */
mxk_status mxki_attr_def_validate(const mxk_attr_def *def, mxk_error_sink *err);

/**
 * Checks `given` against `schema` (n entries) and returns a new dictionary with
 * every given attribute plus the defaults of absent optional ones. Hidden keys
 * ("__x__") are dropped. Errors into err: an unknown key is MXK_ERR_NOT_FOUND
 * listing the valid names; a value that does not parse is MXK_ERR_INVALID_ARGUMENT;
 * an enum value outside its set lists the allowed words; a missing required
 * attribute is MXK_ERR_INVALID_ARGUMENT naming it. `given` may be NULL.
 */
mxk_status mxki_attrs_validate(const mxk_attr_def *schema, uint32_t n, const mxk_attrs *given,
                               mxk_attrs **out, mxk_error_sink *err);

/** Creates an empty name list; NULL on OOM. */
mxk_name_list *mxki_name_list_new(void);
/** Frees a name list and its strings. NULL: no-op. */
void mxki_name_list_free(mxk_name_list *l);
/** Appends a copy of name. */
mxk_status mxki_name_list_add(mxk_name_list *l, const char *name, mxk_error_sink *err);

#endif /* MXK_ATTRS_H */
