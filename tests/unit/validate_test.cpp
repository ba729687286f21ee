// validate's verdict rules and its report directory (docs/report.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/sha256.h"
#include "temp_dir_test.h"
#include "validate/report_compare.h"
#include "validate/report_dir.h"
#include "validate/report_html.h"
#include "validate/report_render.h"
#include "validate/report_training.h"
#include "validate/verdict.h"

namespace trainrig::validate {
namespace {

namespace fs = std::filesystem;

Item item(Level l, const char* id = "x") {
    Item i;
    i.id = id;
    i.level = l;
    return i;
}

StageRecord stage(const char* name, StageState s, bool required) {
    StageRecord st;
    st.name = name;
    st.state = s;
    st.required = required;
    return st;
}

TEST(ValidateVerdict, PrecedenceFailThenUnknownThenWarn) {
    const std::vector<StageRecord> ran = {stage("doctor", StageState::kRan, true),
                                          stage("training", StageState::kRan, true)};
    EXPECT_EQ(judge(ran, {}, Scope::kGpu, false).verdict, Verdict::kReady);
    EXPECT_EQ(judge(ran, {item(Level::kWarn)}, Scope::kGpu, false).verdict,
              Verdict::kReadyWithWarnings);
    EXPECT_EQ(judge(ran, {item(Level::kWarn), item(Level::kUnknown)}, Scope::kGpu, false).verdict,
              Verdict::kUnknown);
    // A failure makes NOT READY even when other parts could not be judged.
    EXPECT_EQ(judge(ran, {item(Level::kUnknown), item(Level::kFail), item(Level::kWarn)},
                    Scope::kGpu, false)
                  .verdict,
              Verdict::kNotReady);
}

TEST(ValidateVerdict, ARequiredCheckNotJudgedKeepsItFromAPlainReady) {
    const std::vector<StageRecord> ran = {stage("doctor", StageState::kRan, true)};
    const std::string uncovered = "1 of 30 required checks not judged: gemm";
    const auto o = judge(ran, {}, Scope::kGpu, false, uncovered);
    EXPECT_EQ(o.verdict, Verdict::kReadyWithWarnings);
    EXPECT_EQ(o.line, "READY WITH WARNINGS: " + uncovered);
    EXPECT_EQ(verdict_exit_code(o.verdict), 0);
    // It never makes a verdict better: a failure stays NOT READY, an unknown UNKNOWN.
    EXPECT_EQ(judge(ran, {item(Level::kFail)}, Scope::kGpu, false, uncovered).verdict,
              Verdict::kNotReady);
    EXPECT_EQ(judge(ran, {item(Level::kUnknown)}, Scope::kGpu, false, uncovered).verdict,
              Verdict::kUnknown);
}

TEST(ValidateVerdict, ARequiredStageThatDidNotRunIsNeverAPass) {
    const std::vector<StageRecord> stages = {stage("doctor", StageState::kRan, true),
                                             stage("gpu-bench", StageState::kCouldNotRun, true),
                                             stage("topology", StageState::kCouldNotRun, false)};
    const auto o = judge(stages, {}, Scope::kGpu, false);
    EXPECT_EQ(o.verdict, Verdict::kUnknown);
    EXPECT_EQ(o.line, "UNKNOWN: did not run: gpu-bench");
    EXPECT_EQ(verdict_exit_code(o.verdict), 2);
    // Skipped (the machine lacks what it needs, or --root) is not "could not run".
    const std::vector<StageRecord> skipped = {stage("doctor", StageState::kRan, true),
                                              stage("training", StageState::kSkipped, true)};
    EXPECT_EQ(judge(skipped, {}, Scope::kTree, false).verdict, Verdict::kReady);
}

TEST(ValidateVerdict, TheLineSaysWhatTheVerdictCovers) {
    const std::vector<StageRecord> ran = {stage("doctor", StageState::kRan, true)};
    const auto host = judge(ran, {item(Level::kFail), item(Level::kWarn), item(Level::kWarn)},
                            Scope::kHost, false);
    EXPECT_EQ(host.line, "NOT READY: 1 failed, 2 warnings (no GPU: host checks only)");
    EXPECT_EQ(verdict_exit_code(host.verdict), 1);
    EXPECT_EQ(judge(ran, {}, Scope::kHost, false).line, "READY (no GPU: host checks only)");
    EXPECT_EQ(judge(ran, {}, Scope::kTree, false).line, "READY (machine tree: configuration only)");
    // An emulated GPU: never READY, but what failed on it still failed.
    const auto emulated = judge(ran, {}, Scope::kEmulated, false);
    EXPECT_EQ(emulated.verdict, Verdict::kUnknown);
    EXPECT_EQ(emulated.line,
              "UNKNOWN (emulated GPU: the GPU stages ran on the CPU, nothing was measured on a "
              "GPU)");
    EXPECT_EQ(judge(ran, {item(Level::kWarn)}, Scope::kEmulated, false).verdict, Verdict::kUnknown);
    EXPECT_EQ(judge(ran, {item(Level::kFail)}, Scope::kEmulated, false).verdict,
              Verdict::kNotReady);
    EXPECT_STREQ(scope_name(Scope::kEmulated), "emulated");
    // Interrupted: whatever ran was fine, the verdict cannot be READY.
    const auto cut = judge(ran, {}, Scope::kGpu, true);
    EXPECT_EQ(cut.verdict, Verdict::kUnknown);
    EXPECT_EQ(cut.line, "INCOMPLETE, UNKNOWN");
    // Interrupted after a failure: still UNKNOWN, with the failure counted, never NOT READY (a
    // health check drains on that).
    const auto cut_fail = judge(ran, {item(Level::kFail)}, Scope::kGpu, true);
    EXPECT_EQ(cut_fail.verdict, Verdict::kUnknown);
    EXPECT_EQ(cut_fail.line, "INCOMPLETE, UNKNOWN: 1 failed");
    EXPECT_EQ(verdict_exit_code(cut_fail.verdict), 2);
}

TEST(Sha256, KnownDigests) {  // FIPS 180-2 examples
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), {}};
}

