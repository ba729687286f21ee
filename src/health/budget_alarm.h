// A hard time limit for a scheduler's health check. Slurm kills a HealthCheckProgram after 60 s
// (and node-problem-detector a plugin after its timeout): better to stop on our own, say where
// the time went, and exit 2 ("could not judge", nothing changed) than to be killed half-way.
// Every call inside has its own shorter deadline; this is the guard behind them.
#pragma once

#include <chrono>

namespace trainrig::health {

class BudgetAlarm {
public:
    // Arms SIGALRM for `seconds` (rounded up to whole seconds); `command` names the program in
    // the message ("slurm healthcheck").
    BudgetAlarm(double seconds, const char* command);
    ~BudgetAlarm();
    BudgetAlarm(const BudgetAlarm&) = delete;
    BudgetAlarm& operator=(const BudgetAlarm&) = delete;
    // What is running now, for the message: "reading the machine", "asking slurmctld".
    void phase(const char* what);
    // The deadline of each call inside (NVML, scontrol): a quarter of the budget, so that the
    // alarm is the guard, not the rule.
    std::chrono::milliseconds per_call() const { return per_call_; }

private:
    std::chrono::milliseconds per_call_;
};

}  // namespace trainrig::health
