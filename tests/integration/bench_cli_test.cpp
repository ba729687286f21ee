// `trainrig bench list|run` as a user runs it: the benchmark list, cpu-mem and storage on this
// machine (their records, data checks and verdicts, not their speeds), skips with reasons, a
// baseline round trip, argument errors, atomic output files, and SIGINT in the middle of a
// storage run leaving neither a file nor used space behind.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "run_binary.h"

extern char** environ;

namespace trainrig::test {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::vector<std::string> kIds = {"cpu-mem",   "storage", "h2d",  "d2h",        "hbm",
                                       "gemm",      "p2p",     "nccl", "nccl-pairs", "burn",
                                       "tokenizer", "loader",  "train"};

// No GPU benchmark plugin, whatever this build or machine has: the GPU benchmarks skip.
const std::string kNoPlugin = "TRAINRIG_GPU_BENCH_PLUGIN=/nonexistent/libtrainrig_gpu_bench.so";

bool one_line(const std::string& err) {
    return !err.empty() && err.back() == '\n' && std::count(err.begin(), err.end(), '\n') == 1;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

json parse(const RunResult& r) {
    json doc = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out.substr(0, 500) << r.err;
    return doc.is_discarded() ? json::object() : doc;
}

std::vector<json> records_named(const json& doc, const std::string& name) {
    std::vector<json> out;
    for (const auto& r : doc.value("results", json::array()))
        if (r.value("name", "") == name) out.push_back(r);
    return out;
}

uint64_t free_bytes(const fs::path& dir) {
    struct statvfs v {};
    EXPECT_EQ(::statvfs(dir.c_str(), &v), 0) << dir;
    return static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
}

uint64_t filesystem_bytes(const fs::path& dir) {
    struct statvfs v {};
    EXPECT_EQ(::statvfs(dir.c_str(), &v), 0) << dir;
    return static_cast<uint64_t>(v.f_blocks) * v.f_frsize;
}

class BenchCli : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        root_ = fs::temp_directory_path() /
                ("trainrig-bench-" + std::to_string(::getpid()) + "-" + info->name());
        fs::remove_all(root_);
        data_ = root_ / "data";
        out_ = root_ / "out";
        fs::create_directories(data_);
        fs::create_directories(out_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }

    static std::vector<std::string> entries(const fs::path& dir) {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(dir))
            names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }

    std::string storage_args() const {
        return "bench run storage --data-dir " + data_.string() +
               " --file-size 64M --seconds 0.2 --repeats 1";
    }

    fs::path root_, data_, out_;
};

// ---- list ---------------------------------------------------------------------------------------

TEST_F(BenchCli, ListShowsEveryBenchmark) {
    auto r = run_trainrig("bench list", kNoPlugin);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    for (const auto& id : kIds)
        EXPECT_TRUE(r.out.rfind(id + " ", 0) == 0 || contains(r.out, "\n" + id + " "))
            << id << " missing from\n"
            << r.out;
    EXPECT_TRUE(contains(r.out, "--data-dir")) << r.out;  // why storage cannot run as asked
}

TEST_F(BenchCli, WithoutADriverTheGpuBenchmarksSaySoInOneSentence) {
    void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver != nullptr) {
        ::dlclose(driver);
        GTEST_SKIP() << "this machine has an NVIDIA driver";
    }
    auto r = run_trainrig("bench list");
    ASSERT_EQ(r.rc, 0) << r.err;
    if (!contains(r.out, "no GPU can be used")) GTEST_SKIP() << "built without the GPU plugin";
    // Not "CUDA driver version is insufficient", which reads as an old driver.
    EXPECT_TRUE(contains(r.out, "no GPU can be used: no NVIDIA driver is installed")) << r.out;
    EXPECT_FALSE(contains(r.out, "insufficient")) << r.out;
}

