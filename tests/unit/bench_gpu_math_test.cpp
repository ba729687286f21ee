// The GPU benchmarks' arithmetic, checked without a GPU: nccl-tests' bus-bandwidth factors and
// size conventions (doc/PERFORMANCE.md), the NCCL correctness values, GEMM shapes, FLOPs,
// tolerances and the CPU reference.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "measure/bench_record.h"
#include "measure/collective_math.h"
#include "measure/gemm_sweep.h"

namespace trainrig::bench {
namespace {

TEST(CollectiveMath, BusFactorsAreNcclTestsFormulas) {
    // PERFORMANCE.md: all_reduce 2(n-1)/n, all_gather/reduce_scatter (n-1)/n, broadcast 1.
    EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllReduce, 8), 1.75);
    EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllReduce, 2), 1.0);
    EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllGather, 8), 0.875);
    EXPECT_DOUBLE_EQ(bus_factor(Collective::kReduceScatter, 4), 0.75);
    EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllToAll, 8), 0.875);
    EXPECT_DOUBLE_EQ(bus_factor(Collective::kBroadcast, 8), 1.0);
    EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllReduce, 1), 0.0);
    EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllReduce, 0), 0.0);
}

TEST(CollectiveMath, AlgbwAndBusbw) {
    // 1 GB all_reduce over 8 ranks in 4 ms: algbw 250 GB/s, busbw 437.5 GB/s.
    EXPECT_DOUBLE_EQ(algbw(1e9, 4e-3), 250e9);
    EXPECT_DOUBLE_EQ(busbw(Collective::kAllReduce, 8, 1e9, 4e-3), 437.5e9);
    EXPECT_DOUBLE_EQ(busbw(Collective::kBroadcast, 8, 1e9, 4e-3), 250e9);
    EXPECT_DOUBLE_EQ(algbw(1e9, 0), 0.0);
}

TEST(CollectiveMath, SizeIsTheLargerBufferOfOneRank) {
    const size_t s = 64u << 20;
    const auto ar = collective_counts(Collective::kAllReduce, s, 4, 8);
    EXPECT_EQ(ar.send_count, s / 4);
    EXPECT_EQ(ar.recv_count, s / 4);
    const auto ag = collective_counts(Collective::kAllGather, s, 4, 8);
    EXPECT_EQ(ag.send_count, s / 4 / 8);
    EXPECT_EQ(ag.recv_count, s / 4);
    const auto rs = collective_counts(Collective::kReduceScatter, s, 4, 8);
    EXPECT_EQ(rs.send_count, s / 4);
    EXPECT_EQ(rs.recv_count, s / 4 / 8);
    const auto a2a = collective_counts(Collective::kAllToAll, s, 4, 8);
    EXPECT_EQ(a2a.block, s / 4 / 8);
    EXPECT_EQ(a2a.send_count, s / 4);
    for (const Collective c : all_collectives())
        EXPECT_EQ(collective_size_bytes(collective_counts(c, s, 4, 8), 4), s) << collective_name(c);
    // 100 bytes over 3 ranks: shares are whole elements, S rounds down to 96.
    EXPECT_EQ(collective_size_bytes(collective_counts(Collective::kAllGather, 100, 4, 3), 4), 96u);
    EXPECT_EQ(collective_counts(Collective::kAllToAll, 4, 4, 8).block, 1u);
}

TEST(CollectiveMath, NamesRoundTrip) {
    for (const Collective c : all_collectives())
        EXPECT_EQ(collective_from_name(collective_name(c)), c);
    EXPECT_FALSE(collective_from_name("allreduce").has_value());
}

TEST(CollectiveMath, ExpectedOutputsFollowFromTheInputs) {
    const int n = 4;
    const size_t block = 50;
    // all_reduce and reduce_scatter: sums over ranks of the inputs at the same position.
    for (size_t j : {0u, 7u, 112u, 113u, 499u}) {
        double sum = 0;
        for (int r = 0; r < n; ++r) sum += collective_input(r, j);
        EXPECT_EQ(collective_expected(Collective::kAllReduce, n, 2, block, j), sum);
        double rs = 0;
        for (int r = 0; r < n; ++r) rs += collective_input(r, 3 * block + j % block);
        EXPECT_EQ(collective_expected(Collective::kReduceScatter, n, 3, block, j % block), rs);
    }
    // all_gather: block q comes from rank q; broadcast: rank 0's input everywhere.
    EXPECT_EQ(collective_expected(Collective::kAllGather, n, 1, block, 2 * block + 5),
              collective_input(2, 5));
    EXPECT_EQ(collective_expected(Collective::kBroadcast, n, 3, block, 9), collective_input(0, 9));
    // alltoall: chunk q of rank 1 is chunk 1 of rank q.
    EXPECT_EQ(collective_expected(Collective::kAllToAll, n, 1, block, 3 * block + 4),
              collective_input(3, block + 4));
    // Rank terms: 1..31 repeat with period 31.
    EXPECT_EQ(collective_rank_term_sum(3), 6);
    EXPECT_EQ(collective_rank_term_sum(33), 496 + 3);
    // Different ranks give different inputs, so a misplaced block is seen.
    EXPECT_NE(collective_input(0, 5), collective_input(1, 5));
}

TEST(CollectiveMath, SumsStayExactInFloat) {
    // 4600 ranks at the largest term stay below 2^24, where float stops counting by one.
    EXPECT_LT(4600.0 * (31 + 32 * 112), 16777216.0);
    EXPECT_EQ(collective_input(30, 112), 31.0f + 32.0f * 112.0f);
}

