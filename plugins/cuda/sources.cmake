# Sources of the cuda plugin: the C11 host side (entry points, device backend,
# helpers, one cu_ops_*.c per operator family) and the CUDA C kernels (cu_kern_*.cu).
# One line per family.
set(MXK_CUDA_SOURCES plugin.c cu_device.c cu_common.c cu_nccl.c cu_kern_fill.cu)
list(APPEND MXK_CUDA_SOURCES cu_ops_norm.c cu_kern_norm.cu)
list(APPEND MXK_CUDA_SOURCES cu_ops_rnn.c)
list(APPEND MXK_CUDA_SOURCES cu_blas_util.c cu_kern_blas.cu cu_ops_fc.c cu_ops_dot.c)
list(APPEND MXK_CUDA_SOURCES cu_ops_conv_param.c cu_ops_conv_algo.c cu_ops_conv.c)
list(APPEND MXK_CUDA_SOURCES cu_ops_random.c cu_kern_random.cu cu_ops_dropout.c)
list(APPEND MXK_CUDA_SOURCES cu_ops_sample.c cu_kern_sample.cu)
list(APPEND MXK_CUDA_SOURCES cu_ops_optimizer.c cu_kern_optimizer.cu)
list(APPEND MXK_CUDA_SOURCES cu_ops_loss.c cu_ops_regression.c cu_kern_loss.cu)
list(APPEND MXK_CUDA_SOURCES cu_layout.c cu_kern_layout.cu cu_ops_layout.c cu_ops_broadcast.c cu_ops_concat.c)
list(APPEND MXK_CUDA_SOURCES cu_kern_index.cu cu_ops_index.c cu_ops_sequence.c)
list(APPEND MXK_CUDA_SOURCES cu_kern_sort.cu cu_ops_sort.c)
list(APPEND MXK_CUDA_SOURCES cu_kern_upsample.cu cu_ops_pad.c)
list(APPEND MXK_CUDA_SOURCES cu_ops_math.c cu_ops_elemwise.c cu_ops_reduce.c cu_ops_copy.c cu_ops_convert.c cu_kern_elemwise.cu cu_kern_reduce.cu cu_kern_convert.cu)
list(APPEND MXK_CUDA_SOURCES cu_layer.c cu_ops_act.c cu_kern_act.cu cu_ops_softmax.c cu_kern_softmax.cu cu_ops_pool.c cu_kern_pool.cu cu_ops_bn.c cu_kern_bn.cu cu_ops_lrn.c cu_kern_lrn.cu)
# The layer kernels round every product before adding it, as cpu-blas's C does.
set_source_files_properties(cu_kern_act.cu cu_kern_softmax.cu cu_kern_pool.cu cu_kern_bn.cu
  cu_kern_lrn.cu PROPERTIES COMPILE_OPTIONS -fmad=false)