TEST_F(BenchCli, ListJsonSaysWhatRunsHereAndWhyNot) {
    auto r = run_trainrig("bench list --json", kNoPlugin);
    ASSERT_EQ(r.rc, 0) << r.err;
    const json doc = parse(r);
    EXPECT_EQ(doc.value("schema", ""), "trainrig.bench.list");
    EXPECT_EQ(doc.value("schema_version", 0), 1);
    std::vector<std::string> ids;
    for (const auto& b : doc.value("benchmarks", json::array())) {
        ids.push_back(b.value("id", ""));
        EXPECT_FALSE(b.value("description", "").empty()) << b.dump();
        EXPECT_EQ(b.at("runs_here").get<bool>(), b.at("skip_reason").is_null()) << b.dump();
    }
    EXPECT_EQ(ids, kIds);
    const json& benchmarks = doc.at("benchmarks");
    EXPECT_EQ(benchmarks[0].at("runs_here"), true);   // cpu-mem needs nothing
    EXPECT_EQ(benchmarks[1].at("runs_here"), false);  // storage needs --data-dir
    EXPECT_TRUE(contains(benchmarks[1].at("skip_reason").get<std::string>(), "--data-dir"));
    for (size_t i = 2; i <= 8; ++i) {  // the GPU benchmarks, without the plugin
        EXPECT_EQ(benchmarks[i].at("runs_here"), false) << benchmarks[i].dump();
        EXPECT_TRUE(contains(benchmarks[i].at("skip_reason").get<std::string>(), "GPU"))
            << benchmarks[i].dump();
    }
}

// ---- argument errors ----------------------------------------------------------------------------

TEST_F(BenchCli, AnUnknownNameIsOneSentenceNamingIt) {
    auto alone = run_trainrig("bench run nosuch");
    EXPECT_EQ(alone.rc, 2);
    EXPECT_TRUE(alone.out.empty()) << alone.out;
    EXPECT_TRUE(one_line(alone.err)) << alone.err;
    EXPECT_TRUE(contains(alone.err, "`nosuch`")) << alone.err;
    // Refused before anything runs, also after a name that exists.
    auto r = run_trainrig("bench run cpu-mem nosuch --array-bytes 1M");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(r.out.empty()) << r.out;  // nothing ran
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_TRUE(contains(r.err, "`nosuch`")) << r.err;
    EXPECT_TRUE(contains(r.err, "cpu-mem, storage")) << r.err;  // and what there is
}

TEST_F(BenchCli, ThresholdsOutOfOrderAreRefused) {
    auto r = run_trainrig("bench run cpu-mem --array-bytes 1M --pass-ratio 0.5 --warn-ratio 0.8");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_TRUE(contains(r.err, "--warn-ratio 0.8")) << r.err;
    EXPECT_TRUE(contains(r.err, "--pass-ratio 0.5")) << r.err;
}

TEST_F(BenchCli, ABaselineThatIsNotABenchDocumentIsRefusedNamingTheFile) {
    const std::string file = (out_ / "doctor.json").string();
    std::ofstream(file) << R"({"schema": "trainrig.doctor", "schema_version": 1, "findings": []})";
    auto r = run_trainrig("bench run cpu-mem --array-bytes 1M --baseline " + file);
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_TRUE(contains(r.err, file)) << r.err;
    EXPECT_TRUE(contains(r.err, "trainrig.bench")) << r.err;

    std::ofstream(file, std::ios::trunc) << "not json at all";
    r = run_trainrig("bench run cpu-mem --array-bytes 1M --baseline " + file);
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_TRUE(contains(r.err, file)) << r.err;
}

// ---- cpu-mem ------------------------------------------------------------------------------------

