// `trainrig watch` as users run it: --once on fixture machines, the daemon serving /metrics
// under bad traffic and stopping cleanly, and a real Prometheus scraping it.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "background_process.h"
#include "run_binary.h"

namespace trainrig::test {
namespace {

namespace fs = std::filesystem;

std::string nvml_fixture(const std::string& name) {
    return std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/nvml/" + name;
}

TEST(WatchOnce, ArticleBoxShowsTheLostGpuAndItsXid) {
    auto r = run_trainrig("watch --once --root " + fixture("article-box"),
                          "TRAINRIG_FAKE_NVML=" + nvml_fixture("article-box.json"));
    EXPECT_EQ(r.rc, 1) << r.err;  // a GPU is not ok
    EXPECT_NE(r.out.find("lost"), std::string::npos) << r.out;
    // The lost GPU keeps the identity the driver lists, so its Xid names it.
    EXPECT_NE(r.out.find("Xid 79 on GPU 1 (0000:41:00): GPU has fallen off the bus"),
              std::string::npos)
        << r.out;
}

TEST(WatchOnce, JsonDocument) {
    auto r = run_trainrig("watch --once --json --root " + fixture("article-box"),
                          "TRAINRIG_FAKE_NVML=" + nvml_fixture("article-box.json"));
    ASSERT_EQ(r.rc, 1) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["schema"], "trainrig.watch.sample");
    EXPECT_EQ(doc["schema_version"], 1);
    ASSERT_EQ(doc["gpus"].size(), 2u);
    EXPECT_EQ(doc["gpus"][0]["state"], "ok");
    EXPECT_EQ(doc["gpus"][1]["state"], "lost");
    EXPECT_GT(doc["gpus"][0]["temperature_celsius"].get<double>(), 0);
    bool xid79 = false;
    for (const auto& e : doc["kernel_events"])
        if (e["kind"] == "xid" && e["xid"] == 79) {
            xid79 = true;
            EXPECT_EQ(e["severity"], "fatal");
            EXPECT_FALSE(e["action"].get<std::string>().empty());
        }
    EXPECT_TRUE(xid79) << r.out;
    EXPECT_TRUE(doc["kernel_log"]["followed"].get<bool>());
}

TEST(WatchOnce, NvmlXidEventsStandInWhenTheKernelLogIsNotRead) {
    auto r = run_trainrig("watch --no-listen --duration 1 --interval 0.1 --no-kernel-log",
                          "TRAINRIG_FAKE_NVML=" + nvml_fixture("faults/xid-events.json"));
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.err.find("\"xid\":79"), std::string::npos) << r.err;  // an alert, from NVML
    EXPECT_NE(r.err.find("\"xid\":48"), std::string::npos) << r.err;
}

TEST(WatchOnce, NoDriverIsNotAFault) {
    auto r = run_trainrig("watch --once --no-kernel-log",
                          "TRAINRIG_NVML_LIBRARY=libnvidia-ml-absent.so.1");
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("GPUs: not read"), std::string::npos) << r.out;
}

TEST(WatchCli, BadOptionsAreOneSentenceAndExit2) {
    for (const std::string& args :
         {std::string("watch --listen nonsense"), std::string("watch --json"),
          std::string("watch --textfile /nonexistent/dir"), std::string("watch --interval 0")}) {
        auto r = run_trainrig(args, "TRAINRIG_NVML_LIBRARY=libnvidia-ml-absent.so.1");
        EXPECT_EQ(r.rc, 2) << args << ": " << r.err;
        EXPECT_FALSE(r.err.empty()) << args;
    }
}

TEST(WatchCli, BadRulesFileNamesTheLine) {
    const fs::path rules =
        fs::temp_directory_path() / ("trainrig-bad-rules-" + std::to_string(::getpid()) + ".toml");
    std::ofstream(rules) << "[[rule]]\nname = \"gpu-temperature\"\nabove = \"hot\"\n";
    auto r = run_trainrig("watch --no-listen --rules " + rules.string(),
                          "TRAINRIG_NVML_LIBRARY=libnvidia-ml-absent.so.1");
    fs::remove(rules);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("line 3: \"above\" must be a number"), std::string::npos) << r.err;
}

