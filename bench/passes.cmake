# Memory plans of the graph passes: `bench_plan` prints planned against naive bytes
# for MLP and LeNet-shaped graphs in training and inference (plans only, nothing is
# bound) and the time to plan a 1000-operator graph. LeNet's convolution/pooling
# shapes come from the passes-test plugin of the tests (tests/passes), so bench_plan
# is built only with them (BUILD_TESTING).
if(TARGET mxk-cpu-blas AND TARGET mxk-passes-test)
  add_executable(bench_plan ${CMAKE_CURRENT_LIST_DIR}/bench_plan.c)
  target_include_directories(bench_plan PRIVATE ${MXK_KERNEL_INCLUDE_DIRS} ${PROJECT_SOURCE_DIR}/tests
    ${PROJECT_SOURCE_DIR}/tests/passes)
  target_compile_definitions(bench_plan PRIVATE BUILD_CONFDIR="${MXK_BUILD_CONFDIR_ABS}"
    PT_PLUGIN_PATH="${MXK_TEST_PLUGIN_DIR}/libmxk-passes-test.so")
  target_link_libraries(bench_plan PRIVATE mxk_whitebox)
  add_dependencies(bench_plan mxk-cpu-blas mxk-passes-test)
endif()