TEST_F(BenchCli, CpuMemQuickReportsCopyAndTriadOverAllCores) {
    auto r = run_trainrig("bench run cpu-mem --quick --array-bytes 16M --repeats 2 --json");
    ASSERT_EQ(r.rc, 0) << r.err << r.out.substr(0, 2000);
    const json doc = parse(r);
    EXPECT_EQ(doc.value("schema", ""), "trainrig.bench");
    EXPECT_EQ(doc.value("schema_version", 0), 3);
    EXPECT_EQ(doc.value("exit_code", -1), 0);
    EXPECT_EQ(doc.at("errors"), json::array());
    EXPECT_EQ(doc.at("skipped"), json::array());
    const json& machine = doc.at("machine");
    EXPECT_GE(machine.value("cores", 0), 1) << machine.dump();
    EXPECT_GE(machine.value("numa_nodes", 0), 1) << machine.dump();
    const bool guest = machine.value("cpu", json::object()).value("virtual", false);
    for (const char* name : {"copy", "triad"}) {
        std::vector<json> all;
        for (const auto& rec : records_named(doc, name))
            if (rec.at("target").value("cpus", "") == "all") all.push_back(rec);
        ASSERT_EQ(all.size(), 1u) << name << "\n" << doc.dump(2);
        const json& rec = all[0];
        EXPECT_EQ(rec.at("bench"), "cpu-mem");
        EXPECT_EQ(rec.at("unit"), "bytes/s");
        EXPECT_EQ(rec.at("target").at("threads"), machine.at("cores"));
        EXPECT_EQ(rec.at("params").at("array_bytes"), 16u << 20);
        EXPECT_EQ(rec.at("params").at("repeats"), 2);
        EXPECT_EQ(rec.at("counted").at("bytes"),
                  (std::string(name) == "copy" ? 16u : 24u) * (16u << 20) / 8);
        ASSERT_EQ(rec.at("samples").size(), 2u);
        for (const auto& s : rec.at("samples")) EXPECT_GT(s.get<double>(), 0);
        EXPECT_EQ(rec.at("verified"), true) << rec.dump();
        EXPECT_TRUE(contains(rec.at("verify_detail").get<std::string>(), "2097152 elements"))
            << rec.dump();
        if (guest) {  // a virtual machine shares its memory channels: no expectation
            EXPECT_TRUE(rec.at("expected").is_null()) << rec.dump();
            EXPECT_EQ(rec.at("status"), "info") << rec.dump();
        } else if (rec.at("expected").is_null()) {
            EXPECT_EQ(rec.at("status"), "info") << rec.dump();
        } else {
            EXPECT_TRUE(contains(rec.at("expected_source").get<std::string>(), "channels"));
        }
    }
}

TEST_F(BenchCli, TrainReportsThroughputOfARunThatLearned) {
    auto r = run_trainrig("bench run train --quick --train-seq 64 --train-batch 2 --json");
    ASSERT_EQ(r.rc, 0) << r.err << r.out.substr(0, 2000);
    const json doc = parse(r);
    for (const char* name : {"tokens", "model-flops", "step-time", "peak-memory"}) {
        const auto recs = records_named(doc, name);
        ASSERT_EQ(recs.size(), 1u) << name;
        const json& rec = recs[0];
        EXPECT_EQ(rec.at("bench"), "train");
        EXPECT_EQ(rec.at("params").at("seq"), 64);
        EXPECT_EQ(rec.at("verified"), true) << rec.dump();
        for (const auto& s : rec.at("samples")) EXPECT_GT(s.get<double>(), 0);
    }
    EXPECT_EQ(records_named(doc, "tokens")[0].at("samples").size(), 3u);  // --quick: 3 timed steps
    // The trainer's accounting covers what it allocates: within the process's peak.
    const json mem = records_named(doc, "peak-memory")[0];
    EXPECT_LE(mem.at("samples")[0].get<double>(),
              mem.at("counted").at("max_rss_bytes").get<double>());
}

TEST_F(BenchCli, ANameGivenTwiceRunsOnce) {
    auto r = run_trainrig("bench run cpu-mem cpu-mem --array-bytes 1M --repeats 1 --json");
    ASSERT_EQ(r.rc, 0) << r.err;
    const json doc = parse(r);
    size_t all = 0;
    for (const auto& rec : doc.at("results"))
        if (rec.at("target").value("cpus", "") == "all") ++all;
    EXPECT_EQ(all, 2u) << doc.dump(2);  // copy and triad, once each
}

