// Evaluates alert rules tick by tick. Time is the tick's own (NodeSample::time), never the
// clock, so a test that feeds ticks one simulated second apart gets exact timing without
// sleeping. Each alert is keyed by rule and GPU (and Xid code, or PCI device, for kernel
// events); while it fires, repeats are folded into it (count), and it is reported once when it
// fires and once when it resolves.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "watch/alert_rule.h"
#include "watch/kernel_events.h"

namespace trainrig::watch {

struct Alert {
    std::string rule;
    std::string check;  // the doctor check that judges the same condition; "" when none
    Severity severity = Severity::kWarning;
    bool firing = true;  // false: this is its resolution
    int gpu = -1;        // -1: not a GPU of this node (an AER on a switch port)
    std::string uuid;
    std::string device;  // the PCI address, for kernel events
    int xid = 0;
    double since = 0;  // when the condition began (Unix time)
    double at = 0;     // when it fired or resolved
    std::optional<double> value;
    uint64_t count = 1;   // events folded into it
    std::string summary;  // what, where, since when
    std::string remedy;   // what to do
};

class AlertEngine {
public:
    explicit AlertEngine(std::vector<Rule> rules) : rules_(std::move(rules)) {}

    // One look, as `watch --once` and doctor take it: a threshold holds at once (its `for` is
    // not waited out), a rate rule that allows no increase at all fires on any count since the
    // driver loaded (the counters start there), and one against the GPU's link judges that count
    // over the uptime. Other rate, skew and stability rules need time and stay quiet.
    void judge_instantly(bool on) { instant_ = on; }

    // Judges one tick and the kernel events found with it; returns what fired or resolved.
    std::vector<Alert> evaluate(const NodeSample& tick, const std::vector<GpuIdentity>& gpus,
                                const std::vector<KernelEvent>& events);
    // The alerts firing now.
    std::vector<Alert> firing() const;
    const std::vector<Rule>& rules() const { return rules_; }
    // New rules (SIGHUP): alerts of rules that are gone or changed resolve; the rest carry over.
    std::vector<Alert> replace_rules(std::vector<Rule> rules, double now);

private:
    bool instant_ = false;
    struct Track {
        double since = -1;  // the condition has held since; -1 = it does not hold
        int held = 0;       // samples in a row in which it held
        int clear = 0;      // samples in a row in which it did not, while firing
        bool firing = false;
        double last_event = 0;
        Alert alert;
    };
    // A value over time. Rate rules keep only the ends of each run of equal values (counters
    // rarely move), so an hour's window costs a few points, not one per tick; stability rules
    // keep running sums, so each tick costs the same however long the window.
    struct Series {
        std::deque<std::pair<double, double>> points;  // (time, value)
        double sum = 0, sum_squares = 0;
        void push(double t, double v) {
            points.emplace_back(t, v);
            sum += v;
            sum_squares += v * v;
        }
        void pop() {
            sum -= points.front().second;
            sum_squares -= points.front().second * points.front().second;
            points.pop_front();
        }
        void clear() { *this = Series{}; }
    };

    // `samples`: in a row, to fire and to resolve (Rule::samples); 1 for events and counters.
    void condition(const std::string& key, bool holds, double now, double for_seconds, int samples,
                   Alert draft, std::vector<Alert>& out);
    void threshold(const Rule& r, const NodeSample& t, const std::vector<GpuIdentity>& g,
                   std::vector<Alert>& out);
    void rate(const Rule& r, const NodeSample& t, const std::vector<GpuIdentity>& g,
              std::vector<Alert>& out);
    void link_rate(const Rule& r, const NodeSample& t, const GpuSample& g,
                   const std::deque<std::pair<double, double>>& points, const std::string& who,
                   Alert& a, std::vector<Alert>& out);
    void gpu_state(const Rule& r, const NodeSample& t, const std::vector<GpuIdentity>& g,
                   std::vector<Alert>& out);
    void kernel(const Rule& r, const NodeSample& t, const std::vector<GpuIdentity>& g,
                const std::vector<KernelEvent>& events, std::vector<Alert>& out);
    void skew(const Rule& r, const NodeSample& t, const std::vector<GpuIdentity>& g,
              std::vector<Alert>& out);
    void stability(const Rule& r, const NodeSample& t, const std::vector<GpuIdentity>& g,
                   std::vector<Alert>& out);

    std::vector<Rule> rules_;
    std::map<std::string, Track> tracks_;
    std::map<std::string, Series> series_;
};

// The alert as one JSON object (for log lines, a command's stdin, a webhook's body).
std::string alert_json(const Alert& a);

}  // namespace trainrig::watch
