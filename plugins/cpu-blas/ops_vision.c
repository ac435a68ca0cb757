/*
 * cpu-blas: spatial sampling and detection operators (ROIPooling, BilinearSampler, MultiBox*,
 * box_nms, ...). Registration entry of the group; the operators are added here and in the files
 * listed in vision.cmake.
 */
#include "op_vision.h"

/** Registers the operators of the vision group with their CPU kernels; returns the first failure.
 */
mxk_status cb_register_vision_ops(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_register_vision_roi(reg, err));
    MXK_SDK_CHECK(cb_register_vision_sampler(reg, err));
    MXK_SDK_CHECK(cb_register_vision_multibox(reg, err));
    return cb_register_vision_nms(reg, err);
}