// ---- storage ------------------------------------------------------------------------------------

TEST_F(BenchCli, StorageWithoutADataDirIsSkippedWithTheReason) {
    auto r = run_trainrig("bench run storage --json");
    ASSERT_EQ(r.rc, 2) << r.err;  // named, and it cannot run: docs/cli.md
    const json doc = parse(r);
    EXPECT_EQ(doc.at("results"), json::array());
    ASSERT_EQ(doc.at("skipped").size(), 1u) << doc.dump(2);
    EXPECT_EQ(doc.at("skipped")[0].at("bench"), "storage");
    EXPECT_TRUE(contains(doc.at("skipped")[0].at("reason").get<std::string>(), "--data-dir"));
    EXPECT_EQ(doc.at("summary").at("skipped"), 1);
    EXPECT_EQ(doc.at("exit_code"), 2);
    // `all` runs what can here and lists the rest: storage is skipped, the run is not failed.
    auto all = run_trainrig(
        "bench run all --quick --repeats 1 --array-bytes 16M --train-seq 16 --train-batch 1 --json",
        kNoPlugin);
    EXPECT_NE(all.rc, 2) << all.err;
}

TEST_F(BenchCli, StorageReadsAVerifiedTestFileAndLeavesNothingBehind) {
    auto r = run_trainrig(storage_args() + " --json");
    ASSERT_EQ(r.rc, 0) << r.err << r.out.substr(0, 2000);
    const json doc = parse(r);
    EXPECT_EQ(doc.at("errors"), json::array()) << doc.dump(2);
    const auto seq = records_named(doc, "seq-read");
    const auto rnd = records_named(doc, "random-read");
    ASSERT_EQ(seq.size(), 1u) << doc.dump(2);
    ASSERT_EQ(rnd.size(), 1u) << doc.dump(2);
    EXPECT_EQ(seq[0].at("unit"), "bytes/s");
    EXPECT_EQ(rnd[0].at("unit"), "IO/s");
    EXPECT_EQ(seq[0].at("params").at("block_bytes"), 1u << 20);
    EXPECT_EQ(rnd[0].at("params").at("block_bytes"), 4096);
    for (const auto& rec : {seq[0], rnd[0]}) {
        EXPECT_EQ(rec.at("bench"), "storage");
        EXPECT_EQ(rec.at("params").at("file_bytes"), 64u << 20);
        EXPECT_EQ(rec.at("params").at("o_direct"), true);
        EXPECT_EQ(rec.at("target").at("path"), data_.string());
        ASSERT_EQ(rec.at("samples").size(), 1u);
        EXPECT_GT(rec.at("samples")[0].get<double>(), 0);
        EXPECT_EQ(rec.at("verified"), true) << rec.dump();
        EXPECT_GT(rec.at("counted").at("ios").get<uint64_t>(), 0u);
        EXPECT_EQ(rec.at("counted").at("bytes").get<uint64_t>(),
                  rec.at("counted").at("ios").get<uint64_t>() *
                      rec.at("params").at("block_bytes").get<uint64_t>());
    }
    EXPECT_EQ(entries(data_), std::vector<std::string>{});
}

