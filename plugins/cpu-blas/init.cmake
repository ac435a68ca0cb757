# cpu-blas sources of the init group: creation and shape operators (_copy, _zeros, expand_dims, stack, tile, Pad, broadcast_to, ...).
target_sources(mxk-cpu-blas PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/ops_init.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_init_common.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_init_gather.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_init_fill.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_init_shape.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_init_broadcast.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_init_tile.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_init_pad.c)
