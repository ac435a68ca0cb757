/*
 * cuda plugin: the cuDNN side of Convolution and Deconvolution (see cu_conv.h):
 * descriptors, the algorithm choice of each direction, the workspace and the
 * three convolution calls.
 *
 * Upstream: MXNet src/operator/nn/cudnn/cudnn_convolution-inl.h (InitDescriptors,
 * SelectAlgo, AlgoFinalSelect, GetTempSize) and cudnn_algoreg-inl.h. Tuning
 * (the cudnn_tune attribute; unset: MXK_CUDNN_AUTOTUNE, default 1, as
 * MXNET_CUDNN_AUTOTUNE_DEFAULT):
 *   off (0)                cuDNN's heuristics (cudnnGet*Algorithm_v7): the first
 *                          usable algorithm in their order
 *   limited_workspace (1)  timed trials (cudnnFind*AlgorithmEx) of the algorithms
 *                          the heuristics list as usable: the fastest
 *   fastest (2)            as limited_workspace: the workspace limit holds in
 *                          every mode (1.9.1's AlgoFinalSelect skips it for
 *                          limited_workspace instead, against the name; its
 *                          cudnnFind allocates the trial memory itself)
 * Usable: status success, workspace within the limit (the `workspace`
 * attribute in MB, capped by MXK_CUDNN_WORKSPACE_MB when that is set) and, unless
 * MXK_CUDA_TF32=1, no tensor-op math: the convolution descriptors then ask for
 * CUDNN_FMA_MATH (float32 results, as cuBLAS's CUBLAS_DEFAULT_MATH; cuDNN's
 * CUDNN_DEFAULT_MATH would allow TF32 on Ampere and later). The choice is made
 * once per state, at the first call that needs the direction (the trials run
 * real convolutions on that call's stream and tensors, writing a scratch
 * output in the temp space, so the call's own outputs and ADD requests are
 * untouched), and kept, as upstream's algorithm registry keeps it per
 * configuration. Workspace: the op's temp space (MXNet's kTempSpace), taken
 * once per call for all its directions, which run one after another on the
 * stream.
 */
#include "cu_conv.h"

#include <stdlib.h>
#include <string.h>

/** Alignment of the scratch output after the trial workspace. */
#define CV_ALIGN 256
/** Most algorithms of any direction (CUDNN_CONVOLUTION_FWD_ALGO_COUNT is the largest). */
#define CV_MAX_ALGOS CUDNN_CONVOLUTION_FWD_ALGO_COUNT

/** One entry of cuDNN's algorithm list, whatever the direction. */
typedef struct cv_perf {
    int algo;
    cudnnStatus_t status;
    size_t memory;
    cudnnMathType_t math;
} cv_perf;

/** Copies n entries of a cuDNN perf array (any direction's) into cv_perf. */
#define CV_COPY_PERF(dst, src, n)                                                                  \
    for (int cv_i_ = 0; cv_i_ < (n); cv_i_++) {                                                    \
        (dst)[cv_i_].algo = (int)(src)[cv_i_].algo;                                                \
        (dst)[cv_i_].status = (src)[cv_i_].status;                                                 \
        (dst)[cv_i_].memory = (src)[cv_i_].memory;                                                 \
        (dst)[cv_i_].math = (src)[cv_i_].mathType;                                                 \
    }

/** The non-negative integer in environment variable `name`, or dflt when unset or invalid. */
static int64_t cv_env_int(const char *name, int64_t dflt) {
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return dflt;
    char *end;
    long long x = strtoll(v, &end, 10);
    return *end == '\0' && x >= 0 ? (int64_t)x : dflt;
}

void cu_cv_destroy_state(void *state) {
    cu_cv_state *s = state;
    if (s == NULL)
        return;
    if (s->img_d != NULL)
        cudnnDestroyTensorDescriptor(s->img_d);
    if (s->fs_d != NULL)
        cudnnDestroyTensorDescriptor(s->fs_d);
    if (s->bias_d != NULL)
        cudnnDestroyTensorDescriptor(s->bias_d);
    if (s->filt_d != NULL)
        cudnnDestroyFilterDescriptor(s->filt_d);
    for (int d = 0; d < CU_CV_DIRS; d++)
        if (s->conv_d[d] != NULL)
            cudnnDestroyConvolutionDescriptor(s->conv_d[d]);
    free(s);
}

