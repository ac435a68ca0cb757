/*
 * The throughput limit of ResNet-50 training on this GPU as cuDNN and cuBLAS give
 * it, without a framework: forward and backward of every convolution,
 * BatchNorm and FullyConnected layer of ResNet-50 (MXNet's
 * example/image-classification/symbols/resnet.py, num_layers 50, 3x224x224,
 * pre-activation bottleneck units: units 3,4,6,3 of 256,512,1024,2048 filters),
 * called directly, one after the other on one stream, batch BATCH (64).
 *
 *   bench_cudnn_limit [BATCH] [ITERS] [MXK_SAMPLES_PER_SEC]
 *
 * Convolutions use the fastest algorithm cudnnFind* reports within a 1 GiB
 * workspace (forward, backward data, backward filter; the first convolution has
 * no data gradient), BatchNorm is cudnnBatchNormalization{ForwardTraining,Backward}
 * (spatial), the classifier three SGEMMs. Math: FP32 (CUDNN_FMA_MATH, cuBLAS
 * default) unless MXK_CUDA_TF32=1, as the cuda plugin. Activations, pooling, the
 * additions and the optimizer are left out: the figure is an upper bound of what
 * a framework reaches. 3 warm-up iterations, then ITERS (20) timed with CUDA
 * events. Prints one JSON line with the device, ms per iteration and images/s;
 * with MXK_SAMPLES_PER_SEC (mxk's ResNet-50 figure from bench_gpu_train) also
 * mxk's fraction of the limit. Without a GPU prints "SKIP: no GPU" and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

/** Most layers of the list (ResNet-50 has 53 convolutions, 53 BatchNorms, 1 FC). */
#define MAX_LAYERS 128
/** Workspace limit of the convolution algorithms. */
#define WORKSPACE_BYTES ((size_t)1 << 30)

/** Kinds of layers. */
enum { L_CONV, L_BN, L_FC };

/**
 * One layer: input C x H x W; conv: K filters R x R, stride, pad (no_dgrad: the
 * network's first, whose data gradient nobody needs); fc: K outputs.
 */
typedef struct layer {
    int kind, c, h, w, k, r, stride, pad, no_dgrad;
    cudnnTensorDescriptor_t x, y, bn;
    cudnnFilterDescriptor_t f;
    cudnnConvolutionDescriptor_t conv;
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t bwd_data;
    cudnnConvolutionBwdFilterAlgo_t bwd_filter;
} layer;

static layer g_layers[MAX_LAYERS];
static int g_num;

/** Prints a failed call and exits 1. */
static void die(const char *what, const char *why) {
    fprintf(stderr, "bench_cudnn_limit: %s: %s\n", what, why);
    exit(1);
}

/** Exits on a CUDA runtime error. */
static void ck(cudaError_t st, const char *what) {
    if (st != cudaSuccess)
        die(what, cudaGetErrorString(st));
}

/** Exits on a cuDNN error. */
static void ckd(cudnnStatus_t st, const char *what) {
    if (st != CUDNN_STATUS_SUCCESS)
        die(what, cudnnGetErrorString(st));
}

/** Exits on a cuBLAS error. */
static void ckb(cublasStatus_t st, const char *what) {
    if (st != CUBLAS_STATUS_SUCCESS)
        die(what, cublasGetStatusName(st));
}

/** Appends a layer. */
static void add(int kind, int c, int h, int w, int k, int r, int stride, int pad) {
    if (g_num == MAX_LAYERS)
        die("layer list", "too many layers");
    g_layers[g_num++] =
        (layer){.kind = kind, .c = c, .h = h, .w = w, .k = k, .r = r, .stride = stride, .pad = pad};
}

