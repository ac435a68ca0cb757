# cpu-blas sources of the norm group: normalisation and loss operators (LayerNorm, InstanceNorm, GroupNorm, L2Normalization, MakeLoss, SVMOutput, ...).
target_sources(mxk-cpu-blas PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/ops_norm.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_norm_moments.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_norm_l2.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_norm_loss.c)
