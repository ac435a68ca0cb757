/*
 * cuda plugin: Convolution and Deconvolution on cuDNN 9's legacy convolution
 * API, declarations shared by cu_ops_conv_param.c (attributes, geometry,
 * supports), cu_ops_conv_algo.c (descriptors, algorithm choice, workspace,
 * the three convolution directions) and cu_ops_conv.c (forward, backward,
 * registration).
 *
 * Semantics are the operators' (cpu-blas op_convolution.c; upstream MXNet
 * src/operator/nn/convolution-inl.h, deconvolution-inl.h); the mapping onto
 * cuDNN follows src/operator/nn/cudnn/cudnn_convolution-inl.h,
 * cudnn_deconvolution-inl.h and cudnn_algoreg-inl.h. Both operators are one
 * cuDNN convolution between an "image side" (cuDNN's x: Convolution's data,
 * Deconvolution's output) and a "filter side" (cuDNN's y: Convolution's
 * output, Deconvolution's data) with the filter (filter-side channels,
 * image-side channels / groups, k...), which is either operator's weight:
 *   Convolution   forward = cuDNN forward,       data grad = backward data
 *   Deconvolution forward = cuDNN backward data, data grad = cuDNN forward
 *   weight grad = cuDNN backward filter and bias grad = backward bias (on the
 *   output side) in both.
 */
#ifndef MXK_CU_CONV_H
#define MXK_CU_CONV_H

#include "cuda_plugin.h"
#include "mxk_conv_param.h"

/** Most dims of a cuDNN descriptor here (N, C and three spatial axes). */
#define CU_CV_MAX_DIMS (MXK_CONV_MAX_ND + 2)

/**
 * cuDNN's view of one bound configuration of the parameters
 * (plugins/common/mxk_conv_param.h): `nb_dims` (4 or 5; 1-D runs as
 * 2-D with a leading spatial axis of 1) dims of the image side, the filter
 * side and the filter, the nb_dims - 2 pads, strides and dilations, and the
 * element counts.
 */
typedef struct cu_cv_geom {
    int nb_dims;
    int img[CU_CV_MAX_DIMS], fs[CU_CV_MAX_DIMS], filt[CU_CV_MAX_DIMS];
    int pad[MXK_CONV_MAX_ND], stride[MXK_CONV_MAX_ND], dilate[MXK_CONV_MAX_ND];
    int64_t img_count, fs_count, filt_count;
    int groups;        /**< num_group */
    int bias_channels; /**< num_filter: channels of the output side */
} cu_cv_geom;

/** parse_param of Convolution (cu_ops_conv_param.c). Errors: mxk_sdk_attr_*'s, out of memory. */
mxk_status cu_cv_parse_conv(const mxk_attrs *attrs, void **out, mxk_error_sink *err);

/** parse_param of Deconvolution (cu_ops_conv_param.c). */
mxk_status cu_cv_parse_deconv(const mxk_attrs *attrs, void **out, mxk_error_sink *err);

/**
 * The geometry of p on data of shape `data` (cu_ops_conv_param.c): 1 when
 * cpu-blas's shape inference accepts the configuration (data of nd + 2
 * non-zero dims, groups dividing both channel counts, the output size rules,
 * Deconvolution's adj below the stride and a reachable target_shape) and every
 * size fits cuDNN's int (tensors of at most INT32_MAX elements); 0 otherwise
 * (g is then unspecified).
 */
int cu_cv_geom_of(const mxk_conv_param *p, const mxk_shape *data, cu_cv_geom *g);

/** `supports` of both operators (cu_ops_conv_param.c). */
int32_t cu_cv_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                       uint32_t num_in);

/** The three cuDNN convolution directions. */
typedef enum cu_cv_dir {
    CU_CV_FWD = 0,        /**< filter side = conv(image side, filter) */
    CU_CV_BWD_DATA = 1,   /**< image side = conv^T(filter, filter side) */
    CU_CV_BWD_FILTER = 2, /**< filter = correlation of image side and filter side */
    CU_CV_DIRS = 3
} cu_cv_dir;

/** The algorithm chosen for one direction (chosen = 0: not yet). */
typedef struct cu_cv_algo {
    int chosen;
    int algo;  /**< cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t */
    size_t ws; /**< its workspace bytes */
} cu_cv_algo;

/**
 * Per-node state (cu_ops_conv_algo.c): the geometry, the descriptors (one
 * convolution descriptor per direction, each with its algorithm's math type),
 * the algorithms chosen at first use, the tuning mode and the workspace limit.
 */
typedef struct cu_cv_state {
    const char *op; /**< "Convolution" or "Deconvolution", for messages */
    cu_cv_geom g;
    cudnnTensorDescriptor_t img_d, fs_d, bias_d;
    cudnnFilterDescriptor_t filt_d;
    cudnnConvolutionDescriptor_t conv_d[CU_CV_DIRS];
    cu_cv_algo algo[CU_CV_DIRS];
    int tune;        /**< MXK_CONV_TUNE_OFF, _LIMITED or _FASTEST */
    int tf32;        /**< MXK_CUDA_TF32=1: tensor-op (TF32) algorithms allowed */
    size_t ws_limit; /**< workspace limit, bytes */
} cu_cv_state;

/**
 * One convolution direction of a call: its two inputs and output (see
 * cu_cv_dir: FWD reads image side and filter, BWD_DATA filter and filter side,
 * BWD_FILTER image side and filter side) and the output's beta (0 or 1).
 */
typedef struct cu_cv_task {
    cu_cv_dir dir;
    const void *in0, *in1;
    void *out;
    float beta;
} cu_cv_task;

/** Creates the state of p on data `data` (cu_ops_conv_algo.c; create_state). */
mxk_status cu_cv_create_state(const void *param, int32_t dev_type, int32_t dev_id,
                              const mxk_shape *in_shapes, const int32_t *in_types, uint32_t num_in,
                              void **state, mxk_error_sink *err);

/** Frees a state of cu_cv_create_state (NULL allowed). */
void cu_cv_destroy_state(void *state);

/**
 * Queues `n` convolution directions on the call's stream (cu_ops_conv_algo.c):
 * chooses the algorithm of each direction not chosen yet (cuDNN's heuristics,
 * or timed trials on this call's tensors writing scratch outputs), takes one
 * workspace from the op's temp space for all of them, then runs them in
 * order. Errors: cu_check_dnn's, the host's temp_space's, MXK_ERR_UNSUPPORTED
 * when no algorithm fits the workspace limit.
 */
mxk_status cu_cv_execute(const mxk_op_ctx *ctx, cudnnHandle_t h, cu_cv_state *s,
                         const cu_cv_task *tasks, int n, mxk_error_sink *err);

#endif /* MXK_CU_CONV_H */
