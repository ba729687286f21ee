// The kernel executor: barriers, warp operations, wmma, atomics, shared memory and launch
// shapes behave as on a GPU, and what is undefined on a GPU is a fault here.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "emulated_test.h"
#include "executor_kernels.h"

namespace trainrig::emu::testing {
namespace {

using Executor = EmulatedTest;

TEST_F(Executor, ABarrierOrdersSharedMemoryBetweenThreads) {
    std::vector<int> in(200);
    std::iota(in.begin(), in.end(), 1000);
    const int* d_in = device(in);
    int* d_out = device<int>(in.size());
    block_reverse(d_in, d_out, static_cast<int>(in.size()), true);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto out = host(d_out, in.size());
    for (int i = 0; i < 192; ++i) EXPECT_EQ(out[i], in[i / 64 * 64 + 63 - i % 64]) << i;
}

TEST_F(Executor, WarpShufflesAndVotesFollowTheProgrammingGuide) {
    std::vector<int> in(96);
    std::mt19937 gen(7);
    for (int& v : in) v = static_cast<int>(gen() % 1000);
    int* d_out = device<int>(4 * in.size());
    warp_ops(device(in), d_out, static_cast<int>(in.size()));
    const auto out = host(d_out, 4 * in.size());
    for (size_t w = 0; w < in.size() / 32; ++w) {
        int sum = 0, prefix = 0;
        unsigned odd = 0;
        for (int l = 0; l < 32; ++l) {
            sum += in[32 * w + l];
            if (in[32 * w + l] & 1) odd |= 1u << l;
        }
        for (int l = 0; l < 32; ++l) {
            const size_t i = 32 * w + l;
            prefix += in[i];
            EXPECT_EQ(out[4 * i], sum) << i;
            EXPECT_EQ(out[4 * i + 1], prefix) << i;
            EXPECT_EQ(out[4 * i + 2], in[32 * w]) << i;
            EXPECT_EQ(static_cast<unsigned>(out[4 * i + 3]), odd) << i;
        }
    }
}

// Every operand layout against the plain product, with padded strides.
TEST_F(Executor, WmmaProductsMatchThePlainProductInEveryLayout) {
    const int ld = 24;  // 48 bytes: a multiple of 16
    std::mt19937 gen(3);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<__nv_bfloat16> a(16 * ld), b(16 * ld);
    std::vector<float> c(16 * ld);
    for (auto& v : a) v = __float2bfloat16(u(gen));
    for (auto& v : b) v = __float2bfloat16(u(gen));
    for (auto& v : c) v = u(gen);
    for (const bool a_col : {false, true})
        for (const bool b_col : {false, true}) {
            float* d_c = device(c);
            wmma_tile(device(a), ld, a_col, device(b), ld, b_col, d_c, ld);
            const auto out = host(d_c, c.size());
            for (int r = 0; r < 16; ++r)
                for (int n = 0; n < 16; ++n) {
                    double want = c[r * ld + n];
                    for (int k = 0; k < 16; ++k)
                        want += double(__bfloat162float(a_col ? a[k * ld + r] : a[r * ld + k])) *
                                __bfloat162float(b_col ? b[n * ld + k] : b[k * ld + n]);
                    EXPECT_NEAR(out[r * ld + n], want, 1e-5)
                        << r << "," << n << " a_col " << a_col << " b_col " << b_col;
                }
        }
}

TEST_F(Executor, AWmmaLoadFromAMisalignedPointerFaults) {
    std::vector<__nv_bfloat16> a(16 * 32, __float2bfloat16(1.f));
    std::vector<float> c(16 * 16, 0.f);
    const __nv_bfloat16* d_a = device(a);
    wmma_tile(d_a + 8, 32, false, d_a, 32, false, device(c), 16);  // 16 bytes off
    EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
}

TEST_F(Executor, ThreadsAtDifferentBarriersFault) {
    divergent_barrier(device<int>(32));
    EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
    // The device stays poisoned, as a GPU context does after a fault.
    void* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, 16), cudaErrorLaunchFailure);
}

TEST_F(Executor, AShuffleWaitingForAnExitedLaneFaults) {
    exited_lane_shuffle(device<int>(32));
    EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
}

TEST_F(Executor, FloatAtomicsAddEveryValue) {
    std::vector<float> x(64 * 50);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7);
    float* d_sum = device(std::vector<float>{0.f});
    atomic_sum(device(x), d_sum, 50);
    EXPECT_EQ(host(d_sum, 1)[0], std::accumulate(x.begin(), x.end(), 0.f));
}

TEST_F(Executor, ThreeDimensionalGridsAndBlocksAreIndexedAsOnAGpu) {
    const dim3 grid(3, 2, 2), block(4, 3, 2);
    const size_t n = 12 * 24;
    unsigned* d = device<unsigned>(n);
    index_map(d, grid, block);
    const auto out = host(d, n);
    size_t i = 0;
    for (unsigned bz = 0; bz < 2; ++bz)
        for (unsigned by = 0; by < 2; ++by)
            for (unsigned bx = 0; bx < 3; ++bx)
                for (unsigned tz = 0; tz < 2; ++tz)
                    for (unsigned ty = 0; ty < 3; ++ty)
                        for (unsigned tx = 0; tx < 4; ++tx, ++i)
                            EXPECT_EQ(out[i],
                                      bx | by << 4 | bz << 8 | tx << 12 | ty << 18 | tz << 24);
}

TEST_F(Executor, LaunchLimitsAreAGpusLimits) {
    int* d = device<int>(2048);
    index_map(reinterpret_cast<unsigned*>(d), dim3(1), dim3(1025));
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
    index_map(reinterpret_cast<unsigned*>(d), dim3(1, 65536), dim3(1));
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
    index_map(reinterpret_cast<unsigned*>(d), dim3(1), dim3(1, 1, 65));
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
    // 48 KB of dynamic shared memory without asking; more is refused at launch.
    dynamic_shared_roundtrip(d, 64, 48 * 1024);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    dynamic_shared_roundtrip(d, 64, 48 * 1024 + 4);
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto out = host(d, 64);
    for (int t = 0; t < 64; ++t) EXPECT_EQ(out[t], (t + 1) % 64 * 7);
}

}  // namespace
}  // namespace trainrig::emu::testing