/** Creates *d as a packed float32 tensor descriptor of the n dims. Errors: cu_check_dnn's. */
static mxk_status cv_tensor(cudnnTensorDescriptor_t *d, const int *dims, int n,
                            mxk_error_sink *err) {
    int strides[CU_CV_MAX_DIMS];
    strides[n - 1] = 1;
    for (int i = n - 2; i >= 0; i--)
        strides[i] = strides[i + 1] * dims[i + 1];
    CU_CHECK_DNN(cudnnCreateTensorDescriptor(d), "cudnnCreateTensorDescriptor", err);
    CU_CHECK_DNN(cudnnSetTensorNdDescriptor(*d, CUDNN_DATA_FLOAT, n, dims, strides),
                 "cudnnSetTensorNdDescriptor", err);
    return MXK_OK;
}

/**
 * Creates the descriptors of s->g: image side, filter side, bias (1, F, 1...),
 * filter, and one convolution per direction (cross-correlation, float32
 * compute, the groups, FMA math unless s->tf32). Errors: cu_check_dnn's.
 */
static mxk_status cv_descriptors(cu_cv_state *s, mxk_error_sink *err) {
    const cu_cv_geom *g = &s->g;
    const int n = g->nb_dims;
    int bias[CU_CV_MAX_DIMS];
    for (int i = 0; i < n; i++)
        bias[i] = i == 1 ? g->bias_channels : 1;
    MXK_SDK_CHECK(cv_tensor(&s->img_d, g->img, n, err));
    MXK_SDK_CHECK(cv_tensor(&s->fs_d, g->fs, n, err));
    MXK_SDK_CHECK(cv_tensor(&s->bias_d, bias, n, err));
    CU_CHECK_DNN(cudnnCreateFilterDescriptor(&s->filt_d), "cudnnCreateFilterDescriptor", err);
    CU_CHECK_DNN(
        cudnnSetFilterNdDescriptor(s->filt_d, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, n, g->filt),
        "cudnnSetFilterNdDescriptor", err);
    for (int d = 0; d < CU_CV_DIRS; d++) {
        CU_CHECK_DNN(cudnnCreateConvolutionDescriptor(&s->conv_d[d]),
                     "cudnnCreateConvolutionDescriptor", err);
        CU_CHECK_DNN(cudnnSetConvolutionNdDescriptor(s->conv_d[d], n - 2, g->pad, g->stride,
                                                     g->dilate, CUDNN_CROSS_CORRELATION,
                                                     CUDNN_DATA_FLOAT),
                     "cudnnSetConvolutionNdDescriptor", err);
        CU_CHECK_DNN(cudnnSetConvolutionGroupCount(s->conv_d[d], g->groups),
                     "cudnnSetConvolutionGroupCount", err);
        CU_CHECK_DNN(cudnnSetConvolutionMathType(s->conv_d[d],
                                                 s->tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
                     "cudnnSetConvolutionMathType", err);
    }
    return MXK_OK;
}

mxk_status cu_cv_create_state(const void *param, int32_t dev_type, int32_t dev_id,
                              const mxk_shape *in_shapes, const int32_t *in_types, uint32_t num_in,
                              void **state, mxk_error_sink *err) {
    const mxk_conv_param *p = param;
    const char *op = p->deconv ? "Deconvolution" : "Convolution";
    cu_cv_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "cuda %s: out of memory", op);
    s->op = op;
    if (!cu_cv_geom_of(p, &in_shapes[0], &s->g)) {
        char d[MXK_SDK_SHAPE_STR_MAX];
        cu_cv_destroy_state(s);
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "cuda %s: data %s does not fit the attributes", op,
                             mxk_sdk_shape_format(&in_shapes[0], d, sizeof d));
    }
    s->tune = p->tune != MXK_CONV_TUNE_UNSET
                  ? p->tune
                  : (int)cv_env_int("MXK_CUDNN_AUTOTUNE", MXK_CONV_TUNE_LIMITED);
    if (s->tune > MXK_CONV_TUNE_FASTEST)
        s->tune = MXK_CONV_TUNE_LIMITED;
    uint64_t mb = (uint64_t)p->workspace_mb;
    int64_t cap = cv_env_int("MXK_CUDNN_WORKSPACE_MB", -1);
    if (cap >= 0 && (uint64_t)cap < mb)
        mb = (uint64_t)cap;
    s->ws_limit = mb >= (UINT64_C(1) << 43) ? (size_t)1 << 63 : (size_t)(mb << 20);
    const char *tf32 = getenv("MXK_CUDA_TF32");
    s->tf32 = tf32 != NULL && strcmp(tf32, "1") == 0;
    mxk_status rc = cv_descriptors(s, err);
    if (rc != MXK_OK) {
        cu_cv_destroy_state(s);
        return rc;
    }
    *state = s;
    return MXK_OK;
}

/** Bytes of the output of direction `dir` (the scratch output of its trials). */
static size_t cv_out_bytes(const cu_cv_state *s, cu_cv_dir dir) {
    int64_t n = dir == CU_CV_FWD        ? s->g.fs_count
                : dir == CU_CV_BWD_DATA ? s->g.img_count
                                        : s->g.filt_count;
    return sizeof(float) * (size_t)n;
}

