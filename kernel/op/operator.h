/*
 * Operator parameters (kernel-internal): an operator with validated attributes,
 * its parsed parameter object and its argument/output/aux names. The unit that
 * shape/type inference, the graph passes and operator instances work on.
 */
#ifndef MXK_OPERATOR_H
#define MXK_OPERATOR_H

#include "attrs.h"
#include "registry.h"

/** An operator configured by attributes. Immutable after creation. */
typedef struct mxk_op_params {
    const mxk_op_entry *op;
    mxk_attrs *attrs; /**< validated, defaults filled */
    void *param;      /**< from the operator's parse_param, or NULL */
    mxk_name_list *in_names;
    mxk_name_list *out_names;
    mxk_name_list *aux_names;
    uint32_t num_visible;
} mxk_op_params;

/**
 * Looks up `op_name`, validates `given` (may be NULL) against its schema, parses
 * the parameters and lists the names. Errors (last error): MXK_ERR_NOT_FOUND for an
 * unknown operator (listing the registered ones) or attribute (listing the valid
 * ones), MXK_ERR_INVALID_ARGUMENT for bad values; messages start "OP: ".
 */
mxk_status mxki_op_params_create(const char *op_name, const mxk_attrs *given, mxk_op_params **out);

/** Frees params. NULL: no-op. */
void mxki_op_params_free(mxk_op_params *p);

/**
 * Runs the operator's shape inference on caller-owned arrays (num_in / num_out /
 * num_aux entries as the params list). Incomplete results are MXK_OK; an
 * inconsistency is MXK_ERR_SHAPE with "OP: " + the operator's detail (last error).
 */
mxk_status mxki_op_params_infer_shape(const mxk_op_params *p, mxk_shape *in, mxk_shape *out,
                                      mxk_shape *aux);

/** Type inference, same conventions (-1 unknown; default rule when the op has none). */
mxk_status mxki_op_params_infer_type(const mxk_op_params *p, int32_t *in, int32_t *out,
                                     int32_t *aux);

/** Writes "name1, name2" of a name list into buf. */
const char *mxki_name_list_join(const mxk_name_list *l, char *buf, size_t size);

#endif /* MXK_OPERATOR_H */
