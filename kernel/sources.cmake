# The kernel's sources by subsystem, and its internal include directories.
# Included by the top-level CMakeLists.txt before kernel/, so that the test kit
# (tests/kit), the white-box tests and the benchmarks see the same lists.
#
#   runtime/  library lifecycle, the error channel, settings from the environment
#   plugin/   config dir, plugin loader, registrar, registry store, backend
#             selection, host API for plugins
#   memory/   storage manager, resource manager, device lookup, the engine's
#             stream hooks over the device backends
#   ndarray/  shapes, NDArray, dtype conversion, .params files, atomic file I/O
#   engine/   the dependency engine (threaded per-device pools, naive engine)
#   op/       operator attributes, op instances (kernel selection, calls), imperative
#   graph/    symbols and MXNet JSON, passes, the executor, the cross-check
#   kvstore/  the KVStore and its in-process transport
#   io/       data iterators; the RecordIO API over plugins/io-recordio/recordio.c
#             and the image codecs (MXK_IMAGE_SOURCES)
#
# MXK_CORE_SOURCES: what the test kit compiles with its fake device registry
# (everything below the registry: runtime, engine, memory, NDArray).
# MXK_KERNEL_SOURCES: all of libmxk. Absolute paths.
set(k ${CMAKE_CURRENT_LIST_DIR})
set(MXK_KERNEL_INCLUDE_DIRS
  ${k} ${k}/include ${PROJECT_SOURCE_DIR}/abi
  ${k}/runtime ${k}/plugin ${k}/memory ${k}/ndarray ${k}/engine ${k}/op ${k}/graph
  ${k}/kvstore ${k}/io ${PROJECT_SOURCE_DIR}/plugins/io-recordio)
set(MXK_CORE_SOURCES
  ${k}/runtime/error.c ${k}/runtime/env.c ${k}/runtime/suggest.c
  ${k}/ndarray/shape.c ${k}/ndarray/ndarray.c ${k}/ndarray/ndarray_io.c
  ${k}/ndarray/dtype_convert.c ${k}/ndarray/file_io.c
  ${k}/memory/storage.c ${k}/memory/resource.c ${k}/memory/device_lookup.c
  ${k}/memory/device_streams.c
  ${k}/engine/engine.c ${k}/engine/engine_cached.c ${k}/engine/engine_error.c
  ${k}/engine/engine_naive.c ${k}/engine/engine_op.c ${k}/engine/engine_pool.c
  ${k}/engine/engine_threaded.c ${k}/engine/engine_var.c ${k}/engine/engine_watchdog.c
  ${k}/engine/engine_stream.c)
set(MXK_KERNEL_SOURCES
  ${MXK_CORE_SOURCES}
  ${k}/runtime/runtime.c
  ${k}/plugin/registry.c ${k}/plugin/backend_select.c ${k}/plugin/registrar.c ${k}/plugin/loader.c ${k}/plugin/config.c
  ${k}/plugin/host_api.c
  ${k}/op/attrs.c ${k}/op/operator.c ${k}/op/op_instance.c ${k}/op/imperative.c
  ${k}/graph/node.c ${k}/graph/symbol.c ${k}/graph/symbol_json.c
  ${k}/graph/igraph.c ${k}/graph/infer.c ${k}/graph/gradient.c ${k}/graph/plan_memory.c
  ${k}/graph/executor.c ${k}/graph/executor_debug.c ${k}/graph/executor_memory.c
  ${k}/graph/executor_profile.c ${k}/graph/executor_reshape.c ${k}/graph/executor_run.c
  ${k}/graph/crosscheck.c ${k}/graph/predict.c
  ${k}/kvstore/kvstore.c ${k}/kvstore/kvstore_local_transport.c ${k}/kvstore/kvstore_server.c
  ${k}/io/data_iter.c ${k}/io/recordio_api.c ${PROJECT_SOURCE_DIR}/plugins/io-recordio/recordio.c
  ${MXK_IMAGE_SOURCES})
unset(k)
