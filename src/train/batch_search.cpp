#include "train/batch_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace trainrig::train {

const char* trial_outcome_name(TrialOutcome o) {
    switch (o) {
        case TrialOutcome::kFits:
            return "fits";
        case TrialOutcome::kOom:
            return "oom";
        case TrialOutcome::kTimedOut:
            return "timed_out";
        case TrialOutcome::kError:
            break;
    }
    return "error";
}

const char* size_verdict_name(SizeVerdict v) {
    switch (v) {
        case SizeVerdict::kFits:
            return "fits";
        case SizeVerdict::kOverHeadroom:
            return "over_headroom";
        case SizeVerdict::kOom:
            return "oom";
        case SizeVerdict::kDidNotFinish:
            return "did_not_finish";
        case SizeVerdict::kError:
            break;
    }
    return "error";
}

const char* size_verdict_text(SizeVerdict v) {
    switch (v) {
        case SizeVerdict::kFits:
            return "fits";
        case SizeVerdict::kOverHeadroom:
            return "over the headroom";
        case SizeVerdict::kOom:
            return "out of memory";
        case SizeVerdict::kDidNotFinish:
            return "did not finish";
        case SizeVerdict::kError:
            break;
    }
    return "failed";
}

const char* search_answer_name(SearchAnswer a) {
    switch (a) {
        case SearchAnswer::kFound:
            return "found";
        case SearchAnswer::kNothingFits:
            return "nothing_fits";
        case SearchAnswer::kError:
            break;
    }
    return "error";
}

uint64_t headroom_line(uint64_t capacity, double headroom) {
    const double keep = std::clamp(1.0 - headroom, 0.0, 1.0);
    return static_cast<uint64_t>(std::floor(static_cast<double>(capacity) * keep));
}

int start_from_estimate(const std::function<uint64_t(int)>& estimate, uint64_t line,
                        int max_batch) {
    const int max = std::max(1, max_batch);
    if (!estimate || estimate(1) > line) return 1;
    // The largest b with estimate(b) <= line, by bisection: estimate grows with b.
    int lo = 1, hi = max;
    if (estimate(hi) <= line) return hi;
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        (estimate(mid) <= line ? lo : hi) = mid;
    }
    return lo;
}

