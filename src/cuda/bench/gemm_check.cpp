// Reads GEMM inputs and outputs back as fp32 (widened on the device, so the host needs no bf16
// or fp8 decoding) and compares them with the fp64 reference.
#include "cuda/bench/gemm_check.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_memory.h"
#include "cuda/kernels.h"
#include "cuda/lt_matmul.h"

namespace trainrig::cuda {
namespace {

// count elements starting at element `first` of a device array of type `d`, as fp32 on the host.
Result<std::vector<float>> read_as_float(const void* base, bench::GemmDtype d, bool input,
                                         size_t first, size_t count, cudaStream_t stream) {
    const size_t elem = input ? gemm_input_bytes(d) : gemm_output_bytes(d);
    auto scratch = device_alloc(count * sizeof(float));
    if (!scratch.ok()) return scratch.status();
    auto* f = static_cast<float*>(scratch->get());
    TRAINRIG_TRY(
        widen_to_float(static_cast<const char*>(base) + first * elem, d, input, count, f, stream));
    std::vector<float> host(count);
    CUDA_TRY(
        cudaMemcpyAsync(host.data(), f, count * sizeof(float), cudaMemcpyDeviceToHost, stream));
    TRAINRIG_TRY(wait_stream(stream));
    return host;
}

}  // namespace

Result<GemmVerdict> check_product(bench::GemmDtype d, const bench::GemmShape& s, const void* a,
                                  const void* b, const void* out, size_t elements,
                                  cudaStream_t stream) {
    const auto m = static_cast<size_t>(s.m), n = static_cast<size_t>(s.n),
               k = static_cast<size_t>(s.k);
    const double tol = bench::gemm_tolerance(d);
    GemmVerdict v;
    if (elements == 0) {
        auto ha = read_as_float(a, d, true, 0, k * m, stream);
        auto hb = read_as_float(b, d, true, 0, k * n, stream);
        auto hd = read_as_float(out, d, false, 0, m * n, stream);
        if (!ha.ok()) return ha.status();
        if (!hb.ok()) return hb.status();
        if (!hd.ok()) return hd.status();
        const auto ref = bench::reference_matmul_tn(s.m, s.n, s.k, *ha, *hb);
        v.check = bench::check_gemm(ref, *hd, tol);
        v.detail = fmt::format("{}x{}x{} in full", s.m, s.n, s.k);
    } else {
        bench::GemmReference ref;
        std::vector<float> got;
        for (size_t e = 0; e < elements; ++e) {
            // Spread over rows and columns; the primes keep the picks off any tile pattern.
            const size_t i = (e * 7919 + 13) % m, j = (e * 104729 + 7) % n;
            auto row = read_as_float(a, d, true, i * k, k, stream);
            auto col = read_as_float(b, d, true, j * k, k, stream);
            auto val = read_as_float(out, d, false, i + j * m, 1, stream);
            if (!row.ok()) return row.status();
            if (!col.ok()) return col.status();
            if (!val.ok()) return val.status();
            const auto one = bench::reference_dot(row->data(), col->data(), s.k);
            ref.c.push_back(one.c[0]);
            ref.abs_sum.push_back(one.abs_sum[0]);
            got.push_back((*val)[0]);
        }
        v.check = bench::check_gemm(ref, got, tol);
        v.detail = fmt::format("{} sampled elements of {}x{}x{}", elements, s.m, s.n, s.k);
    }
    v.detail += fmt::format(": {} outside |err| <= 2^{:.0f}·Σ|a·b| (worst {:.3g} of the bound)",
                            v.check.failed, std::log2(tol), v.check.worst_ratio);
    return v;
}

}  // namespace trainrig::cuda
