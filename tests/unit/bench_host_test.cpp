// The host benchmarks' parts: STREAM's expected values, array sizes and a small pinned run;
// /proc/cpuinfo fields; the storage test file's block pattern, its unnamed O_DIRECT file and
// both read engines on it, including a block corrupted on purpose.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench/benchmark.h"
#include "bench/cpu_mem_bench.h"
#include "bench/host_topology.h"
#include "bench/machine_facts.h"
#include "bench/scratch_file.h"
#include "bench/storage_io.h"
#include "bench/stream_run.h"

namespace trainrig::bench {
namespace {

namespace fs = std::filesystem;

// ---- STREAM -------------------------------------------------------------------------------------

TEST(BenchStream, ExpectedValuesAfterEachRound) {
    const StreamExpected zero = stream_expected(0);
    EXPECT_EQ(zero.a, 1);
    EXPECT_EQ(zero.b, 2);
    EXPECT_EQ(zero.c, 0);
    const StreamExpected one = stream_expected(1);  // c = a = 1; a = 2 + 0.5
    EXPECT_EQ(one.a, 2.5);
    EXPECT_EQ(one.b, 2);
    EXPECT_EQ(one.c, 1);
    const StreamExpected two = stream_expected(2);  // c = 2.5; a = 2 + 1.25
    EXPECT_EQ(two.a, 3.25);
    EXPECT_EQ(two.b, 2);
    EXPECT_EQ(two.c, 2.5);
    // a = 4 - 3 / 2^n, an exact binary fraction for as many rounds as a run makes; c trails a
    // by one round.
    const StreamExpected many = stream_expected(40);
    EXPECT_EQ(many.a, 4 - 3.0 / static_cast<double>(uint64_t{1} << 40));
    EXPECT_EQ(many.b, 2);
    EXPECT_EQ(stream_expected(41).c, many.a);
}

TEST(BenchStream, ElementsAreFourTimesTheLastLevelCacheAtLeastTheFloor) {
    EXPECT_EQ(stream_elements(size_t{32} << 20, 1), size_t{16} << 20);  // 4 x 32 MiB of doubles
    EXPECT_EQ(stream_elements(size_t{384} << 20, size_t{32} << 20), size_t{192} << 20);
    EXPECT_EQ(stream_elements(size_t{1} << 20, size_t{8} << 20), size_t{8} << 20);
    EXPECT_EQ(stream_elements(0, 5), 5u);
}

std::vector<unsigned> first_pus(const HostTopology& topo, size_t count) {
    std::vector<unsigned> pus;
    for (const auto& c : topo.cores())
        if (pus.size() < count) pus.push_back(c.pu);
    return pus;
}

cpu_set_t current_affinity() {
    cpu_set_t set;
    CPU_ZERO(&set);
    EXPECT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
    return set;
}

TEST(BenchStream, PinnedRunTimesEveryRepeatAndChecksEveryElement) {
    auto topo = HostTopology::load();
    ASSERT_TRUE(topo.ok()) << topo.status().message();
    ASSERT_FALSE(topo->cores().empty());
    EXPECT_GE(topo->packages(), 1);
    StreamConfig config;
    config.pus = first_pus(*topo, 2);
    config.elements = size_t{1} << 20;
    config.repeats = 3;
    const cpu_set_t before = current_affinity();
    auto times = run_stream(*topo, config, nullptr);
    ASSERT_TRUE(times.ok()) << times.status().message();
    ASSERT_EQ(times->copy_seconds.size(), 3u);
    ASSERT_EQ(times->triad_seconds.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_GT(times->copy_seconds[i], 0) << i;
        EXPECT_GT(times->triad_seconds[i], 0) << i;
    }
    EXPECT_TRUE(times->verified) << times->detail;
    // One untimed round and three timed: four rounds from a = 1, b = 2, c = 0.
    EXPECT_EQ(times->detail, "all 1048576 elements of a, b, c equal 3.8125, 2, 3.625");
    // The calling thread ran as thread 0, pinned; it gets its own CPU mask back.
    const cpu_set_t after = current_affinity();
    EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(BenchStream, ElementsThatAreNotWholeCacheLinesAreRoundedDown) {
    auto topo = HostTopology::load();
    ASSERT_TRUE(topo.ok()) << topo.status().message();
    StreamConfig config;
    config.pus = first_pus(*topo, 1);
    config.elements = 1001;
    config.repeats = 1;
    auto times = run_stream(*topo, config, nullptr);
    ASSERT_TRUE(times.ok()) << times.status().message();
    EXPECT_TRUE(times->verified);
    EXPECT_EQ(times->detail, "all 1000 elements of a, b, c equal 3.25, 2, 2.5");
}

TEST(BenchStream, ASetCancelFlagStopsTheRunAsInterrupted) {
    auto topo = HostTopology::load();
    ASSERT_TRUE(topo.ok()) << topo.status().message();
    StreamConfig config;
    config.pus = first_pus(*topo, 2);
    config.elements = size_t{1} << 20;
    config.repeats = 1000;  // would take far longer than the test if the flag were ignored
    const std::atomic<bool> cancel{true};
    auto times = run_stream(*topo, config, &cancel);
    ASSERT_FALSE(times.ok());
    EXPECT_EQ(times.status().message(), interrupted_status().message());
    EXPECT_NE(times.status().message().find("interrupted"), std::string::npos);
}

TEST(BenchStream, NoThreadsOrTooFewElementsIsRefused) {
    auto topo = HostTopology::load();
    ASSERT_TRUE(topo.ok()) << topo.status().message();
    StreamConfig none;
    none.elements = 1024;
    EXPECT_EQ(run_stream(*topo, none, nullptr).status().code(), Errc::kInternal);
    StreamConfig tiny;
    tiny.pus = first_pus(*topo, 1);
    tiny.elements = 7;
    EXPECT_EQ(run_stream(*topo, tiny, nullptr).status().code(), Errc::kInternal);
}

// ---- /proc/cpuinfo ------------------------------------------------------------------------------

const char* const kX86Cpuinfo =
    "processor\t: 0\n"
    "vendor_id\t: AuthenticAMD\n"
    "cpu family\t: 25\n"
    "model\t\t: 17\n"
    "model name\t: AMD EPYC 9654 96-Core Processor\n"
    "stepping\t: 1\n"
    "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic %s avx512f\n"
    "\n"
    "processor\t: 1\n"
    "vendor_id\t: GenuineIntel\n"
    "cpu family\t: 6\n"
    "model\t\t: 143\n"
    "model name\t: Intel(R) Xeon(R) Platinum 8480+\n"
    "flags\t\t: fpu hypervisor\n"
    "\n";

std::string x86_cpuinfo(const char* extra_flag) {
    std::string text = kX86Cpuinfo;
    const size_t at = text.find("%s");
    text.replace(at, 2, extra_flag);
    return text;
}

TEST(BenchCpuinfo, X86FieldsOfTheFirstProcessor) {
    const auto cpu = parse_cpuinfo(x86_cpuinfo("sse"));
    EXPECT_EQ(cpu, (nlohmann::json{{"vendor", "AuthenticAMD"},
                                   {"family", 25},
                                   {"model", 17},
                                   {"model_name", "AMD EPYC 9654 96-Core Processor"},
                                   {"virtual", false}}));
}

TEST(BenchCpuinfo, TheHypervisorFlagMarksAGuest) {
    EXPECT_EQ(parse_cpuinfo(x86_cpuinfo("hypervisor")).at("virtual"), true);
    // A whole word only: a flag that merely contains it does not count.
    EXPECT_EQ(parse_cpuinfo(x86_cpuinfo("xhypervisor")).at("virtual"), false);
    EXPECT_EQ(parse_cpuinfo("flags\t: hypervisor\n").at("virtual"), true);
}

TEST(BenchCpuinfo, ArmImplementerAndPart) {
    const std::string arm =
        "processor\t: 0\n"
        "BogoMIPS\t: 2000.00\n"
        "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\n"
        "CPU implementer\t: 0x41\n"
        "CPU architecture: 8\n"
        "CPU variant\t: 0x0\n"
        "CPU part\t: 0xd4f\n"
        "CPU revision\t: 0\n"
        "\n"
        "processor\t: 1\n"
        "CPU implementer\t: 0x61\n"
        "CPU part\t: 0x000\n";
    EXPECT_EQ(parse_cpuinfo(arm), (nlohmann::json{{"implementer", "0x41"}, {"part", "0xd4f"}}));
}

TEST(BenchCpuinfo, EmptyOrLeadingBlankLines) {
    EXPECT_EQ(parse_cpuinfo(""), nlohmann::json::object());
    EXPECT_EQ(parse_cpuinfo("\n\nvendor_id : GenuineIntel"),
              (nlohmann::json{{"vendor", "GenuineIntel"}}));
}

// ---- the storage test file ----------------------------------------------------------------------

struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
};
using Aligned = std::unique_ptr<unsigned char, FreeDeleter>;

Aligned aligned(size_t bytes) {
    void* p = nullptr;
    EXPECT_EQ(::posix_memalign(&p, kIoAlign, bytes), 0);
    return Aligned(static_cast<unsigned char*>(p));
}

TEST(BenchScratch, BlockPatternRoundTripsAndCatchesWrongBlocks) {
    auto block = aligned(kIoAlign);
    fill_block(42, 7, block.get());
    EXPECT_TRUE(block_ok(42, 7, block.get()));
    EXPECT_FALSE(block_ok(42, 8, block.get()));  // another block's data
    EXPECT_FALSE(block_ok(43, 7, block.get()));  // an earlier run's file (stale data)

    auto other = aligned(kIoAlign);
    fill_block(42, 8, other.get());
    EXPECT_TRUE(block_ok(42, 8, other.get()));
    EXPECT_NE(std::memcmp(block.get(), other.get(), kIoAlign), 0);

    std::memset(other.get(), 0, kIoAlign);
    EXPECT_FALSE(block_ok(0, 0, other.get()));  // zeros are never a valid block, even block 0
    EXPECT_FALSE(block_ok(42, 7, other.get()));

    // The header survived, the body did not.
    fill_block(42, 7, other.get());
    other.get()[16] ^= 0x01;
    EXPECT_FALSE(block_ok(42, 7, other.get()));
}

TEST(BenchScratch, MarginIsFivePercentAndAtLeastOneGiB) {
    constexpr uint64_t kGiB = uint64_t{1} << 30;
    EXPECT_EQ(scratch_margin_bytes(0), kGiB);
    EXPECT_EQ(scratch_margin_bytes(10 * kGiB), kGiB);
    EXPECT_EQ(scratch_margin_bytes(100 * kGiB), 5 * kGiB);
    EXPECT_EQ(scratch_margin_bytes(4000 * kGiB), 200 * kGiB);
}

TEST(BenchScratch, EngineNames) {
    auto threads = resolve_io_engine("threads");
    ASSERT_TRUE(threads.ok());
    EXPECT_EQ(*threads, IoEngine::kThreads);
    EXPECT_TRUE(resolve_io_engine("auto").ok());
    auto bogus = resolve_io_engine("bogus");
    ASSERT_FALSE(bogus.ok());
    EXPECT_EQ(bogus.status().code(), Errc::kInvalidInput);
    EXPECT_NE(bogus.status().message().find("bogus"), std::string::npos);
    EXPECT_STREQ(io_engine_name(IoEngine::kIoUring), "io_uring");
    EXPECT_STREQ(io_engine_name(IoEngine::kThreads), "threads");
}

class BenchScratchFile : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::path(::testing::TempDir()) /
               ("trainrig-bench-" + std::to_string(::getpid()) + "-" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }

