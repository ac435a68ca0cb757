/*
 * cpu-blas plugin: registration functions of the vision group's operator files
 * (vision.cmake), called from ops_vision.c. Each registers its operators (mxk_op_def)
 * with their CPU kernels and returns the first failure.
 */
#ifndef MXK_CB_OP_VISION_H
#define MXK_CB_OP_VISION_H

#include "cpu_blas.h"

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
