// Shape lists, FLOPs, tolerances and the fp64 reference of the GEMM benchmark.
#include "measure/gemm_sweep.h"

#include <algorithm>
#include <cmath>

namespace trainrig::bench {

std::vector<GemmShape> gemm_shapes(SweepSize size) {
    if (size == SweepSize::kEmulated) return {{256, 256, 256, "square"}, {384, 256, 320, "llm"}};
    const bool quick = size == SweepSize::kQuick;
    std::vector<GemmShape> out;
    for (const int64_t s : {1024, 2048, 4096, 8192}) out.push_back({s, s, s, "square"});
    if (!quick) out.push_back({16384, 16384, 16384, "square"});
    out.push_back({8192, 4096, 4096, "llm"});
    if (!quick) {
        out.push_back({8192, 14336, 4096, "llm"});
        out.push_back({8192, 4096, 14336, "llm"});
    }
    return out;
}

bool gemm_shape_is_typical(const GemmShape& s) { return std::min({s.m, s.n, s.k}) >= 4096; }

std::vector<GemmShape> gemm_check_shapes() {
    return {{256, 256, 256, "square"}, {384, 128, 320, "check"}};
}

double gemm_flops(const GemmShape& s) {
    return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

double gemm_tolerance(GemmDtype d) {
    switch (d) {
        case GemmDtype::kBf16:
            return std::ldexp(1.0, -7);  // 2 × 2^-8
        case GemmDtype::kFp16:
            return std::ldexp(1.0, -10);  // 2 × 2^-11
        case GemmDtype::kTf32:
            return std::ldexp(1.0, -8);  // 2 × (2 · 2^-10), both factors truncated
        case GemmDtype::kFp8E4m3:
            return std::ldexp(1.0, -6);  // accumulation at ~14 bits over short k, bf16 output
    }
    return 0;
}

GemmReference reference_matmul_tn(int64_t m, int64_t n, int64_t k, const std::vector<float>& a,
                                  const std::vector<float>& b) {
    GemmReference r;
    r.c.assign(static_cast<size_t>(m * n), 0.0);
    r.abs_sum.assign(static_cast<size_t>(m * n), 0.0);
    for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < m; ++i) {
            const GemmReference one =
                reference_dot(&a[static_cast<size_t>(i * k)], &b[static_cast<size_t>(j * k)], k);
            r.c[static_cast<size_t>(i + j * m)] = one.c[0];
            r.abs_sum[static_cast<size_t>(i + j * m)] = one.abs_sum[0];
        }
    }
    return r;
}

GemmReference reference_dot(const float* a_row, const float* b_col, int64_t k) {
    double sum = 0, abs_sum = 0;
    for (int64_t p = 0; p < k; ++p) {
        const double t = static_cast<double>(a_row[p]) * static_cast<double>(b_col[p]);
        sum += t;
        abs_sum += std::abs(t);
    }
    return {{sum}, {abs_sum}};
}

GemmCheck check_gemm(const GemmReference& ref, const std::vector<float>& got, double tolerance) {
    GemmCheck out;
    const size_t n = std::min(ref.c.size(), got.size());
    out.checked = n;
    // A result that is missing elements fails on each of them.
    out.failed = std::max(ref.c.size(), got.size()) - n;
    for (size_t i = 0; i < n; ++i) {
        const double err = std::abs(static_cast<double>(got[i]) - ref.c[i]);
        // The floor keeps an all-zero row (Σ|a·b| = 0) from dividing by zero: it must be exact.
        const double bound = std::max(tolerance * ref.abs_sum[i], 1e-30);
        const double ratio = std::isfinite(err) ? err / bound : INFINITY;
        if (!(ratio <= 1.0)) ++out.failed;
        if (!(ratio <= out.worst_ratio)) {
            out.worst_ratio = ratio;
            out.worst_index = i;
        }
    }
    return out;
}

}  // namespace trainrig::bench