    bool dir_empty() const { return fs::is_empty(dir_); }

    // An 8 MiB test file, or a skip where this filesystem cannot hold one (no O_DIRECT, full).
    std::unique_ptr<ScratchFile> make_file(uint64_t seed) {
        auto f = ScratchFile::create(dir_.string(), uint64_t{8} << 20, seed, nullptr);
        if (!f.ok() && f.status().code() == Errc::kUnsupported) {
            skip_ = f.status().message();
            return nullptr;
        }
        EXPECT_TRUE(f.ok()) << f.status().message();
        if (!f.ok()) return nullptr;
        return std::make_unique<ScratchFile>(std::move(f).value());
    }

    fs::path dir_;
    std::string skip_;
};

TEST_F(BenchScratchFile, UnnamedFileHoldsThePatternAndLeavesNothingBehind) {
    {
        auto f = make_file(1234);
        if (!skip_.empty()) GTEST_SKIP() << skip_;
        ASSERT_NE(f, nullptr);
        EXPECT_GE(f->fd(), 0);
        EXPECT_EQ(f->bytes(), uint64_t{8} << 20);
        EXPECT_EQ(f->seed(), 1234u);
        EXPECT_GT(f->write_seconds(), 0);
        EXPECT_TRUE(dir_empty()) << "the test file has a name in " << dir_;
        auto buf = aligned(kIoAlign);
        for (const uint64_t block : {uint64_t{0}, uint64_t{1}, uint64_t{1000}, uint64_t{2047}}) {
            ASSERT_EQ(::pread(f->fd(), buf.get(), kIoAlign, static_cast<off_t>(block * kIoAlign)),
                      static_cast<ssize_t>(kIoAlign))
                << block;
            EXPECT_TRUE(block_ok(1234, block, buf.get())) << block;
        }
    }
    EXPECT_TRUE(dir_empty());
}

TEST_F(BenchScratchFile, RefusesAFileLargerThanTheFreeSpace) {
    auto f = ScratchFile::create(dir_.string(), uint64_t{1} << 50, 1, nullptr);  // 1 PiB
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), Errc::kUnsupported);
    EXPECT_NE(f.status().message().find("free"), std::string::npos) << f.status().message();
    EXPECT_NE(f.status().message().find(dir_.string()), std::string::npos) << f.status().message();
    EXPECT_FALSE(f.status().next_step().empty());
    EXPECT_TRUE(dir_empty());
}

