# The fused RNN operator forward+backward on cpu-blas and onednn in one run:
# `bench_rnn [iterations] [mode] [T N C H L]` (default lstm 32 32 256 256 2).
if(TARGET mxk-cpu-blas AND TARGET mxk-onednn)
  add_executable(bench_rnn ${CMAKE_CURRENT_LIST_DIR}/bench_rnn.c)
  target_compile_definitions(bench_rnn PRIVATE MXK_BUILD_CONFDIR="${MXK_BUILD_CONFDIR_ABS}")
  target_link_libraries(bench_rnn PRIVATE mxk)
  add_dependencies(bench_rnn mxk-cpu-blas mxk-onednn)
endif()
