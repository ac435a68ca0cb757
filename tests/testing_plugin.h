/*
 * The pattern the SDK-based test plugins share (tests/symbol/graph_test_plugin.c,
 * tests/passes/passes_test_plugin.c, tests/opcheck/broken_ops_plugin.c,
 * tests/crosscheck/wrong_plugin.c): the plugin description and its entry point,
 * the init preamble, and "register an operator with one CPU kernel". Header-only,
 * on top of the SDK (sdk/include/mxk_sdk.h); include it in one source file of a
 * plugin and build the plugin with mxk_add_test_plugin (tests/CMakeLists.txt),
 * which puts it in the test plugin folder. The loader's test_plugin.c uses the raw
 * ABI instead, to break its rules on purpose.
 */
#ifndef MXK_TESTING_PLUGIN_H
#define MXK_TESTING_PLUGIN_H

#include "mxk_sdk.h"

/**
 * Defines the plugin's constant description (version "0.1.0", ABI of these
 * headers, oldest host minor `min_minor`, `provides` a mask of MXK_PROVIDES_*) and
 * the entry point mxk_plugin_get_info returning it. Use once, at file scope.
 */
#define MXK_TEST_PLUGIN_INFO(name_, description_, min_minor, provides_)                            \
    static const mxk_plugin_info mxk_tp_info = {                                                   \
        .struct_size = sizeof(mxk_plugin_info),                                                    \
        .abi_major = MXK_ABI_MAJOR,                                                                \
        .abi_minor = MXK_ABI_MINOR,                                                                \
        .min_host_minor = (min_minor),                                                             \
        .name = (name_),                                                                           \
        .version = "0.1.0",                                                                        \
        .description = (description_),                                                             \
        .provides = (provides_),                                                                   \
    };                                                                                             \
    MXK_PLUGIN_EXPORT const mxk_plugin_info *mxk_plugin_get_info(void) {                           \
        return &mxk_tp_info;                                                                       \
    }

/**
 * The start of a test plugin's mxk_plugin_init: checks the arguments
 * (MXK_ERR_INVALID_ARGUMENT "init arguments are incomplete") and that the host
 * table reaches `slot_end` (MXK_SDK_HOST_SLOT_END(slot): the last host service the
 * plugin calls), then stores the host for the SDK helpers.
 */
static inline mxk_status mxk_test_plugin_begin(const mxk_plugin_init_args *args, size_t slot_end,
                                               mxk_error_sink *err) {
    if (args == NULL || args->host == NULL || args->registrar == NULL)
        return MXK_ERR_INVALID_ARGUMENT;
    MXK_SDK_CHECK(mxk_sdk_check_host(args->host, slot_end, err));
    mxk_sdk_set_host(args->host);
    return MXK_OK;
}

/**
 * Registers operator `def` and one CPU kernel for it under the plugin's own
 * backend: `forward`, `backward` (may be NULL), MXK_KERNEL_SUPPORTS_ADDTO (the
 * kernels honour every write request). Returns the registrar's status.
 */
static inline mxk_status
mxk_test_register_cpu_op(mxk_registrar *reg, const mxk_op_def *def,
                         mxk_status (*forward)(const mxk_op_ctx *, const void *, void *,
                                               const mxk_forward_args *, mxk_error_sink *),
                         mxk_status (*backward)(const mxk_op_ctx *, const void *, void *,
                                                const mxk_backward_args *, mxk_error_sink *),
                         mxk_error_sink *err) {
    MXK_SDK_CHECK(reg->register_op(reg, def, err));
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = def->name;
    k.dev_type = MXK_DEV_CPU;
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.forward = forward;
    k.backward = backward;
    return reg->register_kernel(reg, &k, err);
}

#endif /* MXK_TESTING_PLUGIN_H */
