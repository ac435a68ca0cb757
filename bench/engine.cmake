# Engine overhead benchmark: `bench_engine [pushes]` (a few seconds).
add_executable(bench_engine ${CMAKE_CURRENT_LIST_DIR}/bench_engine.c)
target_include_directories(bench_engine PRIVATE
  ${PROJECT_SOURCE_DIR}/abi ${MXK_KERNEL_INCLUDE_DIRS})
target_link_libraries(bench_engine PRIVATE mxk_whitebox)
