# FullyConnected forward+backward vs raw cblas_sgemm: `bench_fc [iterations]`.
if(TARGET mxk-cpu-blas)
  add_executable(bench_fc ${CMAKE_CURRENT_LIST_DIR}/bench_fc.c)
  target_include_directories(bench_fc PRIVATE ${MXK_OPENBLAS_INCLUDE_DIR})
  target_compile_definitions(bench_fc PRIVATE MXK_BUILD_CONFDIR="${MXK_BUILD_CONFDIR_ABS}")
  target_link_libraries(bench_fc PRIVATE mxk ${MXK_OPENBLAS_LIBRARY})
  add_dependencies(bench_fc mxk-cpu-blas)
endif()
