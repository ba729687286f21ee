// cuBLASLt's matrix product as its documentation defines it, for the emulated device:
//   D = alpha · op(A) · op(B) + beta · C (+ bias per row of D with CUBLASLT_EPILOGUE_BIAS)
// with column-major layouts (element (i, j) at i + j·ld), op = the descriptor's TRANSA/TRANSB,
// fp32 accumulation (inputs rounded to TF32 first under CUBLAS_COMPUTE_32F_FAST_TF32), C not
// read when beta is 0, and the output rounded to D's type. Shapes that do not agree are
// CUBLAS_STATUS_INVALID_VALUE, as the library returns; nothing is "fixed" for the caller. The
// heuristic's algorithm remembers the alignments the preference promised; a product given less
// aligned operands is refused, since the real algorithm may assume them. An operand that runs
// past its device allocation is an illegal address on the stream, as on a GPU.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/api_common.h"
#include "runtime/race_check.h"
#include "runtime/stream.h"

using namespace trainrig::emu;

namespace {

struct Layout {
    cudaDataType type;
    uint64_t rows, cols;
    int64_t ld;
};

struct Desc {
    cublasComputeType_t compute;
    cudaDataType scale_type;
    cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    const void* bias = nullptr;
    int bias_type = -1;  // D's type unless set
    const float* a_scale = nullptr;
    const float* b_scale = nullptr;
};

struct Pref {
    uint64_t workspace = 0;
    uint32_t align[4] = {256, 256, 256, 256};  // A, B, C, D: the documented default
};

constexpr uint64_t kAlgoMagic = 0x656d756c61746564;  // what the emulator's heuristic returns

Layout* layout(cublasLtMatrixLayout_t l) { return reinterpret_cast<Layout*>(l); }
Desc* desc(cublasLtMatmulDesc_t d) { return reinterpret_cast<Desc*>(d); }
Pref* pref(cublasLtMatmulPreference_t p) { return reinterpret_cast<Pref*>(p); }

size_t element_bytes(cudaDataType t) {
    switch (t) {
        case CUDA_R_32F:
            return 4;
        case CUDA_R_16BF:
        case CUDA_R_16F:
            return 2;
        case CUDA_R_8F_E4M3:
            return 1;
        default:
            return 0;
    }
}

float load(const void* p, cudaDataType t, size_t i) {
    switch (t) {
        case CUDA_R_32F:
            return static_cast<const float*>(p)[i];
        case CUDA_R_16BF:
            return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
        case CUDA_R_16F:
            return __half2float(static_cast<const __half*>(p)[i]);
        case CUDA_R_8F_E4M3:
            return static_cast<float>(static_cast<const __nv_fp8_e4m3*>(p)[i]);
        default:
            return NAN;
    }
}

void store(void* p, cudaDataType t, size_t i, float v) {
    switch (t) {
        case CUDA_R_32F:
            static_cast<float*>(p)[i] = v;
            break;
        case CUDA_R_16BF:
            static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v);
            break;
        case CUDA_R_16F:
            static_cast<__half*>(p)[i] = __float2half_rn(v);
            break;
        default:
            break;
    }
}

// fp32 rounded to TF32 (10 mantissa bits), to nearest even.
float tf32(float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu;
    std::memcpy(&v, &u, 4);
    return v;
}

size_t extent_bytes(const Layout& l) {
    return ((l.cols - 1) * static_cast<uint64_t>(l.ld) + l.rows) * element_bytes(l.type);
}

bool on_device(const void* p, size_t bytes) {
    Allocation a;
    return Emulator::get().find_allocation(p, bytes, &a) && a.device >= 0;
}

