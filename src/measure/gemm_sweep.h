// What the GEMM benchmark measures and how it judges its own results: the shape lists, the FLOP
// count, per-dtype error bounds and the CPU reference. Pure C++, unit-tested without a GPU. The
// types and shapes themselves, which the GPU matmul also takes, are in gemm_types.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "measure/gemm_types.h"
#include "measure/sweep_size.h"

namespace trainrig::bench {

// Square 1024..8192 (16384 in the full sweep) and transformer layer shapes: 8192 tokens through
// a hidden size of 4096 with an MLP of 14336 (Llama 3 8B's sizes: QKV/out, up/gate, down). On
// an emulated device, one small square and one non-square shape.
std::vector<GemmShape> gemm_shapes(SweepSize size);
// Shapes the "typical" record takes the median over: every dimension at least 4096.
bool gemm_shape_is_typical(const GemmShape& s);
// Small shapes checked element by element against the CPU reference (one non-square; every
// dimension a multiple of 16, as fp8 matmuls require).
std::vector<GemmShape> gemm_check_shapes();

// 2·m·n·k: one multiply and one add per term.
double gemm_flops(const GemmShape& s);

// Bound on |D - D_ref| relative to Σ_p |a_ip·b_pj| (the classic dot-product error bound, so it
// holds near zero outputs too). Rounding the output dominates: bf16 keeps 8 significant bits
// (unit roundoff 2^-8), fp16 11 (2^-11); tf32 rounds both inputs to 11 bits (up to 2^-10 each
// when the hardware truncates). fp8 adds Hopper's reduced-precision fp8 accumulation (about 14
// bits, DeepSeek-V3 technical report §3.3.2). Each bound is about twice the worst case, so a
// pass is robust and a fail is a wrong result, not rounding.
double gemm_tolerance(GemmDtype d);

// The reference for the TN layout the benchmark uses (column-major, as cuBLAS): A is stored
// transposed, a[p + i·k] = A(i,p); b[p + j·k] = B(p,j); the result c[i + j·m] = D(i,j), in
// fp64 along with Σ|a·b| for each element.
struct GemmReference {
    std::vector<double> c;
    std::vector<double> abs_sum;
};
GemmReference reference_matmul_tn(int64_t m, int64_t n, int64_t k, const std::vector<float>& a,
                                  const std::vector<float>& b);
// One element's reference, for spot checks of large shapes: row i of A and column j of B.
GemmReference reference_dot(const float* a_row, const float* b_col, int64_t k);

// How a result compares with its reference: elements over the bound and the worst ratio
// |err| / (tol·Σ|a·b|) (≤ 1 passes).
struct GemmCheck {
    size_t checked = 0;
    size_t failed = 0;
    double worst_ratio = 0;
    size_t worst_index = 0;
};
GemmCheck check_gemm(const GemmReference& ref, const std::vector<float>& got, double tolerance);

}  // namespace trainrig::bench
