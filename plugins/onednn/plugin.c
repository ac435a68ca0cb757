/*
 * onednn plugin: the entry points (abi/mxk_plugin.h).
 *
 * mxk_plugin_get_info returns constant data and has no side effects.
 * mxk_plugin_init checks the host table, creates oneDNN's CPU engine and
 * registers the kernels of every family (onednn.h); on an error the kernel
 * discards everything registered, so init returns the first failure.
 */
#include "onednn.h"

/** Static description of the plugin. */
static const mxk_plugin_info g_info = {
    .struct_size = sizeof(mxk_plugin_info),
    .abi_major = MXK_ABI_MAJOR,
    .abi_minor = MXK_ABI_MINOR,
    .min_host_minor = 2, /* kernels parse their own parameters (ABI 1.2) */
    .name = "onednn",
    .version = "0.1.0",
    .description = "oneDNN kernels for cpu-blas's operators (convolution, pooling, ...)",
    .provides = MXK_PROVIDES_KERNELS,
};

/** Returns the plugin's static description (side-effect free). */
MXK_PLUGIN_EXPORT const mxk_plugin_info *mxk_plugin_get_info(void) {
    return &g_info;
}

/**
 * Initialises the plugin: validates args and the host table (MXK_ERR_ABI when
 * too small), creates the engine (MXK_ERR_INTERNAL on a oneDNN failure) and
 * registers the kernels.
 */
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    if (args == NULL || args->host == NULL || args->registrar == NULL)
        return MXK_ERR_INVALID_ARGUMENT;
    MXK_SDK_CHECK(mxk_sdk_check_host(args->host, MXK_SDK_HOST_SLOT_END(async_complete), err));
    mxk_sdk_set_host(args->host);
    MXK_SDK_CHECK(dn_init(err));
    mxk_registrar *reg = args->registrar;
    MXK_SDK_CHECK(dn_register_conv(reg, err));
    MXK_SDK_CHECK(dn_register_fc(reg, err));
    MXK_SDK_CHECK(dn_register_eltwise(reg, err));
    MXK_SDK_CHECK(dn_register_sum(reg, err));
    MXK_SDK_CHECK(dn_register_pool(reg, err));
    MXK_SDK_CHECK(dn_register_bn(reg, err));
    MXK_SDK_CHECK(dn_register_lrn(reg, err));
    MXK_SDK_CHECK(dn_register_softmax(reg, err));
    MXK_SDK_CHECK(dn_register_rnn(reg, err));
    return MXK_OK;
}

/** Releases the engine at process exit. */
MXK_PLUGIN_EXPORT void mxk_plugin_shutdown(void) {
    dn_shutdown();
}
