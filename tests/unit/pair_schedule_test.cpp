// Node-pair network tests: the schedules (every pair exactly once, no node twice in a round, up
// to 4,096 nodes) and the judgement that names the bad node from pair results.
#include "measure/pair_schedule.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace trainrig::fleet {
namespace {

// Each pair at most once overall (exactly once when `all`), each node at most once per round.
void check_schedule(const std::vector<bench::Round>& rounds, int n, bool all) {
    std::vector<uint8_t> seen(static_cast<size_t>(n) * n, 0);
    std::vector<size_t> busy_in(static_cast<size_t>(n), 0);  // 1 + the last round a node played
    size_t pairs = 0;
    for (size_t r = 0; r < rounds.size(); ++r) {
        for (const auto& [a, b] : rounds[r]) {
            // Plain checks in the loop (millions of pairs), one assertion when one fails.
            auto at = [&] { return std::to_string(a) + "," + std::to_string(b); };
            if (!(a >= 0 && a < b && b < n)) FAIL() << "not a pair of 0.." << n - 1 << ": " << at();
            if (busy_in[a] == r + 1 || busy_in[b] == r + 1)
                FAIL() << "a node twice in round " << r << ": " << at();
            busy_in[a] = busy_in[b] = r + 1;
            uint8_t& once = seen[static_cast<size_t>(a) * n + b];
            if (once) FAIL() << "pair twice: " << at();
            once = 1;
            ++pairs;
        }
    }
    if (all) {
        EXPECT_EQ(pairs, static_cast<size_t>(n) * (n - 1) / 2);
    }
}

class AllPairs : public ::testing::TestWithParam<int> {};

TEST_P(AllPairs, EveryPairOnceInNMinusOneRounds) {
    const int n = GetParam();
    const auto rounds = bench::all_pairs_rounds(n);
    EXPECT_EQ(rounds.size(), static_cast<size_t>(n % 2 == 0 ? n - 1 : n));
    check_schedule(rounds, n, true);
    if (n % 2 == 0) {  // every node plays every round
        for (const auto& r : rounds) EXPECT_EQ(r.size(), static_cast<size_t>(n / 2));
    }
}

INSTANTIATE_TEST_SUITE_P(Nodes, AllPairs, ::testing::Values(2, 3, 4, 5, 8, 17, 64, 1000, 4096));

TEST(AllPairsEdge, FewerThanTwoNodesHaveNoPairs) {
    EXPECT_TRUE(bench::all_pairs_rounds(0).empty());
    EXPECT_TRUE(bench::all_pairs_rounds(1).empty());
}

TEST(SampledPairs, DistinctPairsNoNodeTwiceInARoundAndRepeatable) {
    const auto rounds = bench::sampled_rounds(4096, 20000, 7);
    size_t pairs = 0;
    for (const auto& r : rounds) pairs += r.size();
    EXPECT_EQ(pairs, 20000u);
    check_schedule(rounds, 4096, false);
    EXPECT_EQ(bench::sampled_rounds(4096, 20000, 7), rounds);
    EXPECT_NE(bench::sampled_rounds(4096, 20000, 8), rounds);
    // Asking for more than there are is all of them.
    check_schedule(bench::sampled_rounds(6, 100, 1), 6, true);
}

// Results for every pair of a schedule: `bad` nodes give half the bandwidth, the rest 100 +-1.
std::vector<bench::PairResult> measure(const std::vector<bench::Round>& rounds,
                                       const std::vector<int>& bad) {
    std::vector<bench::PairResult> out;
    int i = 0;
    for (const auto& r : rounds)
        for (const auto& p : r) {
            const bool slow = std::find(bad.begin(), bad.end(), p.first) != bad.end() ||
                              std::find(bad.begin(), bad.end(), p.second) != bad.end();
            out.push_back({p, (slow ? 50.0 : 100.0) + ((i++ * 37) % 21 - 10) / 10.0});
        }
    return out;
}

TEST(PairJudge, AllPairsNameTheBadNodeAlone) {
    const auto rounds = bench::all_pairs_rounds(16);
    const auto j = bench::judge_pairs(measure(rounds, {5}));
    EXPECT_EQ(j.slow.size(), 15u);
    EXPECT_EQ(j.suspects, std::vector<int>{5});  // every partner also had a pair at full speed
    const auto retests = bench::retest_rounds(16, j);
    check_schedule(retests, 16, false);
    EXPECT_EQ(bench::blame(j, measure(retests, {5})), std::vector<int>{5});
}

TEST(PairJudge, SampledPairsRetestSuspectsAgainstGoodNodes) {
    // Node 5's only pair is with node 9, which has no other: both are suspects until re-tested.
    const std::vector<bench::Round> rounds = {
        {{0, 1}, {2, 3}, {5, 9}}, {{0, 2}, {1, 3}}, {{4, 6}, {7, 8}}};
    const auto j = bench::judge_pairs(measure(rounds, {5}));
    EXPECT_EQ(j.suspects, (std::vector<int>{5, 9}));
    const auto retests = bench::retest_rounds(10, j);
    ASSERT_EQ(retests.size(), 1u);
    EXPECT_EQ(retests[0].size(), 2u);  // 5 and 9 each against a good node, in one round
    EXPECT_EQ(bench::blame(j, measure(retests, {5})), std::vector<int>{5});
    // No node slow: no suspect, nobody blamed.
    EXPECT_TRUE(bench::judge_pairs(measure(rounds, {})).suspects.empty());
}

}  // namespace
}  // namespace trainrig::fleet