namespace {

std::string search_mib(uint64_t bytes) {
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

// The search's state: the largest size known to fit (lo, 0 = none yet) and the smallest known
// not to (hi, max_batch + 1 = none yet), and every size tried.
class BatchSearchRun {
public:
    BatchSearchRun(const SearchInput& in, const Trial& trial)
        : in_(in), trial_(trial), max_(std::max(1, in.max_batch)), hi_(max_ + 1) {
        r_.headroom_line = headroom_line(in.capacity, in.headroom);
    }

    SearchResult run() {
        try_size(std::clamp(in_.start, 1, max_));
        int guided = 0;
        // Done when the largest size that fits and the smallest that does not are neighbours
        // (lo = max_batch and "nothing fits" included).
        while (!failed_ && hi_ - lo_ > 1) {
            std::optional<int> next;
            if (guided < kGuidedTries && (next = guided_guess())) {
                ++guided;
            } else if (lo_ == 0) {
                next = hi_ / 2;  // shrink: halve until a size fits or one sequence does not
            } else if (hi_ > max_) {
                next = static_cast<int>(std::min<int64_t>(2 * int64_t{lo_}, max_));  // grow
            } else {
                next = lo_ + (hi_ - lo_) / 2;  // bisect
            }
            try_size(*next);
        }
        if (failed_) {
            r_.answer = SearchAnswer::kError;
        } else if (lo_ == 0) {
            r_.answer = SearchAnswer::kNothingFits;
        } else {
            r_.answer = SearchAnswer::kFound;
            r_.chosen = lo_;
            r_.bound_reached = lo_ == max_;
        }
        return std::move(r_);
    }

private:
    // The size the estimate predicts once corrected by the last measurement: the largest size
    // strictly between lo and hi whose estimate × (measured / estimated of the last size that
    // ran) is at or below the line, or lo + 1 to confirm lo when none is. None after an
    // out-of-memory (it measured nothing: halving or bisection takes over) or without an
    // estimate and a measurement.
    std::optional<int> guided_guess() const {
        if (!in_.estimate || r_.tried.empty()) return std::nullopt;
        const SizeTried& last = r_.tried.back();
        if (last.verdict != SizeVerdict::kFits && last.verdict != SizeVerdict::kOverHeadroom)
            return std::nullopt;
        if (last.peak_bytes == 0 || last.estimate_bytes == 0) return std::nullopt;
        const double ratio =
            static_cast<double>(last.peak_bytes) / static_cast<double>(last.estimate_bytes);
        const double line = static_cast<double>(r_.headroom_line);
        auto predicted_fits = [&](int b) {
            return static_cast<double>(in_.estimate(b)) * ratio <= line;
        };
        int a = lo_ + 1, z = hi_ - 1;  // the candidates
        if (a > z) return std::nullopt;
        // None predicted to fit: lo's neighbour (one sequence when nothing fitted yet), which
        // settles the boundary.
        if (!predicted_fits(a)) return a;
        while (a < z) {  // the largest predicted to fit (the estimate grows with the size)
            const int mid = a + (z - a + 1) / 2;
            if (predicted_fits(mid))
                a = mid;
            else
                z = mid - 1;
        }
        return a;
    }

    // Runs one trial, records it and moves lo or hi; true when the size fits with headroom.
    bool try_size(int b) {
        const TrialResult t = trial_(b);
        SizeTried s;
        s.batch = b;
        s.peak_bytes = t.peak_bytes;
        s.estimate_bytes = in_.estimate ? in_.estimate(b) : 0;
        switch (t.outcome) {
            case TrialOutcome::kFits:
                s.tokens_per_s = t.tokens_per_s;
                if (t.peak_bytes <= r_.headroom_line) {
                    s.verdict = SizeVerdict::kFits;
                } else {
                    s.verdict = SizeVerdict::kOverHeadroom;
                    s.why = fmt::format(
                        "it ran, but its peak of {} is above the headroom line of {} ({} less "
                        "{:g} %)",
                        search_mib(t.peak_bytes), search_mib(r_.headroom_line),
                        search_mib(in_.capacity), 100 * in_.headroom);
                }
                break;
            case TrialOutcome::kOom:
                s.verdict = SizeVerdict::kOom;
                s.why = t.detail.empty() ? "out of memory" : t.detail;
                break;
            case TrialOutcome::kError:
            case TrialOutcome::kTimedOut:
                // A size that did not finish answers nothing about memory, and the device it
                // hung may hang the next size too: the search stops as on an error.
                s.verdict = t.outcome == TrialOutcome::kError ? SizeVerdict::kError
                                                              : SizeVerdict::kDidNotFinish;
                s.why = t.detail.empty() ? "the trial failed" : t.detail;
                failed_ = true;
                r_.error =
                    fmt::format("batch {}: {}{}", b,
                                t.outcome == TrialOutcome::kError ? "" : "did not finish: ", s.why);
                break;
        }
        const bool fits = s.verdict == SizeVerdict::kFits;
        if (in_.on_tried) in_.on_tried(s);
        r_.tried.push_back(std::move(s));
        if (fits)
            lo_ = std::max(lo_, b);
        else
            hi_ = std::min(hi_, b);
        return fits;
    }

    // Guided steps per search: enough for a linear memory model (guess, then confirm the
    // neighbour), few enough that a model the estimate does not describe costs at most this many
    // trials more than doubling, halving and bisection.
    static constexpr int kGuidedTries = 3;

    const SearchInput& in_;
    const Trial& trial_;
    int max_;
    int lo_ = 0, hi_;
    bool failed_ = false;
    SearchResult r_;
};

}  // namespace

SearchResult find_batch(const SearchInput& in, const Trial& trial) {
    return BatchSearchRun(in, trial).run();
}

}  // namespace trainrig::train
