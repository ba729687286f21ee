// One check macro per GPU API family (CUDA runtime, cuBLASLt, NCCL): a failed call returns a
// Status naming the call and the library's own error string, from functions that return Status
// or Result<T>.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "core/status.h"

namespace trainrig::cuda {

// "cudaMalloc(&p, n): out of memory (hbm_bench.cpp:42)". No driver or no device is kUnsupported
// (the machine cannot run it), anything else kIo (the GPU failed a request).
Status cuda_error(cudaError_t e, const char* call, const char* file, int line);

// Reads the runtime's last error and clears it unless it is sticky: cudaGetLastError, or a
// stand-in where tests play the runtime.
using LastErrorReader = cudaError_t (*)();

// What CUDA_TRY returns for a failed call: cuda_error, after reading the runtime's last error.
// The runtime records every failure there too, and the launch checks (CUDA_TRY(cudaGetLastError())
// after kernels) read it: a cudaMalloc that ran out of memory, left there, would make the next
// kernel "run out of memory". A non-sticky error (out of memory, an invalid value) is cleared
// here, so it belongs to its own call only; a sticky one (a kernel fault: the context is lost)
// cannot be, and every later call reports it, as it should.
Status failed_call(cudaError_t e, const char* call, const char* file, int line,
                   LastErrorReader read_last = &cudaGetLastError);

// For a failure handled without CUDA_TRY (a release in a destructor, a refusal worded by its
// caller): the same clearing, so it is not reported later as another call's.
inline void forget_failure(cudaError_t e, LastErrorReader read_last = &cudaGetLastError) {
    if (e != cudaSuccess) (void)read_last();
}

// Why the runtime cannot use a GPU, in one sentence a user can act on. Without any driver the
// runtime says "CUDA driver version is insufficient", which reads as an old driver: this says
// which it is.
std::string no_device_reason(cudaError_t e);
Status cublas_error(cublasStatus_t s, const char* call, const char* file, int line);
Status nccl_error(ncclResult_t r, const char* call, const char* file, int line);

}  // namespace trainrig::cuda

#define CUDA_TRY(call)                                                                    \
    do {                                                                                  \
        if (const cudaError_t cuda_try_e_ = (call); cuda_try_e_ != cudaSuccess)           \
            return ::trainrig::cuda::failed_call(cuda_try_e_, #call, __FILE__, __LINE__); \
    } while (0)

#define CUBLAS_TRY(call)                                                                         \
    do {                                                                                         \
        if (const cublasStatus_t cublas_try_s_ = (call); cublas_try_s_ != CUBLAS_STATUS_SUCCESS) \
            return ::trainrig::cuda::cublas_error(cublas_try_s_, #call, __FILE__, __LINE__);     \
    } while (0)

#define NCCL_TRY(call)                                                                   \
    do {                                                                                 \
        if (const ncclResult_t nccl_try_r_ = (call); nccl_try_r_ != ncclSuccess)         \
            return ::trainrig::cuda::nccl_error(nccl_try_r_, #call, __FILE__, __LINE__); \
    } while (0)
