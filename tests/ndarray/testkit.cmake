# The NDArray test kit: a static library of the kernel sources the NDArray tests and
# the ndarray fuzz target need (error, shape, storage, engine, NDArray), compiled
# together with a test-local device registry (fake_device.c: a malloc CPU backend and
# a scrambled fake GPU backend) in place of kernel/registry.c and the plugin loader.
# Until the cpu-blas plugin can be loaded, this is how these tests get a CPU device;
# the fake GPU stays useful afterwards (cross-device copies without CUDA).
#
# mxk_ndarray_testkit(NAME [OPTIONS...]) defines the static library NAME once; OPTIONS
# are added to its public compile and link options (e.g. -fsanitize=fuzzer-no-link).
# Included from tests/ndarray and tests/fuzz; paths are relative to this file.
find_package(Threads REQUIRED)

function(mxk_ndarray_testkit name)
  if(TARGET ${name})
    return()
  endif()
  set(r ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../..)
  include(${r}/kernel/ndarray.cmake)
  include(${r}/kernel/engine/sources.cmake OPTIONAL)
  if(NOT MXK_ENGINE_SOURCES)
    file(GLOB MXK_ENGINE_SOURCES ${r}/kernel/engine/*.c)
  endif()
  add_library(${name} STATIC
    ${r}/kernel/error.c ${r}/kernel/shape.c ${r}/kernel/storage.c
    ${MXK_ENGINE_SOURCES} ${MXK_NDARRAY_SOURCES}
    ${r}/tests/ndarray/fake_device.c)
  target_include_directories(${name} PUBLIC
    ${r}/abi ${r}/kernel ${r}/kernel/include ${r}/kernel/engine ${r}/tests ${r}/tests/ndarray)
  target_link_libraries(${name} PUBLIC Threads::Threads m)
  if(ARGN)
    target_compile_options(${name} PUBLIC ${ARGN})
    target_link_options(${name} PUBLIC ${ARGN})
  endif()
endfunction()
