/*
 * cpu-blas: element-wise math, comparison and reduction operators added for MXNet conformance.
 * Registration entry of the group; the operators are added here and in the
 * files listed in math.cmake. (The group's earlier operators, in op_elemwise.c,
 * op_unary.c, op_reduce.c, op_random.c, ..., are registered from plugin.c.)
 */
#include "cpu_blas.h"
#include "op_math_random.h"

/** Registers the operators of the math group with their CPU kernels; returns the first failure. */
mxk_status cb_register_math_ops(mxk_registrar *reg, mxk_error_sink *err) {
    return cb_register_math_sample(reg, err);
}
