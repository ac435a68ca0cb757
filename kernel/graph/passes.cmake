# Graph passes (issue 3 item 3): the indexed graph, shape/type inference (and the
# public mxk_symbol_infer_shape / mxk_symbol_infer_type), the gradient plan and the
# memory plan. Included by kernel/CMakeLists.txt; paths relative to kernel/.
set(MXK_PASSES_SOURCES
  graph/igraph.c
  graph/infer.c
  graph/gradient.c
  graph/plan_memory.c)
