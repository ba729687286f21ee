// Training batches for one rank: windows from the loader split into inputs and next-token
// targets, checked against the model's vocabulary, prepared one batch ahead on a thread so the
// step waits only when reading is slower than computing. Each batch carries the loader state
// after it, which is what a checkpoint taken after consuming it must record.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "core/status.h"
#include "data/loader/window_loader.h"

namespace trainrig::train {

struct Batch {
    int B = 0, T = 0;
    std::vector<uint32_t> inputs, targets;  // B·T each
    data::LoaderState after;
};

// Splits loader rows of T + 1 tokens; a token at or above `vocab` is an error naming it.
Status split_windows(const std::vector<uint32_t>& rows, int B, int Tn, int vocab, Batch& out);

class BatchSource {
public:
    BatchSource(data::WindowLoader loader, int B, int Tn, int vocab, size_t depth = 2);
    ~BatchSource();
    BatchSource(const BatchSource&) = delete;
    BatchSource& operator=(const BatchSource&) = delete;

    // Blocks until the next batch is ready.
    Result<Batch> next();

private:
    void produce();
    data::WindowLoader loader_;
    const int B_, T_, vocab_;
    const size_t depth_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Result<Batch>> ready_;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace trainrig::train
