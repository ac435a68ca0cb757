# The graph executor (kernel/graph/executor*.c): bind, simple_bind, forward,
# backward, memory pool, reshape, monitor, debug_str. Included by kernel/CMakeLists.txt.
set(MXK_EXECUTOR_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/executor.c
  ${CMAKE_CURRENT_LIST_DIR}/executor_debug.c
  ${CMAKE_CURRENT_LIST_DIR}/executor_memory.c
  ${CMAKE_CURRENT_LIST_DIR}/executor_profile.c
  ${CMAKE_CURRENT_LIST_DIR}/executor_reshape.c
  ${CMAKE_CURRENT_LIST_DIR}/executor_run.c)
