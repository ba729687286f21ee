#include "measure/pair_schedule.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_set>

#include "measure/robust_stats.h"

namespace trainrig::bench {

namespace {

NodePair ordered(int a, int b) { return a < b ? NodePair{a, b} : NodePair{b, a}; }

uint64_t splitmix(uint64_t& state) {
    uint64_t x = (state += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Greedy packing: each pair goes into the first round where neither node plays yet.
std::vector<Round> pack(const std::vector<NodePair>& pairs, int n) {
    std::vector<Round> rounds;
    std::vector<std::vector<bool>> busy;  // busy[r][node]
    for (const auto& p : pairs) {
        size_t r = 0;
        while (r < rounds.size() && (busy[r][p.first] || busy[r][p.second])) ++r;
        if (r == rounds.size()) {
            rounds.emplace_back();
            busy.emplace_back(static_cast<size_t>(n), false);
        }
        rounds[r].push_back(p);
        busy[r][p.first] = busy[r][p.second] = true;
    }
    return rounds;
}

}  // namespace

std::vector<Round> all_pairs_rounds(int n) {
    if (n < 2) return {};
    // The circle method: node m - 1 stays put, the others rotate one place a round; with an
    // odd n a phantom node makes m even and whoever meets it sits the round out.
    const int m = n % 2 == 0 ? n : n + 1;
    std::vector<Round> rounds(static_cast<size_t>(m - 1));
    for (int r = 0; r < m - 1; ++r) {
        for (int i = 0; i < m / 2; ++i) {
            const int a = i == 0 ? m - 1 : (r + i) % (m - 1);
            const int b = (r + m - 1 - i) % (m - 1);
            if (a < n && b < n) rounds[static_cast<size_t>(r)].push_back(ordered(a, b));
        }
    }
    return rounds;
}

std::vector<Round> sampled_rounds(int n, int64_t k, uint64_t seed) {
    const int64_t total = static_cast<int64_t>(n) * (n - 1) / 2;
    if (n < 2 || k <= 0) return {};
    if (k >= total) return all_pairs_rounds(n);
    std::vector<NodePair> pairs;
    std::unordered_set<uint64_t> seen;
    uint64_t state = seed;
    while (static_cast<int64_t>(pairs.size()) < k) {
        const int a = static_cast<int>(splitmix(state) % static_cast<uint64_t>(n));
        const int b = static_cast<int>(splitmix(state) % static_cast<uint64_t>(n));
        if (a == b) continue;
        const NodePair p = ordered(a, b);
        if (seen.insert(static_cast<uint64_t>(p.first) << 32 | static_cast<uint64_t>(p.second))
                .second)
            pairs.push_back(p);
    }
    return pack(pairs, n);
}

PairJudgement judge_pairs(const std::vector<PairResult>& results, double z, double min_deviation) {
    PairJudgement j;
    std::vector<double> v;
    for (const auto& r : results) v.push_back(r.value);
    j.median = median(v);
    j.threshold = j.median -
                  std::max(z * kMadToSigma * mad(v, j.median), min_deviation * std::fabs(j.median));
    std::set<int> in_slow, in_fast;
    for (const auto& r : results) {
        auto& side = r.value < j.threshold ? in_slow : in_fast;
        side.insert(r.pair.first);
        side.insert(r.pair.second);
        if (r.value < j.threshold) j.slow.push_back(r.pair);
    }
    for (int node : in_slow)
        if (!in_fast.count(node)) j.suspects.push_back(node);
    j.good.assign(in_fast.begin(), in_fast.end());
    return j;
}

std::vector<Round> retest_rounds(int n, const PairJudgement& j) {
    std::vector<NodePair> pairs;
    for (size_t i = 0; i < j.suspects.size() && i < j.good.size(); ++i)
        pairs.push_back(ordered(j.suspects[i], j.good[i]));
    return pack(pairs, n);
}

std::vector<int> blame(const PairJudgement& j, const std::vector<PairResult>& retests) {
    std::vector<int> bad;
    for (int s : j.suspects)
        for (const auto& r : retests)
            if ((r.pair.first == s || r.pair.second == s) && r.value < j.threshold) {
                bad.push_back(s);
                break;
            }
    return bad;
}

}  // namespace trainrig::bench
