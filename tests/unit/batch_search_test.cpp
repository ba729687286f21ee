// The micro-batch search against simulated memory: a linear model (fixed bytes + bytes per
// sequence), fragmentation that makes the measured peak larger than the model, sizes that fail
// below the line, a plan that under- or overestimates, the size bound, nothing that fits, and
// the headroom line itself.
#include "train/batch_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace trainrig::train {
namespace {

constexpr uint64_t kMiB = 1 << 20;

// A machine with `physical` bytes: a size whose measured peak exceeds it runs out of memory.
struct SimulatedMemory {
    uint64_t fixed = 100 * kMiB;
    uint64_t per_sequence = 10 * kMiB;
    double fragmentation = 0;  // measured peak = model × (1 + fragmentation)
    int step_above = 0;        // sizes above this (when set) hold step_bytes more: a second
    uint64_t step_bytes = 0;   // algorithm the estimate does not know about
    uint64_t physical = 1000 * kMiB;
    std::set<int> fail_anyway;  // sizes that run out of memory whatever their size says
    std::set<int> error_at;     // sizes whose trial fails for another reason
    std::set<int> hang_at;      // sizes whose trial does not finish
    std::vector<int> calls;

    uint64_t model(int b) const { return fixed + per_sequence * static_cast<uint64_t>(b); }
    uint64_t measured(int b) const {
        const uint64_t extra = step_above && b > step_above ? step_bytes : 0;
        return static_cast<uint64_t>(
                   std::llround(static_cast<double>(model(b)) * (1 + fragmentation))) +
               extra;
    }
    TrialResult operator()(int b) {
        calls.push_back(b);
        if (error_at.count(b)) return {TrialOutcome::kError, 0, 0, "the device was lost"};
        if (hang_at.count(b)) return {TrialOutcome::kTimedOut, 0, 0, "no return from step 1"};
        if (measured(b) > physical || fail_anyway.count(b))
            return {TrialOutcome::kOom, 0, 0, "an allocation failed"};
        return {TrialOutcome::kFits, measured(b), 1000.0 * b, ""};
    }
};

SearchInput input(const SimulatedMemory& m, double plan_factor, int max_batch = 1024) {
    SearchInput in;
    in.capacity = m.physical;
    in.headroom = 0.10;
    in.max_batch = max_batch;
    in.estimate = [&m, plan_factor](int b) {
        return static_cast<uint64_t>(static_cast<double>(m.model(b)) * plan_factor);
    };
    in.start =
        start_from_estimate(in.estimate, headroom_line(in.capacity, in.headroom), in.max_batch);
    return in;
}

SearchResult run(SimulatedMemory& m, const SearchInput& in) {
    return find_batch(in, [&m](int b) { return m(b); });
}

// The largest size whose measured peak is at or below the line, by brute force.
int truth(const SimulatedMemory& m, uint64_t line, int max_batch = 1024) {
    int best = 0;
    for (int b = 1; b <= max_batch; ++b)
        if (m.measured(b) <= line && m.measured(b) <= m.physical && !m.fail_anyway.count(b))
            best = b;
    return best;
}

std::vector<int> sizes(const SearchResult& r) {
    std::vector<int> out;
    for (const auto& t : r.tried) out.push_back(t.batch);
    return out;
}

void expect_each_size_once(const SearchResult& r) {
    const auto s = sizes(r);
    EXPECT_EQ(std::set<int>(s.begin(), s.end()).size(), s.size());
}

TEST(BatchSearch, HeadroomLineAndStartFromTheEstimate) {
    EXPECT_EQ(headroom_line(1000, 0.10), 900u);
    EXPECT_EQ(headroom_line(1000, 0), 1000u);
    EXPECT_EQ(headroom_line(1000, 1), 0u);
    auto est = [](int b) { return uint64_t{100} + 10 * static_cast<uint64_t>(b); };
    EXPECT_EQ(start_from_estimate(est, 900, 1024), 80);  // 100 + 800 = 900: on the line
    EXPECT_EQ(start_from_estimate(est, 899, 1024), 79);
    EXPECT_EQ(start_from_estimate(est, 50, 1024), 1);  // not even one: start at one
    EXPECT_EQ(start_from_estimate(est, 1u << 30, 64), 64);
    EXPECT_EQ(start_from_estimate(nullptr, 900, 64), 1);
}

TEST(BatchSearch, AnAccuratePlanIsConfirmedByItsNeighbour) {
    SimulatedMemory m;
    const SearchInput in = input(m, 1.0);
    EXPECT_EQ(in.start, 80);  // 100 + 80 × 10 = 900 MiB: the line
    const SearchResult r = run(m, in);
    ASSERT_EQ(r.answer, SearchAnswer::kFound);
    EXPECT_EQ(r.chosen, 80);
    EXPECT_FALSE(r.bound_reached);
    // Measured as estimated: nothing above 80 is predicted to fit, and 81 confirms it.
    EXPECT_EQ(sizes(r), (std::vector<int>{80, 81}));
    EXPECT_EQ(r.tried[0].verdict, SizeVerdict::kFits);
    EXPECT_EQ(r.tried[1].verdict, SizeVerdict::kOverHeadroom);  // 910 MiB: ran, above 900
    EXPECT_NE(r.tried[1].why.find("headroom line of 900.0 MiB"), std::string::npos)
        << r.tried[1].why;
    // Every size carries its measurement and the estimate it was given.
    EXPECT_EQ(r.tried[0].peak_bytes, 900 * kMiB);
    EXPECT_EQ(r.tried[0].estimate_bytes, 900 * kMiB);
    EXPECT_EQ(r.tried[0].tokens_per_s, 80000.0);
}

TEST(BatchSearch, WithoutAnEstimateItDoublesThenBisects) {
    SimulatedMemory m;
    SearchInput in = input(m, 1.0);
    in.estimate = nullptr;
    in.start = 10;
    const SearchResult r = run(m, in);
    ASSERT_EQ(r.answer, SearchAnswer::kFound);
    EXPECT_EQ(r.chosen, 80);
    // 160 needs 1700 MiB of 1000: out of memory, as do 120 and 100; 90 (1000 MiB) to 81 ran
    // above the line.
    EXPECT_EQ(sizes(r), (std::vector<int>{10, 20, 40, 80, 160, 120, 100, 90, 85, 82, 81}));
    EXPECT_EQ(r.tried[4].verdict, SizeVerdict::kOom);
    EXPECT_EQ(r.tried[7].verdict, SizeVerdict::kOverHeadroom);
    EXPECT_EQ(r.tried[0].estimate_bytes, 0u);
    expect_each_size_once(r);
}

TEST(BatchSearch, FragmentationMakesThePlannedSizeTooLargeAndTheSearchComesDown) {
    SimulatedMemory m;
    m.fragmentation = 0.15;  // the allocator's blocks: 15 % above the model
    const SearchInput in = input(m, 1.0);
    const SearchResult r = run(m, in);
    ASSERT_EQ(r.answer, SearchAnswer::kFound);
    EXPECT_EQ(r.chosen, truth(m, r.headroom_line));
    EXPECT_EQ(r.chosen, 68);  // (100 + 10 b) × 1.15 <= 900
    // 80 needs 1035 MiB of 1000; 40 fits, 15 % above its estimate, which predicts 68; 69
    // confirms.
    EXPECT_EQ(sizes(r), (std::vector<int>{80, 40, 68, 69}));
    EXPECT_EQ(r.tried[0].verdict, SizeVerdict::kOom);
    expect_each_size_once(r);
}

TEST(BatchSearch, SizesThatFailBelowTheLineAreRecordedAndTheAnswerIsOneThatRan) {
    SimulatedMemory m;
    m.fragmentation = 0.05;
    m.fail_anyway = {60, 70};  // a fragmented heap refuses these although they would fit
    const SearchInput in = input(m, 1.0);
    const SearchResult r = run(m, in);
    ASSERT_EQ(r.answer, SearchAnswer::kFound);
    // The answer is a size that ran under the line, and the next size up was tried and failed:
    // a local maximum, not necessarily the global one when failures do not grow with size.
    bool chosen_ran = false, next_failed = false;
    for (const auto& t : r.tried) {
        chosen_ran |= t.batch == r.chosen && t.verdict == SizeVerdict::kFits;
        next_failed |= t.batch == r.chosen + 1 && t.verdict != SizeVerdict::kFits;
    }
    EXPECT_TRUE(chosen_ran);
    EXPECT_TRUE(next_failed);
    EXPECT_LE(r.chosen, truth(m, r.headroom_line));
    expect_each_size_once(r);
    // Deterministic: the same answers give the same search.
    SimulatedMemory again = m;
    again.calls.clear();
    EXPECT_EQ(sizes(run(again, in)), sizes(r));
}

TEST(BatchSearch, OutOfMemoryOnTheFirstTryHalvesThenBisectsUp) {
    SimulatedMemory m;
    const SearchInput in = input(m, 0.25);  // the plan sees a quarter of what is used
    EXPECT_GT(in.start, 300);
    const SearchResult r = run(m, in);
    ASSERT_EQ(r.answer, SearchAnswer::kFound);
    EXPECT_EQ(r.tried[0].verdict, SizeVerdict::kOom);
    EXPECT_EQ(r.chosen, 80);
    // Halving while out of memory measures nothing; 87 ran (970 MiB, four times its estimate),
    // which puts the prediction at 80, and 81 confirms.
    EXPECT_EQ(sizes(r), (std::vector<int>{350, 175, 87, 80, 81}));
    expect_each_size_once(r);
}

TEST(BatchSearch, APlanThatOverestimatesStartsLowAndGrows) {
    SimulatedMemory m;
    const SearchInput in = input(m, 3.0);
    EXPECT_EQ(in.start, 20);  // (100 + 10 b) × 3 <= 900
    const SearchResult r = run(m, in);
    ASSERT_EQ(r.answer, SearchAnswer::kFound);
    EXPECT_EQ(r.chosen, 80);
    // 20 measured a third of its estimate: the prediction moves straight to 80.
    EXPECT_EQ(sizes(r), (std::vector<int>{20, 80, 81}));
}

TEST(BatchSearch, TheBoundStopsTheGrowthAndIsSaid) {
    SimulatedMemory m;
    SearchInput in = input(m, 3.0, 32);
    const SearchResult r = run(m, in);
    ASSERT_EQ(r.answer, SearchAnswer::kFound);
    EXPECT_EQ(r.chosen, 32);
    EXPECT_TRUE(r.bound_reached);
    EXPECT_EQ(sizes(r), (std::vector<int>{20, 32}));
    // A start above the bound is brought down to it.
    in.start = 500;
    m.calls.clear();
    EXPECT_EQ(sizes(run(m, in)), (std::vector<int>{32}));
}

TEST(BatchSearch, NothingFitsIsAnAnswer) {
    SimulatedMemory m;
    m.fixed = 2000 * kMiB;  // the model states alone exceed the machine
    const SearchInput in = input(m, 1.0);
    EXPECT_EQ(in.start, 1);
    const SearchResult r = run(m, in);
    EXPECT_EQ(r.answer, SearchAnswer::kNothingFits);
    EXPECT_EQ(r.chosen, 0);
    EXPECT_EQ(sizes(r), (std::vector<int>{1}));
    EXPECT_EQ(r.tried[0].verdict, SizeVerdict::kOom);

    // From a larger start it halves down to one before saying so.
    SearchInput high = in;
    high.start = 8;
    m.calls.clear();
    const SearchResult h = run(m, high);
    EXPECT_EQ(h.answer, SearchAnswer::kNothingFits);
    EXPECT_EQ(sizes(h), (std::vector<int>{8, 4, 2, 1}));
}

TEST(BatchSearch, APeakExactlyOnTheHeadroomLineFits) {
    SimulatedMemory m;
    m.fixed = 100;
    m.per_sequence = 10;
    m.physical = 1000;  // line: 900 bytes, reached exactly at 80
    SearchInput in = input(m, 1.0);
    SearchResult r = run(m, in);
    ASSERT_EQ(r.answer, SearchAnswer::kFound);
    EXPECT_EQ(r.chosen, 80);
    EXPECT_EQ(r.tried[0].peak_bytes, r.headroom_line);
    // One byte less of capacity moves the line below it.
    m.physical = 999;  // line: floor(899.1) = 899
    in = input(m, 1.0);
    m.calls.clear();
    r = run(m, in);
    EXPECT_EQ(r.chosen, 79);
}

// An error stops the search and names the size. So does a size that did not finish (a hung
// device may hang the next size too), recorded as such: neither fitting nor out of memory.
TEST(BatchSearch, AnErrorOrASizeThatDidNotFinishStopsTheSearchAndNamesTheSize) {
    for (const bool hang : {false, true}) {
        SimulatedMemory m;
        (hang ? m.hang_at : m.error_at) = {81};
        const SearchInput in = input(m, 1.0);
        const SearchResult r = run(m, in);
        EXPECT_EQ(r.answer, SearchAnswer::kError);
        EXPECT_EQ(r.chosen, 0);
        EXPECT_EQ(sizes(r), (std::vector<int>{80, 81}));
        EXPECT_EQ(r.tried.back().verdict, hang ? SizeVerdict::kDidNotFinish : SizeVerdict::kError);
        EXPECT_EQ(r.error, hang ? "batch 81: did not finish: no return from step 1"
                                : "batch 81: the device was lost");
    }
    EXPECT_STREQ(size_verdict_name(SizeVerdict::kDidNotFinish), "did_not_finish");
    EXPECT_STREQ(size_verdict_text(SizeVerdict::kDidNotFinish), "did not finish");
    EXPECT_STREQ(trial_outcome_name(TrialOutcome::kTimedOut), "timed_out");
}

TEST(BatchSearch, AMemoryModelThePlanDoesNotKnowCostsThreeGuessesThenBisects) {
    SimulatedMemory m;
    m.step_above = 50;  // above 50 sequences another 300 MiB
    m.step_bytes = 300 * kMiB;
    const SearchInput in = input(m, 1.0);
    const SearchResult r = run(m, in);
    ASSERT_EQ(r.answer, SearchAnswer::kFound);
    EXPECT_EQ(r.chosen, truth(m, r.headroom_line));
    EXPECT_EQ(r.chosen, 50);
    // 80 and the first guess, 79, run out of memory; bisection's 59 and the guesses 52 and 50
    // measure more each time; the guesses spent, bisection settles 51.
    EXPECT_EQ(sizes(r), (std::vector<int>{80, 40, 79, 59, 52, 50, 51}));
    expect_each_size_once(r);
}

TEST(BatchSearch, NamesAreStable) {
    EXPECT_STREQ(size_verdict_name(SizeVerdict::kOverHeadroom), "over_headroom");
    EXPECT_STREQ(search_answer_name(SearchAnswer::kNothingFits), "nothing_fits");
    EXPECT_STREQ(trial_outcome_name(TrialOutcome::kOom), "oom");
}

}  // namespace
}  // namespace trainrig::train