class ReportDir : public test::TempDirTest {};

TEST_F(ReportDir, WrittenWholeWithSumsAndVerified) {
    const fs::path dir = dir_ / "r";
    ASSERT_TRUE(write_report_dir(dir, {{"report.json", "{}\n"}, {"raw/bench.json", "[]\n"}}).ok());
    EXPECT_EQ(slurp(dir / "SHA256SUMS"),
              sha256_hex("[]\n") + "  raw/bench.json\n" + sha256_hex("{}\n") + "  report.json\n");
    auto v = verify_report_dir(dir);
    ASSERT_TRUE(v.ok()) << v.status().message();
    EXPECT_TRUE(v->intact());
    EXPECT_EQ(v->ok.size(), 2u);
    // Nothing but the report is left beside it.
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);

    std::ofstream(dir / "report.json") << "{\"verdict\": \"READY\"}\n";  // edited
    fs::remove(dir / "raw/bench.json");
    std::ofstream(dir / "notes.txt") << "added\n";
    v = verify_report_dir(dir);
    ASSERT_TRUE(v.ok());
    EXPECT_FALSE(v->intact());
    EXPECT_EQ(v->changed, std::vector<std::string>{"report.json"});
    EXPECT_EQ(v->missing, std::vector<std::string>{"raw/bench.json"});
    EXPECT_EQ(v->unlisted, std::vector<std::string>{"notes.txt"});
}

TEST_F(ReportDir, AnExistingDirectoryIsNeverTouched) {
    const fs::path dir = dir_ / "r";
    fs::create_directory(dir);
    std::ofstream(dir / "mine.txt") << "keep\n";
    const Status s = write_report_dir(dir, {{"report.json", "{}\n"}});
    EXPECT_EQ(s.code(), Errc::kInvalidInput);
    EXPECT_NE(s.message().find("exists already"), std::string::npos) << s.message();
    EXPECT_EQ(slurp(dir / "mine.txt"), "keep\n");
}