/** ResNet-50's layers (resnet.py, pre-activation bottleneck units). */
static void resnet50(void) {
    static const int units[4] = {3, 4, 6, 3}, filters[4] = {256, 512, 1024, 2048};
    add(L_BN, 3, 224, 224, 0, 0, 0, 0);    /* bn_data */
    add(L_CONV, 3, 224, 224, 64, 7, 2, 3); /* conv0 */
    g_layers[g_num - 1].no_dgrad = 1;
    add(L_BN, 64, 112, 112, 0, 0, 0, 0); /* bn0; then the 3x3/2 max pooling */
    int c = 64, hw = 56;
    for (int s = 0; s < 4; s++) {
        int f = filters[s], q = f / 4;
        for (int u = 0; u < units[s]; u++) {
            int stride = (u == 0 && s > 0) ? 2 : 1, out = hw / stride;
            add(L_BN, c, hw, hw, 0, 0, 0, 0);        /* bn1 */
            add(L_CONV, c, hw, hw, q, 1, 1, 0);      /* conv1 */
            add(L_BN, q, hw, hw, 0, 0, 0, 0);        /* bn2 */
            add(L_CONV, q, hw, hw, q, 3, stride, 1); /* conv2 */
            add(L_BN, q, out, out, 0, 0, 0, 0);      /* bn3 */
            add(L_CONV, q, out, out, f, 1, 1, 0);    /* conv3 */
            if (u == 0)
                add(L_CONV, c, hw, hw, f, 1, stride, 0); /* shortcut */
            c = f;
            hw = out;
        }
    }
    add(L_BN, 2048, 7, 7, 0, 0, 0, 0);    /* bn1; then global pooling */
    add(L_FC, 2048, 1, 1, 1000, 0, 0, 0); /* fc1 */
}

/** Output side of a convolution. */
static int conv_out(const layer *l, int in) {
    return (in + 2 * l->pad - l->r) / l->stride + 1;
}

/**
 * Descriptors of every layer and the fastest convolution algorithms (cudnnFind*Ex
 * on the real buffers, within the workspace).
 */
