// Checks a GEMM the GPU computed against the fp64 CPU reference of measure/gemm_sweep.h: in full
// for small shapes, at sampled elements for the large ones the benchmark times.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "core/status.h"
#include "measure/gemm_sweep.h"

namespace trainrig::cuda {

struct GemmVerdict {
    bench::GemmCheck check;
    std::string detail;  // "64 sampled elements of 8192x8192x8192: worst 0.31 of the bound"
};

// Compares `elements` elements of D (device, TN layout as lt_matmul.h) with the reference
// computed from the very inputs a and b on the device; every element when `elements` is 0.
Result<GemmVerdict> check_product(bench::GemmDtype d, const bench::GemmShape& s, const void* a,
                                  const void* b, const void* out, size_t elements,
                                  cudaStream_t stream);

}  // namespace trainrig::cuda