TEST_F(BenchScratchFile, ASetCancelFlagStopsTheWrite) {
    const std::atomic<bool> cancel{true};
    auto f = ScratchFile::create(dir_.string(), uint64_t{8} << 20, 1, &cancel);
    if (!f.ok() && f.status().code() == Errc::kUnsupported) GTEST_SKIP() << f.status().message();
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().message(), interrupted_status().message());
    EXPECT_TRUE(dir_empty());
}

std::vector<IoEngine> engines_here(std::string& note) {
    std::vector<IoEngine> out = {IoEngine::kThreads};
    if (auto uring = resolve_io_engine("io_uring"); uring.ok())
        out.push_back(*uring);
    else
        note = uring.status().message();
    return out;
}

IoPattern pattern(bool random) {
    IoPattern p;
    p.random = random;
    p.block_bytes = random ? kIoAlign : size_t{1} << 20;
    p.depth = random ? 8 : 4;
    p.seconds = 0.2;
    p.rng_seed = 7;
    return p;
}

TEST_F(BenchScratchFile, BothEnginesReadEveryPatternBackIntact) {
    auto f = make_file(99);
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_NE(f, nullptr);
    std::string no_uring;
    for (const IoEngine engine : engines_here(no_uring)) {
        for (const bool random : {false, true}) {
            const IoPattern p = pattern(random);
            auto s = run_io(*f, p, engine, nullptr);
            const std::string what = std::string(io_engine_name(engine)) +
                                     (random ? " random 4 KiB" : " sequential 1 MiB");
            ASSERT_TRUE(s.ok()) << what << ": " << s.status().message();
            EXPECT_GT(s->ios, 0u) << what;
            EXPECT_EQ(s->bytes, s->ios * p.block_bytes) << what;
            EXPECT_EQ(s->bad_blocks, 0u) << what;
            EXPECT_GE(s->seconds, p.seconds * 0.999) << what;  // ran until its deadline
        }
    }
    EXPECT_TRUE(dir_empty());
    if (!no_uring.empty()) GTEST_SKIP() << "io_uring part not run: " << no_uring;
}

