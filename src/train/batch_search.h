// The largest micro-batch that trains within a memory capacity, found by trying sizes. A size
// "fits" when its trial ran and its measured peak stays under the headroom line, capacity ×
// (1 − headroom); an out-of-memory is an answer, not a failure. The search starts at the size
// plan's estimate allows; while no two neighbouring sizes bound the answer, the next size is
//   - the one the estimate predicts once scaled by the last size's measured / estimated peak
//     (at most three times, and never right after an out-of-memory, which measured
//     nothing): for memory linear in the size, two or three trials in all;
//   - otherwise double the largest size that fitted (none failed yet), halve the smallest that
//     did not (none fitted yet), or bisect between the two.
// Pure: the trials come in as a callable, so the search is tested against simulated memory
// models (tests/unit/batch_search_test.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace trainrig::train {

// What one trial of a size did.
enum class TrialOutcome {
    kFits,     // the steps ran; peak_bytes is what they held at most
    kOom,      // an allocation failed (or the kernel's OOM killer ended it): too large
    kError,    // anything else: the search stops with it
    kTimedOut  // it did not finish in its time (a hung device) and was killed: the search stops
};
const char* trial_outcome_name(TrialOutcome o);  // "fits", "oom", "error", "timed_out"

struct TrialResult {
    TrialOutcome outcome = TrialOutcome::kError;
    uint64_t peak_bytes = 0;  // measured; for kOom what was held when it failed, when known
    double tokens_per_s = 0;  // over the timed steps; 0 unless kFits
    std::string detail;       // kOom / kError / kTimedOut: what failed, in one sentence
};

// How a size was judged.
enum class SizeVerdict {
    kFits,          // ran, and its peak is at or below the headroom line
    kOverHeadroom,  // ran, but its peak is above the headroom line
    kOom,
    kError,
    kDidNotFinish  // its trial timed out: neither fitting nor out of memory, and the search stops
};
// "fits", "over_headroom", "oom", "error", "did_not_finish"
const char* size_verdict_name(SizeVerdict v);
// For people: "fits", "over the headroom", "out of memory", "failed", "did not finish".
const char* size_verdict_text(SizeVerdict v);

struct SizeTried {
    int batch = 0;
    SizeVerdict verdict = SizeVerdict::kError;
    uint64_t peak_bytes = 0;      // measured (0 when unknown)
    uint64_t estimate_bytes = 0;  // the estimate the search was given for this size (0: none)
    double tokens_per_s = 0;
    std::string why;  // for every verdict but kFits: why the size does not count as fitting
};

enum class SearchAnswer {
    kFound,        // `chosen` is the largest size that fit with headroom
    kNothingFits,  // even one sequence does not fit
    kError  // a trial failed for another reason or did not finish; `error` says which and why
};
const char* search_answer_name(SearchAnswer a);  // "found", "nothing_fits", "error"

struct SearchInput {
    int start = 1;           // first size to try (clamped to 1..max_batch)
    uint64_t capacity = 0;   // bytes the trials may use
    double headroom = 0.10;  // fraction of capacity kept free (fragmentation, other users)
    int max_batch = 1024;    // never try a larger size
    // Estimated peak of a size (bytes), recorded beside each measurement; may be empty.
    std::function<uint64_t(int)> estimate;
    // Told each size as soon as it is judged (a progress line); may be empty.
    std::function<void(const SizeTried&)> on_tried;
};

struct SearchResult {
    SearchAnswer answer = SearchAnswer::kError;
    int chosen = 0;                // 0 unless kFound
    bool bound_reached = false;    // chosen == max_batch: a larger size may fit too
    uint64_t headroom_line = 0;    // capacity × (1 − headroom)
    std::vector<SizeTried> tried;  // in the order tried; no size twice
    std::string error;             // kError: the failing size's detail
};

using Trial = std::function<TrialResult(int batch)>;

// capacity × (1 − headroom), rounded down.
uint64_t headroom_line(uint64_t capacity, double headroom);

// The largest size in 1..max_batch whose estimate is at or below `line` (1 when none is): where
// the search starts. `estimate` must grow with the size.
int start_from_estimate(const std::function<uint64_t(int)>& estimate, uint64_t line, int max_batch);

// Runs the search (file comment). Deterministic: the same trial answers give the same sizes
// tried and the same answer. Each size is tried at most once, and the answer (when found) ran
// under the line while the next size up was tried and did not: the largest size when failures
// grow with the size, a local maximum when they do not.
SearchResult find_batch(const SearchInput& in, const Trial& trial);

}  // namespace trainrig::train