// The types and transposes the emulator knows, with cuBLASLt's rules for them.
cublasStatus_t check_types(const Desc& d, const Layout& a, const Layout& b, const Layout& c,
                           const Layout& dl) {
    if (a.type != b.type || c.type != dl.type) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (d.scale_type != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
    const bool fast_tf32 = d.compute == CUBLAS_COMPUTE_32F_FAST_TF32;
    if (d.compute != CUBLAS_COMPUTE_32F && !fast_tf32) return CUBLAS_STATUS_NOT_SUPPORTED;
    switch (a.type) {
        case CUDA_R_16BF:
        case CUDA_R_16F:
            return dl.type == a.type || dl.type == CUDA_R_32F ? CUBLAS_STATUS_SUCCESS
                                                              : CUBLAS_STATUS_NOT_SUPPORTED;
        case CUDA_R_32F:
            return dl.type == CUDA_R_32F ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
        case CUDA_R_8F_E4M3:
            // fp8 products are "TN" only: A transposed, B not (cuBLASLt docs, FP8 notes).
            if (d.ta != CUBLAS_OP_T || d.tb != CUBLAS_OP_N) return CUBLAS_STATUS_NOT_SUPPORTED;
            return dl.type == CUDA_R_16BF || dl.type == CUDA_R_16F ? CUBLAS_STATUS_SUCCESS
                                                                   : CUBLAS_STATUS_NOT_SUPPORTED;
        default:
            return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

// m, n, k from D and op(A), op(B); INVALID_VALUE when they do not agree.
cublasStatus_t check_shapes(const Desc& d, const Layout& a, const Layout& b, const Layout& c,
                            const Layout& dl, uint64_t* m, uint64_t* n, uint64_t* k) {
    *m = dl.rows;
    *n = dl.cols;
    const uint64_t a_rows = d.ta == CUBLAS_OP_N ? a.rows : a.cols;
    *k = d.ta == CUBLAS_OP_N ? a.cols : a.rows;
    const uint64_t b_rows = d.tb == CUBLAS_OP_N ? b.rows : b.cols;
    const uint64_t b_cols = d.tb == CUBLAS_OP_N ? b.cols : b.rows;
    if (a_rows != *m || b_rows != *k || b_cols != *n || c.rows != *m || c.cols != *n)
        return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

struct Product {
    Desc d;
    Layout a, b, c, dl;
    float alpha, beta;
    const void *pa, *pb, *pc;
    void* pd;
    uint64_t m, n, k;
};

void multiply(const Product& p) {
    const bool fast = p.d.compute == CUBLAS_COMPUTE_32F_FAST_TF32;
    float scale = p.alpha;
    if (p.d.a_scale != nullptr) scale *= *p.d.a_scale;
    if (p.d.b_scale != nullptr) scale *= *p.d.b_scale;
    // op(A) as m rows of k, op(B) as n rows of k: each output is one contiguous dot product.
    std::vector<float> a(p.m * p.k), bt(p.n * p.k);
    for (uint64_t i = 0; i < p.m; ++i)
        for (uint64_t q = 0; q < p.k; ++q) {
            const uint64_t at = p.d.ta == CUBLAS_OP_N ? i + q * p.a.ld : q + i * p.a.ld;
            const float v = load(p.pa, p.a.type, at);
            a[i * p.k + q] = fast ? tf32(v) : v;
        }
    for (uint64_t j = 0; j < p.n; ++j)
        for (uint64_t q = 0; q < p.k; ++q) {
            const uint64_t at = p.d.tb == CUBLAS_OP_N ? q + j * p.b.ld : j + q * p.b.ld;
            const float v = load(p.pb, p.b.type, at);
            bt[j * p.k + q] = fast ? tf32(v) : v;
        }
    const cudaDataType bias_type =
        p.d.bias_type >= 0 ? static_cast<cudaDataType>(p.d.bias_type) : p.dl.type;
    for (uint64_t j = 0; j < p.n; ++j)
        for (uint64_t i = 0; i < p.m; ++i) {
            const float* ar = &a[i * p.k];
            const float* br = &bt[j * p.k];
            float sum = 0;
            for (uint64_t q = 0; q < p.k; ++q) sum += ar[q] * br[q];
            float v = scale * sum;
            if (p.beta != 0) v += p.beta * load(p.pc, p.c.type, i + j * p.c.ld);
            if (p.d.epilogue == CUBLASLT_EPILOGUE_BIAS) v += load(p.d.bias, bias_type, i);
            store(p.pd, p.dl.type, i + j * p.dl.ld, v);
        }
}

}  // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
    *handle = reinterpret_cast<cublasLtHandle_t>(new int(0));
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
    delete reinterpret_cast<int*>(handle);
    return CUBLAS_STATUS_SUCCESS;
}

const char* cublasLtGetStatusString(cublasStatus_t s) {
    switch (s) {
        case CUBLAS_STATUS_SUCCESS:
            return "the operation completed successfully";
        case CUBLAS_STATUS_INVALID_VALUE:
            return "an unsupported value or parameter was passed";
        case CUBLAS_STATUS_NOT_SUPPORTED:
            return "the functionality requested is not supported";
        case CUBLAS_STATUS_EXECUTION_FAILED:
            return "the GPU program failed to execute";
        default:
            return "an unknown status";
    }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* out, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
    if (element_bytes(type) == 0) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (rows == 0 || cols == 0 || ld < static_cast<int64_t>(rows))
        return CUBLAS_STATUS_INVALID_VALUE;
    *out = reinterpret_cast<cublasLtMatrixLayout_t>(new Layout{type, rows, cols, ld});
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
    delete layout(l);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* out, cublasComputeType_t compute,
                                        cudaDataType_t scale_type) {
    auto* d = new Desc;
    d->compute = compute;
    d->scale_type = scale_type;
    *out = reinterpret_cast<cublasLtMatmulDesc_t>(d);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
    delete desc(d);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t dh,
                                              cublasLtMatmulDescAttributes_t attr, const void* buf,
                                              size_t size) {
    Desc& d = *desc(dh);
    const auto u32 = [&](auto& field) {
        if (size != 4) return CUBLAS_STATUS_INVALID_VALUE;
        int32_t v;
        std::memcpy(&v, buf, 4);
        field = static_cast<std::remove_reference_t<decltype(field)>>(v);
        return CUBLAS_STATUS_SUCCESS;
    };
    const auto ptr = [&](auto& field) {
        if (size != sizeof(void*)) return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(&field, buf, sizeof(void*));
        return CUBLAS_STATUS_SUCCESS;
    };
    switch (attr) {
        case CUBLASLT_MATMUL_DESC_TRANSA:
            return u32(d.ta);
        case CUBLASLT_MATMUL_DESC_TRANSB:
            return u32(d.tb);
        case CUBLASLT_MATMUL_DESC_EPILOGUE: {
            const cublasStatus_t s = u32(d.epilogue);
            if (d.epilogue != CUBLASLT_EPILOGUE_DEFAULT && d.epilogue != CUBLASLT_EPILOGUE_BIAS)
                return CUBLAS_STATUS_NOT_SUPPORTED;
            return s;
        }
        case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
            return ptr(d.bias);
        case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
            return u32(d.bias_type);
        case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
            return ptr(d.a_scale);
        case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
            return ptr(d.b_scale);
        default:
            return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* out) {
    *out = reinterpret_cast<cublasLtMatmulPreference_t>(new Pref);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
    delete pref(p);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t ph,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void* buf, size_t size) {
    Pref& p = *pref(ph);
    switch (attr) {
        case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
            if (size != 8) return CUBLAS_STATUS_INVALID_VALUE;
            std::memcpy(&p.workspace, buf, 8);
            return CUBLAS_STATUS_SUCCESS;
        case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
        case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
        case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
        case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
            if (size != 4) return CUBLAS_STATUS_INVALID_VALUE;
            std::memcpy(&p.align[attr - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES], buf, 4);
            return CUBLAS_STATUS_SUCCESS;
        case CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK:
            return size == 4 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
        default:
            return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

// One algorithm, which computes as multiply() does and assumes the promised alignments.
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t dh,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t ph, int requested,
                                              cublasLtMatmulHeuristicResult_t* results,
                                              int* returned) {
    *returned = 0;
    if (requested < 1) return CUBLAS_STATUS_INVALID_VALUE;
    uint64_t m, n, k;
    if (const auto s = check_types(*desc(dh), *layout(a), *layout(b), *layout(c), *layout(d));
        s != CUBLAS_STATUS_SUCCESS)
        return s;
    if (const auto s =
            check_shapes(*desc(dh), *layout(a), *layout(b), *layout(c), *layout(d), &m, &n, &k);
        s != CUBLAS_STATUS_SUCCESS)
        return s;
    std::memset(&results[0], 0, sizeof results[0]);
    results[0].algo.data[0] = kAlgoMagic;
    for (int i = 0; i < 4; ++i) results[0].algo.data[1 + i] = pref(ph)->align[i];
    results[0].workspaceSize = 0;
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1.0f;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t dh, const void* alpha,
                              const void* A, cublasLtMatrixLayout_t al, const void* B,
                              cublasLtMatrixLayout_t bl, const void* beta, const void* C,
                              cublasLtMatrixLayout_t cl, void* D, cublasLtMatrixLayout_t dl,
                              const cublasLtMatmulAlgo_t* algo, void*, size_t,
                              cudaStream_t stream) {
    EmulatedGpu* gpu = nullptr;
    if (enter(&gpu) != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
    auto p = std::make_shared<Product>();
    p->d = *desc(dh);
    p->a = *layout(al);
    p->b = *layout(bl);
    p->c = *layout(cl);
    p->dl = *layout(dl);
    if (const auto s = check_types(p->d, p->a, p->b, p->c, p->dl); s != CUBLAS_STATUS_SUCCESS)
        return s;
    if (const auto s = check_shapes(p->d, p->a, p->b, p->c, p->dl, &p->m, &p->n, &p->k);
        s != CUBLAS_STATUS_SUCCESS)
        return s;
    if (algo == nullptr || algo->data[0] != kAlgoMagic) return CUBLAS_STATUS_INVALID_VALUE;
    const void* operands[4] = {A, B, C, D};
    for (int i = 0; i < 4; ++i)
        if (reinterpret_cast<uintptr_t>(operands[i]) % algo->data[1 + i] != 0)
            return CUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(&p->alpha, alpha, 4);  // host pointer mode: read now
    std::memcpy(&p->beta, beta, 4);
    p->pa = A;
    p->pb = B;
    p->pc = C;
    p->pd = D;
    Stream* s = resolve_stream(stream);
    if (s == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    enqueue_ordered(*s, [p, gpu] {
        const bool bias_ok =
            p->d.epilogue != CUBLASLT_EPILOGUE_BIAS ||
            on_device(
                p->d.bias,
                p->m * element_bytes(p->d.bias_type >= 0 ? static_cast<cudaDataType>(p->d.bias_type)
                                                         : p->dl.type));
        if (!on_device(p->pa, extent_bytes(p->a)) || !on_device(p->pb, extent_bytes(p->b)) ||
            (p->beta != 0 && !on_device(p->pc, extent_bytes(p->c))) ||
            !on_device(p->pd, extent_bytes(p->dl)) || !bias_ok) {
            std::fprintf(stderr,
                         "trainrig emulated GPU %d: cublasLtMatmul (m=%llu n=%llu k=%llu) reads "
                         "or writes past a device allocation: an illegal address\n",
                         gpu->index, static_cast<unsigned long long>(p->m),
                         static_cast<unsigned long long>(p->n),
                         static_cast<unsigned long long>(p->k));
            gpu->poison(cudaErrorIllegalAddress);
            return;
        }
        const RaceCheckWorld alone;
        multiply(*p);
    });
    return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
