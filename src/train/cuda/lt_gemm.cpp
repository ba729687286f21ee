// cuBLASLt descriptors, heuristic and launch for the training GEMMs.
//
// Row-major to column-major: a row-major (R, K) matrix X in memory is, read column-major, the
// K×R matrix Xᵀ with leading dimension K. cuBLASLt computes D (m×n) = op(A)·op(B) + β·C, all
// column-major, op(A) m×k and op(B) k×n; a layout describes the matrix as stored (before op).
// So each row-major product is computed as its transpose:
//
//   forward           out = inp·Wᵀ      ⇔  outᵀ (OC×N) = W · inpᵀ
//                     A = W:   stored C×OC (ld C), op T  → W     (OC×C)
//                     B = inp: stored C×N  (ld C), op N  → inpᵀ  (C×N)
//                     m = OC, n = N, k = C; D (and the residual C) OC×N, ld OC.
//                     The bias (OC) runs along D's rows, broadcast over its columns: one value
//                     per output channel, as CUBLASLT_EPILOGUE_BIAS requires (length m).
//   backward input    dinp = dout·W     ⇔  dinpᵀ (C×N) = Wᵀ · doutᵀ
//                     A = W:    stored C×OC (ld C),  op N → Wᵀ    (C×OC)
//                     B = dout: stored OC×N (ld OC), op N → doutᵀ (OC×N)
//                     m = C, n = N, k = OC; D C×N, ld C.
//   backward weight   dW += doutᵀ·inp   ⇔  dWᵀ (C×OC) += inpᵀ · dout
//                     A = inp:  stored C×N  (ld C),  op N → inpᵀ (C×N)
//                     B = dout: stored OC×N (ld OC), op T → dout (N×OC)
//                     m = C, n = OC, k = N; C = D = dW (fp32) C×OC, ld C, β = 1.
//
// Inputs are bf16, accumulation and α, β fp32 (CUBLAS_COMPUTE_32F, scale CUDA_R_32F); D is bf16
// for the activations and fp32 for the weight gradients, both supported combinations.
#include "train/cuda/lt_gemm.h"

#include <fmt/format.h>

#include <utility>

#include "cuda/cuda_check.h"

namespace trainrig::train::cuda {

struct LtGemm::Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;  // C shares D's layout
    cublasLtMatmulAlgo_t algo{};

    Plan() = default;
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;
    ~Plan() {
        if (d != nullptr) cublasLtMatrixLayoutDestroy(d);
        if (b != nullptr) cublasLtMatrixLayoutDestroy(b);
        if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
        if (desc != nullptr) cublasLtMatmulDescDestroy(desc);
    }
};

namespace {

// The largest power of two up to 256 dividing the address (256 for null: an unused operand).
uint16_t alignment(const void* p) {
    const auto addr = reinterpret_cast<uintptr_t>(p);
    uint16_t a = 256;
    while (a > 1 && addr % a != 0) a /= 2;
    return a;
}

template <class T>
cublasStatus_t set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                        const T& value) {
    return cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof value);
}

template <class T>
cublasStatus_t set_pref(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
                        const T& value) {
    return cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof value);
}

struct DestroyPreference {
    void operator()(cublasLtMatmulPreference_t p) const { cublasLtMatmulPreferenceDestroy(p); }
};
using Preference = trainrig::cuda::Owned<cublasLtMatmulPreference_t, DestroyPreference>;

}  // namespace

const char* LtGemm::kind_name(Kind kind) {
    switch (kind) {
        case Kind::kForward:
            return "forward";
        case Kind::kBackwardInput:
            return "input-gradient";
        case Kind::kBackwardWeight:
            return "weight-gradient";
    }
    return "?";
}

Result<LtGemm> LtGemm::create(void* workspace, size_t workspace_bytes) {
    if (alignment(workspace) < 256)
        return Status(Errc::kInternal, "the cuBLASLt workspace is not 256-byte aligned");
    LtGemm g;
    cublasLtHandle_t h = nullptr;
    CUBLAS_TRY(cublasLtCreate(&h));
    g.handle_ = trainrig::cuda::LtHandle(h);
    g.workspace_ = workspace;
    g.workspace_bytes_ = workspace_bytes;
    return g;
}

LtGemm::LtGemm(LtGemm&&) noexcept = default;
LtGemm& LtGemm::operator=(LtGemm&&) noexcept = default;
LtGemm::~LtGemm() = default;

