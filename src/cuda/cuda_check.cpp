// The Status each check macro returns, with the API's own error string.
#include "cuda/cuda_check.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <string_view>

namespace trainrig::cuda {
namespace {

std::string_view base_name(const char* file) {
    const std::string_view f(file);
    const size_t slash = f.find_last_of('/');
    return slash == std::string_view::npos ? f : f.substr(slash + 1);
}

}  // namespace

std::string no_device_reason(cudaError_t e) {
    if (e == cudaErrorInsufficientDriver) {
        void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
        if (driver == nullptr)
            return "no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)";
        ::dlclose(driver);
        return fmt::format("the NVIDIA driver is older than this build's CUDA runtime {}.{} ({})",
                           CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10,
                           cudaGetErrorString(e));
    }
    if (e == cudaErrorNoDevice) return "the NVIDIA driver sees no GPU";
    return cudaGetErrorString(e);
}

Status cuda_error(cudaError_t e, const char* call, const char* file, int line) {
    const bool no_gpu = e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice ||
                        e == cudaErrorInitializationError;
    const bool no_image = e == cudaErrorNoKernelImageForDevice;
    return {
        no_gpu || no_image ? Errc::kUnsupported : Errc::kIo,
        fmt::format("{}: {} ({}:{})", call, no_gpu ? no_device_reason(e) : cudaGetErrorString(e),
                    base_name(file), line),
        no_gpu     ? "run on a machine with an NVIDIA GPU and a driver new enough for CUDA 13"
        : no_image ? "this build holds no code for the GPU's compute capability (nvidia-smi "
                     "--query-gpu=name,compute_cap --format=csv): rebuild with "
                     "-DCMAKE_CUDA_ARCHITECTURES naming it"
                   : ""};
}

Status failed_call(cudaError_t e, const char* call, const char* file, int line,
                   LastErrorReader read_last) {
    forget_failure(e, read_last);
    return cuda_error(e, call, file, line);
}

Status cublas_error(cublasStatus_t s, const char* call, const char* file, int line) {
    return {Errc::kIo,
            fmt::format("{}: {} ({}:{})", call, cublasLtGetStatusString(s), base_name(file), line)};
}

Status nccl_error(ncclResult_t r, const char* call, const char* file, int line) {
    // ncclGetLastError carries the reason ("peer access is not supported ...") when there is one.
    const char* last = ncclGetLastError(nullptr);
    return {Errc::kIo, fmt::format("{}: {}{}{} ({}:{})", call, ncclGetErrorString(r),
                                   last != nullptr && *last != '\0' ? ": " : "",
                                   last != nullptr ? last : "", base_name(file), line)};
}

}  // namespace trainrig::cuda
