#include "train/batch_source.h"

#include <fmt/format.h>

namespace trainrig::train {

Status split_windows(const std::vector<uint32_t>& rows, int B, int Tn, int vocab, Batch& out) {
    out.B = B;
    out.T = Tn;
    out.inputs.resize(static_cast<size_t>(B) * Tn);
    out.targets.resize(static_cast<size_t>(B) * Tn);
    for (int b = 0; b < B; ++b) {
        const uint32_t* row = rows.data() + static_cast<size_t>(b) * (Tn + 1);
        for (int t = 0; t <= Tn; ++t) {
            if (row[t] >= static_cast<uint32_t>(vocab))
                return Status(Errc::kInvalidInput,
                              fmt::format("the data holds token id {}, outside the model's "
                                          "vocabulary of {}",
                                          row[t], vocab),
                              "tokenize with the model's tokenizer, or give the model a larger "
                              "--vocab");
        }
        std::copy(row, row + Tn, out.inputs.begin() + static_cast<long>(b) * Tn);
        std::copy(row + 1, row + Tn + 1, out.targets.begin() + static_cast<long>(b) * Tn);
    }
    return ok_status();
}

BatchSource::BatchSource(data::WindowLoader loader, int B, int Tn, int vocab, size_t depth)
    : loader_(std::move(loader)), B_(B), T_(Tn), vocab_(vocab), depth_(depth), thread_([this] {
          produce();
      }) {}

BatchSource::~BatchSource() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void BatchSource::produce() {
    std::vector<uint32_t> rows(loader_.batch_tokens());
    for (;;) {
        {
            std::unique_lock lock(mu_);
            cv_.wait(lock, [&] { return stop_ || ready_.size() < depth_; });
            if (stop_) return;
        }
        loader_.next_batch(rows);
        Batch b;
        Status s = split_windows(rows, B_, T_, vocab_, b);
        b.after = loader_.state();
        const bool failed = !s.ok();
        std::lock_guard lock(mu_);
        if (failed)
            ready_.emplace_back(std::move(s));
        else
            ready_.emplace_back(std::move(b));
        cv_.notify_all();
        if (failed) return;
    }
}

Result<Batch> BatchSource::next() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !ready_.empty(); });
    if (!ready_.front().ok()) return ready_.front().status();  // stays: later calls see it too
    Result<Batch> b = std::move(ready_.front());
    ready_.pop_front();
    cv_.notify_all();
    return b;
}

}  // namespace trainrig::train