TEST_F(BenchCli, ABaselineRunExpectsTheEarlierMedians) {
    const std::string baseline = (out_ / "baseline.json").string();
    auto first = run_trainrig(storage_args() + " --json -o " + baseline);
    ASSERT_EQ(first.rc, 0) << first.err;
    EXPECT_TRUE(first.out.empty()) << first.out;
    const json old = json::parse(slurp(baseline), nullptr, false);
    ASSERT_FALSE(old.is_discarded()) << slurp(baseline).substr(0, 500);
    ASSERT_EQ(old.at("results").size(), 2u) << old.dump(2);

    auto second = run_trainrig(storage_args() + " --json --baseline " + baseline);
    ASSERT_TRUE(second.rc == 0 || second.rc == 1) << second.rc << second.err;
    const json now = parse(second);
    ASSERT_EQ(now.at("results").size(), 2u) << now.dump(2);
    bool any_fail = false;
    for (const auto& rec : now.at("results")) {
        const std::string name = rec.at("name");
        const auto before = records_named(old, name);
        ASSERT_EQ(before.size(), 1u) << name;
        ASSERT_TRUE(rec.at("expected").is_number()) << rec.dump();
        EXPECT_DOUBLE_EQ(rec.at("expected").get<double>(), before[0].at("median").get<double>())
            << name;
        EXPECT_TRUE(contains(rec.at("expected_source").get<std::string>(), baseline)) << rec.dump();
        EXPECT_DOUBLE_EQ(rec.at("ratio").get<double>(),
                         rec.at("median").get<double>() / rec.at("expected").get<double>());
        const std::string status = rec.at("status");
        EXPECT_TRUE(status == "pass" || status == "warn" || status == "fail") << status;
        any_fail |= status == "fail";
    }
    EXPECT_EQ(second.rc, any_fail ? 1 : 0);
    EXPECT_EQ(now.at("exit_code"), second.rc);
    EXPECT_EQ(entries(data_), std::vector<std::string>{});
}

TEST_F(BenchCli, OutputFileIsReplacedAtomically) {
    const fs::path file = out_ / "bench.json";
    std::ofstream(file) << "an older report";
    auto r =
        run_trainrig("bench run cpu-mem --array-bytes 1M --repeats 1 --json -o " + file.string());
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    const std::string text = slurp(file);
    const json doc = json::parse(text, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << text.substr(0, 500);
    EXPECT_EQ(doc.value("schema", ""), "trainrig.bench");
    EXPECT_EQ(text.back(), '\n');
    EXPECT_EQ(entries(out_), std::vector<std::string>{"bench.json"});  // no staging file left

    const fs::path table = out_ / "bench.txt";
    r = run_trainrig("bench run cpu-mem --array-bytes 1M --repeats 1 -o " + table.string());
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(slurp(table).rfind("bench ", 0), 0u) << slurp(table);
    EXPECT_TRUE(contains(slurp(table), "triad")) << slurp(table);
    EXPECT_EQ(entries(out_), (std::vector<std::string>{"bench.json", "bench.txt"}));
}

// ---- GPU benchmarks without the plugin ----------------------------------------------------------

TEST_F(BenchCli, GpuBenchmarksWithoutThePluginAreSkippedWithAReason) {
    auto r = run_trainrig("bench run gemm hbm --json", kNoPlugin);
    ASSERT_EQ(r.rc, 2) << r.err;  // named, and they cannot run: docs/cli.md
    const json doc = parse(r);
    EXPECT_EQ(doc.at("results"), json::array());
    EXPECT_EQ(doc.at("errors"), json::array());
    std::set<std::string> skipped;
    for (const auto& s : doc.at("skipped")) {
        skipped.insert(s.at("bench").get<std::string>());
        EXPECT_TRUE(contains(s.at("reason").get<std::string>(), "GPU")) << s.dump();
    }
    EXPECT_EQ(skipped, (std::set<std::string>{"gemm", "hbm"}));
    EXPECT_EQ(doc.at("exit_code"), 2);
    EXPECT_FALSE(doc.at("machine").contains("gpus"));  // nothing measured a GPU
}

// --keep-partial: SIGTERM in the middle of a run still prints what was measured before it (the
// way validate runs its stages). cpu-mem finishes; the fake GPU plugin's h2d waits to be stopped.
TEST(BenchKeepPartial, PrintsWhatWasMeasuredBeforeTheStop) {
    const std::string env = std::string("TRAINRIG_GPU_BENCH_PLUGIN=") +
                            TRAINRIG_FAKE_GPU_BENCH_LIB + " FAKE_GPU_BENCH=slow";
    auto r = run_sh(env + " timeout --preserve-status -s TERM 3 " + TRAINRIG_BINARY +
                    " bench run cpu-mem h2d --keep-partial --json --array-bytes 16M --repeats 1");
    EXPECT_EQ(r.rc, 128 + SIGTERM) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["interrupted"], true);
    bool cpu_mem = false;
    for (const auto& rec : doc["results"]) cpu_mem = cpu_mem || rec["bench"] == "cpu-mem";
    EXPECT_TRUE(cpu_mem) << r.out.substr(0, 2000);
}

