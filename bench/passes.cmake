# Memory plans of the graph passes: `bench_plan` prints planned against naive bytes
# for MLP and LeNet-shaped graphs in training and inference (plans only, nothing is
# bound) and the time to plan a 1000-operator graph. LeNet's convolution/pooling
# shapes come from the passes-test plugin (tests/passes), built here when the tests
# are not.
if(TARGET mxk-cpu-blas)
  if(NOT TARGET mxk-passes-test)
    add_library(mxk-passes-test MODULE ${PROJECT_SOURCE_DIR}/tests/passes/passes_test_plugin.c)
    set_target_properties(mxk-passes-test PROPERTIES PREFIX "lib" OUTPUT_NAME "mxk-passes-test"
      LIBRARY_OUTPUT_DIRECTORY ${MXK_TEST_PLUGIN_DIR} C_VISIBILITY_PRESET hidden)
    target_include_directories(mxk-passes-test PRIVATE ${PROJECT_SOURCE_DIR}/abi
      ${PROJECT_SOURCE_DIR}/sdk/include)
  endif()
  add_executable(bench_plan ${CMAKE_CURRENT_LIST_DIR}/bench_plan.c)
  target_include_directories(bench_plan PRIVATE ${MXK_KERNEL_INCLUDE_DIRS} ${PROJECT_SOURCE_DIR}/tests/passes)
  target_compile_definitions(bench_plan PRIVATE BUILD_CONFDIR="${MXK_BUILD_CONFDIR_ABS}"
    PT_PLUGIN_PATH="${MXK_TEST_PLUGIN_DIR}/libmxk-passes-test.so")
  target_link_libraries(bench_plan PRIVATE mxk_whitebox)
  add_dependencies(bench_plan mxk-cpu-blas mxk-passes-test)
endif()
