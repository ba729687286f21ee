// A matmul's input type and shape: what cuda/lt_matmul runs and the GEMM benchmark sweeps over.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainrig::bench {

// Input types; all accumulate in fp32 (cuBLASLt CUBLAS_COMPUTE_32F, tf32 through
// CUBLAS_COMPUTE_32F_FAST_TF32). Outputs: bf16 for bf16 and fp8, fp16 for fp16, fp32 for tf32.
enum class GemmDtype { kBf16, kFp16, kTf32, kFp8E4m3 };

std::string_view gemm_dtype_name(GemmDtype d);  // "bf16", "fp16", "tf32", "fp8_e4m3"
std::optional<GemmDtype> gemm_dtype_from_name(std::string_view name);
// fp8 e4m3 matmuls need compute capability 8.9 (Ada) or newer.
std::vector<GemmDtype> gemm_dtypes(int cc_major, int cc_minor);

// D (m×n) = A (m×k) · B (k×n).
struct GemmShape {
    int64_t m = 0, n = 0, k = 0;
    std::string kind;  // "square" or "llm"
};

}  // namespace trainrig::bench