// --keep-partial (validate's stages): when the process that started the run dies, the run stops
// as on SIGTERM instead of measuring on alone. The fake GPU plugin's h2d would wait forever.
TEST(BenchKeepPartial, StopsWhenItsParentDies) {
    const fs::path out = fs::temp_directory_path() / ("orphan-" + std::to_string(::getpid()));
    const std::string env = std::string("TRAINRIG_GPU_BENCH_PLUGIN=") +
                            TRAINRIG_FAKE_GPU_BENCH_LIB + " FAKE_GPU_BENCH=slow";
    // sh starts the run in the background, prints its pid, gives it a second to start, and exits:
    // the run is orphaned.
    auto r =
        run_sh("sh -c '" + env + " " + TRAINRIG_BINARY + " bench run h2d --keep-partial --json > " +
               out.string() + " 2>&1 & echo $!; sleep 1'");
    ASSERT_EQ(r.rc, 0) << r.err;
    const pid_t pid = std::stoi(r.out);
    bool gone = false;
    for (int i = 0; i < 250 && !gone; ++i) {
        gone = ::kill(pid, 0) != 0;
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(gone) << "the orphaned run (pid " << pid << ") is still measuring";
    if (!gone) ::kill(pid, SIGKILL);
    std::ifstream in(out);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"interrupted\": true"), std::string::npos) << text.substr(0, 2000);
    fs::remove(out);
}

// ---- SIGINT -------------------------------------------------------------------------------------

// The child's SigCgt mask from /proc: which signals it has handlers for.
uint64_t caught_signals(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("SigCgt:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16);
    return 0;
}

bool handles_sigint(pid_t pid) { return caught_signals(pid) & (uint64_t{1} << (SIGINT - 1)); }

// Whether the child holds an open file in `dir` (an unnamed one reads "dir/#123 (deleted)").
bool holds_file_in(pid_t pid, const fs::path& dir) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
        std::error_code link_ec;
        const fs::path target = fs::read_symlink(e.path(), link_ec);
        if (!link_ec && target.string().rfind(dir.string() + "/", 0) == 0) return true;
    }
    return false;
}

// Bytes the child has read from storage (/proc/PID/io read_bytes).
uint64_t storage_read_bytes(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/io");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("read_bytes:", 0) == 0) return std::stoull(line.substr(11));
    return 0;
}

