// `trainrig validate`'s one verdict over every stage and finding (docs/report.md, "Verdict"):
// READY, READY WITH WARNINGS, NOT READY or UNKNOWN. A check that could not run or could not read
// its input is never a pass: it makes the verdict UNKNOWN, unless something failed outright,
// which makes it NOT READY whatever else could not run. An interrupted run is UNKNOWN whatever it
// found: an incomplete run is never a reason to act. A required check of the machine's class
// that was not judged (skipped with --skip included) keeps it from a plain READY (coverage.h).
#pragma once

#include <string>
#include <vector>

namespace trainrig::validate {

enum class Verdict { kReady, kReadyWithWarnings, kNotReady, kUnknown };
const char* verdict_name(Verdict v);  // "READY", "READY WITH WARNINGS", "NOT READY", "UNKNOWN"
// 0 ready (with or without warnings), 1 not ready, 2 unknown.
int verdict_exit_code(Verdict v);

enum class Level { kFail, kWarn, kUnknown };
const char* level_name(Level l);  // "fail", "warn", "unknown"

// One thing that keeps the machine from a plain READY: what, where, measured against what, and
// what to do about it.
struct Item {
    std::string id;     // a doctor rule ("gpu.temperature"), "bench.<bench>.<name>",
                        // "watch.<rule>" or "stage.<stage>"
    std::string stage;  // the stage that found it
    Level level = Level::kWarn;
    std::string summary;
    std::vector<std::string> devices;                   // "GPU 0", "0000:41:00.0", "nvme0n1"
    std::string measured, expected, tolerance, source;  // a measurement's, when it is one
    std::vector<std::string> evidence;
    std::string action;  // fix X, replace part Y, re-run stage Z
};

enum class StageState { kRan, kSkipped, kCouldNotRun, kInterrupted };
const char* stage_state_name(StageState s);  // "ran", "skipped", "could not run", "interrupted"

// What the report says about one stage (validate/stages/stage.h runs it).
struct StageRecord {
    std::string name;   // the stage's id: doctor, topology, host-bench, ... (stages/stage_list.h)
    std::string title;  // "GPU benchmarks"
    double budget_seconds = 0;
    double seconds = 0;
    StageState state = StageState::kSkipped;
    std::string reason;     // why it was skipped or could not run
    bool required = false;  // could not run: the verdict is UNKNOWN
};

// What the verdict covers: a machine with GPUs, a host without one (never a plain READY for GPU
// training), a machine tree (configuration only: the live stages do not run), or GPUs that are
// emulated (core/emulated_gpu.h: the GPU code ran on the CPU, so nothing was measured on a GPU
// and the verdict is never READY; a failure found is still one).
enum class Scope { kGpu, kHost, kTree, kEmulated };
const char* scope_name(Scope s);  // "gpu", "host", "tree", "emulated"

struct Outcome {
    Verdict verdict = Verdict::kUnknown;
    std::string line;  // "NOT READY: 2 failed, 1 warning (no GPU: host checks only)"
};

// `uncovered`: the required checks that were not judged (coverage.h's missing_line), "" when
// every one was: a plain READY needs them all, so READY becomes READY WITH WARNINGS and says so.
Outcome judge(const std::vector<StageRecord>& stages, const std::vector<Item>& items, Scope scope,
              bool incomplete, const std::string& uncovered = "");

}  // namespace trainrig::validate
