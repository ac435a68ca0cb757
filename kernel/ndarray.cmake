# NDArray sources of libmxk (included by kernel/CMakeLists.txt and by the NDArray
# tests / fuzz target, which compile them with a test-local device registry).
# file_io.c: the atomic writer and bounded reader of .params files (and of every
# other file the kernel and trainer read or write).
# Sets MXK_NDARRAY_SOURCES (absolute paths).
set(MXK_NDARRAY_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/ndarray.c
  ${CMAKE_CURRENT_LIST_DIR}/ndarray_io.c
  ${CMAKE_CURRENT_LIST_DIR}/dtype_convert.c
  ${CMAKE_CURRENT_LIST_DIR}/file_io.c
)
