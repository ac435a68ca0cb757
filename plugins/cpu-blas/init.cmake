# cpu-blas sources of the init group: creation and shape operators (_copy, _zeros, expand_dims, stack, tile, Pad, broadcast_to, ...).
target_sources(mxk-cpu-blas PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/ops_init.c)
