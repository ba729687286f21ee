// The binary's contract for bad usage and bad input: exit 2, one sentence on stderr naming what
// and where, and no output file left behind.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_binary.h"

namespace trainrig::test {
namespace {

namespace fs = std::filesystem;

void expect_one_sentence(const RunResult& r) {
    EXPECT_EQ(r.rc, 2) << r.out << r.err;
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
    EXPECT_EQ(r.err.rfind("trainrig", 0), 0u) << r.err;
}

TEST(Cli, AnOptionACommandWouldIgnoreIsRefused) {
    // topo reads no data folder and no environment file: it must not accept them silently.
    for (const char* args : {"topo --data-dir /tmp", "topo --env-file /etc/environment"}) {
        auto r = run_trainrig(args);
        expect_one_sentence(r);
    }
}

TEST(Cli, HelpVersionAndHelpCommand) {
    auto h = run_trainrig("--help");
    EXPECT_EQ(h.rc, 0);
    EXPECT_NE(h.out.find("doctor"), std::string::npos);
    EXPECT_NE(h.out.find("collect"), std::string::npos);
    auto v = run_trainrig("--version");
    EXPECT_EQ(v.rc, 0);
    EXPECT_EQ(v.out.rfind("trainrig 0.", 0), 0u);
    auto hd = run_trainrig("help doctor");
    EXPECT_EQ(hd.rc, 0);
    EXPECT_NE(hd.out.find("--expect-gpus"), std::string::npos);
    EXPECT_NE(hd.out.find("TRAINRIG_EXPECT_GPUS"), std::string::npos);
    EXPECT_NE(hd.out.find("kernel.sysctl-obsolete"), std::string::npos);
    EXPECT_EQ(run_trainrig("doctor --help").out, hd.out);
    expect_one_sentence(run_trainrig("help nosuchcommand"));
}

TEST(Cli, UsageErrors) {
    expect_one_sentence(run_trainrig("nosuchcommand"));
    expect_one_sentence(run_trainrig("doctor --bogus"));
    expect_one_sentence(run_trainrig("doctor --format xml"));
    expect_one_sentence(run_trainrig("doctor --only pci.nothing"));
    expect_one_sentence(run_trainrig("doctor --root /x --snapshot /y"));
    auto none = run_trainrig("");
    EXPECT_EQ(none.rc, 2);
}

TEST(Cli, BadInputFilesNameThemselves) {
    auto missing = run_trainrig("doctor --snapshot /no/such/snapshot.json");
    expect_one_sentence(missing);
    EXPECT_NE(missing.err.find("/no/such/snapshot.json"), std::string::npos);
    auto not_json = fs::temp_directory_path() / "trainrig-it-bad.json";
    std::ofstream(not_json) << "{\"schema\": \"trainrig.snapshot\", ";
    auto bad = run_trainrig("doctor --snapshot " + not_json.string());
    expect_one_sentence(bad);
    EXPECT_NE(bad.err.find("not valid JSON"), std::string::npos);
    fs::remove(not_json);
    auto root = run_trainrig("doctor --root /no/such/root");
    expect_one_sentence(root);
    EXPECT_NE(root.err.find("/no/such/root"), std::string::npos);
}

// A GPU selection names GPUs this machine has; no GPU at all is no exception (bench run, validate
// and launch say it in the same words).
TEST(Cli, AGpuSelectionNamingNoGpuIsRefused) {
    for (const std::string& line :
         {std::string("bench run cpu-mem --quick --gpus 4095"),
          std::string("validate --no-report --gpus 4095 --skip training")}) {
        auto r = run_trainrig(line);
        EXPECT_EQ(r.rc, 2) << line << ": " << r.out.substr(0, 300);
        EXPECT_NE(r.err.find("--gpus names GPU 4095, but this machine"), std::string::npos)
            << line << ": " << r.err;
        expect_one_sentence(r);
    }
}

// The NVML a run would load: a path named must exist, and the fake library answers only with
// its fixture; a bare library name the loader cannot find is no driver, as before.
TEST(Cli, TheNvmlTheEnvironmentNamesMustBeThere) {
    auto r = run_trainrig("doctor", "TRAINRIG_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1");
    EXPECT_NE(r.err.find("TRAINRIG_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1: no such file"),
              std::string::npos)
        << r.err;
    expect_one_sentence(r);
    const std::string fake =
        std::filesystem::path(TRAINRIG_BINARY).parent_path() / "libtrainrig_fake_nvml.so";
    r = run_trainrig("doctor", "TRAINRIG_NVML_LIBRARY=" + fake);
    EXPECT_NE(r.err.find("TRAINRIG_FAKE_NVML is not set"), std::string::npos) << r.err;
    expect_one_sentence(r);
    r = run_trainrig("doctor", "TRAINRIG_FAKE_NVML=/nonexistent/fixture.json");
    EXPECT_NE(r.err.find("no such fixture file"), std::string::npos) << r.err;
    expect_one_sentence(r);
    r = run_trainrig("doctor --only gpu.count", "TRAINRIG_NVML_LIBRARY=libnvidia-ml-absent.so.1");
    EXPECT_NE(r.rc, 2) << r.err;
}

TEST(Cli, GlobalFlagsAfterTheCommandAndEmptySelections) {
    EXPECT_EQ(run_trainrig("doctor --no-color --root " + fixture("cpu-only")).rc, 0);
    expect_one_sentence(
        run_trainrig("doctor --only mem.shm --skip mem.shm --root " + fixture("cpu-only")));
}

TEST(Cli, SnapshotIgnoresMachineOptionsFromTheEnvironment) {
    auto snap = fs::temp_directory_path() / "trainrig-it-env-snap.json";
    ASSERT_EQ(run_trainrig("collect --root " + fixture("cpu-only") + " -o " + snap.string()).rc, 0);
    auto r = run_trainrig("doctor --snapshot " + snap.string(),
                          "TRAINRIG_ROOT=" + fixture("article-box") + " TRAINRIG_DATA_DIR=/data");
    EXPECT_EQ(r.rc, 0) << r.err;
    expect_one_sentence(run_trainrig("doctor --snapshot " + snap.string() + " --data-dir /data"));
    // Typed on the command line, --root conflicts even when its twin is set too.
    expect_one_sentence(
        run_trainrig("doctor --snapshot " + snap.string() + " --root=/tmp", "TRAINRIG_ROOT=/"));
    fs::remove(snap);
}

TEST(Cli, OutputIntoMissingFolderLeavesNothing) {
    auto dir = fs::temp_directory_path() / "trainrig-it-out";
    fs::remove_all(dir);
    fs::create_directories(dir);
    auto r = run_trainrig("collect --root " + fixture("cpu-only") + " -o " +
                          (dir / "no/such/snap.json").string());
    expect_one_sentence(r);
    EXPECT_TRUE(fs::is_empty(dir));
    auto ok = run_trainrig("doctor --json --root " + fixture("cpu-only") + " -o " +
                           (dir / "report.json").string());
    EXPECT_EQ(ok.rc, 0);
    EXPECT_TRUE(ok.out.empty());
    EXPECT_NE(slurp(dir / "report.json").find("\"trainrig.doctor\""), std::string::npos);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
    fs::remove_all(dir);
}

TEST(Cli, InputFilesMustBeRegularFiles) {
    auto dir = fs::temp_directory_path().string();
    auto env = run_trainrig("doctor --only nccl.env --env-file " + dir);
    expect_one_sentence(env);
    EXPECT_NE(env.err.find("not a regular file"), std::string::npos) << env.err;
    auto snap = run_trainrig("doctor --snapshot " + dir);
    expect_one_sentence(snap);
    EXPECT_NE(snap.err.find("not a regular file"), std::string::npos) << snap.err;
    expect_one_sentence(run_trainrig("collect --root " + fixture("cpu-only") + " -o ''"));
}

TEST(Cli, OutputThroughLinksDevicesAndUmask) {
    auto dir = fs::temp_directory_path() / "trainrig-it-out2";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string root = " --root " + fixture("cpu-only");
    // A symlink: the file it names is replaced, the link stays a link.
    std::ofstream(dir / "real.json") << "old";
    fs::create_symlink("real.json", dir / "link.json");
    ASSERT_EQ(run_trainrig("collect" + root + " -o " + (dir / "link.json").string()).rc, 0);
    EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
    EXPECT_NE(slurp(dir / "real.json").find("trainrig.snapshot"), std::string::npos);
    // A character device is written into, never replaced.
    ASSERT_EQ(run_trainrig("collect" + root + " -o /dev/null").rc, 0);
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
    // New files honour the umask.
    ASSERT_EQ(
        run_trainrig("collect" + root + " -o " + (dir / "private.json").string(), "umask 077;").rc,
        0);
    EXPECT_EQ(fs::status(dir / "private.json").permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    fs::remove_all(dir);
}

TEST(Cli, EnvironmentTwinsWork) {
    auto r =
        run_trainrig("doctor --json --only pci.gpu-visible",
                     "TRAINRIG_ROOT=" + fixture("epyc-4xa100-healthy") + " TRAINRIG_EXPECT_GPUS=8");
    EXPECT_EQ(r.rc, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("4 of 8 expected GPUs"), std::string::npos);
}

TEST(Cli, LiveMachineRunsWithoutRoot) {
    // The verdict depends on the machine running the tests; the contract does not.
    auto r = run_trainrig("doctor --json");
    EXPECT_TRUE(r.rc >= 0 && r.rc <= 2) << r.err << r.out;
    EXPECT_TRUE(r.err.empty()) << r.err;
    auto doc = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << r.out.substr(0, 500);
    EXPECT_EQ(doc["schema"], "trainrig.doctor");
    EXPECT_EQ(doc["exit_code"], r.rc);
    EXPECT_EQ(doc["findings"].size(), 38u);
    for (const auto& f : doc["findings"])
        EXPECT_EQ(f["summary"].get<std::string>().find("internal error"), std::string::npos)
            << f["id"];
    auto c = run_trainrig("collect");
    EXPECT_EQ(c.rc, 0) << c.err;
}

}  // namespace
}  // namespace trainrig::test
