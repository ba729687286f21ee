// The CUDA checks' rule on the runtime's last error, against a stand-in for the runtime's own
// record (cudaGetLastError): a failure CUDA_TRY turned into a Status is cleared there, so the
// next launch check does not report it as its own; a sticky error (a kernel fault) stays for
// every later call. Built where the CUDA plugins are; runs without a GPU.
#include "cuda/cuda_check.h"

#include <gtest/gtest.h>

#include "has_text.h"
#include "train/batch_trial.h"

namespace trainrig::cuda {
namespace {

// The runtime's record of the last error, as the CUDA runtime keeps it per thread: every failed
// call sets it, cudaGetLastError returns it and resets it unless the error is sticky.
struct FakeRuntime {
    static inline cudaError_t last = cudaSuccess;
    static inline bool sticky = false;

    static cudaError_t get_last_error() {
        const cudaError_t e = last;
        if (!sticky) last = cudaSuccess;
        return e;
    }
    // A call that fails with `e`, recording it as the runtime does.
    static cudaError_t fail(cudaError_t e, bool is_sticky) {
        last = e;
        sticky = is_sticky;
        return e;
    }
    static void reset() {
        last = cudaSuccess;
        sticky = false;
    }
};

// What CUDA_TRY does with a call's result, with the stand-in for the runtime's record.
Status check(cudaError_t e, const char* call) {
    if (e == cudaSuccess) return Status{};
    return failed_call(e, call, __FILE__, __LINE__, &FakeRuntime::get_last_error);
}

// The launch check after a size's kernels: CUDA_TRY(cudaGetLastError()).
Status launch_check() { return check(FakeRuntime::get_last_error(), "cudaGetLastError()"); }

TEST(CudaLastError, AFailedAllocationIsNotTheNextLaunchsError) {
    FakeRuntime::reset();
    const Status alloc =
        check(FakeRuntime::fail(cudaErrorMemoryAllocation, false), "cudaMalloc(&p, bytes)");
    EXPECT_TRUE(has(alloc.message(), "cudaMalloc(&p, bytes): out of memory")) << alloc.message();
    EXPECT_TRUE(train::is_device_oom(alloc));
    // A smaller size's kernels then run: their check finds nothing left behind.
    const Status next = launch_check();
    EXPECT_TRUE(next.ok()) << next.message();
}

TEST(CudaLastError, WithoutTheClearingTheNextLaunchWouldReadOutOfMemory) {
    // What the check guards against: the record still holding the allocation's error makes the
    // next launch check an out-of-memory, and so a size that fits would count as too large.
    FakeRuntime::reset();
    FakeRuntime::fail(cudaErrorMemoryAllocation, false);
    const Status stale = launch_check();
    EXPECT_TRUE(train::is_device_oom(stale)) << stale.message();
}

TEST(CudaLastError, AStickyErrorStaysForEveryLaterCallAndIsNotOutOfMemory) {
    FakeRuntime::reset();
    const Status fault =
        check(FakeRuntime::fail(cudaErrorIllegalAddress, true), "cudaStreamQuery(s)");
    EXPECT_FALSE(train::is_device_oom(fault)) << fault.message();
    const Status later = launch_check();
    ASSERT_FALSE(later.ok());
    EXPECT_TRUE(has(later.message(), "an illegal memory access")) << later.message();
    EXPECT_FALSE(train::is_device_oom(later));
    FakeRuntime::reset();
}

TEST(CudaLastError, AFailureHandledWithoutCudaTryIsForgottenToo) {
    FakeRuntime::reset();
    forget_failure(FakeRuntime::fail(cudaErrorInvalidValue, false), &FakeRuntime::get_last_error);
    EXPECT_TRUE(launch_check().ok());
    // A success reads nothing: an error recorded before it stays for its own check.
    FakeRuntime::fail(cudaErrorInvalidValue, false);
    forget_failure(cudaSuccess, &FakeRuntime::get_last_error);
    EXPECT_FALSE(launch_check().ok());
}

}  // namespace
}  // namespace trainrig::cuda
