/*
 * cpu-blas plugin: helpers of the index group (see op_index.h): the common start
 * of a backward. The optional-integer attributes and the index conversion by mode
 * are shared with the cuda plugin (plugins/common/mxk_index_attr.h, mxk_index.h).
 */

#include "op_index.h"

/** Common start of a data-gradient backward (see op_index.h). */
mxk_status cb_idx_begin_backward(const mxk_backward_args *args, uint32_t num_in,
                                 const char *aux_name, const mxk_tensor **dy, const mxk_tensor **dx,
                                 mxk_error_sink *err) {
    *dy = *dx = NULL;
    MXK_SDK_CHECK(cb_check_backward_counts(args, num_in, 1, 1, err));
    if (num_in == 2)
        MXK_SDK_CHECK(cbt_zero_grad(args->in_grad[1], args->req[1], aux_name, err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cb_check_tensor(args->out_grad[0], "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(args->in_grad[0], "gradient of argument 0", err));
    *dy = args->out_grad[0];
    *dx = args->in_grad[0];
    return MXK_OK;
}
