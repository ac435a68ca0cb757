# Sources of the dependency engine, added to libmxk by kernel/CMakeLists.txt
# (include(engine/sources.cmake)). Needs include dirs abi/, kernel/, kernel/engine/
# and pthreads.
set(MXK_ENGINE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/engine.c
  ${CMAKE_CURRENT_LIST_DIR}/engine_cached.c
  ${CMAKE_CURRENT_LIST_DIR}/engine_error.c
  ${CMAKE_CURRENT_LIST_DIR}/engine_naive.c
  ${CMAKE_CURRENT_LIST_DIR}/engine_op.c
  ${CMAKE_CURRENT_LIST_DIR}/engine_pool.c
  ${CMAKE_CURRENT_LIST_DIR}/engine_threaded.c
  ${CMAKE_CURRENT_LIST_DIR}/engine_var.c
  ${CMAKE_CURRENT_LIST_DIR}/engine_watchdog.c
)
