#include "validate/watch_recorder.h"

#include <chrono>

#include "watch/watcher.h"

namespace trainrig::validate {

namespace {

double epoch_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void put(nlohmann::json& j, const char* key, const auto& v) {
    if (v) j[key] = *v;
}

}  // namespace

WatchRecorder::WatchRecorder(double interval_seconds) : interval_(interval_seconds) {
    thread_ = std::thread([this] { loop(); });
}

WatchRecorder::~WatchRecorder() { stop(); }

void WatchRecorder::stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

void WatchRecorder::loop() {
    watch::WatchOptions o;
    o.interval = interval_;
    watch::Watcher w(o, watch::default_rules());
    const auto view = w.view();
    problem_ = view->nvml_problem;
    absent_ = view->nvml_absent;
    for (bool first = true; !stop_; first = false) {
        const double now = epoch_now();
        auto tick = w.tick(now);
        ++ticks_;
        if (!first)
            for (auto& a : tick.alerts)
                if (a.firing) alerts_.push_back(std::move(a));
        if (const auto& last = w.view()->last)
            for (const auto& g : last->gpus) {
                nlohmann::json s = {{"t", now}, {"gpu", g.index}};
                put(s, "temperature_celsius", g.temperature_celsius);
                put(s, "sm_clock_hertz", g.sm_clock_hertz);
                put(s, "power_watts", g.power_watts);
                put(s, "utilization", g.utilization);
                put(s, "clock_event_reasons", g.clock_event_reasons);
                samples_.push_back(std::move(s));
            }
        const auto until = std::chrono::steady_clock::now() +
                           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(interval_));
        while (!stop_ && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

}  // namespace trainrig::validate
