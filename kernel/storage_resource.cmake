# Storage manager and resource manager sources of libmxk (kernel/storage.c,
# kernel/resource.c, and their shared device checks kernel/device_lookup.c).
# Included by kernel/CMakeLists.txt, which adds ${MXK_STORAGE_SOURCES} to the mxk
# target, and by the test kit (tests/kit). Absolute paths.
set(MXK_STORAGE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/storage.c
  ${CMAKE_CURRENT_LIST_DIR}/resource.c
  ${CMAKE_CURRENT_LIST_DIR}/device_lookup.c)
