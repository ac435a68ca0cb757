# Sources of the cuda plugin: the C11 host side (entry points, device backend,
# helpers, one cu_ops_*.c per operator family) and the CUDA C kernels (cu_kern_*.cu).
set(MXK_CUDA_SOURCES
  plugin.c
  cu_device.c
  cu_common.c
  cu_kern_fill.cu
  cu_layer.c
  cu_ops_act.c
  cu_kern_act.cu
  cu_ops_softmax.c
  cu_kern_softmax.cu
  cu_ops_pool.c
  cu_kern_pool.cu
  cu_ops_bn.c
  cu_kern_bn.cu
  cu_ops_lrn.c
  cu_kern_lrn.cu)
# The layer kernels round every product before adding it, as cpu-blas's C does.
set_source_files_properties(cu_kern_act.cu cu_kern_softmax.cu cu_kern_pool.cu cu_kern_bn.cu
  cu_kern_lrn.cu PROPERTIES COMPILE_OPTIONS -fmad=false)
