/*
 * cuda plugin: the entry points (abi/mxk_plugin.h).
 *
 * mxk_plugin_get_info returns constant data and has no side effects.
 * mxk_plugin_init checks the host table and registers the GPU device backend and
 * the kernels of every family (cuda_plugin.h). It touches no GPU: without one
 * (or without a driver) the backend reports 0 devices and stays registered, so
 * `mxk plugins` shows it. On an error the kernel discards everything registered,
 * so init returns the first failure.
 */
#include "cuda_plugin.h"

/** Static description of the plugin. */
static const mxk_plugin_info g_info = {
    .struct_size = sizeof(mxk_plugin_info),
    .abi_major = MXK_ABI_MAJOR,
    .abi_minor = MXK_ABI_MINOR,
    .min_host_minor = 2, /* kernels parse their own parameters (ABI 1.2) */
    .name = "cuda",
    .version = "0.1.0",
    .description = "GPU device backend and CUDA kernels (cuBLAS, cuDNN, NCCL) for cpu-blas's "
                   "operators",
    .provides = MXK_PROVIDES_KERNELS | MXK_PROVIDES_DEVICES,
};

/** Returns the plugin's static description (side-effect free). */
MXK_PLUGIN_EXPORT const mxk_plugin_info *mxk_plugin_get_info(void) {
    return &g_info;
}

/**
 * Initialises the plugin: validates args and the host table (MXK_ERR_ABI when too
 * small) and registers the device backend and the kernels.
 */
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    if (args == NULL || args->host == NULL || args->registrar == NULL)
        return MXK_ERR_INVALID_ARGUMENT;
    MXK_SDK_CHECK(mxk_sdk_check_host(args->host, MXK_SDK_HOST_SLOT_END(async_complete), err));
    mxk_sdk_set_host(args->host);
    mxk_registrar *reg = args->registrar;
    MXK_SDK_CHECK(cu_register_device(reg, err));
    MXK_SDK_CHECK(cu_register_norm(reg, err));
    MXK_SDK_CHECK(cu_register_rnn(reg, err));
    MXK_SDK_CHECK(cu_register_fc(reg, err));
    MXK_SDK_CHECK(cu_register_dot(reg, err));
    MXK_SDK_CHECK(cu_register_conv(reg, err));
    MXK_SDK_CHECK(cu_register_random(reg, err));
    MXK_SDK_CHECK(cu_register_sample(reg, err));
    MXK_SDK_CHECK(cu_register_dropout(reg, err));
    MXK_SDK_CHECK(cu_register_optimizer(reg, err));
    MXK_SDK_CHECK(cu_register_loss(reg, err));
    MXK_SDK_CHECK(cu_register_regression(reg, err));
    MXK_SDK_CHECK(cu_register_layout(reg, err));
    MXK_SDK_CHECK(cu_register_broadcast(reg, err));
    MXK_SDK_CHECK(cu_register_concat(reg, err));
    MXK_SDK_CHECK(cu_register_index(reg, err));
    MXK_SDK_CHECK(cu_register_sort(reg, err));
    MXK_SDK_CHECK(cu_register_sequence(reg, err));
    MXK_SDK_CHECK(cu_register_pad(reg, err));
    MXK_SDK_CHECK(cu_register_elemwise(reg, err));
    MXK_SDK_CHECK(cu_register_reduce(reg, err));
    MXK_SDK_CHECK(cu_register_copy(reg, err));
    MXK_SDK_CHECK(cu_register_convert(reg, err));
    MXK_SDK_CHECK(cu_register_act(reg, err));
    MXK_SDK_CHECK(cu_register_softmax(reg, err));
    MXK_SDK_CHECK(cu_register_pool(reg, err));
    MXK_SDK_CHECK(cu_register_bn(reg, err));
    MXK_SDK_CHECK(cu_register_lrn(reg, err));
    return MXK_OK;
}

/** Releases the NCCL communicators at process exit. */
MXK_PLUGIN_EXPORT void mxk_plugin_shutdown(void) {
    cu_nccl_shutdown();
}
