// watch, in the background, for as long as validate's measurements run: one tick a second on a
// thread of its own, keeping each GPU's temperature, clocks, power and utilisation (the report's
// plots) and every alert that fires. The first tick is the state before the run, which doctor
// has judged already: its alerts (the kernel log's history among them) are not counted again.
#pragma once

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "watch/alert_engine.h"

namespace trainrig::validate {

class WatchRecorder {
public:
    explicit WatchRecorder(double interval_seconds = 1);
    ~WatchRecorder();
    WatchRecorder(const WatchRecorder&) = delete;
    WatchRecorder& operator=(const WatchRecorder&) = delete;

    // Stops the thread (idempotent); what it kept is then fixed.
    void stop();

    // After stop(): why there is no GPU telemetry ("" when NVML answers); absent: no driver.
    const std::string& problem() const { return problem_; }
    bool absent() const { return absent_; }
    // {"t", "gpu", "temperature_celsius", "sm_clock_hertz", "power_watts", "utilization",
    // "clock_event_reasons"} per GPU and tick; fields NVML did not report are left out.
    const nlohmann::json& samples() const { return samples_; }
    const std::vector<watch::Alert>& alerts() const { return alerts_; }
    uint64_t ticks() const { return ticks_; }

private:
    void loop();
    double interval_;
    std::atomic<bool> stop_{false};
    std::string problem_;
    bool absent_ = false;
    nlohmann::json samples_ = nlohmann::json::array();
    std::vector<watch::Alert> alerts_;
    uint64_t ticks_ = 0;
    std::thread thread_;
};

}  // namespace trainrig::validate
