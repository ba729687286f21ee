// A WatchView as Prometheus metrics. Names follow Prometheus' naming guide: base units
// (_celsius, _watts, _bytes, _hertz, _joules_total, _seconds), ratios 0-1, counters ending in
// _total; every GPU series carries gpu (the index) and uuid. docs/watch.md lists them all.
#pragma once

#include <string>

#include "watch/watch_view.h"

namespace trainrig::watch {

// `now`: seconds since the epoch, for the watcher's own health (is the last tick recent?).
std::string render_metrics(const WatchView& view, double now);

// What the loop counts beside the view: alert deliveries and history writes.
struct LoopCounters {
    uint64_t delivered = 0, failed = 0, dropped = 0;
    uint64_t history_ok = 0, history_failed = 0;
    bool history = false;  // --db was given
};
std::string render_loop_counters(const LoopCounters& c);

// The line that ends a scrape: how long building it took.
std::string render_scrape_duration(double seconds);

// Names of the nvmlClocksEventReasons bits, for labels ("sw_power_cap").
struct ClockEventReason {
    uint64_t bit;
    const char* name;
};
extern const ClockEventReason kClockEventReasons[9];

}  // namespace trainrig::watch
