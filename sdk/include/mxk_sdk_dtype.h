/*
 * mxk SDK: element types (names, sizes) and type-inference helpers.
 *
 * Header-only, depends on abi/ and mxk_sdk_host.h. dtype codes are MXNet's
 * (mshadow/base.h): float32 0, float64 1, float16 2, uint8 3, int32 4, int8 5,
 * int64 6; -1 (MXK_DTYPE_UNKNOWN) marks an unknown slot during type inference.
 */
#ifndef MXK_SDK_DTYPE_H
#define MXK_SDK_DTYPE_H

#include <stdio.h>

#include "mxk_sdk_host.h"

#ifdef __cplusplus
extern "C" {
#endif

/** MXNet's name of a dtype code ("float32", ...), "unknown" for -1, "invalid" otherwise. */
static inline const char *mxk_sdk_dtype_name(int32_t dtype) {
    switch (dtype) {
    case MXK_DTYPE_UNKNOWN:
        return "unknown";
    case MXK_FLOAT32:
        return "float32";
    case MXK_FLOAT64:
        return "float64";
    case MXK_FLOAT16:
        return "float16";
    case MXK_UINT8:
        return "uint8";
    case MXK_INT32:
        return "int32";
    case MXK_INT8:
        return "int8";
    case MXK_INT64:
        return "int64";
    default:
        return "invalid";
    }
}

/** Size in bytes of one element of `dtype`; 0 for unknown or invalid codes. */
static inline size_t mxk_sdk_dtype_size(int32_t dtype) {
    switch (dtype) {
    case MXK_FLOAT32:
    case MXK_INT32:
        return 4;
    case MXK_FLOAT64:
    case MXK_INT64:
        return 8;
    case MXK_FLOAT16:
        return 2;
    case MXK_UINT8:
    case MXK_INT8:
        return 1;
    default:
        return 0;
    }
}

/**
 * Type inference for one slot: an unknown slot (-1) takes `expected`; a slot
 * equal to `expected`, or an unknown `expected`, is left alone. Otherwise returns
 * MXK_ERR_TYPE with "<what>: expected float32, got float64", where `what` is the
 * slot's description, e.g. "argument 'data'".
 */
static inline mxk_status mxk_sdk_type_assign(int32_t *slot, int32_t expected, const char *what,
                                             mxk_error_sink *err) {
    if (expected == MXK_DTYPE_UNKNOWN)
        return MXK_OK;
    if (*slot == MXK_DTYPE_UNKNOWN) {
        *slot = expected;
        return MXK_OK;
    }
    if (*slot != expected)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "%s: expected %s, got %s", what,
                             mxk_sdk_dtype_name(expected), mxk_sdk_dtype_name(*slot));
    return MXK_OK;
}

/**
 * Writes the description of slot `i` of a list into buf: "<kind> '<name>'" when
 * `names` (NULL-terminated, may be NULL) has an i-th entry, else "<kind> <i>".
 * `kind` is "argument", "output" or "aux state". Returns buf.
 */
static inline const char *mxk_sdk_slot_name(char *buf, size_t len, const char *kind,
                                            const char *const *names, uint32_t i) {
    const char *name = NULL;
    if (names != NULL) {
        for (uint32_t k = 0; names[k] != NULL; k++) {
            if (k == i) {
                name = names[k];
                break;
            }
        }
    }
    if (name != NULL)
        snprintf(buf, len, "%s '%s'", kind, name);
    else
        snprintf(buf, len, "%s %u", kind, (unsigned)i);
    return buf;
}

/**
 * Type inference of an operator whose every argument, output and aux state has
 * the single dtype `dtype` (MXNet's default InferType with float32): unknown
 * slots are filled, a known slot of another dtype is MXK_ERR_TYPE naming the slot
 * (names from the NULL-terminated `arg_names` / `out_names`, may be NULL).
 * Arrays may be NULL when their count is 0.
 */
static inline mxk_status mxk_sdk_infer_type_uniform(int32_t dtype, int32_t *in_types,
                                                    uint32_t num_in, const char *const *arg_names,
                                                    int32_t *out_types, uint32_t num_out,
                                                    const char *const *out_names,
                                                    int32_t *aux_types, uint32_t num_aux,
                                                    mxk_error_sink *err) {
    char what[160];
    for (uint32_t i = 0; i < num_in; i++)
        MXK_SDK_CHECK(mxk_sdk_type_assign(
            &in_types[i], dtype, mxk_sdk_slot_name(what, sizeof what, "argument", arg_names, i),
            err));
    for (uint32_t i = 0; i < num_out; i++)
        MXK_SDK_CHECK(
            mxk_sdk_type_assign(&out_types[i], dtype,
                                mxk_sdk_slot_name(what, sizeof what, "output", out_names, i), err));
    for (uint32_t i = 0; i < num_aux; i++)
        MXK_SDK_CHECK(mxk_sdk_type_assign(
            &aux_types[i], dtype, mxk_sdk_slot_name(what, sizeof what, "aux state", NULL, i), err));
    return MXK_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* MXK_SDK_DTYPE_H */
