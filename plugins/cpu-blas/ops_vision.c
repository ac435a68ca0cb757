/*
 * cpu-blas: spatial sampling and detection operators (ROIPooling, BilinearSampler, MultiBox*,
 * box_nms, ...). Registration entry of the group; the operators are added here and in the files
 * listed in vision.cmake.
 */
#include "cpu_blas.h"

/** Registers the operators of the vision group with their CPU kernels; returns the first failure.
 */
mxk_status cb_register_vision_ops(mxk_registrar *reg, mxk_error_sink *err) {
    (void)reg;
    (void)err;
    return MXK_OK;
}