static void prepare(cudnnHandle_t dnn, int n, int tf32, void *buf[4], void *wbuf[2], void *ws) {
    for (int i = 0; i < g_num; i++) {
        layer *l = &g_layers[i];
        if (l->kind == L_FC)
            continue;
        ckd(cudnnCreateTensorDescriptor(&l->x), "tensor descriptor");
        ckd(cudnnSetTensor4dDescriptor(l->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, l->c, l->h,
                                       l->w),
            "x descriptor");
        if (l->kind == L_BN) {
            ckd(cudnnCreateTensorDescriptor(&l->bn), "bn descriptor");
            ckd(cudnnDeriveBNTensorDescriptor(l->bn, l->x, CUDNN_BATCHNORM_SPATIAL),
                "cudnnDeriveBNTensorDescriptor");
            continue;
        }
        int oh = conv_out(l, l->h), ow = conv_out(l, l->w);
        ckd(cudnnCreateTensorDescriptor(&l->y), "tensor descriptor");
        ckd(cudnnSetTensor4dDescriptor(l->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, l->k, oh, ow),
            "y descriptor");
        ckd(cudnnCreateFilterDescriptor(&l->f), "filter descriptor");
        ckd(cudnnSetFilter4dDescriptor(l->f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, l->k, l->c, l->r,
                                       l->r),
            "filter");
        ckd(cudnnCreateConvolutionDescriptor(&l->conv), "convolution descriptor");
        ckd(cudnnSetConvolution2dDescriptor(l->conv, l->pad, l->pad, l->stride, l->stride, 1, 1,
                                            CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
            "convolution");
        ckd(cudnnSetConvolutionMathType(l->conv, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
            "math type");
        int got = 0;
        cudnnConvolutionFwdAlgoPerf_t pf[8];
        ckd(cudnnFindConvolutionForwardAlgorithmEx(dnn, l->x, buf[0], l->f, wbuf[0], l->conv, l->y,
                                                   buf[1], 8, &got, pf, ws, WORKSPACE_BYTES),
            "cudnnFindConvolutionForwardAlgorithmEx");
        for (int a = got - 1; a >= 0; a--)
            if (pf[a].status == CUDNN_STATUS_SUCCESS && pf[a].memory <= WORKSPACE_BYTES)
                l->fwd = pf[a].algo;
        cudnnConvolutionBwdDataAlgoPerf_t pd[8];
        ckd(cudnnFindConvolutionBackwardDataAlgorithmEx(dnn, l->f, wbuf[0], l->y, buf[3], l->conv,
                                                        l->x, buf[2], 8, &got, pd, ws,
                                                        WORKSPACE_BYTES),
            "cudnnFindConvolutionBackwardDataAlgorithmEx");
        for (int a = got - 1; a >= 0; a--)
            if (pd[a].status == CUDNN_STATUS_SUCCESS && pd[a].memory <= WORKSPACE_BYTES)
                l->bwd_data = pd[a].algo;
        cudnnConvolutionBwdFilterAlgoPerf_t pw[8];
        ckd(cudnnFindConvolutionBackwardFilterAlgorithmEx(dnn, l->x, buf[0], l->y, buf[3], l->conv,
                                                          l->f, wbuf[1], 8, &got, pw, ws,
                                                          WORKSPACE_BYTES),
            "cudnnFindConvolutionBackwardFilterAlgorithmEx");
        for (int a = got - 1; a >= 0; a--)
            if (pw[a].status == CUDNN_STATUS_SUCCESS && pw[a].memory <= WORKSPACE_BYTES)
                l->bwd_filter = pw[a].algo;
    }
}

/** Largest activation (input or output, elements) and filter of the list at batch n. */
static void sizes(int n, size_t *act, size_t *wts) {
    *act = *wts = 0;
    for (int i = 0; i < g_num; i++) {
        const layer *l = &g_layers[i];
        size_t x = (size_t)n * l->c * l->h * l->w, y = x, f = 0;
        if (l->kind == L_CONV) {
            y = (size_t)n * l->k * conv_out(l, l->h) * conv_out(l, l->w);
            f = (size_t)l->k * l->c * l->r * l->r;
        } else if (l->kind == L_FC) {
            y = (size_t)n * l->k;
            f = (size_t)l->k * l->c;
        }
        *act = x > *act ? x : *act;
        *act = y > *act ? y : *act;
        *wts = f > *wts ? f : *wts;
    }
}

/** One training iteration's layer work: forward of every layer, then backward in reverse. */
static void iteration(cudnnHandle_t dnn, cublasHandle_t blas, int n, void *buf[4], void *wbuf[2],
                      float *bnp, void *ws) {
    const float one = 1.0f, zero = 0.0f;
    float *p = bnp; /* scale, bias, dscale, dbias, run mean, run var, save mean, save ivar */
    const size_t C = 2048;
    for (int i = 0; i < g_num; i++) {
        const layer *l = &g_layers[i];
        if (l->kind == L_CONV)
            ckd(cudnnConvolutionForward(dnn, &one, l->x, buf[0], l->f, wbuf[0], l->conv, l->fwd, ws,
                                        WORKSPACE_BYTES, &zero, l->y, buf[1]),
                "cudnnConvolutionForward");
        else if (l->kind == L_BN)
            ckd(cudnnBatchNormalizationForwardTraining(
                    dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, l->x, buf[0], l->x, buf[1], l->bn, p,
                    p + C, 0.1, p + 4 * C, p + 5 * C, 1e-5, p + 6 * C, p + 7 * C),
                "cudnnBatchNormalizationForwardTraining");
        else /* y (n x k) = x (n x c) . W^T, column-major: y^T = W x^T */
            ckb(cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, l->k, n, l->c, &one, wbuf[0], l->c,
                            buf[0], l->c, &zero, buf[1], l->k),
                "cublasSgemm forward");
    }
    for (int i = g_num - 1; i >= 0; i--) {
        const layer *l = &g_layers[i];
        if (l->kind == L_CONV) {
            ckd(cudnnConvolutionBackwardFilter(dnn, &one, l->x, buf[0], l->y, buf[3], l->conv,
                                               l->bwd_filter, ws, WORKSPACE_BYTES, &zero, l->f,
                                               wbuf[1]),
                "cudnnConvolutionBackwardFilter");
            if (!l->no_dgrad)
                ckd(cudnnConvolutionBackwardData(dnn, &one, l->f, wbuf[0], l->y, buf[3], l->conv,
                                                 l->bwd_data, ws, WORKSPACE_BYTES, &zero, l->x,
                                                 buf[2]),
                    "cudnnConvolutionBackwardData");
        } else if (l->kind == L_BN) {
            ckd(cudnnBatchNormalizationBackward(dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one,
                                                &zero, l->x, buf[0], l->x, buf[3], l->x, buf[2],
                                                l->bn, p, p + 2 * C, p + 3 * C, 1e-5, p + 6 * C,
                                                p + 7 * C),
                "cudnnBatchNormalizationBackward");
        } else {
            ckb(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, l->c, l->k, n, &one, buf[0], l->c,
                            buf[3], l->k, &zero, wbuf[1], l->c),
                "cublasSgemm weight gradient");
            ckb(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, l->c, n, l->k, &one, wbuf[0], l->c,
                            buf[3], l->k, &zero, buf[2], l->c),
                "cublasSgemm data gradient");
        }
    }
}

