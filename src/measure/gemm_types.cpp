// Matmul input types by name, and the ones a GPU of a compute capability runs.
#include "measure/gemm_types.h"

namespace trainrig::bench {

std::string_view gemm_dtype_name(GemmDtype d) {
    switch (d) {
        case GemmDtype::kBf16:
            return "bf16";
        case GemmDtype::kFp16:
            return "fp16";
        case GemmDtype::kTf32:
            return "tf32";
        case GemmDtype::kFp8E4m3:
            return "fp8_e4m3";
    }
    return "unknown";
}

std::optional<GemmDtype> gemm_dtype_from_name(std::string_view name) {
    for (const GemmDtype d :
         {GemmDtype::kBf16, GemmDtype::kFp16, GemmDtype::kTf32, GemmDtype::kFp8E4m3})
        if (gemm_dtype_name(d) == name) return d;
    return std::nullopt;
}

std::vector<GemmDtype> gemm_dtypes(int cc_major, int cc_minor) {
    std::vector<GemmDtype> out = {GemmDtype::kBf16, GemmDtype::kFp16, GemmDtype::kTf32};
    if (cc_major > 8 || (cc_major == 8 && cc_minor >= 9)) out.push_back(GemmDtype::kFp8E4m3);
    return out;
}

}  // namespace trainrig::bench
