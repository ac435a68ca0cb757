/*
 * mxk SDK: filling registration structs (operators, kernels, devices, ...).
 *
 * Header-only, depends on abi/ only. Every struct a plugin hands to the
 * registrar starts with struct_size and abi_minor (the sizes and minor of the
 * headers the plugin was compiled with); the *_init helpers zero-fill a struct and
 * set both, so optional slots read as NULL/0 and a newer kernel knows which
 * fields the plugin knew. The registrar deep-copies definitions: they may live on
 * the stack of init, but function pointers must stay valid while the plugin is
 * loaded.
 */
#ifndef MXK_SDK_REGISTER_H
#define MXK_SDK_REGISTER_H

#include <string.h>

#include "mxk_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Initialiser of one attribute schema entry, usable in static arrays:
 *   static const mxk_attr_def attrs[] = {
 *       MXK_SDK_ATTR("num_hidden", MXK_ATTR_INT, 1, NULL, NULL, "output units"), ...};
 * `required` 1: must be given; `dflt`: default's string form (NULL: none);
 * `enum_values`: "a|b|c" for MXK_ATTR_ENUM, else NULL.
 */
#define MXK_SDK_ATTR(name_, type_, required_, dflt_, enum_values_, doc_)                           \
    {                                                                                              \
        .struct_size = sizeof(mxk_attr_def), .abi_minor = MXK_ABI_MINOR, .name = (name_),          \
        .type = (type_), .required = (required_), .default_value = (dflt_),                        \
        .enum_values = (enum_values_), .doc = (doc_)                                               \
    }

/** Number of elements of a static array (for num_attrs). */
#define MXK_SDK_COUNTOF(arr) ((uint32_t)(sizeof(arr) / sizeof((arr)[0])))

/** Zero-fills an operator definition and sets struct_size / abi_minor. */
static inline void mxk_sdk_op_def_init(mxk_op_def *def) {
    memset(def, 0, sizeof *def);
    def->struct_size = sizeof *def;
    def->abi_minor = MXK_ABI_MINOR;
}

/** Zero-fills a kernel definition and sets struct_size / abi_minor. */
static inline void mxk_sdk_kernel_def_init(mxk_op_kernel_def *def) {
    memset(def, 0, sizeof *def);
    def->struct_size = sizeof *def;
    def->abi_minor = MXK_ABI_MINOR;
}

/** Zero-fills a device backend definition and sets struct_size / abi_minor. */
static inline void mxk_sdk_device_def_init(mxk_device_def *def) {
    memset(def, 0, sizeof *def);
    def->struct_size = sizeof *def;
    def->abi_minor = MXK_ABI_MINOR;
}

/** Zero-fills an iterator definition and sets struct_size / abi_minor. */
static inline void mxk_sdk_iter_def_init(mxk_iter_def *def) {
    memset(def, 0, sizeof *def);
    def->struct_size = sizeof *def;
    def->abi_minor = MXK_ABI_MINOR;
}

/** Zero-fills a KVStore transport definition and sets struct_size / abi_minor. */
static inline void mxk_sdk_transport_def_init(mxk_kvstore_transport_def *def) {
    memset(def, 0, sizeof *def);
    def->struct_size = sizeof *def;
    def->abi_minor = MXK_ABI_MINOR;
}

/**
 * Appends the in-place hint (in_index -> out_index, identity) to `pairs` when
 * *count < capacity, for forward_inplace / backward_inplace callbacks, which
 * return *count afterwards. Pairs past the capacity are dropped (they are hints).
 */
static inline void mxk_sdk_inplace_add(mxk_inplace_pair *pairs, uint32_t capacity, uint32_t *count,
                                       uint32_t in_index, uint32_t out_index, int identity) {
    if (*count >= capacity)
        return;
    pairs[*count].in_index = in_index;
    pairs[*count].out_index = out_index;
    pairs[*count].identity = identity ? 1u : 0u;
    pairs[*count].reserved_ = 0;
    (*count)++;
}

/**
 * Appends a resource request of `type` (mxk_resource_type; temp_bytes for temp
 * space, 0 = decided at run time) for forward_resources / backward_resources:
 * *num is the capacity on entry of the callback; keep a separate count.
 * Returns 0 when full.
 */
static inline int mxk_sdk_resource_add(mxk_resource_request *reqs, uint32_t capacity,
                                       uint32_t *count, int32_t type, uint64_t temp_bytes) {
    if (*count >= capacity)
        return 0;
    memset(&reqs[*count], 0, sizeof reqs[*count]);
    reqs[*count].struct_size = sizeof reqs[*count];
    reqs[*count].type = type;
    reqs[*count].temp_bytes = temp_bytes;
    (*count)++;
    return 1;
}

#ifdef __cplusplus
}
#endif

#endif /* MXK_SDK_REGISTER_H */
