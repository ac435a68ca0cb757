/*
 * cpu-blas plugin: the entry points (abi/mxk_plugin.h).
 *
 * mxk_plugin_get_info returns constant data and has no side effects.
 * mxk_plugin_init checks the host table, stores it for the SDK helpers, reads
 * the plugin options (num_threads) and registers the CPU device backend and the
 * operators with their CPU kernels. On an error the kernel discards everything
 * registered so far, so init simply returns the first failure.
 */
#include "cpu_blas.h"

/** Static description of the plugin. */
static const mxk_plugin_info g_info = {
    .struct_size = sizeof(mxk_plugin_info),
    .abi_major = MXK_ABI_MAJOR,
    .abi_minor = MXK_ABI_MINOR,
    .min_host_minor = 0,
    .name = "cpu-blas",
    .version = "0.1.0",
    .description = "CPU device backend and reference float32 operators on OpenBLAS",
    .provides = MXK_PROVIDES_OPERATORS | MXK_PROVIDES_KERNELS | MXK_PROVIDES_DEVICES,
};

/* Exported entry points: declared here to satisfy -Wmissing-prototypes. */
MXK_PLUGIN_EXPORT const mxk_plugin_info *mxk_plugin_get_info(void);
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args, mxk_error_sink *err);

/** Returns the plugin's static description (side-effect free). */
MXK_PLUGIN_EXPORT const mxk_plugin_info *mxk_plugin_get_info(void) {
    return &g_info;
}

/**
 * Initialises the plugin: validates args and the host table (MXK_ERR_ABI when
 * too small), reads option num_threads (integer in [0, 4096], 0 = follow the
 * kernel's knob; MXK_ERR_INVALID_ARGUMENT otherwise), registers everything.
 */
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    if (args == NULL || args->host == NULL || args->registrar == NULL)
        return MXK_ERR_INVALID_ARGUMENT;
    MXK_SDK_CHECK(mxk_sdk_check_host(args->host, MXK_SDK_HOST_SLOT_END(async_complete), err));
    mxk_sdk_set_host(args->host);

    const mxk_attrs *options =
        MXK_SDK_HAS_FIELD(args, mxk_plugin_init_args, options) ? args->options : NULL;
    int64_t threads = 0;
    MXK_SDK_CHECK(mxk_sdk_option_int(options, "num_threads", 0, 0, 4096, &threads, err));
    cb_threads_init(threads);

    mxk_registrar *reg = args->registrar;
    MXK_SDK_CHECK(cb_register_device(reg, err));
    MXK_SDK_CHECK(cb_register_fully_connected(reg, err));
    MXK_SDK_CHECK(cb_register_activation(reg, err));
    MXK_SDK_CHECK(cb_register_softmax_output(reg, err));
    MXK_SDK_CHECK(cb_register_elemwise(reg, err));
    MXK_SDK_CHECK(cb_register_elemwise_scalar(reg, err));
    MXK_SDK_CHECK(cb_register_dot(reg, err));
    MXK_SDK_CHECK(cb_register_reduce(reg, err));
    MXK_SDK_CHECK(cb_register_reshape(reg, err));
    MXK_SDK_CHECK(cb_register_misc(reg, err));
    MXK_SDK_CHECK(cb_register_convolution(reg, err));
    MXK_SDK_CHECK(cb_register_pooling(reg, err));
    MXK_SDK_CHECK(cb_register_batchnorm(reg, err));
    MXK_SDK_CHECK(cb_register_dropout(reg, err));
    MXK_SDK_CHECK(cb_register_lrn(reg, err));
    MXK_SDK_CHECK(cb_register_upsampling(reg, err));
    MXK_SDK_CHECK(cb_register_crop(reg, err));
    MXK_SDK_CHECK(cb_register_optimizer(reg, err));
    MXK_SDK_CHECK(cb_register_softmax(reg, err));
    MXK_SDK_CHECK(cb_register_regression(reg, err));
    MXK_SDK_CHECK(cb_register_concat(reg, err));
    MXK_SDK_CHECK(cb_register_add_n(reg, err));
    MXK_SDK_CHECK(cb_register_embedding(reg, err));
    MXK_SDK_CHECK(cb_register_leaky_relu(reg, err));
    MXK_SDK_CHECK(cb_register_rnn(reg, err));
    MXK_SDK_CHECK(cb_register_cast(reg, err));
    MXK_SDK_CHECK(cb_register_unary(reg, err));
    MXK_SDK_CHECK(cb_register_broadcast(reg, err));
    MXK_SDK_CHECK(cb_register_transpose(reg, err));
    MXK_SDK_CHECK(cb_register_argmax(reg, err));
    MXK_SDK_CHECK(cb_register_random(reg, err));
    MXK_SDK_CHECK(cb_register_init_ops(reg, err));
    MXK_SDK_CHECK(cb_register_index_ops(reg, err));
    MXK_SDK_CHECK(cb_register_math_ops(reg, err));
    MXK_SDK_CHECK(cb_register_norm_ops(reg, err));
    MXK_SDK_CHECK(cb_register_spatial_ops(reg, err));
    MXK_SDK_CHECK(cb_register_vision_ops(reg, err));
    return MXK_OK;
}

/** Stops the worker pool of multi-threaded kernels (called by the kernel at exit). */
MXK_PLUGIN_EXPORT void mxk_plugin_shutdown(void) {
    cb_threads_shutdown();
}
