// A hard time limit for a scheduler's health check. Slurm kills a HealthCheckProgram after 60 s
// (and node-problem-detector a plugin after its timeout): better to stop on our own, say where
// the time went, and exit 2 ("could not judge", nothing changed) than to be killed half-way.
// Every call inside has its own shorter deadline; this is the guard behind them.
#pragma once

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
};

}  // namespace trainrig::health