/**
 * cuDNN's list of algorithms for t's direction into out[0 .. *n): heuristics
 * (find = 0; scratch and ws unused) or timed trials on t's inputs writing
 * `scratch`, with `ws_bytes` of workspace at ws (find = 1). Errors: cu_check_dnn's.
 */
static mxk_status cv_list(cudnnHandle_t h, const cu_cv_state *s, const cu_cv_task *t, int find,
                          void *scratch, void *ws, size_t ws_bytes, cv_perf *out, int *n,
                          mxk_error_sink *err) {
    cudnnConvolutionDescriptor_t cd = s->conv_d[t->dir];
    *n = 0;
    switch (t->dir) {
    case CU_CV_FWD: {
        cudnnConvolutionFwdAlgoPerf_t r[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        const int cap = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
        if (find)
            CU_CHECK_DNN(cudnnFindConvolutionForwardAlgorithmEx(h, s->img_d, t->in0, s->filt_d,
                                                                t->in1, cd, s->fs_d, scratch, cap,
                                                                n, r, ws, ws_bytes),
                         "cudnnFindConvolutionForwardAlgorithmEx", err);
        else
            CU_CHECK_DNN(cudnnGetConvolutionForwardAlgorithm_v7(h, s->img_d, s->filt_d, cd, s->fs_d,
                                                                cap, n, r),
                         "cudnnGetConvolutionForwardAlgorithm_v7", err);
        CV_COPY_PERF(out, r, *n);
        break;
    }
    case CU_CV_BWD_DATA: {
        cudnnConvolutionBwdDataAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        const int cap = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
        if (find)
            CU_CHECK_DNN(cudnnFindConvolutionBackwardDataAlgorithmEx(h, s->filt_d, t->in0, s->fs_d,
                                                                     t->in1, cd, s->img_d, scratch,
                                                                     cap, n, r, ws, ws_bytes),
                         "cudnnFindConvolutionBackwardDataAlgorithmEx", err);
        else
            CU_CHECK_DNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, s->filt_d, s->fs_d, cd,
                                                                     s->img_d, cap, n, r),
                         "cudnnGetConvolutionBackwardDataAlgorithm_v7", err);
        CV_COPY_PERF(out, r, *n);
        break;
    }
    default: {
        cudnnConvolutionBwdFilterAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        const int cap = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
        if (find)
            CU_CHECK_DNN(cudnnFindConvolutionBackwardFilterAlgorithmEx(
                             h, s->img_d, t->in0, s->fs_d, t->in1, cd, s->filt_d, scratch, cap, n,
                             r, ws, ws_bytes),
                         "cudnnFindConvolutionBackwardFilterAlgorithmEx", err);
        else
            CU_CHECK_DNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, s->img_d, s->fs_d, cd,
                                                                       s->filt_d, cap, n, r),
                         "cudnnGetConvolutionBackwardFilterAlgorithm_v7", err);
        CV_COPY_PERF(out, r, *n);
        break;
    }
    }
    return MXK_OK;
}

/** 1 when entry r may be chosen: success, workspace within `cap`, math allowed. */
static int cv_usable(const cu_cv_state *s, const cv_perf *r, size_t cap) {
    int tensor_op =
        r->math == CUDNN_TENSOR_OP_MATH || r->math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    return r->status == CUDNN_STATUS_SUCCESS && r->memory <= cap && (s->tf32 || !tensor_op);
}

/**
 * The largest workspace among the usable entries of a heuristic list: what
 * the trials of every usable algorithm need.
 */
static size_t cv_trial_bytes(const cu_cv_state *s, const cv_perf *r, int n) {
    size_t most = 0;
    for (int i = 0; i < n; i++)
        if (cv_usable(s, &r[i], s->ws_limit) && r[i].memory > most)
            most = r[i].memory;
    return most;
}

/**
 * Chooses the first usable entry of r (cuDNN orders both lists best first)
 * for direction dir and sets its convolution descriptor's math type to the
 * entry's when tensor ops are allowed (upstream's SelectAlgo). Errors:
 * MXK_ERR_UNSUPPORTED when none is usable, cu_check_dnn's.
 */