std::string wait_for_text(const fs::path& file, const std::string& needle, double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::string text;
    while (std::chrono::steady_clock::now() < until) {
        text = slurp(file);
        if (text.find(needle) != std::string::npos) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return text;
}

TEST(WatchAlerts, FireIntoTheLogFollowNewXidsAndReloadOnSighup) {
    const fs::path dir =
        fs::temp_directory_path() / ("trainrig-watch-alerts-" + std::to_string(::getpid()));
    fs::create_directories(dir / "root" / "dev");
    fs::copy_file(fixture("article-box") + "/dev/kmsg", dir / "root" / "dev" / "kmsg");
    const fs::path log = dir / "alerts.jsonl";
    const fs::path rules = dir / "rules.toml";
    std::ofstream(rules) << "[[action]]\nkind = \"log\"\npath = \"" << log.string() << "\"\n";
    BackgroundProcess daemon({TRAINRIG_BINARY, "watch", "--no-listen", "--interval", "0.1",
                              "--root", (dir / "root").string(), "--rules", rules.string()},
                             {"TRAINRIG_FAKE_NVML=" + nvml_fixture("article-box.json")},
                             (dir / "out").string(), (dir / "err").string());
    ASSERT_TRUE(daemon.started());
    // The lost GPU and the Xid 79 already in the log.
    std::string text = wait_for_text(log, "\"xid\":79", 10);
    EXPECT_NE(text.find("\"rule\":\"gpu-lost\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"rule\":\"xid-fatal\""), std::string::npos) << text;
    // A new Xid written to the log while watch runs.
    std::ofstream(dir / "root" / "dev" / "kmsg", std::ios::app)
        << "4,900,183600000000,-;NVRM: Xid (PCI:0000:41:00): 13, pid=77, Graphics Exception\n";
    text = wait_for_text(log, "\"xid\":13", 10);
    EXPECT_NE(text.find("\"xid\":13"), std::string::npos) << text;
    // A broken rules file on SIGHUP keeps the old rules; a sound one is taken.
    std::ofstream(rules) << "[[rule]]\nname = 1\n";
    ::kill(daemon.pid(), SIGHUP);
    EXPECT_NE(wait_for_text(dir / "err", "rules not reloaded", 10).find("rules not reloaded"),
              std::string::npos);
    std::ofstream(rules) << "[[rule]]\nname = \"gpu-lost\"\nenabled = false\n[[action]]\nkind = "
                            "\"log\"\npath = \""
                         << log.string() << "\"\n";
    ::kill(daemon.pid(), SIGHUP);
    text = wait_for_text(log, "resolved because its rule changed", 10);
    EXPECT_NE(text.find("\"state\":\"resolved\""), std::string::npos) << text;
    EXPECT_EQ(daemon.stop(SIGTERM, 10), 128 + SIGTERM) << slurp(dir / "err");
    fs::remove_all(dir);
}

TEST(WatchHistory, RestartResumesTheKernelLogAndReportSummarises) {
    const fs::path dir =
        fs::temp_directory_path() / ("trainrig-watch-history-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string db = (dir / "w.db").string();
    const std::string env = "TRAINRIG_FAKE_NVML=" + nvml_fixture("faults/thermal.json");
    const std::string args = "watch --no-listen --interval 0.1 --duration 1 --db " + db +
                             " --root " + fixture("article-box");
    auto first = run_trainrig(args, env);
    ASSERT_EQ(first.rc, 0) << first.err;
    EXPECT_NE(first.err.find("\"rule\":\"xid-fatal\""), std::string::npos) << first.err;
    // Restarted on the same boot: the Xid 79 already read is not reported again.
    auto second = run_trainrig(args, env);
    ASSERT_EQ(second.rc, 0) << second.err;
    EXPECT_EQ(second.err.find("xid-fatal"), std::string::npos) << second.err;
    auto report = run_trainrig("watch report --json --since 1h --db " + db);
    ASSERT_EQ(report.rc, 0) << report.err;
    const auto j = nlohmann::json::parse(report.out);
    EXPECT_EQ(j["schema"], "trainrig.watch.report");
    ASSERT_EQ(j["gpus"].size(), 2u);
    EXPECT_EQ(j["gpus"][0]["temperature_celsius"]["max"], 91);
    EXPECT_GT(j["gpus"][0]["thermal_slowdown_seconds"].get<double>(), 1.0);
    EXPECT_GT(j["gpus"][0]["samples"].get<int>(), 10);
    EXPECT_GE(j["alerts"].size(), 1u);
    auto text = run_trainrig("watch report --db " + db);
    EXPECT_EQ(text.rc, 0);
    EXPECT_NE(text.out.find("91/91/91 C"), std::string::npos) << text.out;
    auto missing = run_trainrig("watch report --db " + (dir / "absent.db").string());
    EXPECT_EQ(missing.rc, 2);
    EXPECT_NE(missing.err.find("--db: no such file or folder: " + (dir / "absent.db").string()),
              std::string::npos)
        << missing.err;
    EXPECT_FALSE(fs::exists(dir / "absent.db"));  // reading creates nothing
    fs::remove_all(dir);
}

// A temporary folder for one test, removed after it.
class WatchTempDir : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("trainrig-watch-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "textfile");
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string textfile() const { return slurp(dir_ / "textfile" / "trainrig.prom"); }
    fs::path dir_;
};

using WatchLostGpu = WatchTempDir;
using WatchReplay = WatchTempDir;

// What --once writes, appended, is a time line replay reads: the article box's lost GPU and its
// Xid fire at once (critical: exit 1), as the daemon would; a time line that goes back is refused
// in one sentence naming the document.
TEST_F(WatchReplay, TicksThatOnceWroteAreJudgedAgain) {
    const std::string ticks = (dir_ / "ticks.json").string();
    std::string text;
    for (int i = 0; i < 3; ++i) {
        auto r = run_trainrig("watch --once --json --root " + fixture("article-box"),
                              "TRAINRIG_FAKE_NVML=" + nvml_fixture("article-box.json"));
        ASSERT_EQ(r.rc, 1) << r.err;
        text += r.out;
    }
    std::ofstream(ticks) << text;
    auto r = run_trainrig("watch replay --json " + ticks);
    EXPECT_EQ(r.rc, 1) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["schema"], "trainrig.watch.replay");
    EXPECT_EQ(doc["ticks"], 3);
    std::set<std::string> fired;
    for (const auto& a : doc["alerts"]) fired.insert(a["rule"].get<std::string>());
    EXPECT_TRUE(fired.count("gpu-lost")) << r.out;
    EXPECT_TRUE(fired.count("xid-fatal")) << r.out;
    r = run_trainrig("watch replay " + ticks);
    EXPECT_NE(r.out.find("FIRING   gpu-lost [critical]"), std::string::npos) << r.out;
    const auto first = text.substr(0, text.find("}\n{") + 2);
    std::ofstream(ticks) << text.substr(first.size()) + first;  // the first tick last
    r = run_trainrig("watch replay " + ticks);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("document 3: time"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(WatchLostGpu, KeepsTheIdentityTheDriverStillListsAndItsXidNamesIt) {
    // article-box: GPU 1 (41:00.0) was lost before watch started; NVML answers GPU_IS_LOST for
    // its name, UUID and bus id, the driver's /proc files still describe it.
    auto r =
        run_trainrig("watch --no-listen --interval 0.1 --duration 0.5 --root " +
                         fixture("article-box") + " --textfile " + (dir_ / "textfile").string(),
                     "TRAINRIG_FAKE_NVML=" + nvml_fixture("article-box.json"));
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::string text = textfile();
    ASSERT_NE(text.find("trainrig_gpu_info"), std::string::npos) << text;
    EXPECT_EQ(text.find("uuid=\"\""), std::string::npos) << text;
    EXPECT_EQ(text.find("gpu=\"\""), std::string::npos) << text;
    EXPECT_EQ(text.find("name=\"\""), std::string::npos) << text;
    EXPECT_NE(text.find("uuid=\"GPU-6963a909-9dfc-ae7f-3f16-6860eed3f3c6\""), std::string::npos)
        << text;
    EXPECT_NE(text.find("trainrig_gpu_xid_events_total{gpu=\"1\""), std::string::npos) << text;
}

TEST_F(WatchLostGpu, KeepsTheIdentityTheHistoryStoredWhenTheDriverSaysNothing) {
    // The same two GPUs, first sound, then GPU 1 lost; no driver files (cpu-only), so only the
    // history remembers who GPU 1 was, and the lost start must not blank what it stored.
    auto fixture_json = nlohmann::json::parse(slurp(nvml_fixture("faults/lost-gpu.json")));
    nlohmann::json& lost = fixture_json["gpus"][1];
    nlohmann::json sound_gpu = fixture_json["gpus"][0];  // GPU 0's readings, GPU 1's identity
    for (const char* key : {"name", "uuid", "pci_bus_id"}) sound_gpu[key] = lost[key];
    lost = sound_gpu;
    const std::string sound = (dir_ / "sound.json").string();
    std::ofstream(sound) << fixture_json.dump();
    const std::string db = (dir_ / "w.db").string();
    const std::string args =
        "watch --no-listen --no-kernel-log --interval 0.1 --duration 0.3 "
        "--root " +
        fixture("cpu-only") + " --db " + db;
    ASSERT_EQ(run_trainrig(args, "TRAINRIG_FAKE_NVML=" + sound).rc, 0);
    for (int run = 0; run < 2; ++run) {  // the second start finds the blanks of the first
        auto r = run_trainrig(args + " --textfile " + (dir_ / "textfile").string(),
                              "TRAINRIG_FAKE_NVML=" + nvml_fixture("faults/lost-gpu.json"));
        ASSERT_EQ(r.rc, 0) << r.err;
        const std::string text = textfile();
        EXPECT_EQ(text.find("uuid=\"\""), std::string::npos) << text;
        EXPECT_NE(text.find("uuid=\"GPU-22e403b8-b573-74d9-c799-943fb919726e\""), std::string::npos)
            << text;
    }
}

using WatchHistoryFiles = WatchTempDir;

TEST_F(WatchHistoryFiles, NoWalOrShmIsLeftByWatchOrByTheReportAfterAKill) {
    const std::string db = (dir_ / "w.db").string();
    // The textfile is written after the tick's history row, inside the loop that listens for
    // SIGTERM: once it is there the signal is handled and the -wal holds a write. A fixed sleep
    // is not enough on a loaded machine or under a sanitizer's slower start.
    const auto first_tick_written = [&](BackgroundProcess& daemon) {
        const fs::path prom = dir_ / "textfile" / "trainrig.prom";
        fs::remove(prom);
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (std::chrono::steady_clock::now() < until && daemon.running()) {
            if (fs::exists(prom)) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    };
    const auto leftovers = [&] {
        return std::vector<bool>{fs::exists(db + "-wal"), fs::exists(db + "-shm")};
    };
    const std::vector<bool> none = {false, false};
    const std::string env = "TRAINRIG_FAKE_NVML=" + nvml_fixture("hgx-8xh100.json");
    auto clean = run_trainrig("watch --no-listen --interval 0.1 --duration 0.5 --root " +
                                  fixture("hgx-8xh100") + " --db " + db,
                              env);
    ASSERT_EQ(clean.rc, 0) << clean.err;
    EXPECT_EQ(leftovers(), none);
    {
        BackgroundProcess daemon(
            {TRAINRIG_BINARY, "watch", "--no-listen", "--interval", "0.1", "--root",
             fixture("hgx-8xh100"), "--db", db, "--textfile", (dir_ / "textfile").string()},
            {env}, (dir_ / "out").string(), (dir_ / "err").string());
        ASSERT_TRUE(daemon.started());
        ASSERT_TRUE(first_tick_written(daemon)) << slurp(dir_ / "err");
        EXPECT_EQ(daemon.stop(SIGTERM, 10), 128 + SIGTERM) << slurp(dir_ / "err");
    }
    EXPECT_EQ(leftovers(), none);
    {
        BackgroundProcess daemon(
            {TRAINRIG_BINARY, "watch", "--no-listen", "--interval", "0.1", "--root",
             fixture("hgx-8xh100"), "--db", db, "--textfile", (dir_ / "textfile").string()},
            {env}, (dir_ / "out").string(), (dir_ / "err").string());
        ASSERT_TRUE(daemon.started());
        ASSERT_TRUE(first_tick_written(daemon)) << slurp(dir_ / "err");
        daemon.stop(SIGKILL, 10);  // no chance to close: the -wal and -shm stay
    }
    EXPECT_TRUE(fs::exists(db + "-wal"));
    auto report = run_trainrig("watch report --db " + db);
    ASSERT_EQ(report.rc, 0) << report.err;
    EXPECT_EQ(leftovers(), none);  // the report, the last to close, folded them in
}

class WatchDaemon : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("trainrig-watch-it-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_ / "textfile");
        port_ = free_loopback_port();
        ASSERT_GT(port_, 0);
        daemon_ = std::make_unique<BackgroundProcess>(
            std::vector<std::string>{TRAINRIG_BINARY, "watch", "--listen",
                                     "127.0.0.1:" + std::to_string(port_), "--interval", "0.2",
                                     "--root", fixture("hgx-8xh100"), "--textfile",
                                     (dir_ / "textfile").string()},
            std::vector<std::string>{"TRAINRIG_FAKE_NVML=" + nvml_fixture("hgx-8xh100.json")},
            (dir_ / "out").string(), (dir_ / "err").string());
        ASSERT_TRUE(daemon_->started());
        client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
        client_->set_connection_timeout(2);
        client_->set_read_timeout(5);
        ASSERT_TRUE(wait_healthy()) << slurp(dir_ / "err");
    }
    void TearDown() override {
        daemon_.reset();
        fs::remove_all(dir_);
    }
    bool wait_healthy() {
        for (int i = 0; i < 200; ++i) {
            if (auto res = client_->Get("/healthz"); res && res->status == 200) return true;
            if (!daemon_->running()) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return false;
    }
    std::string metrics() {
        auto res = client_->Get("/metrics");
        return res && res->status == 200 ? res->body : "";
    }

    fs::path dir_;
    int port_ = 0;
    std::unique_ptr<BackgroundProcess> daemon_;
    std::unique_ptr<httplib::Client> client_;
};

TEST_F(WatchDaemon, ASecondWatchOnTheSamePortIsRefused) {
    auto second = run_trainrig(
        "watch --listen 127.0.0.1:" + std::to_string(port_) + " --duration 2 --no-kernel-log",
        "TRAINRIG_FAKE_NVML=" + nvml_fixture("hgx-8xh100.json"));
    EXPECT_EQ(second.rc, 2) << second.err;
    EXPECT_NE(second.err.find("the address is taken"), std::string::npos) << second.err;
    EXPECT_TRUE(daemon_->running());
}

TEST_F(WatchDaemon, ServesMetricsAndTheTextfileAndStopsCleanly) {
    auto res = client_->Get("/metrics");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    for (int gpu = 0; gpu < 8; ++gpu)
        EXPECT_NE(
            res->body.find("trainrig_gpu_temperature_celsius{gpu=\"" + std::to_string(gpu) + "\""),
            std::string::npos);
    EXPECT_NE(res->body.find("trainrig_watch_up 1\n"), std::string::npos);
    EXPECT_NE(res->body.find("trainrig_scrape_duration_seconds "), std::string::npos);
    EXPECT_NE(res->body.find("trainrig_alert_notifications_total{result=\"delivered\"}"),
              std::string::npos);
    EXPECT_EQ(daemon_->stop(SIGTERM, 10), 128 + SIGTERM) << slurp(dir_ / "err");
    // The textfile is whole, and no temporary file is left beside it.
    const std::string text = slurp(dir_ / "textfile" / "trainrig.prom");
    EXPECT_NE(text.find("trainrig_gpu_info{"), std::string::npos);
    EXPECT_TRUE(text.ends_with("\n"));
    int files = 0;
    for (const auto& e : fs::directory_iterator(dir_ / "textfile")) {
        ++files;
        EXPECT_EQ(e.path().filename(), "trainrig.prom");
    }
    EXPECT_EQ(files, 1);
}

TEST_F(WatchDaemon, ThousandBadRequestsLeaveItServing) {
    httplib::Headers huge = {{"X-Filler", std::string(64 * 1024, 'a')}};
    int answered = 0;
    for (int i = 0; i < 1000; ++i) {
        httplib::Result res =
            i % 4 == 0   ? client_->Get("/metrics", huge)
            : i % 4 == 1 ? client_->Post("/metrics", std::string(100000, 'x'), "text/plain")
            : i % 4 == 2 ? client_->Get("/no/such/path?" + std::to_string(i))
                         : client_->Delete("/healthz");
        if (res) {
            ++answered;
            EXPECT_GE(res->status, 400) << i;
        }
    }
    EXPECT_GT(answered, 0);
    ASSERT_TRUE(daemon_->running());
    const std::string m = metrics();
    EXPECT_NE(m.find("trainrig_watch_up 1\n"), std::string::npos) << m.substr(0, 200);
    EXPECT_NE(m.find("trainrig_watch_http_requests_total{status=\"error\"}"), std::string::npos);
}

TEST_F(WatchDaemon, RealPrometheusScrapesIt) {
    const char* prometheus = "/usr/bin/prometheus";
    if (!fs::exists(prometheus))
        GTEST_SKIP() << "prometheus is not installed (scripts/install-deps.sh installs it)";
    const int web = free_loopback_port();
    {
        std::ofstream cfg(dir_ / "prometheus.yml");
        cfg << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
            << "scrape_configs:\n  - job_name: trainrig\n    static_configs:\n"
            << "      - targets: ['127.0.0.1:" << port_ << "']\n";
    }
    BackgroundProcess prom({prometheus, "--config.file=" + (dir_ / "prometheus.yml").string(),
                            "--storage.tsdb.path=" + (dir_ / "tsdb").string(),
                            "--web.listen-address=127.0.0.1:" + std::to_string(web)},
                           {}, (dir_ / "prom.out").string(), (dir_ / "prom.err").string());
    ASSERT_TRUE(prom.started());
    httplib::Client api("127.0.0.1", web);
    api.set_connection_timeout(2);
    auto query = [&](const std::string& q) -> std::string {
        auto res = api.Get("/api/v1/query", httplib::Params{{"query", q}}, httplib::Headers{});
        if (!res || res->status != 200) return "";
        const auto j = nlohmann::json::parse(res->body, nullptr, false);
        if (j.is_discarded() || j["data"]["result"].empty()) return "";
        return j["data"]["result"][0]["value"][1].get<std::string>();
    };
    std::string gpus, up;
    for (int i = 0; i < 300 && (gpus != "8" || up != "1"); ++i) {  // up to 30 s
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        gpus = query("count(trainrig_gpu_temperature_celsius)");
        up = query("up{job=\"trainrig\"}");
        ASSERT_TRUE(prom.running()) << slurp(dir_ / "prom.err");
    }
    EXPECT_EQ(gpus, "8") << slurp(dir_ / "prom.err");
    EXPECT_EQ(up, "1");
    EXPECT_EQ(query("trainrig_gpu_nvlinks{gpu=\"3\",state=\"up\"}"), "18");
    // And promtool's linter accepts what it scraped.
    std::ofstream(dir_ / "scrape.prom") << metrics();
    const int rc = std::system(("promtool check metrics < " + (dir_ / "scrape.prom").string() +
                                " > " + (dir_ / "promtool.out").string() + " 2>&1")
                                   .c_str());
    EXPECT_EQ(rc, 0) << slurp(dir_ / "promtool.out");
}

}  // namespace
}  // namespace trainrig::test
