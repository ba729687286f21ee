// `trainrig tune show|diff` on the machine trees: the article's box gets its corrected
// settings, a machine that has the profile shows no differences, bad input is one sentence.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_binary.h"

namespace trainrig::test {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

TEST(TuneCli, ArticleBoxDiffShowsTheCorrectedSettings) {
    auto r = run_trainrig("tune diff --root " + fixture("article-box"));
    ASSERT_EQ(r.rc, 0) << r.err;
    for (const char* line :
         {"--- /dev/null\n+++ /etc/sysctl.d/99-trainrig.conf\n@@ -0,0 +1,7 @@",
          "+vm.swappiness = 10", "+kernel.numa_balancing = 0", "+* soft nofile 1048576",
          "+unset NCCL_P2P_DISABLE", "+unset NCCL_SHM_DISABLE", "+unset NCCL_SOCKET_TIMEOUT",
          "+TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "  sysctl vm.swappiness: 60 -> 10",
          "  cpu scaling_governor: schedutil -> performance"})
        EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
    // The article's sched_* keys do not exist on this kernel: tune never writes them.
    EXPECT_EQ(r.out.find("sched_"), std::string::npos);
}

TEST(TuneCli, ShowJsonForAnHgxNode) {
    auto r = run_trainrig("tune show --json --root " + fixture("hgx-8xh100"));
    ASSERT_EQ(r.rc, 0) << r.err;
    auto doc = json::parse(r.out);
    EXPECT_EQ(doc["schema"], "trainrig.tune");
    int numa = 0;
    for (const auto& s : doc["settings"]) {
        numa += s["profile"] == "numa";
        EXPECT_FALSE(s["source"].get<std::string>().empty());
    }
    EXPECT_EQ(numa, 8);
    EXPECT_EQ(doc["files"].size(), 3u);
}

TEST(TuneCli, MachineWithTheProfileHasNoFileDifferences) {
    const fs::path root = fs::temp_directory_path() / ("tune-root-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::copy(fixture("article-box"), root,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    auto r = run_trainrig("tune show --json --only sysctl,limits,nccl --root " + root.string());
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto doc = json::parse(r.out);
    ASSERT_EQ(doc["files"].size(), 3u);
    for (const auto& f : doc["files"]) {
        const fs::path p = root / f["path"].get<std::string>().substr(1);
        fs::create_directories(p.parent_path());
        std::ofstream(p) << f["proposed"].get<std::string>();
    }
    r = run_trainrig("tune diff --only sysctl,limits,nccl --root " + root.string());
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out.find("+++"), std::string::npos) << r.out;  // files match
    EXPECT_NE(r.out.find("Live values:"), std::string::npos);  // the kernel still has 60
    fs::remove_all(root);
}

// A profile with nothing to set still answers, in the words its file's comment uses.
TEST(TuneCli, AnNcclProfileWithNothingToSetSaysSo) {
    auto show = run_trainrig("tune show --only nccl --root " + fixture("cpu-only"));
    ASSERT_EQ(show.rc, 0) << show.err;
    EXPECT_NE(show.out.find("[nccl] /etc/trainrig/nccl.env\n"), std::string::npos) << show.out;
    EXPECT_NE(show.out.find("nothing to set: NCCL's own choices suit this machine"),
              std::string::npos)
        << show.out;
    auto diff = run_trainrig("tune diff --only nccl --root " + fixture("cpu-only"));
    ASSERT_EQ(diff.rc, 0) << diff.err;
    EXPECT_NE(diff.out.find("Nothing to set: NCCL's own choices suit this machine."),
              std::string::npos)
        << diff.out;
}

TEST(TuneCli, EnvFileAndOverrides) {
    const fs::path dir = fs::temp_directory_path() / ("tune-ov-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "launch.env") << "NCCL_P2P_LEVEL=LOC\nNCCL_DEBUG=WARN\n";
    std::ofstream(dir / "site.toml") << "[sysctl]\n\"vm.swappiness\" = 1\n";
    auto r = run_trainrig("tune diff --only sysctl,nccl --root " + fixture("hgx-8xh100") +
                          " --env-file " + (dir / "launch.env").string() + " --overrides " +
                          (dir / "site.toml").string());
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("+unset NCCL_P2P_LEVEL"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("+vm.swappiness = 1"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("NCCL_DEBUG"), std::string::npos);
    fs::remove_all(dir);
}

TEST(TuneCli, BadInputIsOneSentenceAndExitTwo) {
    const std::string root = " --root " + fixture("article-box");
    for (const auto& [args, needle] : std::vector<std::pair<std::string, std::string>>{
             {"tune diff --only kernel" + root, "--only: \"kernel\" is not a profile"},
             {"tune show --overrides /nonexistent/site.toml" + root, "/nonexistent/site.toml"},
             {"tune" + root, "subcommand"},
         }) {
        auto r = run_trainrig(args);
        EXPECT_EQ(r.rc, 2) << args << "\n" << r.out;
        EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\n" << r.err;
    }
}

}  // namespace
}  // namespace trainrig::test