static mxk_status cv_choose(cu_cv_state *s, cu_cv_dir dir, const cv_perf *r, int n, size_t cap,
                            mxk_error_sink *err) {
    static const char *const names[CU_CV_DIRS] = {"forward", "backward-data", "backward-filter"};
    for (int i = 0; i < n; i++) {
        if (!cv_usable(s, &r[i], cap))
            continue;
        if (s->tf32)
            CU_CHECK_DNN(cudnnSetConvolutionMathType(s->conv_d[dir], r[i].math),
                         "cudnnSetConvolutionMathType", err);
        s->algo[dir].algo = r[i].algo;
        s->algo[dir].ws = r[i].memory;
        s->algo[dir].chosen = 1;
        return MXK_OK;
    }
    return mxk_sdk_error(
        err, MXK_ERR_UNSUPPORTED,
        "cuda %s: no cuDNN %s convolution algorithm %s with a workspace of at most "
        "%zu bytes (the workspace attribute in MB, capped by "
        "MXK_CUDNN_WORKSPACE_MB); consider a larger workspace",
        s->op, names[dir], s->tune == MXK_CONV_TUNE_OFF ? "from the heuristics" : "found", cap);
}

/** Queues one direction with its chosen algorithm and workspace ws. Errors: cu_check_dnn's. */
static mxk_status cv_run(cudnnHandle_t h, const cu_cv_state *s, const cu_cv_task *t, void *ws,
                         mxk_error_sink *err) {
    const float one = 1.0f;
    const cu_cv_algo *a = &s->algo[t->dir];
    cudnnConvolutionDescriptor_t cd = s->conv_d[t->dir];
    void *w = a->ws > 0 ? ws : NULL;
    switch (t->dir) {
    case CU_CV_FWD:
        CU_CHECK_DNN(cudnnConvolutionForward(h, &one, s->img_d, t->in0, s->filt_d, t->in1, cd,
                                             (cudnnConvolutionFwdAlgo_t)a->algo, w, a->ws, &t->beta,
                                             s->fs_d, t->out),
                     "cudnnConvolutionForward", err);
        break;
    case CU_CV_BWD_DATA:
        CU_CHECK_DNN(cudnnConvolutionBackwardData(h, &one, s->filt_d, t->in0, s->fs_d, t->in1, cd,
                                                  (cudnnConvolutionBwdDataAlgo_t)a->algo, w, a->ws,
                                                  &t->beta, s->img_d, t->out),
                     "cudnnConvolutionBackwardData", err);
        break;
    default:
        CU_CHECK_DNN(cudnnConvolutionBackwardFilter(h, &one, s->img_d, t->in0, s->fs_d, t->in1, cd,
                                                    (cudnnConvolutionBwdFilterAlgo_t)a->algo, w,
                                                    a->ws, &t->beta, s->filt_d, t->out),
                     "cudnnConvolutionBackwardFilter", err);
        break;
    }
    return MXK_OK;
}

/** n rounded up to a multiple of CV_ALIGN. */
static size_t cv_align(size_t n) {
    return (n + CV_ALIGN - 1) / CV_ALIGN * CV_ALIGN;
}

mxk_status cu_cv_execute(const mxk_op_ctx *ctx, cudnnHandle_t h, cu_cv_state *s,
                         const cu_cv_task *tasks, int n, mxk_error_sink *err) {
    /* 1: heuristics for directions not chosen yet; the call's workspace bytes */
    size_t trial[CU_CV_DIRS] = {0, 0, 0}, need = 0;
    for (int i = 0; i < n; i++) {
        const cu_cv_task *t = &tasks[i];
        if (!s->algo[t->dir].chosen) {
            cv_perf r[CV_MAX_ALGOS];
            int nr;
            MXK_SDK_CHECK(cv_list(h, s, t, 0, NULL, NULL, 0, r, &nr, err));
            if (s->tune == MXK_CONV_TUNE_OFF) {
                MXK_SDK_CHECK(cv_choose(s, t->dir, r, nr, s->ws_limit, err));
            } else {
                trial[t->dir] = cv_trial_bytes(s, r, nr);
                size_t b = cv_align(trial[t->dir]) + cv_out_bytes(s, t->dir);
                need = b > need ? b : need;
            }
        }
        if (s->algo[t->dir].chosen && s->algo[t->dir].ws > need)
            need = s->algo[t->dir].ws;
    }
    void *ws = NULL;
    if (need > 0)
        MXK_SDK_CHECK(mxk_sdk_host()->temp_space(ctx, (uint64_t)need, &ws, err));
    /* 2: trials (scratch output after the trial workspace), then the calls */
    for (int i = 0; i < n; i++) {
        const cu_cv_task *t = &tasks[i];
        if (!s->algo[t->dir].chosen) {
            cv_perf r[CV_MAX_ALGOS];
            int nr;
            void *scratch = (char *)ws + cv_align(trial[t->dir]);
            MXK_SDK_CHECK(cv_list(h, s, t, 1, scratch, ws, trial[t->dir], r, &nr, err));
            MXK_SDK_CHECK(cv_choose(s, t->dir, r, nr, trial[t->dir], err));
        }
        MXK_SDK_CHECK(cv_run(h, s, t, ws, err));
    }
    return MXK_OK;
}
