/*
 * cuda plugin: error translation (CUDA runtime, cuBLAS, cuDNN), the per-thread
 * cuBLAS and cuDNN handles, kernel registration and what every kernel family uses
 * (parameter objects, float attributes, float32-only supports).
 */
#include "cuda_plugin.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

mxk_status cu_check(cudaError_t st, const char *what, mxk_error_sink *err) {
    if (st == cudaSuccess)
        return MXK_OK;
    (void)cudaGetLastError();
    mxk_status code = st == cudaErrorMemoryAllocation ? MXK_ERR_OUT_OF_MEMORY : MXK_ERR_BACKEND;
    return mxk_sdk_error(err, code, "%s: CUDA error %s: %s", what, cudaGetErrorName(st),
                         cudaGetErrorString(st));
}

/** cuBLAS's name of a status (cublasGetStatusName). */
mxk_status cu_check_blas(cublasStatus_t st, const char *what, mxk_error_sink *err) {
    if (st == CUBLAS_STATUS_SUCCESS)
        return MXK_OK;
    mxk_status code = st == CUBLAS_STATUS_ALLOC_FAILED    ? MXK_ERR_OUT_OF_MEMORY
                      : st == CUBLAS_STATUS_NOT_SUPPORTED ? MXK_ERR_UNSUPPORTED
                                                          : MXK_ERR_BACKEND;
    return mxk_sdk_error(err, code, "%s: cuBLAS %s", what, cublasGetStatusName(st));
}

mxk_status cu_check_dnn(cudnnStatus_t st, const char *what, mxk_error_sink *err) {
    if (st == CUDNN_STATUS_SUCCESS)
        return MXK_OK;
    mxk_status code = st == CUDNN_STATUS_ALLOC_FAILED    ? MXK_ERR_OUT_OF_MEMORY
                      : st == CUDNN_STATUS_NOT_SUPPORTED ? MXK_ERR_UNSUPPORTED
                                                         : MXK_ERR_BACKEND;
    return mxk_sdk_error(err, code, "%s: cuDNN %s", what, cudnnGetErrorString(st));
}

mxk_status cu_enter(const mxk_op_ctx *ctx, mxk_error_sink *err) {
    return cu_check(cudaSetDevice(ctx->dev_id), "cudaSetDevice", err);
}

/** The calling thread's library handles, one per device, created on first use. */
typedef struct cu_thread {
    cublasHandle_t blas[CU_MAX_DEVICES];
    cudnnHandle_t dnn[CU_MAX_DEVICES];
} cu_thread;

static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static int g_key_ok;

/** Destroys a thread's handles at its exit (on their devices). */
static void thread_free(void *p) {
    cu_thread *t = p;
    for (int d = 0; d < CU_MAX_DEVICES; d++) {
        if (t->blas[d] == NULL && t->dnn[d] == NULL)
            continue;
        if (cudaSetDevice(d) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        if (t->blas[d] != NULL)
            cublasDestroy(t->blas[d]);
        if (t->dnn[d] != NULL)
            cudnnDestroy(t->dnn[d]);
    }
    free(t);
}

static void key_init(void) {
    g_key_ok = pthread_key_create(&g_key, thread_free) == 0;
}

/** The calling thread's handle set, created on first use; NULL with err set. */
static cu_thread *thread_state(const mxk_op_ctx *ctx, mxk_error_sink *err) {
    if (ctx->dev_id < 0 || ctx->dev_id >= CU_MAX_DEVICES) {
        mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "gpu device %d is out of range",
                      (int)ctx->dev_id);
        return NULL;
    }
    if (cu_enter(ctx, err) != MXK_OK)
        return NULL;
    pthread_once(&g_key_once, key_init);
    if (!g_key_ok) {
        mxk_sdk_error(err, MXK_ERR_INTERNAL, "cuda: pthread_key_create failed");
        return NULL;
    }
    cu_thread *t = pthread_getspecific(g_key);
    if (t == NULL) {
        t = calloc(1, sizeof *t);
        if (t == NULL || pthread_setspecific(g_key, t) != 0) {
            free(t);
            mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "cuda: out of memory for thread state");
            return NULL;
        }
    }
    return t;
}

