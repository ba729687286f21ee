// Which nodes test the network against which (docs/fleet.md, "Node pairs"): every pair once in
// n - 1 rounds (the circle method of round-robin tournaments; one node sits out each round when
// n is odd), or K random pairs for a fleet too large for all of them; each round's pairs run at
// once, each node in at most one pair per round. Then the judgement: a pair below the others by
// more than the tolerance makes both nodes suspects; each suspect is re-tested against a node
// known good, and a suspect slow against a good node is the bad one.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace trainrig::bench {

using NodePair = std::pair<int, int>;  // indices into the node list, first < second
using Round = std::vector<NodePair>;

// Every pair of 0..n-1 exactly once: n - 1 rounds of n / 2 pairs (n rounds of (n - 1) / 2 when
// n is odd). Empty for n < 2.
std::vector<Round> all_pairs_rounds(int n);

// K distinct random pairs (all of them when K is at least n(n-1)/2), packed into rounds greedily
// so that no node is in two pairs of one round. The same seed gives the same schedule.
std::vector<Round> sampled_rounds(int n, int64_t k, uint64_t seed);

struct PairResult {
    NodePair pair;
    double value = 0;  // bus bandwidth, bytes/s: higher is better
};

struct PairJudgement {
    double median = 0;
    double threshold = 0;        // below it a pair is slow
    std::vector<NodePair> slow;  // the pairs below the threshold
    // Nodes in a slow pair and in no pair that was not slow: their part is not yet known. A node
    // with any pair at full speed has a working network and is not a suspect (with all pairs
    // measured, the bad node is then the only suspect).
    std::vector<int> suspects;
    std::vector<int> good;  // nodes with at least one pair at full speed
};

// Slow pairs: below the median of all pairs by more than max(z x 1.4826 x MAD, min_deviation x
// the median), as the fleet's outlier rule.
PairJudgement judge_pairs(const std::vector<PairResult>& results, double z = 3.0,
                          double min_deviation = 0.03);

// A re-test for each suspect against a distinct good node, packed in rounds; a suspect without a
// good partner left is not paired (it stays a suspect).
std::vector<Round> retest_rounds(int n, const PairJudgement& j);

// The bad nodes: suspects whose re-test against a good node is also below the threshold.
std::vector<int> blame(const PairJudgement& j, const std::vector<PairResult>& retests);

}  // namespace trainrig::bench