TEST_F(BenchScratchFile, BothEnginesCatchACorruptedBlock) {
    auto f = make_file(5);
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_NE(f, nullptr);
    // Block 3 gets block 4's content; the first 1 MiB read of a sequential pass covers it.
    auto buf = aligned(kIoAlign);
    fill_block(5, 4, buf.get());
    ASSERT_EQ(::pwrite(f->fd(), buf.get(), kIoAlign, 3 * kIoAlign), static_cast<ssize_t>(kIoAlign));
    std::string no_uring;
    for (const IoEngine engine : engines_here(no_uring)) {
        IoPattern p = pattern(false);
        p.depth = 1;
        p.seconds = 0.05;
        auto s = run_io(*f, p, engine, nullptr);
        ASSERT_TRUE(s.ok()) << io_engine_name(engine) << ": " << s.status().message();
        EXPECT_GE(s->bad_blocks, 1u) << io_engine_name(engine);
        EXPECT_EQ(s->first_bad_block, 3u) << io_engine_name(engine);
    }
    if (!no_uring.empty()) GTEST_SKIP() << "io_uring part not run: " << no_uring;
}

TEST_F(BenchScratchFile, ReadsStopWhenCancelledAndPatternsThatDoNotFitAreRefused) {
    auto f = make_file(11);
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_NE(f, nullptr);
    const std::atomic<bool> cancel{true};
    std::string no_uring;
    for (const IoEngine engine : engines_here(no_uring)) {
        IoPattern p = pattern(true);
        p.seconds = 600;  // only the flag can end it within the test's time
        auto s = run_io(*f, p, engine, &cancel);
        ASSERT_FALSE(s.ok()) << io_engine_name(engine);
        EXPECT_EQ(s.status().message(), interrupted_status().message());
    }
    IoPattern unaligned = pattern(true);
    unaligned.block_bytes = 1000;
    EXPECT_EQ(run_io(*f, unaligned, IoEngine::kThreads, nullptr).status().code(), Errc::kInternal);
    IoPattern too_big = pattern(false);
    too_big.block_bytes = size_t{16} << 20;
    EXPECT_EQ(run_io(*f, too_big, IoEngine::kThreads, nullptr).status().code(), Errc::kInternal);
    IoPattern no_depth = pattern(false);
    no_depth.depth = 0;
    EXPECT_EQ(run_io(*f, no_depth, IoEngine::kThreads, nullptr).status().code(), Errc::kInternal);
}

}  // namespace
}  // namespace trainrig::bench
