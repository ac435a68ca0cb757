# Storage manager and resource manager sources of libmxk (kernel/storage.c,
# kernel/resource.c). Included by kernel/CMakeLists.txt, which adds
# ${MXK_STORAGE_SOURCES} to the mxk target.
set(MXK_STORAGE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/storage.c
  ${CMAKE_CURRENT_LIST_DIR}/resource.c)
