# cpu-blas sources of the spatial group: 1-D/2-D/3-D convolution and pooling helpers.
target_sources(mxk-cpu-blas PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/ops_spatial.c
                                    ${CMAKE_CURRENT_SOURCE_DIR}/op_spatial_attrs.c)
