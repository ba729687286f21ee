#include "validate/stage_child.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "core/text.h"
#include "measure/expectations.h"
#include "plan/hardware.h"

namespace trainrig::validate {

namespace {

std::vector<bench::BenchRun::Note> notes(const nlohmann::json& doc, const char* list,
                                         const char* key) {
    std::vector<bench::BenchRun::Note> out;
    for (const auto& n : doc.value(list, nlohmann::json::array()))
        if (n.is_object()) out.push_back({n.value("bench", ""), n.value(key, "")});
    return out;
}

// The bench document on stdout, or an error saying what is wrong with it.
Result<bench::BenchRun> parse_document(const std::string& out) {
    nlohmann::json doc = nlohmann::json::parse(out, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || doc.value("schema", "") != "trainrig.bench")
        return Status{Errc::kInvalidInput, "its output is not a trainrig.bench document"};
    bench::BenchRun run;
    run.machine = doc.value("machine", nlohmann::json::object());
    for (const auto& j : doc.value("results", nlohmann::json::array())) {
        auto r = bench::record_from_json(j);
        if (!r.ok()) return r.status();
        run.records.push_back(std::move(r).value());
    }
    run.skipped = notes(doc, "skipped", "reason");
    run.errors = notes(doc, "errors", "error");
    bench::apply_expectations(run.records, run.machine, plan::builtin_hardware());
    return run;
}

std::string self_exe() {
    std::error_code ec;
    const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("trainrig") : p.string();
}

std::string number(double v) { return fmt::format("{}", v); }

}  // namespace

StageLimits stage_limits(double budget_seconds, double override_seconds) {
    StageLimits l;
    l.timeout_seconds = override_seconds > 0 ? override_seconds : 3 * budget_seconds + 60;
    l.grace_seconds = std::clamp(l.timeout_seconds / 4, 1.0, 30.0);
    return l;
}

std::vector<std::string> bench_run_args(const std::vector<std::string>& ids,
                                        const bench::BenchOptions& o) {
    std::vector<std::string> a = {"bench", "run"};
    a.insert(a.end(), ids.begin(), ids.end());
    a.insert(a.end(), {"--json", "--keep-partial"});
    auto add = [&](const char* flag, const std::string& value) {
        a.push_back(flag);
        a.push_back(value);
    };
    auto add_list = [&](const char* flag, const std::vector<std::string>& values) {
        if (values.empty()) return;
        a.push_back(flag);
        a.insert(a.end(), values.begin(), values.end());
    };
    if (o.quick) a.push_back("--quick");
    if (o.repeats) add("--repeats", std::to_string(o.repeats));
    if (o.threads) add("--threads", std::to_string(o.threads));
    if (o.array_bytes) add("--array-bytes", std::to_string(o.array_bytes));
    if (!o.data_dir.empty()) add("--data-dir", o.data_dir);
    if (o.file_bytes) add("--file-size", std::to_string(o.file_bytes));
    if (o.seconds > 0) add("--seconds", number(o.seconds));
    if (!o.gpus.empty()) {
        std::vector<std::string> g;
        for (int i : o.gpus) g.push_back(std::to_string(i));
        add("--gpus", join(g, ","));
    }
    if (!o.tokenizer.empty()) add("--tokenizer", o.tokenizer);
    add_list("--input", o.inputs);
    std::vector<std::string> threads;
    for (unsigned t : o.tokenizer_threads) threads.push_back(std::to_string(t));
    add("--tokenizer-threads", join(threads, ","));
    add_list("--shards", o.shards);
    add("--batch", std::to_string(o.batch));
    add("--window", std::to_string(o.window));
    add("--steps", std::to_string(o.steps));
    add("--train-backend", o.train_backend);
    add("--train-model", o.train_model);
    add("--train-seq", std::to_string(o.train_seq));
    add("--train-batch", std::to_string(o.train_batch));
    return a;
}

std::string signal_name(int sig) {
    const char* abbrev = sigabbrev_np(sig);
    const char* text = strsignal(sig);
    return fmt::format("SIG{} ({})", abbrev ? abbrev : std::to_string(sig), text ? text : "");
}

// The child's last line on stderr: why it could not run, in its own words.
std::string last_line(const std::string& text) {
    std::string t = text;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
    const size_t nl = t.rfind('\n');
    std::string line = sanitize_text(nl == std::string::npos ? t : t.substr(nl + 1));
    if (line.size() > 300) line = line.substr(0, 300) + "...";
    return line;
}

std::optional<ChildEnding> ended_without_output(const Result<SupervisedRun>& child) {
    if (!child.ok()) return ChildEnding{StageEnd::kFailed, child.status().message()};
    const SupervisedRun& c = *child;
    if (c.killed)
        return ChildEnding{StageEnd::kHung,
                           c.left_behind ? "it is still stuck in a system call after SIGKILL" : ""};
    // A signal we did not send: the stage crashed (SIGTERM after a stop request is ours).
    const bool ours = (c.timed_out || c.interrupted) && c.output.signal == SIGTERM;
    if (c.output.signal != 0 && !ours) {
        std::string detail = signal_name(c.output.signal);
        if (const std::string why = last_line(c.output.err); !why.empty())
            detail += "; its last words: " + why;
        return ChildEnding{StageEnd::kCrashed, detail};
    }
    return std::nullopt;
}

StageEnd output_end(const SupervisedRun& c, bool has_result) {
    return c.interrupted ? StageEnd::kInterrupted
           : c.timed_out ? StageEnd::kTimedOut
           : has_result  ? StageEnd::kFinished
                         : StageEnd::kFailed;
}

StageOutcome read_stage_child(const Result<SupervisedRun>& child) {
    StageOutcome s;
    if (auto e = ended_without_output(child)) {
        s.end = e->end;
        s.detail = std::move(e->detail);
        return s;
    }
    const SupervisedRun& c = *child;
    auto run = parse_document(c.output.out);
    if (run.ok()) s.run = std::move(run).value();
    s.end = output_end(c, run.ok());
    if (s.end == StageEnd::kFailed) {
        const std::string why = last_line(c.output.err);
        s.detail = fmt::format("`trainrig bench run` exited {} without results: {}",
                               c.output.exit_code, why.empty() ? run.status().message() : why);
    }
    return s;
}

Result<SupervisedRun> run_self(const std::vector<std::string>& args, const StageLimits& limits) {
    std::vector<std::string> argv = {self_exe()};
    argv.insert(argv.end(), args.begin(), args.end());
    SupervisedLimits sl;
    sl.stop_after = std::chrono::milliseconds(static_cast<int64_t>(limits.timeout_seconds * 1e3));
    sl.grace = std::chrono::milliseconds(static_cast<int64_t>(limits.grace_seconds * 1e3));
    return run_supervised(argv, sl);
}

StageOutcome run_stage_child(const std::vector<std::string>& ids,
                             const bench::BenchOptions& options, const StageLimits& limits) {
    return read_stage_child(run_self(bench_run_args(ids, options), limits));
}

}  // namespace trainrig::validate
