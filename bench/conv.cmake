# LeNet's convolution layers forward/backward vs raw cblas_sgemm of the same GEMMs,
# and max pooling / tanh in ns per element: `bench_conv [iterations]`.
if(TARGET mxk-cpu-blas)
  add_executable(bench_conv ${CMAKE_CURRENT_LIST_DIR}/bench_conv.c)
  target_include_directories(bench_conv PRIVATE ${MXK_OPENBLAS_INCLUDE_DIR})
  target_compile_definitions(bench_conv PRIVATE MXK_BUILD_CONFDIR="${MXK_BUILD_CONFDIR_ABS}")
  target_link_libraries(bench_conv PRIVATE mxk ${MXK_OPENBLAS_LIBRARY})
  add_dependencies(bench_conv mxk-cpu-blas)
endif()
