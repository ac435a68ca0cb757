# Allreduce bandwidth of the kvstore-dist transport beside MPI_Allreduce:
# `mpirun -np 2 build/bin/bench_allreduce [REPS]` (built with the plugin, i.e. when MPI is found).
if(TARGET mxk-kvstore-dist AND TARGET mxk-cpu-blas)
  find_package(MPI COMPONENTS C REQUIRED)
  add_executable(bench_allreduce ${CMAKE_CURRENT_LIST_DIR}/bench_allreduce.c)
  target_compile_definitions(bench_allreduce PRIVATE MXK_BUILD_CONFDIR="${MXK_BUILD_CONFDIR_ABS}")
  target_link_libraries(bench_allreduce PRIVATE mxk MPI::MPI_C)
  add_dependencies(bench_allreduce mxk-cpu-blas mxk-kvstore-dist)
endif()
