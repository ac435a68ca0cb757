/*
 * A test plugin for tests/gpu/test_gpu_errors.c: the operator GpuFault (one
 * argument "data", one output of its shape, float32) with only a GPU kernel,
 * whose forward queues a kernel that writes through an invalid device pointer
 * (fault_kernel.cu). The launch succeeds; the fault surfaces when the engine
 * synchronises the worker's stream, and must reach the caller at wait_to_read
 * naming the operator (MXNet's behaviour: an asynchronous CUDA error is rethrown
 * at the next WaitToRead, src/engine/threaded_engine.cc OnComplete / ThrowException).
 */
#include <cuda_runtime_api.h>

#include "testing_plugin.h"

/** The kernel launcher of fault_kernel.cu. */
cudaError_t gpu_fault_launch(cudaStream_t stream);

static const char *const gf_args[] = {"data", NULL};
static const char *const gf_outs[] = {"output", NULL};

/** The output has the argument's shape. */
static mxk_status gf_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    return mxk_sdk_infer_shape_same(in, num_in, gf_args, out, num_out, gf_outs, err);
}

/** float32 only. */
static mxk_status gf_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, gf_args, out, num_out, gf_outs, aux,
                                      num_aux, err);
}

/** Forward: queues the faulting kernel on the worker's stream and returns at once. */
static mxk_status gf_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    cudaError_t st = cudaSetDevice(ctx->dev_id);
    if (st == cudaSuccess)
        st = gpu_fault_launch((cudaStream_t)ctx->stream);
    if (st != cudaSuccess)
        return mxk_sdk_error(err, MXK_ERR_BACKEND, "GpuFault launch: %s", cudaGetErrorString(st));
    return MXK_OK;
}

MXK_TEST_PLUGIN_INFO("gpu-fault", "an operator whose GPU kernel faults (tests/gpu)", 0,
                     MXK_PROVIDES_OPERATORS | MXK_PROVIDES_KERNELS)

/** Entry point 2: registers GpuFault and its GPU kernel. */
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_test_plugin_begin(args, MXK_SDK_HOST_SLOT_END(attr_key), err));
    mxk_registrar *reg = args->registrar;
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = "GpuFault";
    def.arguments = gf_args;
    def.outputs = gf_outs;
    def.infer_shape = gf_infer_shape;
    def.infer_type = gf_infer_type;
    MXK_SDK_CHECK(reg->register_op(reg, &def, err));
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = def.name;
    k.dev_type = MXK_DEV_GPU;
    k.forward = gf_forward;
    return reg->register_kernel(reg, &k, err);
}
