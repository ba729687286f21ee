// -o as users pass it: a regular file is replaced atomically, but /dev/stdout under a shell's
// `>> log` appends to the log (it is not renamed over), `-` is stdout, /dev/null stays a device.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "run_binary.h"

namespace trainrig::test {
namespace {

namespace fs = std::filesystem;

class OutputOption : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("trainrig-out-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    int shell(const std::string& command) {
        const int status = std::system(("cd " + dir_.string() + " && " + command).c_str());
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    const std::string topo_ =
        std::string(TRAINRIG_BINARY) + " topo --root " + fixture("hgx-8xh100");
    fs::path dir_;
};

TEST_F(OutputOption, DevStdoutAppendsToTheShellsLog) {
    std::ofstream(dir_ / "log") << "first line\n";
    struct stat before {};
    ASSERT_EQ(::stat((dir_ / "log").c_str(), &before), 0);
    ASSERT_EQ(shell(topo_ + " -o /dev/stdout >> log"), 0);
    const auto log = slurp(dir_ / "log");
    EXPECT_TRUE(log.starts_with("first line\n")) << log.substr(0, 200);
    EXPECT_NE(log.find("GPU0"), std::string::npos) << log;
    struct stat after {};
    ASSERT_EQ(::stat((dir_ / "log").c_str(), &after), 0);
    EXPECT_EQ(before.st_ino, after.st_ino);  // the same file, written into
}

TEST_F(OutputOption, DashIsStdoutAndDevNullStaysADevice) {
    ASSERT_EQ(shell(topo_ + " -o - > dash.txt"), 0);
    EXPECT_NE(slurp(dir_ / "dash.txt").find("GPU0"), std::string::npos);
    EXPECT_FALSE(fs::exists(dir_ / "-"));
    ASSERT_EQ(shell(topo_ + " -o /dev/null"), 0);
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST_F(OutputOption, ARegularFileIsReplacedWhole) {
    std::ofstream(dir_ / "topo.txt") << "old content that is longer than nothing\n";
    ASSERT_EQ(shell(topo_ + " -o topo.txt"), 0);
    const auto text = slurp(dir_ / "topo.txt");
    EXPECT_EQ(text.find("old content"), std::string::npos);
    EXPECT_NE(text.find("GPU0"), std::string::npos);
}

// The commands -o came to last: what they print goes to the file, nothing to stdout; and -v says
// more than the plain run.
TEST_F(OutputOption, EveryResultGoesToTheFileAndVerboseSaysMore) {
    const std::string bin = std::string(TRAINRIG_BINARY);
    const std::string box = fixture("article-box");
    const std::string nvml = "TRAINRIG_FAKE_NVML=" + std::string(TRAINRIG_SOURCE_DIR) +
                             "/tests/fixtures/nvml/article-box.json ";
    // {} is where the options go
    const std::vector<std::string> commands = {
        nvml + bin + " watch --once --root " + box + " {}",
        bin + " launch --print --root " + box + " {} -- true",
        bin + " bench list {}",
        bin + " topo --root " + box + " {}",
        bin + " plan --list {}",
        bin + " doctor --list {}",
        bin + " tune show --root " + box + " {}",
    };
    const auto with = [](std::string c, const std::string& options) {
        return c.replace(c.find("{}"), 2, options);
    };
    for (const auto& c : commands) {
        SCOPED_TRACE(c);
        fs::remove(dir_ / "out.txt");
        const int rc = shell(with(c, "-o out.txt") + " > stdout.txt");
        EXPECT_TRUE(rc == 0 || rc == 1) << rc;
        EXPECT_EQ(slurp(dir_ / "stdout.txt"), "");
        const auto plain = slurp(dir_ / "out.txt");
        EXPECT_FALSE(plain.empty());
        ASSERT_EQ(shell(with(c, "-v -o out.txt") + " > /dev/null 2> stderr.txt"), rc);
        EXPECT_GT(slurp(dir_ / "out.txt").size() + slurp(dir_ / "stderr.txt").size(), plain.size());
    }
}

}  // namespace
}  // namespace trainrig::test
