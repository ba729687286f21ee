// Alert rules: what `watch` judges at every tick (docs/watch.md, "Alert rules"). A rule is data;
// the engine (alert_engine.h) evaluates it against ticks and kernel events with the tick's own
// time, so tests drive it with an injected clock and never sleep.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "policy/gpu_health.h"
#include "watch/gpu_sample.h"

namespace trainrig::watch {

enum class RuleKind {
    kThreshold,  // a GPU value above/below a limit, continuously for `for_seconds`
    kRate,       // a counter's increase over `window_seconds` above `limit`
    kEvent,      // kernel events (Xid, fallen off the bus, AER) and GPU states (lost, hung)
    kSkew,       // a GPU's value away from the node's median by more than `limit`, for a while
    kStability,  // a GPU value's standard deviation over `window_seconds` above `limit`
};

// The GPU values rules can name: the fields of GpuSample, plus values derived from them.
enum class Field {
    kUtilization,
    kMemoryUtilization,
    kMemoryUsedRatio,  // used / total
    kTemperature,
    kTemperatureVerdict,  // 0 within limits, 1 near slowdown, 2 at slowdown (policy/gpu_health.h)
    kPower,
    kPowerRatio,  // draw / enforced limit
    kSmClock,
    kMemoryClock,
    kThermalSlowdown,  // 1 while a SW or HW thermal slowdown holds clocks down
    kHwSlowdown,       // 1 while HW slowdown or power brake holds clocks down
    kPcieReplays,
    kEccCorrected,
    kEccUncorrected,
    kRemappedRowsUncorrectable,
    kRemapPending,
    kRemapFailed,
    kNvlinksDown,
    kNvlinkVerdict,  // 0 as the part should be, 1 bridge links partly down, 2 board links down
    kEnergy,
};
struct FieldInfo {
    Field field;
    const char* name;  // as rules files spell it
    const char* what;  // as alerts say it
    const char* unit;  // "" for plain numbers
    bool counter;
    // A 0/1 flag: what it means while set, as an alert says it after "GPU 0: ". Its value and
    // a limit between 0 and 1 mean nothing to a reader. nullptr for measured values.
    const char* when_set;
};
const FieldInfo& field_info(Field f);
std::optional<Field> field_from_name(const std::string& name);
std::optional<double> field_value(const GpuSample& s, Field f);
// NVLink state: not judged while the machine may still be training its links
// (policy::kLinkTrainingGraceSeconds after boot).
bool settles_after_boot(Field f);
std::string field_names();  // "utilization, memory_utilization, ..." for error messages

enum class EventKind {
    kXid,
    kFallenOffBus,
    kAerUncorrected,  // fatal or non-fatal
    kAerFatal,
    kAerNonFatal,
    kAerCorrected,
    kGpuLost,
    kGpuHung
};
std::optional<EventKind> event_from_name(const std::string& name);

enum class Severity { kInfo, kWarning, kCritical };
const char* severity_name(Severity s);
// doctor fail is critical, warn is a warning (policy/gpu_health.h).
inline Severity severity_of(policy::Verdict v) {
    return v == policy::Verdict::kFail   ? Severity::kCritical
           : v == policy::Verdict::kWarn ? Severity::kWarning
                                         : Severity::kInfo;
}

struct Rule {
    std::string name;
    RuleKind kind = RuleKind::kThreshold;
    Severity severity = Severity::kWarning;
    Field field = Field::kTemperature;
    bool below = false;  // threshold: fire below `limit` instead of above
    double limit = 0;    // threshold, rate (per window), skew (deviation), stability (std-dev)
    // rate of pcie_replays: the limit is each GPU's own link's (policy/gpu_health.h), per minute
    // scaled to the window; a rules file says `limit = "link"`.
    bool limit_per_link = false;
    double for_seconds = 0;  // threshold, skew
    // threshold, skew: the condition fires only once it has held in this many samples in a row
    // (and for `for_seconds`), and resolves only once it has been clear in as many: one odd
    // reading neither raises nor ends an alert (Prometheus' `for` needs two evaluations).
    int samples = 3;
    double window_seconds = 60;        // rate, stability
    std::optional<double> busy_above;  // skew, stability: judge only while utilization is above
    EventKind event = EventKind::kXid;
    std::string xids = "any";   // "any", "fatal", "nonfatal", or a comma list of codes
    double hold_seconds = 600;  // event: an event alert resolves this long after its last event
    std::string remedy;         // what to do; Xid alerts take the catalog's action when empty
    std::string doctor_rule;    // the doctor rule that judges the same condition, if any
    bool operator==(const Rule&) const = default;
};

// The rules `watch` starts with, each sourced (alert_defaults.cpp).
std::vector<Rule> default_rules();

}  // namespace trainrig::watch