TEST_F(ReportDir, AFailureLeavesNothingHalfWritten) {
    const fs::path dir = dir_ / "r";
    // "a" is written as a file, so "a/b" cannot be: the write fails part way.
    const Status s = write_report_dir(dir, {{"a", "x"}, {"a/b", "y"}});
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("no report was written"), std::string::npos) << s.message();
    EXPECT_FALSE(fs::exists(dir));
    EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(ReportDir, AMalformedSumsFileNamesItsLine) {
    std::ofstream(dir_ / "SHA256SUMS") << sha256_hex("") << "  empty\nnot a sum\n";
    auto v = verify_report_dir(dir_);
    ASSERT_FALSE(v.ok());
    EXPECT_NE(v.status().message().find("SHA256SUMS line 2"), std::string::npos)
        << v.status().message();
}

TEST(ReportHtml, FifteenMinutesOfEightGpusStaysUnderTwoMegabytes) {
    nlohmann::json samples = nlohmann::json::array();
    for (int t = 0; t < 900; ++t)
        for (int g = 0; g < 8; ++g)
            samples.push_back({{"t", 1.7e9 + t},
                               {"gpu", g},
                               {"temperature_celsius", 60.0 + g + (t % 60) / 10.0},
                               {"sm_clock_hertz", 1.98e9 - 1e6 * (t % 7)},
                               {"power_watts", 650.0 + (t % 13)},
                               {"utilization", 0.97},
                               {"clock_event_reasons", t > 600 && g == 3 ? 0x40 : 0x4}});
    const nlohmann::json report = {
        {"verdict", "NOT READY"},
        {"verdict_line", "NOT READY: 1 failed <b>"},
        {"host", "node<07>"},
        {"items",
         {{{"id", "watch.gpu-thermal-slowdown"},
           {"level", "fail"},
           {"summary", "GPU 3 & friends"},
           {"devices", {"GPU 3"}}}}},
        {"watch", {{"ticks", 900}, {"samples", samples}, {"alerts", nlohmann::json::array()}}}};
    const std::string html = render_report_html(report);
    EXPECT_LT(html.size(), 2u << 20) << html.size();
    EXPECT_EQ(html.find("failed <b>"), std::string::npos);  // text is escaped
    EXPECT_NE(html.find("NOT READY: 1 failed &lt;b&gt;"), std::string::npos);
    EXPECT_NE(html.find("node&lt;07&gt;"), std::string::npos);
    size_t polylines = 0;
    for (size_t at = html.find("<polyline"); at != std::string::npos;
         at = html.find("<polyline", at + 1))
        ++polylines;
    EXPECT_EQ(polylines, 4u * 8u);
    EXPECT_NE(html.find("class=\"held\""), std::string::npos);  // GPU 3's slowdown shaded
    EXPECT_EQ(html.find("://"), std::string::npos);             // nothing to fetch
}

