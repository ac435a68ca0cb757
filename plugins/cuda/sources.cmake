# Sources of the cuda plugin: the C11 host side (entry points, device backend,
# helpers, one cu_ops_*.c per operator family) and the CUDA C kernels (cu_kern_*.cu).
set(MXK_CUDA_SOURCES
  plugin.c
  cu_device.c
  cu_common.c
  cu_kern_fill.cu
  cu_layout.c
  cu_kern_layout.cu
  cu_ops_layout.c
  cu_ops_broadcast.c
  cu_ops_concat.c
  cu_kern_index.cu
  cu_ops_index.c
  cu_kern_sort.cu
  cu_ops_sort.c
  cu_ops_sequence.c
  cu_kern_upsample.cu
  cu_ops_pad.c)
