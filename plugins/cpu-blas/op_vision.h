/*
 * cpu-blas plugin: registration functions of the vision group's operator files
 * (vision.cmake), called from ops_vision.c (each registers its operators (mxk_op_def)
 * with their CPU kernels and returns the first failure), and the group's scratch
 * memory helpers: the kernels' scratch comes from the operator's temp space
 * (MXK_RESOURCE_TEMP_SPACE, as MXNet's kTempSpace), so it counts towards mxk's
 * memory limit and is reused between calls.
 */
#ifndef MXK_CB_OP_VISION_H
#define MXK_CB_OP_VISION_H

#include "cpu_blas.h"

/** Most parts of one cb_vision_temp call. */
#define CB_VISION_MAX_PARTS 8

/** One part of the temp space: `count` elements of `size` bytes, its start stored in *ptr. */
typedef struct cb_vision_part {
    void **ptr;
    uint64_t count, size;
} cb_vision_part;

/**
 * forward_resources / backward_resources: one MXK_RESOURCE_TEMP_SPACE whose size is
 * decided at run time (cb_vision_temp). Never fails.
 */
mxk_status cb_vision_resources_temp(const void *param, const mxk_shape *in_shapes, uint32_t num_in,
                                    mxk_resource_request *reqs, uint32_t *num, mxk_error_sink *err);

/**
 * Points each of the `count` parts into the kernel call's temp space (grown to their
 * total; each part starts 16-byte aligned; contents undefined; valid during the
 * call). Errors: MXK_ERR_OUT_OF_MEMORY "temp space of more than 2^64 bytes
 * requested", MXK_ERR_INVALID_ARGUMENT for more than CB_VISION_MAX_PARTS parts,
 * and those of the host's temp_space (MXK_ERR_STATE without the resource, the
 * memory limit). Thread-safe for distinct calls.
 */
mxk_status cb_vision_temp(const mxk_op_ctx *ctx, uint32_t count, const cb_vision_part *parts,
                          mxk_error_sink *err);

/** op_vision_roi.c: ROIPooling, _contrib_ROIAlign. */
mxk_status cb_register_vision_roi(mxk_registrar *reg, mxk_error_sink *err);
/** op_vision_sampler.c: BilinearSampler, GridGenerator, SpatialTransformer. */
mxk_status cb_register_vision_sampler(mxk_registrar *reg, mxk_error_sink *err);
/** op_vision_multibox.c: _contrib_MultiBoxPrior, _contrib_MultiBoxTarget,
 * _contrib_MultiBoxDetection. */
mxk_status cb_register_vision_multibox(mxk_registrar *reg, mxk_error_sink *err);
/** op_vision_nms.c: _contrib_box_nms. */
mxk_status cb_register_vision_nms(mxk_registrar *reg, mxk_error_sink *err);

#endif /* MXK_CB_OP_VISION_H */
