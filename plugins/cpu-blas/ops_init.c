/*
 * cpu-blas: creation and shape operators (_copy, _zeros, expand_dims, stack, tile, Pad,
 * broadcast_to, ...). Registration entry of the group; the operators are in the
 * op_init_*.c files listed in init.cmake (declared in op_init.h). Flatten, Reshape
 * (op_reshape.c), Concat, SliceChannel, stack (op_concat.c) and add_n (op_add_n.c)
 * belong to the group too but are registered from plugin.c.
 */
#include "op_init.h"

/** Registers the operators of the init group with their CPU kernels; returns the first failure. */
mxk_status cb_register_init_ops(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_register_init_fill(reg, err));
    MXK_SDK_CHECK(cb_register_init_shape(reg, err));
    MXK_SDK_CHECK(cb_register_init_broadcast(reg, err));
    MXK_SDK_CHECK(cb_register_init_tile(reg, err));
    MXK_SDK_CHECK(cb_register_init_pad(reg, err));
    return MXK_OK;
}
