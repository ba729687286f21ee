// The emulated CUDA runtime: devices as the variables describe them, memory at its limit,
// copies checked against where their pointers lie, streams and events ordered as CUDA orders
// them, and the race check.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "emulated_test.h"
#include "executor_kernels.h"

namespace trainrig::emu::testing {
namespace {

using Runtime = EmulatedTest;

TEST_F(Runtime, DevicesAreTheOnesTheVariablesDescribe) {
    int n = 0;
    ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
    ASSERT_EQ(n, 2);
    char bus[32];
    ASSERT_EQ(cudaDeviceGetPCIBusId(bus, sizeof bus, 1), cudaSuccess);
    EXPECT_STREQ(bus, "0000:41:00.0");
    cudaDeviceProp p;
    ASSERT_EQ(cudaGetDeviceProperties(&p, 1), cudaSuccess);
    EXPECT_EQ(std::string(p.name), "emulated A100 SXM4 80GB");
    EXPECT_EQ(p.totalGlobalMem, size_t{64} << 20);
    EXPECT_EQ(p.major, 8);
    EXPECT_EQ(p.pciBusID, 0x41);
    EXPECT_EQ(p.sharedMemPerBlockOptin, size_t{163} * 1024);
    EXPECT_EQ(cudaSetDevice(2), cudaErrorInvalidDevice);
}

TEST_F(Runtime, AllocationFailsAtTheDevicesLimitAndTheErrorIsNotSticky) {
    size_t free0 = 0, total = 0;
    ASSERT_EQ(cudaMemGetInfo(&free0, &total), cudaSuccess);
    EXPECT_EQ(total, size_t{64} << 20);
    char* big = device<char>(48 << 20);
    ASSERT_NE(big, nullptr);
    size_t free1 = 0;
    ASSERT_EQ(cudaMemGetInfo(&free1, &total), cudaSuccess);
    EXPECT_EQ(free0 - free1, size_t{48} << 20);
    void* more = nullptr;
    EXPECT_EQ(cudaMalloc(&more, size_t{32} << 20), cudaErrorMemoryAllocation);
    EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // read once, then cleared
    EXPECT_EQ(cudaMalloc(&more, size_t{8} << 20), cudaSuccess);
    EXPECT_EQ(cudaFree(more), cudaSuccess);
}

TEST_F(Runtime, NewDeviceMemoryIsNotZero) {
    const auto fresh = host(device<float>(16), 16);
    for (const float f : fresh) EXPECT_TRUE(std::isnan(f));
}

TEST_F(Runtime, ACopyWhoseKindOrSizeDoesNotFitItsPointersIsRefused) {
    int* d = device<int>(8);
    std::vector<int> h(16);
    EXPECT_EQ(cudaMemcpy(d, h.data(), 8 * sizeof(int), cudaMemcpyDeviceToHost),
              cudaErrorInvalidValue);
    EXPECT_EQ(cudaMemcpy(d, h.data(), 9 * sizeof(int), cudaMemcpyHostToDevice),
              cudaErrorInvalidValue);
    EXPECT_EQ(cudaMemcpy(d + 4, h.data(), 4 * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemset(d + 1, 0, 8 * sizeof(int)), cudaErrorInvalidValue);
    EXPECT_EQ(cudaFree(d + 1), cudaErrorInvalidValue);
    cudaGetLastError();
}

// Stream B waits for an event recorded after a long kernel and a fill on stream A.
TEST_F(Runtime, AStreamWaitingForAnEventSeesTheWorkBeforeIt) {
    cudaStream_t a, b;
    ASSERT_EQ(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), cudaSuccess);
    cudaEvent_t filled;
    ASSERT_EQ(cudaEventCreate(&filled), cudaSuccess);
    int* d = device<int>(1024);
    int* pinned = nullptr;
    ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&pinned), 1024 * sizeof(int), 0), cudaSuccess);
    busy(d, 2000000, a);
    ASSERT_EQ(cudaMemsetAsync(d, 0x01, 1024 * sizeof(int), a), cudaSuccess);
    ASSERT_EQ(cudaEventRecord(filled, a), cudaSuccess);
    ASSERT_EQ(cudaStreamWaitEvent(b, filled, 0), cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(pinned, d, 1024 * sizeof(int), cudaMemcpyDeviceToHost, b),
              cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(b), cudaSuccess);
    for (int i = 0; i < 1024; ++i) ASSERT_EQ(pinned[i], 0x01010101) << i;
    EXPECT_EQ(cudaEventQuery(filled), cudaSuccess);
    cudaFreeHost(pinned);
    cudaEventDestroy(filled);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    EXPECT_EQ(cudaStreamSynchronize(a), cudaErrorInvalidResourceHandle);
}

