// cuBLASLt descriptors, heuristic query and launch for the GEMM and burn benchmarks.
#include "cuda/lt_matmul.h"

#include <utility>

#include "cuda/cuda_check.h"

namespace trainrig::cuda {

using bench::GemmDtype;

size_t gemm_input_bytes(GemmDtype d) {
    switch (d) {
        case GemmDtype::kBf16:
        case GemmDtype::kFp16:
            return 2;
        case GemmDtype::kTf32:
            return 4;
        case GemmDtype::kFp8E4m3:
            return 1;
    }
    return 0;
}

size_t gemm_output_bytes(GemmDtype d) { return d == GemmDtype::kTf32 ? 4 : 2; }

const char* gemm_output_name(GemmDtype d) {
    switch (d) {
        case GemmDtype::kFp16:
            return "fp16";
        case GemmDtype::kTf32:
            return "fp32";
        default:
            return "bf16";
    }
}

namespace {

cudaDataType_t input_type(GemmDtype d) {
    switch (d) {
        case GemmDtype::kBf16:
            return CUDA_R_16BF;
        case GemmDtype::kFp16:
            return CUDA_R_16F;
        case GemmDtype::kTf32:
            return CUDA_R_32F;
        case GemmDtype::kFp8E4m3:
            return CUDA_R_8F_E4M3;
    }
    return CUDA_R_32F;
}

cudaDataType_t output_type(GemmDtype d) {
    switch (d) {
        case GemmDtype::kFp16:
            return CUDA_R_16F;
        case GemmDtype::kTf32:
            return CUDA_R_32F;
        default:
            return CUDA_R_16BF;
    }
}

template <class T>
cublasStatus_t set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                        const T& value) {
    return cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof value);
}

}  // namespace

Result<LtHandle> make_lt_handle() {
    cublasLtHandle_t h = nullptr;
    CUBLAS_TRY(cublasLtCreate(&h));
    return LtHandle(h);
}

Result<LtMatmul> LtMatmul::create(GemmDtype d, const bench::GemmShape& s, bool deterministic) {
    LtMatmul mm;
    // fp32 accumulation for every type; tf32 is fp32 data on the tensor cores.
    const cublasComputeType_t compute =
        d == GemmDtype::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    CUBLAS_TRY(cublasLtMatmulDescCreate(&mm.desc_, compute, CUDA_R_32F));
    CUBLAS_TRY(set_desc(mm.desc_, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T));
    CUBLAS_TRY(set_desc(mm.desc_, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N));
    if (d == GemmDtype::kFp8E4m3) {
        // fp8 products take per-tensor scale factors by device pointer (cuBLASLt docs,
        // "cublasLtMatmul" fp8 notes); 1.0 here, the inputs already lie in e4m3's range.
        auto scales = device_alloc(2 * sizeof(float));
        if (!scales.ok()) return scales.status();
        mm.scales_ = std::move(scales).value();
        const float ones[2] = {1.0f, 1.0f};
        CUDA_TRY(cudaMemcpy(mm.scales_.get(), ones, sizeof ones, cudaMemcpyHostToDevice));
        // A pageable copy may return before its DMA lands, and the matmuls run on a
        // non-blocking stream that does not wait for the legacy one.
        CUDA_TRY(cudaDeviceSynchronize());
        const float* a_scale = static_cast<const float*>(mm.scales_.get());
        const float* b_scale = a_scale + 1;
        CUBLAS_TRY(set_desc(mm.desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, a_scale));
        CUBLAS_TRY(set_desc(mm.desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, b_scale));
    }
    const auto m = static_cast<uint64_t>(s.m), n = static_cast<uint64_t>(s.n),
               k = static_cast<uint64_t>(s.k);
    CUBLAS_TRY(cublasLtMatrixLayoutCreate(&mm.a_, input_type(d), k, m, static_cast<int64_t>(k)));
    CUBLAS_TRY(cublasLtMatrixLayoutCreate(&mm.b_, input_type(d), k, n, static_cast<int64_t>(k)));
    CUBLAS_TRY(cublasLtMatrixLayoutCreate(&mm.d_, output_type(d), m, n, static_cast<int64_t>(m)));
    CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&mm.pref_));
    const size_t workspace = kLtWorkspaceBytes;
    CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(
        mm.pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace));
    if (deterministic) {
        const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_NONE |
                              CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE |
                              CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
        CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(
            mm.pref_, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof mask));
    }
    return mm;
}

LtMatmul::LtMatmul(LtMatmul&& o) noexcept
    : desc_(std::exchange(o.desc_, nullptr)),
      a_(std::exchange(o.a_, nullptr)),
      b_(std::exchange(o.b_, nullptr)),
      d_(std::exchange(o.d_, nullptr)),
      pref_(std::exchange(o.pref_, nullptr)),
      scales_(std::move(o.scales_)) {}

LtMatmul::~LtMatmul() {
    if (pref_ != nullptr) cublasLtMatmulPreferenceDestroy(pref_);
    if (d_ != nullptr) cublasLtMatrixLayoutDestroy(d_);
    if (b_ != nullptr) cublasLtMatrixLayoutDestroy(b_);
    if (a_ != nullptr) cublasLtMatrixLayoutDestroy(a_);
    if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
}

Result<std::vector<cublasLtMatmulAlgo_t>> LtMatmul::algorithms(cublasLtHandle_t h,
                                                               int count) const {
    std::vector<cublasLtMatmulHeuristicResult_t> found(static_cast<size_t>(count));
    int returned = 0;
    // C is D (beta = 0, same layout).
    CUBLAS_TRY(cublasLtMatmulAlgoGetHeuristic(h, desc_, a_, b_, d_, d_, pref_, count, found.data(),
                                              &returned));
    std::vector<cublasLtMatmulAlgo_t> out;
    for (int i = 0; i < returned; ++i)
        if (found[static_cast<size_t>(i)].state == CUBLAS_STATUS_SUCCESS)
            out.push_back(found[static_cast<size_t>(i)].algo);
    if (out.empty())
        return Status{Errc::kUnsupported, "cuBLASLt offers no algorithm for this product"};
    return out;
}

Status LtMatmul::run(cublasLtHandle_t h, const cublasLtMatmulAlgo_t& algo, const void* a,
                     const void* b, void* d, void* workspace, cudaStream_t stream) const {
    const float alpha = 1.0f, beta = 0.0f;
    CUBLAS_TRY(cublasLtMatmul(h, desc_, &alpha, a, a_, b, b_, &beta, d, d_, d, d_, &algo, workspace,
                              kLtWorkspaceBytes, stream));
    return {};
}

}  // namespace trainrig::cuda