// `trainrig ARGS...` as a child process with stderr to a file; killed if a test leaves it.
class Child {
public:
    Child(std::vector<std::string> args, const std::string& err_path) : err_path_(err_path) {
        args.insert(args.begin(), TRAINRIG_BINARY);
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(),
                                         O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
        posix_spawn_file_actions_destroy(&actions);
    }
    ~Child() {
        if (pid_ > 0 && !exited_) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, &status_, 0);
        }
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    pid_t pid() const { return pid_; }
    int status() const { return status_; }
    std::string err() const { return slurp(err_path_); }

    // Polls `ready` until it holds (true) or the child ends or `limit` passes (false).
    template <class Pred>
    bool wait_until(Pred ready, std::chrono::seconds limit) {
        for (const auto end = Clock::now() + limit; Clock::now() < end;) {
            if (exited()) return false;
            if (ready()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }
    // Whether the child ended within `limit`.
    bool reap(std::chrono::seconds limit) {
        for (const auto end = Clock::now() + limit; Clock::now() < end;) {
            if (exited()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return exited();
    }

private:
    bool exited() {
        if (!exited_ && ::waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
        return exited_;
    }

    std::string err_path_;
    pid_t pid_ = -1;
    int status_ = 0;
    bool exited_ = false;
};

class BenchCliSigint : public BenchCli {
protected:
    // Sends SIGINT and expects the run to end with the interrupted error and no file left.
    void interrupt(Child& child) {
        ASSERT_EQ(::kill(child.pid(), SIGINT), 0);
        ASSERT_TRUE(child.reap(std::chrono::seconds(10))) << "still running 10 s after SIGINT";
        ASSERT_TRUE(WIFEXITED(child.status())) << "ended by signal " << WTERMSIG(child.status());
        EXPECT_EQ(WEXITSTATUS(child.status()), 128 + SIGINT);  // after cleaning up
        const std::string err = child.err();
        EXPECT_TRUE(contains(err, "interrupted")) << err;
        EXPECT_TRUE(one_line(err)) << err;
        EXPECT_EQ(entries(data_), std::vector<std::string>{});
    }
    std::string err_path() const { return (out_ / "stderr").string(); }
};

TEST_F(BenchCliSigint, WhileWritingTheTestFileStopsTheRunAndFreesItsSpace) {
    constexpr uint64_t kGiB = uint64_t{1} << 30;
    const uint64_t before = free_bytes(data_);
    const uint64_t margin = std::max(filesystem_bytes(data_) / 20, kGiB);
    if (before < 3 * kGiB + margin)
        GTEST_SKIP() << "needs " << (3 * kGiB + margin) / kGiB << " GiB free in " << data_
                     << " for a 2 GiB test file";

    Child child({"bench", "run", "storage", "--data-dir", data_.string(), "--file-size", "2G",
                 "--seconds", "30", "--repeats", "3"},
                err_path());
    ASSERT_GT(child.pid(), 0);
    // Running: SIGINT has the benchmark's handler, the test file is open and allocated.
    ASSERT_TRUE(child.wait_until(
        [&] {
            return handles_sigint(child.pid()) && holds_file_in(child.pid(), data_) &&
                   free_bytes(data_) + kGiB < before;
        },
        std::chrono::seconds(20)))
        << "the storage run did not get to its test file; stderr: " << child.err();
    interrupt(child);

    // The space comes back with the last descriptor of the unnamed file.
    constexpr uint64_t kSlack = uint64_t{64} << 20;
    uint64_t after = free_bytes(data_);
    for (const auto end = Clock::now() + std::chrono::seconds(5);
         after + kSlack < before && Clock::now() < end; after = free_bytes(data_))
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // One-sided: other processes may free space meanwhile, but the test file's 2 GiB must be back.
    EXPECT_GE(after + kSlack, before) << "free before " << before << ", after " << after;
}

TEST_F(BenchCliSigint, WhileReadingStopsTheReadsToo) {
    if (!fs::exists("/proc/self/io")) GTEST_SKIP() << "no /proc/PID/io (task I/O accounting)";
    Child child({"bench", "run", "storage", "--data-dir", data_.string(), "--file-size", "64M",
                 "--seconds", "30", "--repeats", "3"},
                err_path());
    ASSERT_GT(child.pid(), 0);
    // Writing the file reads nothing from the disk; reading it back does.
    ASSERT_TRUE(child.wait_until(
        [&] {
            return handles_sigint(child.pid()) && holds_file_in(child.pid(), data_) &&
                   storage_read_bytes(child.pid()) >= (uint64_t{64} << 20);
        },
        std::chrono::seconds(20)))
        << "the storage run did not get to its reads; stderr: " << child.err();
    interrupt(child);
}

}  // namespace
}  // namespace trainrig::test
