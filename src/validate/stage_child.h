// A measuring stage of validate, run as `trainrig bench run IDS --json --keep-partial` in a
// supervised child (core/supervised_child.h): one truth for how a benchmark runs and is judged
// (bench's own command), and a stage that crashes, hangs or is killed cannot take validate with
// it. Past its limit the child is asked to stop and prints what it measured; one that does not
// end a grace period later (a call stuck in the driver) is killed. docs/report.md, "A stage that
// does not finish".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/benchmark.h"
#include "core/supervised_child.h"
#include "measure/bench_document.h"

namespace trainrig::validate {

struct StageLimits {
    double timeout_seconds = 0;  // asked to stop after this
    double grace_seconds = 10;   // then killed after this
};

// Three times the stage's budget and a minute, or `override_seconds` (--stage-timeout) when
// positive; the grace is a quarter of it, between 1 and 30 s.
StageLimits stage_limits(double budget_seconds, double override_seconds);

// The `bench run` arguments (after the program) that measure `ids` with `options`.
std::vector<std::string> bench_run_args(const std::vector<std::string>& ids,
                                        const bench::BenchOptions& options);

enum class StageEnd {
    kFinished,     // the child ran its benchmarks and printed them
    kTimedOut,     // past its limit: asked to stop, printed what it measured
    kInterrupted,  // Ctrl-C: asked to stop
    kHung,         // did not end within the grace after being asked: killed, nothing kept
    kCrashed,      // a signal nobody sent it (SIGSEGV, SIGABRT, the OOM killer's SIGKILL)
    kFailed,       // ended without a bench document (it could not start, or said why not)
};

struct StageOutcome {
    StageEnd end = StageEnd::kFailed;
    bench::BenchRun run;  // records (with expectations), skipped, errors, machine
    std::string detail;   // kCrashed: the signal; kFailed: the child's error; kHung: left behind
};

// How a stage's child ended where its output does not matter: it could not start (kFailed), was
// killed (kHung) or took a signal nobody sent it (kCrashed), with the detail; none when it ended
// by itself or as asked, and what it printed is to be read (`output_end`).
struct ChildEnding {
    StageEnd end;
    std::string detail;
};
std::optional<ChildEnding> ended_without_output(const Result<SupervisedRun>& child);
// The end of a child whose output was read: interrupted, timed out, else finished when it
// printed its result (`has_result`), else failed.
StageEnd output_end(const SupervisedRun& child, bool has_result);

// What a finished child's output means: pure, so every ending is tested without a child.
StageOutcome read_stage_child(const Result<SupervisedRun>& child);

// How a stage child's end reads in a report: "SIGSEGV (Segmentation fault)", and its last line
// on stderr (sanitized, at most 300 characters), in its own words.
std::string signal_name(int sig);
std::string last_line(const std::string& text);

// Runs this program with `args` as a supervised child under `limits`.
Result<SupervisedRun> run_self(const std::vector<std::string>& args, const StageLimits& limits);

// Runs `ids` in a child of this program and reads its outcome.
StageOutcome run_stage_child(const std::vector<std::string>& ids,
                             const bench::BenchOptions& options, const StageLimits& limits);

}  // namespace trainrig::validate
