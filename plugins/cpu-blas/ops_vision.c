/*
 * cpu-blas: spatial sampling and detection operators (ROIPooling, BilinearSampler, MultiBox*,
 * box_nms, ...). Registration entry of the group; the operators are added here and in the files
 * listed in vision.cmake. Also the group's temp-space helpers (op_vision.h).
 */
#include "op_vision.h"

/** Requests one temp space, sized at run time by cb_vision_temp (see op_vision.h). */
mxk_status cb_vision_resources_temp(const void *param, const mxk_shape *in_shapes, uint32_t num_in,
                                    mxk_resource_request *reqs, uint32_t *num,
                                    mxk_error_sink *err) {
    uint32_t n = 0;
    mxk_sdk_resource_add(reqs, *num, &n, MXK_RESOURCE_TEMP_SPACE, 0);
    *num = n;
    return MXK_OK;
}

/** Carves the parts out of the temp space (see op_vision.h). */
mxk_status cb_vision_temp(const mxk_op_ctx *ctx, uint32_t count, const cb_vision_part *parts,
                          mxk_error_sink *err) {
    uint64_t off[CB_VISION_MAX_PARTS], total = 0;
    if (count > CB_VISION_MAX_PARTS)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "temp space: more than %d parts",
                             CB_VISION_MAX_PARTS);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t bytes;
        off[i] = total;
        if (__builtin_mul_overflow(parts[i].count, parts[i].size, &bytes) ||
            bytes > UINT64_MAX - 15 ||
            __builtin_add_overflow(total, (bytes + 15) & ~(uint64_t)15, &total))
            return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY,
                                 "temp space of more than 2^64 bytes requested");
    }
    void *base;
    MXK_SDK_CHECK(mxk_sdk_host()->temp_space(ctx, total > 0 ? total : 16, &base, err));
    for (uint32_t i = 0; i < count; i++)
        *parts[i].ptr = (char *)base + off[i];
    return MXK_OK;
}

/** Registers the operators of the vision group with their CPU kernels; returns the first failure.
 */
mxk_status cb_register_vision_ops(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_register_vision_roi(reg, err));
    MXK_SDK_CHECK(cb_register_vision_sampler(reg, err));
    MXK_SDK_CHECK(cb_register_vision_multibox(reg, err));
    return cb_register_vision_nms(reg, err);
}
