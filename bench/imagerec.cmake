# The RecordIO image pipeline: `bench_imagerec iter|decode|mnist ...` (one JSON line);
# bench_imagerec.sh runs it beside MXNet 1.9.1's ImageRecordIter (imagerec_mxnet.py).
if(TARGET mxk-io-recordio)
  add_executable(bench_imagerec ${CMAKE_CURRENT_LIST_DIR}/bench_imagerec.c ${MXK_IMAGE_SOURCES})
  target_include_directories(bench_imagerec PRIVATE ${PROJECT_SOURCE_DIR}/plugins/io-recordio)
  target_link_libraries(bench_imagerec PRIVATE mxk ${MXK_IMAGE_LIBS})
  add_dependencies(bench_imagerec mxk-io-recordio)
endif()
