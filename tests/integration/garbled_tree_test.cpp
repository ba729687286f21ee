// Machine trees with truncated, garbled, NUL-filled or missing files: every rule still returns a
// finding (the ones that read the damaged file say `error` with the file's name), nothing
// crashes, and the snapshot still round-trips. Targeted cases first, then a seeded random run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "doctor/gpus.h"
#include "doctor/report.h"
#include "probe/collect.h"
#include "run_binary.h"

namespace trainrig::test {
namespace {

namespace fs = std::filesystem;

class GarbledTree : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("trainrig-garbled-" + std::to_string(::getpid()));
        fs::remove_all(root_);
        fs::copy(fixture("epyc-4xa100-healthy"), root_,
                 fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    }
    void TearDown() override { fs::remove_all(root_); }

    void write(const std::string& machine_path, const std::string& content) {
        auto p = root_ / machine_path.substr(1);
        fs::remove(p);
        std::ofstream(p, std::ios::binary) << content;
    }

    std::vector<Finding> judge_tree() {
        CollectOptions o;
        o.root = root_;
        o.data_dir = "/data";
        auto snap = collect_snapshot(o);
        EXPECT_TRUE(snap.ok()) << snap.status().message();
        if (!snap.ok()) return {};
        auto back = snapshot_from_text(snapshot_to_json(*snap).dump(), "round trip");
        EXPECT_TRUE(back.ok() && *back == *snap) << "snapshot did not round-trip";
        auto findings = judge(*snap, {}, {});
        EXPECT_EQ(findings.size(), all_rules().size());
        for (const auto& f : findings) EXPECT_FALSE(f.summary.empty()) << f.id;
        return findings;
    }

    static const Finding& get(const std::vector<Finding>& fs, const std::string& id) {
        for (const auto& f : fs)
            if (f.id == id) return f;
        static Finding none;
        ADD_FAILURE() << id;
        return none;
    }

