# Reference trainer throughput: `bench_train mlp|lenet [epochs] [data_dir]` (one JSON
# line), and bench_train.sh, which alternates it with the PyTorch peer
# (PEER_DIR/train.py) and prints the median ratio.
if(TARGET mxk-cpu-blas AND TARGET mxk_train)
  add_executable(bench_train ${CMAKE_CURRENT_LIST_DIR}/bench_train.c)
  target_link_libraries(bench_train PRIVATE mxk_train mxk)
  add_dependencies(bench_train mxk-cpu-blas)
endif()

# Inference latency (batch 1) and throughput (batch 100): `bench_infer
# mlp|lenet|resnet20 [reps]` (one JSON line); bench_onednn.sh runs it beside the peers.
if(TARGET mxk-cpu-blas AND TARGET mxk_train)
  add_executable(bench_infer ${CMAKE_CURRENT_LIST_DIR}/bench_infer.c)
  target_link_libraries(bench_infer PRIVATE mxk_train mxk)
  add_dependencies(bench_infer mxk-cpu-blas)
endif()

# Memory of bucketing: `bench_bucketing TEXT` (a BucketingModule with 5 buckets beside the
# largest bucket alone; peak storage bytes and their ratio).
if(TARGET mxk-cpu-blas AND TARGET mxk_train)
  add_executable(bench_bucketing ${CMAKE_CURRENT_LIST_DIR}/bench_bucketing.c)
  target_link_libraries(bench_bucketing PRIVATE mxk_train mxk)
  add_dependencies(bench_bucketing mxk-cpu-blas)
endif()
