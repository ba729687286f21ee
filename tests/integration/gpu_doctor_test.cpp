// The GPU layer end to end: the trainrig binary loads the fake NVML through the real dlopen
// path, and doctor/topo judge what it answers, including a hung driver, a missing library and an
// old library without the newer entry points.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>

#include "doctor_json.h"

namespace trainrig::test {
namespace {

// The bar is for a release build; AddressSanitizer makes every probe several times slower.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

std::string fault(const std::string& name) { return fake_nvml("faults/" + name); }

std::string status(const json& doc, const std::string& id) { return finding(doc, id)["status"]; }

TEST(GpuDoctor, ArticleBoxGpuProblems) {
    auto doc = doctor_json("article-box", "", 1, fake_nvml("article-box"));
    auto count = finding(doc, "gpu.count");
    EXPECT_EQ(count["status"], "fail");
    EXPECT_NE(count["summary"].get<std::string>().find("lost"), std::string::npos);
    // c1 and e1 never came up (BAR1 unassigned): on the bus, not in NVML.
    EXPECT_TRUE(evidence_has(count, "PCI bus: 4 NVIDIA GPU(s)"));
    EXPECT_EQ(status(doc, "gpu.ecc"), "fail");
    EXPECT_EQ(status(doc, "gpu.clock-events"), "fail");  // software thermal slowdown
    EXPECT_EQ(status(doc, "gpu.temperature"), "warn");
    EXPECT_EQ(status(doc, "gpu.persistence"), "warn");
    auto link = finding(doc, "gpu.pcie-link");
    EXPECT_EQ(link["status"], "fail");  // as pci.gpu-link says from sysfs
    EXPECT_NE(link["summary"].get<std::string>().find("x8 of x16"), std::string::npos);
    // A PCIe A100 without a bridge has no active NVLink, and that is not a fault.
    EXPECT_NE(status(doc, "gpu.nvlink"), "fail");
}

TEST(GpuDoctor, ArticleBoxFakeWithoutATreeStillReportsTheGpuProblems) {
    // The documented demo: the fake alone, on whatever machine runs the tests.
    auto r = run_trainrig("doctor --json --only gpu.count,gpu.ecc,gpu.clock-events",
                          fake_nvml("article-box"));
    EXPECT_EQ(r.rc, 1) << r.err;
    auto doc = json::parse(r.out);
    for (const char* id : {"gpu.count", "gpu.ecc", "gpu.clock-events"})
        EXPECT_EQ(status(doc, id), "fail") << id;
}

TEST(GpuDoctor, HgxH100IsHealthyAndRegisteredInTheFabric) {
    auto doc = doctor_json("hgx-8xh100", "", 0, fake_nvml("hgx-8xh100"));
    for (const auto& f : doc["findings"]) {
        const std::string id = f["id"];
        if (!id.starts_with("gpu.")) continue;
        EXPECT_TRUE(f["status"] == "pass" || id == "gpu.retired-pages") << id << f["summary"];
    }
    EXPECT_EQ(status(doc, "stack.fabric-manager"), "pass");
    EXPECT_NE(finding(doc, "gpu.p2p-topology")["summary"].get<std::string>().find("NV18"),
              std::string::npos);
}

TEST(GpuDoctor, WithoutADriverEveryGpuRuleSkipsWithTheReason) {
    auto r = run_trainrig("doctor --json", "TRAINRIG_NVML_LIBRARY=libnvidia-ml-absent.so.1");
    auto doc = json::parse(r.out);
    int gpu_rules = 0;
    for (const auto& f : doc["findings"]) {
        const std::string id = f["id"];
        if (!id.starts_with("gpu.")) continue;
        ++gpu_rules;
        EXPECT_EQ(f["status"], "skip") << id;
        EXPECT_NE(f["summary"].get<std::string>().find("no NVIDIA driver"), std::string::npos)
            << id << f["summary"];
    }
    EXPECT_EQ(gpu_rules, 15);
}

TEST(GpuDoctor, DriverNotLoadedSkips) {
    auto doc = doctor_json("cpu-only", "", 0, fault("init-fails"));
    EXPECT_EQ(status(doc, "gpu.count"), "skip");
    EXPECT_NE(finding(doc, "gpu.count")["summary"].get<std::string>().find("DRIVER_NOT_LOADED"),
              std::string::npos);
}

TEST(GpuDoctor, GpusOnTheBusThatNoDriverAnswersFailTheDriverAndTheCount) {
    // The tree says eight H100s are bound to the nvidia module; NVML says the driver is not
    // loaded. The machine cannot run a job: that fails, under --expect-gpus or not.
    for (const std::string extra : {"", "--expect-gpus 8 --strict"}) {
        auto doc = doctor_json("hgx-8xh100", extra + " --only driver.nvidia,gpu.count", 1,
                               fault("init-fails"));
        EXPECT_EQ(status(doc, "driver.nvidia"), "fail") << extra;
        auto count = finding(doc, "gpu.count");
        EXPECT_EQ(count["status"], "fail") << extra;
        EXPECT_NE(count["summary"].get<std::string>().find(
                      "8 NVIDIA GPU(s) on the PCI bus, but no driver answers for them"),
                  std::string::npos)
            << count["summary"];
    }
}

TEST(GpuDoctor, ALibraryThatIsNotNvmlIsAnError) {
    auto r = run_trainrig("doctor --json --only gpu.count", "TRAINRIG_NVML_LIBRARY=libc.so.6");
    EXPECT_EQ(r.rc, 2) << r.err;
    auto f = finding(json::parse(r.out), "gpu.count");
    EXPECT_EQ(f["status"], "error");
    EXPECT_NE(f["summary"].get<std::string>().find("is not an NVML library"), std::string::npos);
}

TEST(GpuDoctor, AHungDriverCallCostsOnlyTheDeadline) {
    const auto start = std::chrono::steady_clock::now();
    auto r = run_trainrig("doctor --json --timeout 1 --root " + fixture("cpu-only"), fault("hang"));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_LT(seconds, 4.0);  // 1 s deadline plus start-up, on a slow sanitizer build
    RecordProperty("seconds", std::to_string(seconds));
    auto f = finding(json::parse(r.out), "gpu.temperature");
    EXPECT_EQ(f["status"], "error");
    EXPECT_NE(f["summary"].get<std::string>().find(
                  "did not answer within 1 s (no return from nvmlDeviceGetTemperature on GPU 1)"),
              std::string::npos)
        << f["summary"];
}

TEST(GpuDoctor, OldLibraryFallsBackToOlderEntryPoints) {
    const std::string env =
        "TRAINRIG_NVML_LIBRARY=" + std::filesystem::path(TRAINRIG_BINARY).parent_path().string() +
        "/libtrainrig_fake_nvml_old.so " + fake_nvml("epyc-4xa100-healthy");
    auto doc = doctor_json("epyc-4xa100-healthy", "", 0, env);
    EXPECT_EQ(status(doc, "gpu.count"), "pass");         // nvmlInit, nvmlDeviceGetCount
    EXPECT_EQ(status(doc, "gpu.clock-events"), "pass");  // ...ClocksThrottleReasons
    EXPECT_EQ(status(doc, "gpu.nvlink"), "pass");        // ...NvLinkRemotePciInfo
    // The old remote-PCI call fills the short struct; the peers must still be known.
    EXPECT_NE(finding(doc, "gpu.p2p-topology")["summary"].get<std::string>().find("NV4"),
              std::string::npos);
    auto rows = finding(doc, "gpu.remapped-rows");  // not exported by the old library
    EXPECT_EQ(rows["status"], "skip");
    EXPECT_TRUE(evidence_has(rows, "not in this driver's NVML"));
}

TEST(GpuDoctor, FaultFixtures) {
    auto lost = doctor_json("cpu-only", "", 1, fault("lost-gpu"));
    EXPECT_EQ(status(lost, "gpu.count"), "fail");
    auto thermal = doctor_json("cpu-only", "", 1, fault("thermal"));
    EXPECT_EQ(status(thermal, "gpu.temperature"), "fail");
    EXPECT_EQ(status(thermal, "gpu.clock-events"), "fail");
    auto memory = doctor_json("cpu-only", "", 1, fault("memory-errors"));
    EXPECT_EQ(status(memory, "gpu.ecc"), "fail");
    EXPECT_EQ(status(memory, "gpu.remapped-rows"), "fail");
    EXPECT_EQ(status(memory, "gpu.retired-pages"), "fail");
    auto perm = doctor_json("cpu-only", "", 2, fault("no-permission"));
    EXPECT_EQ(status(perm, "gpu.ecc"), "error");
    EXPECT_EQ(status(perm, "gpu.remapped-rows"), "error");
    auto replay = doctor_json("cpu-only", "", 0, fault("pcie-replay"));
    EXPECT_EQ(status(replay, "gpu.pcie-replay"), "warn");
    auto mixed = doctor_json("cpu-only", "", 0, fault("mixed-gpus"));
    EXPECT_EQ(status(mixed, "gpu.uniform"), "warn");
}

TEST(GpuDoctor, PcieH100sAreNotJudgedAsSxm) {
    auto pair = doctor_json("cpu-only", "", 0, fake_nvml("h100-pcie-pair"));
    EXPECT_EQ(status(pair, "gpu.nvlink"), "pass");
    auto alone = doctor_json("cpu-only", "", 0, fake_nvml("h100-pcie-no-bridge"));
    EXPECT_NE(status(alone, "gpu.nvlink"), "fail");
}

// CPU seconds of the run, not wall time: a budget that a busy machine cannot break by itself.
TEST(GpuDoctor, EightGpusJudgedWellUnderASecond) {
    const auto cpu_seconds = [] {
        rusage u{};
        ::getrusage(RUSAGE_CHILDREN, &u);
        return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
               static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
    };
    const double start = cpu_seconds();
    auto r = run_trainrig("doctor --json --root " + fixture("hgx-8xh100"), fake_nvml("hgx-8xh100"));
    const double seconds = cpu_seconds() - start;
    EXPECT_EQ(r.rc, 0) << r.err;
    RecordProperty("seconds", std::to_string(seconds));
    EXPECT_LT(seconds, kSanitized ? 10.0 : 1.0);
}

TEST(GpuDoctor, SnapshotCarriesTheGpuFacts) {
    auto snap = std::filesystem::temp_directory_path() / "trainrig-gpu-snap.json";
    const std::string env = fake_nvml("article-box");
    auto c = run_trainrig("collect --root " + fixture("article-box") + " -o " + snap.string(), env);
    ASSERT_EQ(c.rc, 0) << c.err;
    auto live = run_trainrig("doctor --json --root " + fixture("article-box"), env);
    auto off = run_trainrig("doctor --json --snapshot " + snap.string());
    EXPECT_EQ(json::parse(live.out)["findings"], json::parse(off.out)["findings"]);
    auto s = json::parse(slurp(snap));
    EXPECT_EQ(s["schema_version"], 2);
    EXPECT_EQ(s["nvml"]["fake"], true);
    EXPECT_EQ(s["nvml"]["gpus"].size(), 2u);
    std::filesystem::remove(snap);
}

TEST(Topo, HgxMatrixWithNvlinkAndNics) {
    auto r = run_trainrig("topo --root " + fixture("hgx-8xh100"), fake_nvml("hgx-8xh100"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("GPU0    X     NV18  NV18  NV18  NV18  NV18  NV18  NV18  PIX   PIX   "
                         "NODE  NODE  SYS"),
              std::string::npos)
        << r.out;
    auto j = run_trainrig("topo --json --root " + fixture("hgx-8xh100"), fake_nvml("hgx-8xh100"));
    auto doc = json::parse(j.out);
    EXPECT_EQ(doc["schema"], "trainrig.topo");
    EXPECT_EQ(doc["source"], "NVML");
    ASSERT_EQ(doc["gpus"].size(), 8u);
    EXPECT_EQ(doc["gpu_gpu"][0][7]["nvlinks"], 18);
    EXPECT_EQ(doc["gpu_gpu"][0][7]["via_switch"], true);
    EXPECT_EQ(doc["gpu_gpu"][0][7]["pcie"], "SYS");
    EXPECT_EQ(doc["gpus"][4]["numa"], "1");
    EXPECT_EQ(doc["gpu_nic"][0][0]["label"], "PIX");
}

TEST(Topo, WithoutTheDriverTheMatrixComesFromThePciBus) {
    auto r = run_trainrig("topo --json --root " + fixture("epyc-4xa100-healthy"));
    ASSERT_EQ(r.rc, 0) << r.err;
    auto doc = json::parse(r.out);
    EXPECT_EQ(doc["source"], "sysfs");
    ASSERT_EQ(doc["gpus"].size(), 4u);
    EXPECT_EQ(doc["gpu_gpu"][0][3]["label"], "SYS");
}

}  // namespace
}  // namespace trainrig::test
