// watch's --db history as the daemon loop writes it (watch/history.h is the database).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "watch/history.h"
#include "watch/watcher.h"

namespace trainrig::watch {

// The --db history as the loop uses it: every tick and alert written, the kernel-log position
// kept, pruned once a minute. A failed write (disk full) is said once per streak and counted;
// watching goes on.
class HistorySink {
public:
    explicit HistorySink(History h) : h_(std::move(h)) {}

    // Where the kernel log was read to, and the GPUs seen, from the history.
    void resume(Watcher& w);
    // A tick, its alerts and the kernel-log position; pruned once a minute.
    void write(const Watcher& w, const Watcher::Tick& tick);
    uint64_t ok() const { return ok_; }
    uint64_t failed() const { return failed_; }

private:
    History h_;
    std::optional<uint64_t> saved_seq_;
    double last_prune_ = 0;
    bool failing_ = false;
    std::atomic<uint64_t> ok_{0}, failed_{0};
};

}  // namespace trainrig::watch
