// Fixed-length training windows from a TokenCorpus: each sample is T + 1 consecutive tokens
// (inputs and the next-token targets), starting at a multiple of T within one part. An epoch
// visits every sample once in a seeded order (Permutation); a global step takes world x B
// samples and rank r reads its own B of them, so ranks never overlap and together cover the
// epoch. The remainder of an epoch smaller than a global step is dropped (drop_last).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "data/loader/permutation.h"
#include "data/loader/token_corpus.h"

namespace trainrig::data {

// Everything needed to continue exactly where a run stopped; the same on every rank.
struct LoaderState {
    uint64_t seed = 0;
    uint64_t epoch = 0;
    uint64_t position = 0;  // samples of this epoch already taken by all ranks together
    // What the state was taken against, checked on restore.
    uint64_t window = 0;
    uint64_t samples = 0;

    std::string to_json() const;
    static Result<LoaderState> from_json(std::string_view text);
    bool operator==(const LoaderState&) const = default;
};

struct LoaderOptions {
    uint64_t batch = 1;      // B: samples per rank per step
    uint64_t window = 1024;  // T
    uint64_t seed = 0;
    bool shuffle = true;
    int rank = 0;
    int world = 1;
};

class WindowLoader {
public:
    static Result<WindowLoader> create(std::shared_ptr<const TokenCorpus> corpus,
                                       LoaderOptions options);

    uint64_t samples_per_epoch() const { return total_samples_; }
    uint64_t steps_per_epoch() const;
    // Fills B x (T + 1) tokens, row after row, for this rank; advances the state.
    void next_batch(std::vector<uint32_t>& out);
    void next_batch(uint32_t* out);  // batch_tokens() of room
    size_t batch_tokens() const { return options_.batch * (options_.window + 1); }
    // The sample index of row `row` of this rank's next batch (for tests and tracing).
    uint64_t next_sample(uint64_t row) const;

    const LoaderState& state() const { return state_; }
    // Continues from a saved state; refuses one taken on a different corpus or window.
    Status restore(const LoaderState& s);

private:
    WindowLoader(std::shared_ptr<const TokenCorpus> corpus, LoaderOptions options);
    void start_epoch(uint64_t epoch);
    void read_sample(uint64_t sample, uint32_t* out) const;

    std::shared_ptr<const TokenCorpus> corpus_;
    LoaderOptions options_;
    std::vector<uint64_t> first_sample_;  // per part: index of its first sample
    uint64_t total_samples_ = 0;
    Permutation order_{1, 0};
    LoaderState state_;
};

}  // namespace trainrig::data
