# Symbols and MXNet symbol JSON (kernel/graph): nodes, composition, name lists,
# attributes, JSON save/load with the legacy upgrades. Included by kernel/CMakeLists.txt.
set(MXK_SYMBOL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/node.c
  ${CMAKE_CURRENT_LIST_DIR}/symbol.c
  ${CMAKE_CURRENT_LIST_DIR}/symbol_json.c)
