# Executor overhead: `bench_executor [iterations]` — forward+backward of a chain of
# 100 tiny operators per operator, beside the same operators pushed imperatively, and
# the bind time of a 1000-node graph (cpu-blas from the build tree's config dir).
if(TARGET mxk-cpu-blas)
  add_executable(bench_executor ${CMAKE_CURRENT_LIST_DIR}/bench_executor.c)
  target_include_directories(bench_executor PRIVATE ${PROJECT_SOURCE_DIR}/abi
    ${MXK_KERNEL_INCLUDE_DIRS})
  target_compile_definitions(bench_executor PRIVATE MXK_BUILD_CONFDIR="${MXK_BUILD_CONFDIR_ABS}")
  target_link_libraries(bench_executor PRIVATE mxk)
  add_dependencies(bench_executor mxk-cpu-blas)
endif()