    fs::path root_;
};

TEST_F(GarbledTree, DamagedFilesBecomeErrorsNamingTheFile) {
    CollectOptions o;
    o.root = root_;
    auto before = collect_snapshot(o);
    ASSERT_TRUE(before.ok());
    auto gpus = select_gpus(*before).gpus;
    ASSERT_FALSE(gpus.empty());
    const std::string kGpu = "/sys/bus/pci/devices/" + gpus[0]->address;
    write("/proc/sys/vm/swappiness", "sixty\n");
    write(kGpu + "/resource", std::string("0x0000 0x00\0\0", 13));
    write(kGpu + "/current_link_width", std::string("\0\0\0", 3));
    write("/proc/self/limits", "");
    write("/sys/kernel/mm/transparent_hugepage/enabled", "always madvise never\n");
    write("/proc/driver/nvidia/version", "garbage\n");
    auto f = judge_tree();
    auto expect_error = [&](const std::string& id, const std::string& path) {
        const auto& x = get(f, id);
        EXPECT_EQ(x.status, FindingStatus::kError) << id << ": " << x.summary;
        EXPECT_NE(x.summary.find(path), std::string::npos) << id << ": " << x.summary;
    };
    expect_error("kernel.swappiness", "/proc/sys/vm/swappiness");
    expect_error("pci.gpu-bar", "/resource");
    expect_error("pci.gpu-link", "/current_link_width");
    expect_error("kernel.nofile", "/proc/self/limits");
    expect_error("kernel.thp", "transparent_hugepage/enabled");
    expect_error("driver.nvidia", "/proc/driver/nvidia/version");
    EXPECT_EQ(get(f, "mem.shm").status, FindingStatus::kPass) << "undamaged rules still judge";
}

TEST_F(GarbledTree, GarbageKernelLogIsCountedNotFatal) {
    std::string junk = "no prefix here\n6,1;short\n\xff\xfe\n";
    junk += "4,99,1000,-;NVRM: Xid (PCI:0000:01:00): 48, pid=1, name=x, DBE\n";
    write("/dev/kmsg", junk);
    auto f = judge_tree();
    EXPECT_EQ(get(f, "kmsg.xid").status, FindingStatus::kFail);
}

TEST_F(GarbledTree, MissingFoldersAreAbsentNotErrors) {
    fs::remove_all(root_ / "sys/devices/system/edac");
    fs::remove_all(root_ / "sys/devices/system/cpu/cpufreq");
    fs::remove_all(root_ / "proc/driver");
    fs::remove_all(root_ / "sys/module/nvidia");
    fs::remove(root_ / "dev/kmsg");
    fs::remove(root_ / "proc/self/environ");
    auto f = judge_tree();
    EXPECT_EQ(get(f, "kmsg.xid").status, FindingStatus::kSkip);
    EXPECT_EQ(get(f, "nccl.env").status, FindingStatus::kSkip);
    EXPECT_EQ(get(f, "mem.ecc").status, FindingStatus::kWarn);
    EXPECT_EQ(get(f, "cpu.governor").status, FindingStatus::kSkip);
    EXPECT_EQ(get(f, "driver.nvidia").status, FindingStatus::kFail);
}

TEST_F(GarbledTree, LargeMountinfoUnlimitedShmMasksAndAbsoluteLinks) {
    // A busy Kubernetes node: thousands of mounts before /dev/shm, which has no size limit.
    std::string mounts;
    for (int i = 0; i < 10000; ++i)
        mounts += std::to_string(100 + i) + " 28 0:" + std::to_string(60 + i) +
                  " / /var/lib/kubelet/pods/p" + std::to_string(i) +
                  "/volumes/kubernetes.io~empty-dir/cache rw,relatime shared:1 - tmpfs tmpfs rw\n";
    mounts += "9 28 0:26 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,size=0k,inode64\n";
    write("/proc/self/mountinfo", slurp(root_ / "proc/self/mountinfo") + mounts);
    ASSERT_GT(fs::file_size(root_ / "proc/self/mountinfo"), 1u << 20);
    // sysctl.d(5) masks a file with a link to /dev/null; an absolute link stays in the tree.
    fs::create_symlink("/dev/null", root_ / "etc/sysctl.d/50-masked.conf");
    fs::create_symlink("/etc/sysctl.conf", root_ / "etc/sysctl.d/98-abs.conf");
    auto f = judge_tree();
    EXPECT_EQ(get(f, "mem.shm").status, FindingStatus::kPass) << get(f, "mem.shm").summary;
    EXPECT_EQ(get(f, "kernel.sysctl-obsolete").status, FindingStatus::kPass)
        << get(f, "kernel.sysctl-obsolete").summary;
}

TEST_F(GarbledTree, TreeWithoutCpuFolderDoesNotDescribeThisHost) {
    fs::remove_all(root_ / "sys/devices/system/cpu");
    auto f = judge_tree();
    EXPECT_EQ(get(f, "numa.gpu-affinity").status, FindingStatus::kError);
    EXPECT_NE(get(f, "numa.gpu-affinity").summary.find("/sys/devices/system/cpu"),
              std::string::npos);
}

TEST_F(GarbledTree, RandomDamageNeverCrashes) {
    std::vector<fs::path> files;
    for (auto& e : fs::recursive_directory_iterator(root_))
        if (e.is_regular_file() && !e.is_symlink()) files.push_back(e.path());
    ASSERT_GT(files.size(), 100u);
    // TRAINRIG_FUZZ_SEED / TRAINRIG_FUZZ_ROUNDS run other or longer campaigns by hand.
    const char* seed = std::getenv("TRAINRIG_FUZZ_SEED");
    const char* rounds = std::getenv("TRAINRIG_FUZZ_ROUNDS");
    std::mt19937_64 rng(seed ? std::strtoull(seed, nullptr, 10) : 7);
    const int n = rounds ? std::atoi(rounds) : 12;
    for (int round = 0; round < n; ++round) {
        for (int k = 0; k < 25; ++k) {
            const auto& p = files[rng() % files.size()];
            if (!fs::exists(p)) continue;
            std::string content = slurp(p);
            switch (rng() % 4) {
                case 0:
                    content.resize(content.size() / 2);
                    break;
                case 1:
                    content.assign(1 + rng() % 64, '\0');
                    break;
                case 2:
                    for (auto& c : content) c = static_cast<char>(rng());
                    break;
                case 3:
                    fs::remove(p);
                    continue;
            }
            std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
        }
        judge_tree();
    }
}

}  // namespace
}  // namespace trainrig::test