Result<LtGemm::Plan*> LtGemm::plan(const Key& key, const void* bias) {
    if (auto it = plans_.find(key); it != plans_.end()) return it->second.get();

    auto p = std::make_unique<Plan>();
    CUBLAS_TRY(cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const uint64_t N = static_cast<uint64_t>(key.N), C = static_cast<uint64_t>(key.C),
                   OC = static_cast<uint64_t>(key.OC);
    const auto ld_c = static_cast<int64_t>(C), ld_oc = static_cast<int64_t>(OC);
    // Layouts as stored (rows, columns, leading dimension), column-major; see the top of file.
    switch (key.kind) {
        case Kind::kForward:
            CUBLAS_TRY(set_desc(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T));
            CUBLAS_TRY(set_desc(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N));
            CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->a, CUDA_R_16BF, C, OC, ld_c));
            CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->b, CUDA_R_16BF, C, N, ld_c));
            CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->d, CUDA_R_16BF, OC, N, ld_oc));
            break;
        case Kind::kBackwardInput:
            CUBLAS_TRY(set_desc(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N));
            CUBLAS_TRY(set_desc(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N));
            CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->a, CUDA_R_16BF, C, OC, ld_c));
            CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->b, CUDA_R_16BF, OC, N, ld_oc));
            CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->d, CUDA_R_16BF, C, N, ld_c));
            break;
        case Kind::kBackwardWeight:
            CUBLAS_TRY(set_desc(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N));
            CUBLAS_TRY(set_desc(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_T));
            CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->a, CUDA_R_16BF, C, N, ld_c));
            CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->b, CUDA_R_16BF, OC, N, ld_oc));
            CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->d, CUDA_R_32F, C, OC, ld_c));
            break;
    }
    // The bias vector takes D's type (bf16) by default. Its pointer is set before the heuristic
    // query because the query reads its alignment from the descriptor.
    const cublasLtEpilogue_t epilogue =
        key.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    CUBLAS_TRY(set_desc(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue));
    if (key.bias) CUBLAS_TRY(set_desc(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias));

    cublasLtMatmulPreference_t raw = nullptr;
    CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&raw));
    const Preference pref(raw);
    CUBLAS_TRY(set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace_bytes_));
    // The default assumes 256-byte aligned operands; per-layer weight slices may be less aligned.
    CUBLAS_TRY(set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                        static_cast<uint32_t>(key.align_a)));
    CUBLAS_TRY(set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                        static_cast<uint32_t>(key.align_b)));
    CUBLAS_TRY(set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                        static_cast<uint32_t>(key.align_c)));
    CUBLAS_TRY(set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                        static_cast<uint32_t>(key.align_d)));

    cublasLtMatmulHeuristicResult_t found{};
    int returned = 0;
    CUBLAS_TRY(cublasLtMatmulAlgoGetHeuristic(handle_.get(), p->desc, p->a, p->b, p->d, p->d,
                                              pref.get(), 1, &found, &returned));
    if (returned < 1 || found.state != CUBLAS_STATUS_SUCCESS)
        return Status(Errc::kUnsupported,
                      fmt::format("cuBLASLt offers no algorithm for the {} GEMM of N={}, C={}, "
                                  "OC={}",
                                  kind_name(key.kind), key.N, key.C, key.OC));
    p->algo = found.algo;
    Plan* raw_plan = p.get();
    plans_.emplace(key, std::move(p));
    return raw_plan;
}

Status LtGemm::run(const Key& key, const void* a, const void* b, const void* c, void* d,
                   const void* bias, float beta, cudaStream_t stream) {
    // Leading dimensions of C or OC elements: 16-byte rows for bf16 (and fp32) operands.
    if (key.N < 1 || key.C < 8 || key.OC < 8 || key.C % 8 != 0 || key.OC % 8 != 0)
        return Status(Errc::kInternal,
                      fmt::format("the {} GEMM of N={}, C={}, OC={} needs N ≥ 1 and C, OC "
                                  "multiples of 8",
                                  kind_name(key.kind), key.N, key.C, key.OC));
    if (key.align_a < 16 || key.align_b < 16 || key.align_c < 16 || key.align_d < 16 ||
        key.align_bias < 16)
        return Status(
            Errc::kInternal,
            fmt::format("an operand of the {} GEMM is not 16-byte aligned", kind_name(key.kind)));
    auto found = plan(key, bias);
    if (!found.ok()) return found.status();
    Plan* p = found.value();
    // Layers share a plan but not their bias: the pointer is read when the launch is queued.
    if (key.bias) CUBLAS_TRY(set_desc(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias));
    const float alpha = 1.0f;
    CUBLAS_TRY(cublasLtMatmul(handle_.get(), p->desc, &alpha, a, p->a, b, p->b, &beta, c, p->d, d,
                              p->d, &p->algo, workspace_, workspace_bytes_, stream));
    return ok_status();
}

Status LtGemm::forward(__nv_bfloat16* out, const __nv_bfloat16* inp, const __nv_bfloat16* w,
                       const __nv_bfloat16* bias, const __nv_bfloat16* residual, int N, int C,
                       int OC, cudaStream_t stream) {
    // Without a residual, β = 0 and C is D (never read).
    const void* c = residual != nullptr ? static_cast<const void*>(residual) : out;
    const Key key{.kind = Kind::kForward,
                  .N = N,
                  .C = C,
                  .OC = OC,
                  .bias = bias != nullptr,
                  .residual = residual != nullptr,
                  .align_a = alignment(w),
                  .align_b = alignment(inp),
                  .align_c = alignment(c),
                  .align_d = alignment(out),
                  .align_bias = alignment(bias)};
    return run(key, w, inp, c, out, bias, residual != nullptr ? 1.0f : 0.0f, stream);
}

Status LtGemm::backward_input(__nv_bfloat16* dinp, const __nv_bfloat16* dout,
                              const __nv_bfloat16* w, int N, int C, int OC, cudaStream_t stream) {
    const Key key{.kind = Kind::kBackwardInput,
                  .N = N,
                  .C = C,
                  .OC = OC,
                  .bias = false,
                  .residual = false,
                  .align_a = alignment(w),
                  .align_b = alignment(dout),
                  .align_c = alignment(dinp),
                  .align_d = alignment(dinp),
                  .align_bias = alignment(nullptr)};
    return run(key, w, dout, dinp, dinp, nullptr, 0.0f, stream);
}

Status LtGemm::backward_weight(float* dw, const __nv_bfloat16* dout, const __nv_bfloat16* inp,
                               int N, int C, int OC, cudaStream_t stream) {
    const Key key{.kind = Kind::kBackwardWeight,
                  .N = N,
                  .C = C,
                  .OC = OC,
                  .bias = false,
                  .residual = false,
                  .align_a = alignment(inp),
                  .align_b = alignment(dout),
                  .align_c = alignment(dw),
                  .align_d = alignment(dw),
                  .align_bias = alignment(nullptr)};
    return run(key, inp, dout, dw, dw, nullptr, 1.0f, stream);
}

}  // namespace trainrig::train::cuda
