# The sources of the two GPU plugins, in one place for both builds of them: nvcc's
# (src/cuda/CMakeLists.txt) and the emulated device's (tests/emulator/CMakeLists.txt).
set(_cuda ${PROJECT_SOURCE_DIR}/src/cuda)
set(_train ${PROJECT_SOURCE_DIR}/src/train/cuda)
set(TRAINRIG_GPU_BENCH_SOURCES
    ${_cuda}/cuda_check.cpp ${_cuda}/nccl_comm.cpp ${_cuda}/kernels.cu ${_cuda}/lt_matmul.cpp
    ${_cuda}/bench/plugin_entry.cpp ${_cuda}/bench/gpu_inventory.cpp ${_cuda}/bench/numa_binding.cpp
    ${_cuda}/bench/copy_bench.cpp ${_cuda}/bench/hbm_bench.cpp ${_cuda}/bench/gemm_check.cpp
    ${_cuda}/bench/gemm_bench.cpp ${_cuda}/bench/nvml_sampler.cpp ${_cuda}/bench/burn_bench.cpp
    ${_cuda}/bench/p2p_bench.cpp
    ${_cuda}/bench/nccl_world.cpp ${_cuda}/bench/nccl_bench.cpp ${_cuda}/bench/nccl_pairs_bench.cpp
)
set(TRAINRIG_TRAIN_CUDA_SOURCES
    ${_cuda}/cuda_check.cpp ${_cuda}/nccl_comm.cpp
    ${_train}/kernels/encoder.cu ${_train}/kernels/layernorm.cu
    ${_train}/kernels/gelu.cu ${_train}/kernels/column_sums.cu
    ${_train}/kernels/crossentropy.cu ${_train}/kernels/adamw.cu
    ${_train}/kernels/reduce.cu ${_train}/attention.cu
    ${_train}/kernels/rmsnorm.cu ${_train}/kernels/rope.cu
    ${_train}/kernels/swiglu.cu
    ${_train}/lt_gemm.cpp ${_train}/gpt_cuda.cpp ${_train}/gpt_cuda_buffers.cpp
    ${_train}/gpt_cuda_backward.cpp
    ${_train}/device_world.cpp ${_train}/phase_events.cpp
    ${_train}/token_staging.cpp
    ${_train}/train_plugin_entry.cpp
)
unset(_cuda)
unset(_train)
