# Sources of the cuda plugin: the C11 host side (entry points, device backend,
# helpers, one cu_ops_*.c per operator family) and the CUDA C kernels (cu_kern_*.cu).
# One line per family.
set(MXK_CUDA_SOURCES plugin.c cu_device.c cu_common.c cu_nccl.c cu_kern_fill.cu)
list(APPEND MXK_CUDA_SOURCES cu_ops_norm.c cu_kern_norm.cu)
list(APPEND MXK_CUDA_SOURCES cu_ops_rnn.c)
list(APPEND MXK_CUDA_SOURCES cu_ops_math.c cu_ops_elemwise.c cu_ops_reduce.c cu_ops_copy.c cu_ops_convert.c cu_kern_elemwise.cu cu_kern_reduce.cu cu_kern_convert.cu)