TEST_F(Runtime, ACopyToPageableMemoryIsDoneWhenTheCallReturns) {
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    int* d = device<int>(256);
    busy(d, 1000000, s);
    ASSERT_EQ(cudaMemsetAsync(d, 0x02, 256 * sizeof(int), s), cudaSuccess);
    std::vector<int> h(256, 0);
    ASSERT_EQ(cudaMemcpyAsync(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost, s),
              cudaSuccess);
    EXPECT_EQ(h[255], 0x02020202);
    cudaStreamDestroy(s);
}

TEST_F(Runtime, EventTimesAreThereOnceBothAreReached) {
    cudaEvent_t start, stop, untimed;
    ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
    ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
    ASSERT_EQ(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming), cudaSuccess);
    int* d = device<int>(1);
    ASSERT_EQ(cudaEventRecord(start, nullptr), cudaSuccess);
    busy(d, 100000);
    ASSERT_EQ(cudaEventRecord(stop, nullptr), cudaSuccess);
    ASSERT_EQ(cudaEventRecord(untimed, nullptr), cudaSuccess);
    ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
    float ms = -1;
    EXPECT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
    EXPECT_GE(ms, 0.f);
    EXPECT_EQ(cudaEventElapsedTime(&ms, start, untimed), cudaErrorInvalidResourceHandle);
    cudaGetLastError();
    for (cudaEvent_t e : {start, stop, untimed}) cudaEventDestroy(e);
}

TEST_F(Runtime, DynamicSharedMemoryPastTheDefaultNeedsTheAttribute) {
    int* d = device<int>(64);
    const size_t bytes = 100 * 1024;
    dynamic_shared_roundtrip(d, 64, bytes);
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
    // The attribute is per kernel; the emulated A100 allows up to 163 KB.
    EXPECT_EQ(set_dynamic_shared_attribute(200 * 1024), cudaErrorInvalidValue);
    cudaGetLastError();
    ASSERT_EQ(set_dynamic_shared_attribute(static_cast<int>(bytes)), cudaSuccess);
    dynamic_shared_roundtrip(d, 64, bytes);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

class RaceCheck : public EmulatedTest {
protected:
    void SetUp() override {
        ::setenv("TRAINRIG_EMULATED_RACE_CHECK", "1", 1);
        EmulatedTest::SetUp();
    }
    void TearDown() override {
        EmulatedTest::TearDown();
        ::unsetenv("TRAINRIG_EMULATED_RACE_CHECK");
    }
};

TEST_F(RaceCheck, AMissingSyncthreadsIsFound) {
    std::vector<int> in(128);
    std::iota(in.begin(), in.end(), 0);
    block_reverse(device(in), device<int>(in.size()), 128, false);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
}

// A warp may run past its warp-level operations while the other warps have not started: the
// check lets each warp run that far ahead in turn, so __syncwarp in place of __syncthreads
// is found too (as in attention's forward reading a tile before every warp has written it).
TEST_F(RaceCheck, ASyncwarpInPlaceOfSyncthreadsIsFound) {
    std::vector<int> in(128);
    std::iota(in.begin(), in.end(), 0);
    block_reverse(device(in), device<int>(in.size()), 128, BlockSync::kSyncwarp);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
}

// A list checks the launches from the files it names, and only those.
TEST_F(RaceCheck, AListOfFilesChecksTheLaunchesFromThoseFiles) {
    std::vector<int> in(128);
    std::iota(in.begin(), in.end(), 0);
    ::setenv("TRAINRIG_EMULATED_RACE_CHECK", "rope,swiglu", 1);
    block_reverse(device(in), device<int>(in.size()), 128, false);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ::setenv("TRAINRIG_EMULATED_RACE_CHECK", "rope,executor_kernels", 1);
    block_reverse(device(in), device<int>(in.size()), 128, false);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
}

TEST_F(RaceCheck, ACorrectKernelPasses) {
    std::vector<int> in(128);
    std::iota(in.begin(), in.end(), 0);
    block_reverse(device(in), device<int>(in.size()), 128, true);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST_F(RaceCheck, FloatAtomicsAreComparedWithinTheirTolerance) {
    std::vector<float> x(64 * 20);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 1.f / static_cast<float>(i + 1);
    atomic_sum(device(x), device(std::vector<float>{0.f}), 20);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace trainrig::emu::testing