cublasHandle_t cu_blas(const mxk_op_ctx *ctx, mxk_error_sink *err) {
    cu_thread *t = thread_state(ctx, err);
    if (t == NULL)
        return NULL;
    cublasHandle_t *h = &t->blas[ctx->dev_id];
    if (*h == NULL) {
        if (cu_check_blas(cublasCreate(h), "cublasCreate", err) != MXK_OK) {
            *h = NULL;
            return NULL;
        }
        const char *tf32 = getenv("MXK_CUDA_TF32");
        cublasMath_t math = tf32 != NULL && strcmp(tf32, "1") == 0 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                   : CUBLAS_DEFAULT_MATH;
        if (cu_check_blas(cublasSetMathMode(*h, math), "cublasSetMathMode", err) != MXK_OK)
            return NULL;
    }
    if (cu_check_blas(cublasSetStream(*h, cu_stream(ctx)), "cublasSetStream", err) != MXK_OK)
        return NULL;
    return *h;
}

cudnnHandle_t cu_dnn(const mxk_op_ctx *ctx, mxk_error_sink *err) {
    cu_thread *t = thread_state(ctx, err);
    if (t == NULL)
        return NULL;
    cudnnHandle_t *h = &t->dnn[ctx->dev_id];
    if (*h == NULL && cu_check_dnn(cudnnCreate(h), "cudnnCreate", err) != MXK_OK) {
        *h = NULL;
        return NULL;
    }
    if (cu_check_dnn(cudnnSetStream(*h, cu_stream(ctx)), "cudnnSetStream", err) != MXK_OK)
        return NULL;
    return *h;
}

mxk_status cu_register_kernel(mxk_registrar *reg, mxk_op_kernel_def *kdef, mxk_error_sink *err) {
    kdef->dev_type = MXK_DEV_GPU;
    kdef->backend = CU_BACKEND;
    return reg->register_kernel(reg, kdef, err);
}

int64_t cu_shape_size(const mxk_shape *s) {
    int64_t n = 1;
    for (int32_t i = 0; i < s->ndim; i++)
        n *= s->dims[i];
    return n;
}

mxk_status cu_zero_grad(const mxk_op_ctx *ctx, const mxk_tensor *g, mxk_op_req req,
                        mxk_error_sink *err) {
    if (req != MXK_REQ_WRITE && req != MXK_REQ_INPLACE)
        return MXK_OK;
    if (g == NULL || g->data == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "input gradient: missing");
    size_t bytes = (size_t)cu_shape_size(&g->shape) * mxk_sdk_dtype_size(g->dtype);
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cudaMemsetAsync(g->data, 0, bytes, cu_stream(ctx)), "zero gradient", err);
    return MXK_OK;
}

mxk_status cu_register_each(mxk_registrar *reg, const mxk_op_kernel_def *tmpl,
                            const cu_op_entry *ops, size_t n, mxk_error_sink *err) {
    for (size_t i = 0; i < n; i++) {
        mxk_op_kernel_def k = *tmpl;
        k.op_name = ops[i].name;
        k.parse_param = ops[i].parse;
        k.free_param = cu_param_free;
        MXK_SDK_CHECK(cu_register_kernel(reg, &k, err));
    }
    return MXK_OK;
}

mxk_status cu_param_dup(const void *p, size_t size, void **out, mxk_error_sink *err) {
    void *q = malloc(size);
    if (q == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "cuda: out of memory (parameters)");
    memcpy(q, p, size);
    *out = q;
    return MXK_OK;
}

void cu_param_free(void *p) {
    free(p);
}

mxk_status cu_attr_float32(const mxk_attrs *attrs, const char *key, float *v, mxk_error_sink *err) {
    double d;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, key, &d, err));
    *v = (float)d;
    return MXK_OK;
}

int cu_all_f32(const int32_t *types, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (types[i] != MXK_FLOAT32)
            return 0;
    return 1;
}

int32_t cu_supports_float32(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                            uint32_t num_in) {
    return cu_all_f32(in_types, num_in);
}
