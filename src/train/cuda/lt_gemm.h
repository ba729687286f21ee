// The training GEMMs of a linear layer out = inp · Wᵀ + bias through cuBLASLt: forward (with
// the bias and an optional residual add fused), the input gradient and the accumulated weight
// gradient. Matrices are row-major as everywhere in the trainer; the mapping onto cuBLASLt's
// column-major convention is derived in lt_gemm.cpp. Descriptors and the heuristic's algorithm
// are kept per distinct call (kind, shape, operand alignments), so a training step queries the
// heuristic only on its first pass.
#pragma once

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>

#include "core/status.h"
#include "cuda/lt_matmul.h"

namespace trainrig::train::cuda {

class LtGemm {
public:
    // `workspace` (device memory of `workspace_bytes`, 256-byte aligned) stays owned by the
    // caller. One LtGemm serves one stream at a time: every call shares the workspace.
    static Result<LtGemm> create(void* workspace, size_t workspace_bytes);
    LtGemm(LtGemm&&) noexcept;
    LtGemm& operator=(LtGemm&&) noexcept;
    LtGemm(const LtGemm&) = delete;
    LtGemm& operator=(const LtGemm&) = delete;
    ~LtGemm();

    // out (N, OC) = inp (N, C) · Wᵀ + bias + residual, W (OC, C); bias (OC) and residual
    // (N, OC) may be null. out must not alias inp or residual.
    Status forward(__nv_bfloat16* out, const __nv_bfloat16* inp, const __nv_bfloat16* w,
                   const __nv_bfloat16* bias, const __nv_bfloat16* residual, int N, int C, int OC,
                   cudaStream_t stream);
    // dinp (N, C) = dout (N, OC) · W   (written, not accumulated)
    Status backward_input(__nv_bfloat16* dinp, const __nv_bfloat16* dout, const __nv_bfloat16* w,
                          int N, int C, int OC, cudaStream_t stream);
    // dW (OC, C) += doutᵀ · inp, fp32 accumulation into the fp32 gradient.
    Status backward_weight(float* dw, const __nv_bfloat16* dout, const __nv_bfloat16* inp, int N,
                           int C, int OC, cudaStream_t stream);

private:
    enum class Kind : uint8_t { kForward, kBackwardInput, kBackwardWeight };
    // Everything the descriptors and the chosen algorithm depend on.
    struct Key {
        Kind kind;
        int N, C, OC;
        bool bias, residual;
        // Bytes, powers of two up to 256: the heuristic picks kernels for the alignment it is
        // told (the bias pointer's is read from the descriptor).
        uint16_t align_a, align_b, align_c, align_d, align_bias;
        auto operator<=>(const Key&) const = default;
    };
    struct Plan;

    LtGemm() = default;
    static const char* kind_name(Kind kind);
    Result<Plan*> plan(const Key& key, const void* bias);
    Status run(const Key& key, const void* a, const void* b, const void* c, void* d,
               const void* bias, float beta, cudaStream_t stream);

    trainrig::cuda::LtHandle handle_;
    void* workspace_ = nullptr;
    size_t workspace_bytes_ = 0;
    std::map<Key, std::unique_ptr<Plan>> plans_;
};

}  // namespace trainrig::train::cuda
