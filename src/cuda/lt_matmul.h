// One cuBLASLt matrix product D = A·B, set up once and run many times: the descriptors for a
// dtype and shape in the TN layout (column-major A stored transposed, as fp8 requires on
// Hopper), the heuristic's candidate algorithms, and the launch.
#pragma once

#include <cublasLt.h>

#include <vector>

#include "core/status.h"
#include "cuda/device_memory.h"
#include "measure/gemm_types.h"

namespace trainrig::cuda {

// Bytes per element of the inputs and of the output (fp8 products write bf16).
size_t gemm_input_bytes(bench::GemmDtype d);
size_t gemm_output_bytes(bench::GemmDtype d);
// "bf16", "fp16", "fp32": what D holds.
const char* gemm_output_name(bench::GemmDtype d);

struct DestroyLtHandle {
    void operator()(cublasLtHandle_t h) const { cublasLtDestroy(h); }
};
using LtHandle = Owned<cublasLtHandle_t, DestroyLtHandle>;
// On the current device.
Result<LtHandle> make_lt_handle();

// The workspace cuBLASLt may use: 32 MiB, PyTorch's default on Hopper
// (CUBLASLT_WORKSPACE_SIZE, aten/src/ATen/cuda/CublasHandlePool.cpp).
inline constexpr size_t kLtWorkspaceBytes = size_t{32} << 20;

class LtMatmul {
public:
    // `deterministic` leaves out split-K algorithms that add partial results in place, so the
    // same inputs give bit-identical outputs run after run (what burn compares).
    static Result<LtMatmul> create(bench::GemmDtype d, const bench::GemmShape& s,
                                   bool deterministic);
    LtMatmul(LtMatmul&&) noexcept;
    LtMatmul& operator=(LtMatmul&&) = delete;
    LtMatmul(const LtMatmul&) = delete;
    LtMatmul& operator=(const LtMatmul&) = delete;
    ~LtMatmul();

    // Up to `count` algorithms, the heuristic's best guess first; none is an error.
    Result<std::vector<cublasLtMatmulAlgo_t>> algorithms(cublasLtHandle_t h, int count) const;
    // D = A·B with beta = 0. `a` holds k×m (A transposed), `b` k×n, `d` m×n, column-major.
    Status run(cublasLtHandle_t h, const cublasLtMatmulAlgo_t& algo, const void* a, const void* b,
               void* d, void* workspace, cudaStream_t stream) const;

private:
    LtMatmul() = default;
    cublasLtMatmulDesc_t desc_ = nullptr;
    cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
    cublasLtMatmulPreference_t pref_ = nullptr;
    DeviceMemory scales_;  // fp8: the A and B scale factors (1.0), device-resident
};

}  // namespace trainrig::cuda
