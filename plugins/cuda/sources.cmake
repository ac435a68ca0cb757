# Sources of the cuda plugin: the C11 host side (entry points, device backend,
# helpers, one cu_ops_*.c per operator family) and the CUDA C kernels (cu_kern_*.cu).
set(MXK_CUDA_SOURCES
  plugin.c
  cu_device.c
  cu_common.c
  cu_kern_fill.cu
  cu_ops_random.c
  cu_kern_random.cu
  cu_ops_sample.c
  cu_kern_sample.cu
  cu_ops_dropout.c
  cu_ops_optimizer.c
  cu_kern_optimizer.cu
  cu_ops_loss.c
  cu_ops_regression.c
  cu_kern_loss.cu)
