# GPU benchmarks (gpu(0); each prints "SKIP: no GPU" and exits 0 without one;
# tests/gpu/run-all.sh runs them through bench/bench_gpu.sh):
#   bench_gpu_train NETWORK [BATCH] [ITERS] [C,H,W] [NUM_LAYERS] [CLASSES]
#                       Module training samples/s on synthetic data (ResNet-50)
#   bench_gpu_overhead [OPS]   per-operation overhead of tiny GPU operations (us)
#   bench_gpu_copy [MIB] [REPS] host<->device GB/s: pageable, pinned, cudaMemcpy peak
#   bench_cudnn_limit [BATCH] [ITERS] [MXK_SPS]  ResNet-50's layers on cuDNN/cuBLAS
#                       directly: the images/s limit, and mxk's fraction of it
# The last two call CUDA directly: built only with the cuda plugin (its toolkit).
if(TARGET mxk-cpu-blas AND TARGET mxk_train)
  add_executable(bench_gpu_train ${CMAKE_CURRENT_LIST_DIR}/bench_gpu_train.c)
  target_link_libraries(bench_gpu_train PRIVATE mxk_train mxk)
  add_dependencies(bench_gpu_train mxk-cpu-blas)
endif()
add_executable(bench_gpu_overhead ${CMAKE_CURRENT_LIST_DIR}/bench_gpu_overhead.c)
target_link_libraries(bench_gpu_overhead PRIVATE mxk)
if(TARGET mxk-cuda)
  find_package(CUDAToolkit REQUIRED)
  add_executable(bench_gpu_copy ${CMAKE_CURRENT_LIST_DIR}/bench_gpu_copy.c)
  target_link_libraries(bench_gpu_copy PRIVATE mxk CUDA::cudart)
  add_executable(bench_cudnn_limit ${CMAKE_CURRENT_LIST_DIR}/bench_cudnn_limit.c)
  target_include_directories(bench_cudnn_limit PRIVATE ${MXK_CUDNN_INCLUDE_DIR})
  target_link_libraries(bench_cudnn_limit PRIVATE CUDA::cudart CUDA::cublas ${MXK_CUDNN_LIBRARY})
endif()
