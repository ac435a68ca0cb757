# Sources of the cuda plugin: the C11 host side (entry points, device backend,
# helpers, one cu_ops_*.c per operator family) and the CUDA C kernels (cu_kern_*.cu).
set(MXK_CUDA_SOURCES
  plugin.c
  cu_device.c
  cu_common.c
  cu_kern_fill.cu
  cu_blas_util.c
  cu_kern_blas.cu
  cu_ops_fc.c
  cu_ops_dot.c
  cu_ops_conv_param.c
  cu_ops_conv_algo.c
  cu_ops_conv.c)