// What the terminal, report.md and report.html show of a run on a host without a GPU: the
// training result and (with -v) every measurement in their units, no telemetry section for a
// watch stage that was skipped, and no column that every row leaves empty.
TEST(ReportRender, SaysWhatRanAndLeavesOutWhatDidNot) {
    const nlohmann::json tokens = {
        {"bench", "train"},
        {"name", "tokens"},
        {"unit", "tokens/s"},
        {"median", 747.0},
        {"status", "info"},
        {"expected", nullptr},
        {"params",
         {{"backend", "cpu"}, {"model", "tiny"}, {"warmup_steps", 1}, {"timed_steps", 3}}},
        {"counted", {{"first_loss", 10.822}, {"last_loss", 9.683}}}};
    nlohmann::json flops = tokens;
    flops["name"] = "model-flops";
    flops["unit"] = "FLOP/s";
    flops["median"] = 4.29e9;
    const nlohmann::json report = {
        {"verdict_line", "READY WITH WARNINGS: 1 warning (no GPU: host checks only)"},
        {"items",
         {{{"id", "kernel.swappiness"}, {"level", "warn"}, {"summary", "vm.swappiness is 60"}}}},
        {"stages",
         {{{"name", "training"}, {"state", "ran"}},
          {{"name", "watch"}, {"state", "skipped"}, {"reason", "no NVIDIA driver"}}}},
        {"bench", {{"results", {tokens, flops}}}},
        // An older report kept a watch section for a skipped stage.
        {"watch",
         {{"ticks", 4},
          {"samples", nlohmann::json::array()},
          {"alerts", nlohmann::json::array()}}}};
    const std::string text = render_report_text(report, "", false);
    EXPECT_NE(text.find("training: loss 10.822 -> 9.683 over 4 steps, 747 tokens/s"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("model-flops"), std::string::npos) << text;
    const std::string verbose = render_report_text(report, "", true);
    EXPECT_NE(verbose.find("4.29 GFLOP/s"), std::string::npos) << verbose;  // not 0.00 TFLOP/s
    const std::string md = render_report_markdown(report);
    EXPECT_EQ(md.find("## GPU telemetry"), std::string::npos) << md;
    EXPECT_NE(md.find("| level | id | what | action |"), std::string::npos) << md;
    const std::string html = render_report_html(report);
    EXPECT_EQ(html.find("<th>where</th>"), std::string::npos);
    EXPECT_EQ(html.find("<th>measured / expected</th>"), std::string::npos);
    EXPECT_EQ(html.find("GPU telemetry through the run</h2>"), std::string::npos);
}

nlohmann::json report_with(const char* verdict, nlohmann::json items,
                           std::vector<std::pair<int, double>> gemm_by_gpu) {
    nlohmann::json results = nlohmann::json::array();
    for (auto [gpu, value] : gemm_by_gpu)
        results.push_back({{"bench", "gemm"},
                           {"name", "bf16"},
                           {"params", {{"m", 8192}}},
                           {"target", {{"gpu", gpu}}},
                           {"unit", "FLOP/s"},
                           {"samples", {value, value}},
                           {"expected", nullptr}});
    results.push_back({{"bench", "train"},  // a time: never judged against the old one
                       {"name", "step-time"},
                       {"params", nlohmann::json::object()},
                       {"target", nlohmann::json::object()},
                       {"unit", "s"},
                       {"samples", {static_cast<double>(gemm_by_gpu.size())}}});
    return {{"schema", "trainrig.validate"},
            {"schema_version", 1},
            {"verdict", verdict},
            {"items", items},
            {"bench", {{"schema", "trainrig.bench"}, {"schema_version", 2}, {"results", results}}}};
}

nlohmann::json finding(const char* id, const char* level, const char* device) {
    return {{"id", id}, {"level", level}, {"devices", {device}}, {"summary", id}};
}

// A step's seconds are `step_s` since bench schema version 3 and `total_s` before: a saved
// report of either draws the same step-time bars.
TEST(ReportTraining, StepSecondsReadTheSameInEitherSchemaVersion) {
    auto report = [](int version, const char* key) {
        nlohmann::json steps = nlohmann::json::array();
        for (int i = 1; i <= 3; ++i)
            steps.push_back({{"step", i},
                             {"timed", i > 1},
                             {"loss", 5.0 - i},
                             {key, 0.1 * i},
                             {"forward_s", 0.01},
                             {"backward_s", 0.02}});
        return nlohmann::json{
            {"bench",
             {{"schema_version", version},
              {"results",
               {{{"bench", "train"}, {"name", "step-time"}, {"counted", {{"steps", steps}}}}}}}}};
    };
    const std::string now = training_html(report(3, "step_s"));
    EXPECT_NE(now.find(">0.3 s<"), std::string::npos) << now;
    EXPECT_EQ(training_html(report(2, "total_s")), now);
}

TEST(ReportDiff, ItemsVerdictAndMeasurementsAgainstTheOldReport) {
    const auto old_report =
        report_with("READY WITH WARNINGS", {finding("kernel.swappiness", "warn", "host")},
                    {{0, 1000e12}, {1, 1000e12}, {2, 1000e12}, {3, 1000e12}});
    const auto new_report = report_with(
        "NOT READY",
        {finding("gpu.temperature", "fail", "GPU 3"), finding("gpu.temperature", "fail", "GPU 1")},
        {{0, 950e12}, {1, 800e12}, {2, 1200e12}, {4, 1000e12}});
    const auto d = diff_reports(old_report, new_report, bench::Thresholds{});
    EXPECT_GT(d.verdict_change, 0);
    EXPECT_TRUE(d.worse());
    ASSERT_EQ(d.appeared.size(), 2u);  // one id on two GPUs: two findings
    ASSERT_EQ(d.resolved.size(), 1u);
    EXPECT_EQ(d.resolved[0]["id"], "kernel.swappiness");
    // GPU 0 at 95 % has not moved; GPU 1 at 80 % is a warning; GPU 2 at 120 % is faster.
    ASSERT_EQ(d.slower.size(), 1u);
    EXPECT_EQ(d.slower[0].devices, "GPU 1");
    EXPECT_EQ(d.slower[0].verdict, bench::Verdict::kWarn);
    ASSERT_EQ(d.faster.size(), 1u);
    EXPECT_EQ(d.faster[0].devices, "GPU 2");
    EXPECT_EQ(d.compared, 3u);
    EXPECT_EQ(d.only_old, 1u);  // GPU 3's
    EXPECT_EQ(d.only_new, 1u);  // GPU 4's; the step times are not counted
    const auto text = render_diff_text(d, false);
    EXPECT_NE(text.find("READY WITH WARNINGS -> NOT READY (worse)"), std::string::npos) << text;
    EXPECT_NE(text.find("bench.gemm.bf16 [GPU 1]"), std::string::npos) << text;
    EXPECT_EQ(diff_json(d)["verdict_change"], "worse");

    const auto same = diff_reports(old_report, old_report, bench::Thresholds{});
    EXPECT_FALSE(same.worse());
    EXPECT_EQ(same.compared, 4u);
    EXPECT_TRUE(same.slower.empty() && same.faster.empty() && same.appeared.empty());
    // The other way round the verdict is better, but GPU 2 at 1000 against 1200 (83 %) is
    // slower than the tolerance allows: still worse.
    const auto back = diff_reports(new_report, old_report, bench::Thresholds{});
    EXPECT_LT(back.verdict_change, 0);
    EXPECT_EQ(back.resolved.size(), 2u);
    ASSERT_EQ(back.slower.size(), 1u);
    EXPECT_EQ(back.slower[0].devices, "GPU 2");
    EXPECT_TRUE(back.worse());
    // Said as it is: mixed, never "(better)" followed by a plain "worse than before".
    const auto mixed = render_diff_text(back, false);
    EXPECT_NE(mixed.find("NOT READY -> READY WITH WARNINGS (better)"), std::string::npos) << mixed;
    EXPECT_NE(mixed.find("\nmixed: the verdict is better, but 1 item appeared, 1 measurement "
                         "slower\n"),
              std::string::npos)
        << mixed;
    EXPECT_EQ(mixed.find("worse than before"), std::string::npos) << mixed;
    EXPECT_NE(text.find("\nworse than before: the verdict, 2 items appeared, 1 measurement "
                        "slower\n"),
              std::string::npos)
        << text;
    // Both reports of one host here: no host line.
    EXPECT_EQ(text.find("hosts:"), std::string::npos) << text;
    EXPECT_EQ(diff_json(d)["same_host"], true);
}

TEST(ReportDiff, TwoHostsAreSaidAndCutShortMeasurementsAreNotCompared) {
    auto old_report = report_with("READY", nlohmann::json::array(), {{0, 1000e12}});
    auto new_report = report_with("READY", nlohmann::json::array(), {{0, 100e12}});
    old_report["host"] = "node07";
    new_report["host"] = "node08";
    // The new GEMM was stopped part way: 10 % of the old is no slowdown to report.
    new_report["bench"]["results"][0]["partial"] = true;
    const auto d = diff_reports(old_report, new_report, bench::Thresholds{});
    EXPECT_FALSE(d.worse());
    EXPECT_EQ(d.cut_short, 1u);
    EXPECT_EQ(d.compared, 0u);
    const auto text = render_diff_text(d, false);
    EXPECT_EQ(text.rfind("hosts: node07 -> node08 (two machines compared", 0), 0u) << text;
    EXPECT_NE(text.find("1 cut short by a stop request"), std::string::npos) << text;
    const auto doc = diff_json(d);
    EXPECT_EQ(doc["old_host"], "node07");
    EXPECT_EQ(doc["new_host"], "node08");
    EXPECT_EQ(doc["same_host"], false);
}

TEST(ReportDiff, ARequiredCheckNoLongerJudgedIsWorse) {
    auto old_report = report_with("READY", nlohmann::json::array(), {{0, 1000e12}});
    auto new_report = old_report;
    old_report["coverage"] = {{"missing", {"kmsg.xid"}}};
    new_report["coverage"] = {{"missing", {"gpu.nvlink", "gpu.p2p-topology"}}};
    const auto d = diff_reports(old_report, new_report, bench::Thresholds{});
    EXPECT_TRUE(d.worse());
    EXPECT_EQ(d.unjudged_now, (std::vector<std::string>{"gpu.nvlink", "gpu.p2p-topology"}));
    EXPECT_EQ(d.judged_again, std::vector<std::string>{"kmsg.xid"});
    const auto text = render_diff_text(d, false);
    EXPECT_NE(text.find("required checks not judged now, judged before (2): gpu.nvlink, "
                        "gpu.p2p-topology"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("worse than before: 2 required checks no longer judged"), std::string::npos)
        << text;
    EXPECT_EQ(diff_json(d)["coverage"]["judged_again"], nlohmann::json({"kmsg.xid"}));
    // Checks judged again are nothing worse.
    auto fuller = new_report;
    fuller["coverage"]["missing"] = {"gpu.nvlink"};
    const auto better = diff_reports(new_report, fuller, bench::Thresholds{});
    EXPECT_FALSE(better.worse());
    EXPECT_EQ(better.judged_again, std::vector<std::string>{"gpu.p2p-topology"});
    // A report without coverage (schema version 1) says nothing of it.
    old_report.erase("coverage");
    const auto v1 = diff_reports(old_report, new_report, bench::Thresholds{});
    EXPECT_FALSE(v1.worse());
    EXPECT_TRUE(diff_json(v1)["coverage"].is_null());
}

TEST(ReportDiff, LoadReportNamesWhatIsWrong) {
    const auto dir = fs::temp_directory_path() / ("report-load-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "report.json") << R"({"schema": "trainrig.doctor", "schema_version": 1})";
    auto r = load_report(dir.string());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("not a trainrig.validate report"), std::string::npos);
    std::ofstream(dir / "report.json") << R"({"schema": "trainrig.validate", "schema_version": 7})";
    r = load_report((dir / "report.json").string());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("schema_version 7"), std::string::npos);
    std::ofstream(dir / "report.json") << R"({"schema": "trainrig.validate", "schema_version": 1})";
    EXPECT_TRUE(load_report(dir.string()).ok());
    fs::remove_all(dir);
}

}  // namespace
}  // namespace trainrig::validate
