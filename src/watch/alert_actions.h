// Delivers alerts to the actions of the rules file, on a thread of its own: a webhook that hangs
// or a command that never exits costs at most its timeout, and never a tick. The queue is
// bounded; what does not fit is dropped and counted.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "watch/alert_config.h"
#include "watch/alert_engine.h"

namespace trainrig::watch {

// One delivery, synchronously: writes the log line, runs the command (alert JSON on stdin,
// killed after the timeout) or POSTs the webhook. The failure says what and where.
Status deliver(const ActionSpec& action, const std::string& alert_json);

class AlertDispatcher {
public:
    explicit AlertDispatcher(std::vector<ActionSpec> actions);
    ~AlertDispatcher();  // delivers what is queued, then stops
    AlertDispatcher(const AlertDispatcher&) = delete;
    AlertDispatcher& operator=(const AlertDispatcher&) = delete;

    void send(const Alert& alert);
    void replace_actions(std::vector<ActionSpec> actions);

    uint64_t delivered() const { return delivered_; }
    uint64_t failed() const { return failed_; }
    uint64_t dropped() const { return dropped_; }

private:
    void loop();

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::string> queue_;
    std::vector<ActionSpec> actions_;
    bool stop_ = false;
    std::atomic<uint64_t> delivered_{0}, failed_{0}, dropped_{0};
    std::thread thread_;
};

}  // namespace trainrig::watch
