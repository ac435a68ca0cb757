# cpu-blas sources of the math group: element-wise math, comparison and reduction operators added for MXNet conformance.
target_sources(mxk-cpu-blas PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/ops_math.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_math_sample.c)