/** Entry point: see the file comment. */
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 64, iters = argc > 2 ? atoi(argv[2]) : 20;
    double mxk_sps = argc > 3 ? atof(argv[3]) : 0;
    int count = 0;
    cudaError_t st = cudaGetDeviceCount(&count);
    if (st != cudaSuccess || count == 0) {
        printf("SKIP: no GPU (cudaGetDeviceCount: %s)\n",
               st == cudaSuccess ? "0 devices" : cudaGetErrorString(st));
        return 0;
    }
    if (n < 1 || iters < 1)
        die("arguments", "BATCH and ITERS must be positive");
    const char *tf = getenv("MXK_CUDA_TF32");
    int tf32 = tf != NULL && strcmp(tf, "1") == 0;
    struct cudaDeviceProp prop;
    ck(cudaSetDevice(0), "cudaSetDevice");
    ck(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    resnet50();
    size_t act, wts;
    sizes(n, &act, &wts);
    void *buf[4], *wbuf[2], *ws;
    float *bnp;
    for (int i = 0; i < 4; i++) {
        ck(cudaMalloc(&buf[i], act * sizeof(float)), "cudaMalloc activations");
        ck(cudaMemset(buf[i], 0x3c, act * sizeof(float)), "cudaMemset"); /* 0.0115f */
    }
    for (int i = 0; i < 2; i++) {
        ck(cudaMalloc(&wbuf[i], wts * sizeof(float)), "cudaMalloc weights");
        ck(cudaMemset(wbuf[i], 0x3c, wts * sizeof(float)), "cudaMemset");
    }
    ck(cudaMalloc((void **)&bnp, 8 * 2048 * sizeof(float)), "cudaMalloc bn");
    ck(cudaMemset(bnp, 0x3c, 8 * 2048 * sizeof(float)), "cudaMemset");
    ck(cudaMalloc(&ws, WORKSPACE_BYTES), "cudaMalloc workspace");
    cudaStream_t stream;
    ck(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cudnnHandle_t dnn;
    cublasHandle_t blas;
    ckd(cudnnCreate(&dnn), "cudnnCreate");
    ckd(cudnnSetStream(dnn, stream), "cudnnSetStream");
    ckb(cublasCreate(&blas), "cublasCreate");
    ckb(cublasSetStream(blas, stream), "cublasSetStream");
    ckb(cublasSetMathMode(blas, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
        "cublasSetMathMode");
    prepare(dnn, n, tf32, buf, wbuf, ws);
    for (int i = 0; i < 3; i++)
        iteration(dnn, blas, n, buf, wbuf, bnp, ws);
    cudaEvent_t e0, e1;
    ck(cudaEventCreate(&e0), "cudaEventCreate");
    ck(cudaEventCreate(&e1), "cudaEventCreate");
    ck(cudaEventRecord(e0, stream), "cudaEventRecord");
    for (int i = 0; i < iters; i++)
        iteration(dnn, blas, n, buf, wbuf, bnp, ws);
    ck(cudaEventRecord(e1, stream), "cudaEventRecord");
    ck(cudaEventSynchronize(e1), "cudaEventSynchronize");
    float ms = 0;
    ck(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
    double per = ms / iters, ips = n / (per / 1e3);
    printf("{\"bench\": \"cudnn_limit\", \"device\": \"%s\", \"network\": \"resnet-50\", "
           "\"batch\": %d, \"layers\": %d, \"tf32\": %d, \"ms_per_iter\": %.3f, "
           "\"images_per_sec\": %.1f",
           prop.name, n, g_num, tf32, per, ips);
    if (mxk_sps > 0)
        printf(", \"mxk_images_per_sec\": %.1f, \"mxk_fraction\": %.3f", mxk_sps, mxk_sps / ips);
    printf("}\n");
    cublasDestroy(blas);
    cudnnDestroy(dnn);
    return 0;
}
