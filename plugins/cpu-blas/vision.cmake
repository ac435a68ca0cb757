# cpu-blas sources of the vision group: spatial sampling and detection operators (ROIPooling, BilinearSampler, MultiBox*, box_nms, ...).
target_sources(mxk-cpu-blas PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/ops_vision.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_vision_roi.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_vision_sampler.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_vision_multibox.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_vision_nms.c)
