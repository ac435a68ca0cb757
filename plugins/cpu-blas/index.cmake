# cpu-blas sources of the index group: indexing and sequence operators (slice, take, pick, gather_nd, where, Sequence*, batch_dot, topk, sort, ...).
target_sources(mxk-cpu-blas PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/ops_index.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_index_common.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_index_slice.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_index_take.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_index_where.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_index_sequence.c
  ${CMAKE_CURRENT_SOURCE_DIR}/op_index_sort.c)