TEST(CollectiveMath, SizeSweeps) {
    const auto quick = collective_sizes(SweepSize::kQuick),
               full = collective_sizes(SweepSize::kFull),
               emulated = collective_sizes(SweepSize::kEmulated);
    EXPECT_LT(quick.size(), full.size());
    EXPECT_LT(emulated.back(), quick.back());
    EXPECT_EQ(full.back(), size_t{4} << 30);
    for (size_t i = 1; i < full.size(); ++i) EXPECT_LT(full[i - 1], full[i]);
}

TEST(GemmSweep, ShapesAndFlops) {
    const auto quick = gemm_shapes(SweepSize::kQuick), full = gemm_shapes(SweepSize::kFull);
    // The emulated shapes keep a non-square one, and every dimension a multiple of 16.
    const auto emulated = gemm_shapes(SweepSize::kEmulated);
    ASSERT_EQ(emulated.size(), 2u);
    EXPECT_NE(emulated[1].m, emulated[1].k);
    for (const auto& s : emulated) EXPECT_EQ((s.m | s.n | s.k) % 16, 0);
    EXPECT_LT(quick.size(), full.size());
    std::set<int64_t> squares;
    for (const auto& s : full)
        if (s.kind == "square") squares.insert(s.m);
    EXPECT_EQ(squares, (std::set<int64_t>{1024, 2048, 4096, 8192, 16384}));
    for (const auto& s : quick) EXPECT_LT(s.m, 16384);
    EXPECT_DOUBLE_EQ(gemm_flops({8192, 8192, 8192, "square"}), 2.0 * 8192.0 * 8192.0 * 8192.0);
    EXPECT_DOUBLE_EQ(gemm_flops({8192, 4096, 14336, "llm"}), 2.0 * 8192 * 4096 * 14336.0);
    EXPECT_TRUE(gemm_shape_is_typical({4096, 4096, 4096, "square"}));
    EXPECT_FALSE(gemm_shape_is_typical({8192, 2048, 4096, "llm"}));
    for (const auto& s : gemm_check_shapes()) {
        EXPECT_EQ(s.m % 16, 0);
        EXPECT_EQ(s.n % 16, 0);
        EXPECT_EQ(s.k % 16, 0);
    }
}

TEST(GemmSweep, DtypesAndTolerances) {
    EXPECT_EQ(gemm_dtypes(8, 0).size(), 3u);  // A100: no fp8
    EXPECT_EQ(gemm_dtypes(8, 9).back(), GemmDtype::kFp8E4m3);
    EXPECT_EQ(gemm_dtypes(9, 0).size(), 4u);
    EXPECT_EQ(gemm_dtype_from_name("tf32"), GemmDtype::kTf32);
    EXPECT_FALSE(gemm_dtype_from_name("fp32").has_value());
    // Looser for fewer mantissa bits: fp16 < tf32 < bf16 < fp8.
    EXPECT_DOUBLE_EQ(gemm_tolerance(GemmDtype::kBf16), 1.0 / 128);
    EXPECT_LT(gemm_tolerance(GemmDtype::kFp16), gemm_tolerance(GemmDtype::kTf32));
    EXPECT_LT(gemm_tolerance(GemmDtype::kTf32), gemm_tolerance(GemmDtype::kBf16));
    EXPECT_LT(gemm_tolerance(GemmDtype::kBf16), gemm_tolerance(GemmDtype::kFp8E4m3));
}

TEST(GemmSweep, ReferenceOnAKnown2x2) {
    // A = [[1,2],[3,4]] stored transposed (a[p + i·k] = A(i,p)), B = [[5,6],[7,8]] column-major.
    const std::vector<float> a = {1, 2, 3, 4}, b = {5, 7, 6, 8};
    const GemmReference r = reference_matmul_tn(2, 2, 2, a, b);
    EXPECT_EQ(r.c, (std::vector<double>{19, 43, 22, 50}));
    EXPECT_EQ(r.abs_sum, (std::vector<double>{19, 43, 22, 50}));
    const std::vector<float> neg = {1, -2, 3, 4};
    const GemmReference rn = reference_matmul_tn(2, 2, 2, neg, b);
    EXPECT_EQ(rn.c[0], 5 - 14);
    EXPECT_EQ(rn.abs_sum[0], 5 + 14);
}

TEST(GemmSweep, CheckFlagsOnlyErrorsPastTheBound) {
    const GemmReference r{{100, -50, 0}, {200, 100, 10}};
    const double tol = 1.0 / 128;  // bounds 1.5625, 0.78125, 0.078125
    auto ok = check_gemm(r, {101.5f, -50.7f, 0.07f}, tol);
    EXPECT_EQ(ok.failed, 0u);
    EXPECT_LE(ok.worst_ratio, 1.0);
    auto bad = check_gemm(r, {101.6f, -50.0f, NAN}, tol);
    EXPECT_EQ(bad.failed, 2u);
    EXPECT_EQ(bad.worst_index, 2u);
    EXPECT_EQ(check_gemm(r, {100, -50}, tol).failed, 1u);  // a missing element fails
    EXPECT_DOUBLE_EQ(median_of({3, 1, 2}), 2.0);
    EXPECT_DOUBLE_EQ(median_of({4, 1, 2, 3}), 2.5);
    EXPECT_DOUBLE_EQ(median_of({}), 0.0);
}

}  // namespace
}  // namespace trainrig::bench
