// Core helpers: strict number parsing, UTF-8 repair, CPU lists, atomic writes, RootFs errors.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "core/atomic_file.h"
#include "core/quantity.h"
#include "core/root_fs.h"
#include "core/text.h"
#include "temp_dir_test.h"

namespace trainrig {
namespace {

namespace fs = std::filesystem;

TEST(Text, StrictNumbers) {
    EXPECT_EQ(*parse_i64(" 60\n"), 60);
    EXPECT_EQ(*parse_i64("-1"), -1);
    EXPECT_FALSE(parse_i64("60x"));
    EXPECT_FALSE(parse_i64(""));
    EXPECT_FALSE(parse_i64(std::string("6\0", 2)));
    EXPECT_EQ(*parse_hex("0x10de\n"), 0x10deu);
    EXPECT_FALSE(parse_hex("0x"));
    EXPECT_FALSE(parse_hex("-0x1"));
    EXPECT_FALSE(parse_u64("-1"));
    EXPECT_FALSE(parse_u64("99999999999999999999"));
}

TEST(Text, SanitizeKeepsValidUtf8) {
    EXPECT_EQ(sanitize_text("héllo ✓"), "héllo ✓");
    EXPECT_EQ(sanitize_text(std::string("a\0b", 3)),
              "a\xEF\xBF\xBD"
              "b");
    EXPECT_EQ(sanitize_text("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
    EXPECT_EQ(sanitize_text("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
    EXPECT_EQ(sanitize_text("\xE2\x9C"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // truncated
}

TEST(Text, PreviewNeverSplitsACharacter) {
    for (size_t max = 1; max < 12; ++max) {
        auto p = preview("\xff\xff\xff\xff\xff\xff", max);
        EXPECT_EQ(sanitize_text(p), p) << max;
    }
}

TEST(Text, Cpulist) {
    EXPECT_EQ(*parse_cpulist("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
    EXPECT_TRUE(parse_cpulist("")->empty());
    EXPECT_FALSE(parse_cpulist("3-1"));
    EXPECT_FALSE(parse_cpulist("a-b"));
    EXPECT_FALSE(parse_cpulist("0-999999999"));
}

// One formatter for every quantity people read (docs/cli.md, "Units"): three significant
// figures, an engineering prefix, never an exponent, the unit right.
TEST(Quantity, EveryUnitInEngineeringForm) {
    EXPECT_EQ(format_bytes(512), "512 B");
    EXPECT_EQ(format_bytes(64.0 * (1 << 20)), "64.0 MiB");
    EXPECT_EQ(format_bytes(1536.0 * (1 << 20)), "1.50 GiB");
    EXPECT_EQ(format_bytes(85458944), "81.5 MiB");  // was "81.5 Mbytes"
    EXPECT_EQ(format_rate(4e7), "40.0 MB/s");       // was "0.04 GB/s"
    EXPECT_EQ(format_rate(21.3e9), "21.3 GB/s");
    EXPECT_EQ(format_rate(2.02e10), "20.2 GB/s");  // was "2.02e+10 bytes/s"
    EXPECT_EQ(format_rate(4.01e12), "4.01 TB/s");
    EXPECT_EQ(format_flops(4.29e9), "4.29 GFLOP/s");  // was "0.00 TFLOP/s"
    EXPECT_EQ(format_flops(771e12), "771 TFLOP/s");
    EXPECT_EQ(format_flops(999.96e12), "1.00 PFLOP/s");
    EXPECT_EQ(format_duration(20), "20.0 s");  // was "0.0 h"
    EXPECT_EQ(format_duration(0), "0 s");
    EXPECT_EQ(format_duration(0.0611), "61.1 ms");
    EXPECT_EQ(format_duration(850e-9), "850 ns");
    EXPECT_EQ(format_duration(192), "3.20 min");
    EXPECT_EQ(format_duration(4.1 * 3600), "4.10 h");
    EXPECT_EQ(format_duration(12.5 * 86400), "12.5 d");
    EXPECT_EQ(format_duration(3.4 * 365.25 * 86400), "3.40 years");
    EXPECT_EQ(format_duration(3.1e22), "more than 1000 years");  // was "357118059613464512 d"
    EXPECT_EQ(format_energy(6000), "1.67 Wh");                   // was "0.00 kWh"
    EXPECT_EQ(format_energy(432e6), "120 kWh");
    EXPECT_EQ(format_count(1111241), "1,111,241");
    EXPECT_EQ(format_count(999), "999");
    EXPECT_EQ(plural(1, "worker"), "1 worker");
    EXPECT_EQ(plural(4, "worker"), "4 workers");
    EXPECT_EQ(format_scaled(13.02e9), "13.0G");
    EXPECT_EQ(format_quantity(0.45, "fraction"), "45.0 %");
    EXPECT_EQ(format_quantity(2.08e6, "tokens/s"), "2.08M tokens/s");
    EXPECT_EQ(format_quantity(254e3, "IO/s"), "254k IO/s");
    EXPECT_EQ(format_quantity(41.3, "batches/s"), "41.3 batches/s");
    EXPECT_EQ(format_quantity(85458944, "bytes"), "81.5 MiB");
    for (double v : {1e-12, 1e-3, 1.0, 1e3, 1e9, 1e15, 1e21})
        for (const char* unit : {"bytes", "bytes/s", "FLOP/s", "s", "J", "tokens/s"})
            EXPECT_FALSE(
                std::regex_search(format_quantity(v, unit), std::regex(R"(\d[eE][-+]?\d)")))
                << v << " " << unit << ": " << format_quantity(v, unit);
}

class TempDir : public test::TempDirTest {};

using AtomicFile = TempDir;

TEST_F(AtomicFile, ReplacesWholeFileAndKeepsMode) {
    auto p = dir_ / "out.json";
    ASSERT_TRUE(write_file_atomic(p, "old").ok());
    ::chmod(p.c_str(), 0600);
    ASSERT_TRUE(write_file_atomic(p, "new content").ok());
    std::ifstream in(p);
    std::string s((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(s, "new content");
    EXPECT_EQ(fs::status(p).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(AtomicFile, BadTargetsFailCleanly) {
    auto missing = write_file_atomic(dir_ / "no" / "such" / "dir.json", "x");
    EXPECT_EQ(missing.code(), Errc::kNotFound);
    EXPECT_NE(missing.message().find("dir.json"), std::string::npos);
    fs::create_directories(dir_ / "a-folder");
    EXPECT_EQ(write_file_atomic(dir_ / "a-folder", "x").code(), Errc::kInvalidInput);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

using RootFsTest = TempDir;

TEST_F(RootFsTest, ReadsUnderRootAndNamesMachinePaths) {
    fs::create_directories(dir_ / "proc/sys/vm");
    std::ofstream(dir_ / "proc/sys/vm/swappiness") << "60\n";
    RootFs rfs(dir_);
    EXPECT_FALSE(rfs.is_live());
    EXPECT_EQ(*rfs.read_trimmed("/proc/sys/vm/swappiness"), "60");
    auto missing = rfs.read("/proc/sys/vm/nothing");
    EXPECT_EQ(missing.status().code(), Errc::kNotFound);
    EXPECT_NE(missing.status().message().find("/proc/sys/vm/nothing"), std::string::npos);
    EXPECT_EQ(missing.status().message().find(dir_.string()), std::string::npos);
}

TEST_F(RootFsTest, PermissionDeniedIsReportedAsSuch) {
    std::ofstream(dir_ / "secret") << "x";
    ::chmod((dir_ / "secret").c_str(), 0);
    auto check = [&] { return RootFs(dir_).read("/secret").status().code() == Errc::kPermission; };
    if (::geteuid() != 0) {
        EXPECT_TRUE(check());
        return;
    }
    // Root reads every file: check as an unprivileged user in a child process.
    ::chmod(dir_.c_str(), 0755);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
        ::_exit(check() ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0)
        << "3: could not drop privileges, 1: not reported as permission";
}

TEST_F(RootFsTest, ResolveStaysInsideRoot) {
    fs::create_directories(dir_ / "sys/devices/x");
    fs::create_symlink("devices/x", dir_ / "sys/link");
    fs::create_symlink("/etc", dir_ / "sys/abs");
    RootFs rfs(dir_);
    EXPECT_EQ(*rfs.resolve("/sys/link"), "/sys/devices/x");
    EXPECT_EQ(*rfs.link_name("/sys/link"), "x");
    auto outside = rfs.resolve("/sys/abs");
    EXPECT_FALSE(outside.ok());
}

}  // namespace
}  // namespace trainrig
