// `trainrig watch report`: what a stored run says about each GPU over a period. Per GPU the
// temperature and utilization (min, median, max, standard deviation), how far its utilization
// sat from the node's median while the node was busy (the article's out-of-step curves), time
// spent with clocks held down by reason, time not answering, energy used; and the alert
// timeline. The article's "±0.8 °C over 72 h" is `watch report --since 72h`.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "watch/history.h"

namespace trainrig::watch {

struct Spread {
    size_t n = 0;
    double min = 0, median = 0, max = 0, stddev = 0;
};
Spread spread_of(std::vector<double> values);

struct GpuSummary {
    GpuIdentity id;
    size_t samples = 0;
    Spread temperature;
    Spread utilization;
    size_t busy_ticks = 0;  // ticks when the node's median utilization was above 50 %
    double skew_mean = 0;   // mean |utilization - node median| over busy ticks
    double skew_ratio = 0;  // share of busy ticks more than 20 points off the median
    double thermal_slowdown_seconds = 0;
    double power_cap_seconds = 0;
    double hw_slowdown_seconds = 0;  // HW slowdown or power brake
    double not_ok_seconds = 0;       // lost, hung or failing
    std::optional<double> energy_joules;
};

struct WatchReport {
    std::string db;
    double since = 0, until = 0;  // the period asked for
    double first = 0, last = 0;   // the ticks found in it
    std::vector<GpuSummary> gpus;
    std::vector<Alert> timeline;
};

Result<WatchReport> build_report(History& history, const std::string& db, double since,
                                 double until);
nlohmann::json report_json(const WatchReport& r);
std::string render_report_text(const WatchReport& r);

}  // namespace trainrig::watch
