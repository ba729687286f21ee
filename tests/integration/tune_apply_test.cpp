// `tune apply` and `tune rollback` inside a copy of a machine tree: a round trip restores every
// byte; apply killed (SIGKILL) after any step, and rollback killed part way, still end in the
// original state; applying twice is applying once; rollback twice is a clear no-op.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "run_binary.h"

namespace trainrig::test {
namespace {

namespace fs = std::filesystem;

// Every regular file and symlink under `root` (relative path -> content or link target), the
// backup store left out.
std::map<std::string, std::string> tree(const fs::path& root) {
    std::map<std::string, std::string> out;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it) {
        const auto rel = fs::relative(it->path(), root).string();
        if (rel == "var" || rel.starts_with("var/")) continue;  // the backup store
        if (it->is_symlink())
            out[rel] = "-> " + fs::read_symlink(it->path()).string();
        else if (it->is_regular_file())
            out[rel] = slurp(it->path());
        else if (it->is_directory())
            out[rel + "/"] = "";
    }
    return out;
}

// The paths whose content differs between two trees (empty: identical).
std::string differences(const std::map<std::string, std::string>& a,
                        const std::map<std::string, std::string>& b) {
    std::string out;
    for (const auto& [path, content] : a) {
        auto it = b.find(path);
        if (it == b.end())
            out += "  missing " + path + "\n";
        else if (it->second != content)
            out += "  changed " + path + "\n";
    }
    for (const auto& [path, content] : b)
        if (!a.count(path)) out += "  added " + path + "\n";
    return out;
}

class TuneApply : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("tune-apply-" + std::to_string(::getpid()));
        original_ = tree(fixture("article-box"));
    }
    void TearDown() override { fs::remove_all(root_); }
    // A fresh copy of the article's box, with a managed file already there (no final newline:
    // restored byte for byte).
    void fresh() {
        fs::remove_all(root_);
        fs::copy(fixture("article-box"), root_,
                 fs::copy_options::recursive | fs::copy_options::copy_symlinks);
        std::ofstream(root_ / "etc/sysctl.d/99-trainrig.conf")
            << "# the admin's own\nvm.swappiness = 5";
        original_ = tree(root_);
    }
    // `apply` is a script's: --yes (without it, apply asks on a terminal and refuses elsewhere).
    RunResult tune(const std::string& args, const std::string& env = "") {
        const bool apply = args.starts_with("apply") && args.find("--dry-run") == std::string::npos;
        return run_trainrig("tune " + args + (apply ? " --yes" : "") + " --root " + root_.string(),
                            env);
    }
    fs::path root_;
    std::map<std::string, std::string> original_;
};

// Without --yes and without a terminal to ask on, apply changes nothing and says what to pass.
TEST_F(TuneApply, WithoutYesAndATerminalNothingChanges) {
    fresh();
    auto r = run_trainrig("tune apply --root " + root_.string());
    EXPECT_EQ(r.rc, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("there is no terminal to ask on; pass --yes"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(differences(original_, tree(root_)), "");
    // On a terminal (script(1) gives it one) it shows the changes and asks; no answer is no.
    r = run_sh("script -qec '" + std::string(TRAINRIG_BINARY) + " tune apply --root " +
               root_.string() + "' /dev/null");
    EXPECT_NE(r.out.find("Apply these "), std::string::npos) << r.out << r.err;
    EXPECT_NE(r.out.find("Nothing changed."), std::string::npos) << r.out << r.err;
    EXPECT_EQ(differences(original_, tree(root_)), "");
}

// A value the kernel would refuse (a word for a number, a number out of range, a governor this
// machine does not offer) is refused before anything is written.
TEST_F(TuneApply, OverridesTheKernelWouldRefuseChangeNothing) {
    fresh();
    const fs::path bad = root_.string() + "-bad.toml";
    for (const char* text :
         {"[sysctl]\n\"vm.swappiness\" = \"abc\"\n", "[sysctl]\n\"vm.swappiness\" = -1\n",
          "[cpu]\ngovernor = \"turbo\"\n"}) {
        std::ofstream(bad) << text;
        auto r = tune("apply --overrides " + bad.string());
        EXPECT_EQ(r.rc, 2) << text << r.out << r.err;
        EXPECT_NE(r.err.find("the kernel would refuse it"), std::string::npos) << r.err;
        EXPECT_EQ(differences(original_, tree(root_)), "") << text;
    }
    fs::remove(bad);
}

TEST_F(TuneApply, RoundTripIsByteIdenticalAndIdempotent) {
    fresh();
    auto r = tune("apply");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("scaling_governor on 64 CPU policies: schedutil -> performance"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(slurp(root_ / "proc/sys/vm/swappiness"), "10\n");
    EXPECT_NE(differences(original_, tree(root_)), "");
    r = tune("apply");
    EXPECT_EQ(r.out, "Nothing to change: this machine has the profile.\n");  // twice = once
    r = tune("status");
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find(" change(s), applied"), std::string::npos) << r.out;
    std::ofstream(root_ / "proc/sys/vm/swappiness") << "60\n";
    r = tune("status");
    EXPECT_EQ(r.rc, 1);  // drift is a failed check
    EXPECT_NE(r.out.find("vm.swappiness is 60, applied 10"), std::string::npos) << r.out;
    std::ofstream(root_ / "proc/sys/vm/swappiness") << "10\n";
    r = tune("rollback");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(differences(original_, tree(root_)), "");
    r = tune("rollback");
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("already rolled back; nothing changed"), std::string::npos) << r.out;
    EXPECT_EQ(differences(original_, tree(root_)), "");
}

TEST_F(TuneApply, KilledAtEveryStepThenRolledBackIsTheOriginal) {
    // Steps of `apply --only sysctl,limits,nccl` here: 1 backup copy, the manifest, 3 files,
    // 2 live sysctls (swappiness, NUMA balancing: the box's fs.file-max already passes), the
    // applied marker.
    for (int crash = 1; crash <= 8; ++crash) {
        fresh();
        auto r = tune("apply --only sysctl,limits,nccl",
                      "TRAINRIG_TUNE_CRASH_AFTER=" + std::to_string(crash));
        ASSERT_NE(r.rc, 0) << "step " << crash << " did not stop apply";
        // No managed file is ever half-written: it is the old content or the whole new one.
        const auto sysctl = slurp(root_ / "etc/sysctl.d/99-trainrig.conf");
        EXPECT_TRUE(sysctl == "# the admin's own\nvm.swappiness = 5" ||
                    sysctl.starts_with("# Managed by `trainrig tune`"))
            << sysctl;
        r = tune("rollback");
        ASSERT_EQ(r.rc, 0) << "step " << crash << ": " << r.err;
        EXPECT_EQ(differences(original_, tree(root_)), "")
            << "after a crash at step " << crash << "\n"
            << r.out;
    }
    // The whole profile, stopped inside the per-CPU governor writes and at the end.
    for (int crash : {10, 40, 72}) {
        fresh();
        ASSERT_NE(tune("apply", "TRAINRIG_TUNE_CRASH_AFTER=" + std::to_string(crash)).rc, 0);
        ASSERT_EQ(tune("rollback").rc, 0);
        EXPECT_EQ(differences(original_, tree(root_)), "") << "after a crash at step " << crash;
    }
}

TEST_F(TuneApply, RollbackKilledPartWayFinishesOnTheNextRun) {
    fresh();
    ASSERT_EQ(tune("apply --only sysctl,limits,nccl").rc, 0);
    ASSERT_NE(tune("rollback", "TRAINRIG_TUNE_CRASH_AFTER=3").rc, 0);
    auto r = tune("rollback");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(differences(original_, tree(root_)), "");
}

TEST_F(TuneApply, RefusesClearly) {
    fresh();
    auto r = tune("rollback 20200101T000000Z");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("no backup 20200101T000000Z"), std::string::npos) << r.err;
    r = tune("rollback");
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("Nothing to roll back"), std::string::npos);
    r = tune("apply --dry-run");
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("--dry-run: none made"), std::string::npos);
    EXPECT_EQ(differences(original_, tree(root_)), "");
    // A read-only tree: the backup cannot be written, so nothing changes.
    if (::geteuid() != 0) {  // root ignores permissions
        fs::permissions(root_ / "etc", fs::perms::owner_write, fs::perm_options::remove);
        r = tune("apply");
        EXPECT_EQ(r.rc, 2);
        fs::permissions(root_ / "etc", fs::perms::owner_write, fs::perm_options::add);
    }
    r = tune("apply --overrides /nonexistent.toml");
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(differences(original_, tree(root_)), "");
}

TEST_F(TuneApply, SymlinkedManagedFileIsRefusedAndNothingLeavesTheTree) {
    fresh();
    const fs::path outside = root_.string() + "-outside";
    fs::create_directories(outside);
    std::ofstream(outside / "x") << "outside\n";
    fs::create_directories(root_ / "etc/trainrig");
    fs::create_symlink(outside / "x", root_ / "etc/trainrig/nccl.env");
    original_ = tree(root_);
    auto r = tune("apply --only nccl");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("/etc/trainrig/nccl.env is a symbolic link"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(outside / "x"), "outside\n");
    EXPECT_EQ(differences(original_, tree(root_)), "");
    EXPECT_EQ(tune("status").out, "No profile has been applied here.\n");  // no backup left
    fs::remove_all(outside);
}

TEST_F(TuneApply, StackedAppliesRollBackNewestFirst) {
    fresh();
    ASSERT_EQ(tune("apply --only sysctl").rc, 0);
    const auto after_first = tree(root_);
    ASSERT_EQ(tune("apply --only nccl").rc, 0);
    auto status = tune("status");
    EXPECT_EQ(status.rc, 0) << status.out;
    // The older one cannot be rolled back under the newer.
    const auto older = status.out.substr(status.out.rfind("\n  ") + 3, 16);
    auto r = tune("rollback " + older);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("is newer and still applied"), std::string::npos) << r.err;
    ASSERT_EQ(tune("rollback").rc, 0);
    EXPECT_EQ(differences(after_first, tree(root_)), "");
    ASSERT_EQ(tune("rollback").rc, 0);
    EXPECT_EQ(differences(original_, tree(root_)), "");
    r = tune("rollback");
    EXPECT_NE(r.out.find("already rolled back; nothing changed"), std::string::npos) << r.out;
}

TEST_F(TuneApply, AnEditSinceApplyIsKeptUnlessForced) {
    fresh();
    ASSERT_EQ(tune("apply --only nccl").rc, 0);
    std::ofstream(root_ / "etc/trainrig/nccl.env", std::ios::app) << "MY_EDIT=1\n";
    auto r = tune("status");
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.out.find("/etc/trainrig/nccl.env was edited since it was applied"),
              std::string::npos)
        << r.out;
    r = tune("rollback");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("was edited since tune applied it"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::exists(root_ / "etc/trainrig/nccl.env"));
    r = tune("rollback --force");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(differences(original_, tree(root_)), "");
    bool kept = false;
    for (const auto& e : fs::recursive_directory_iterator(root_ / "var/lib/trainrig/backups"))
        kept |= e.path().filename().string().starts_with("edited-") &&
                slurp(e.path()).find("MY_EDIT=1") != std::string::npos;
    EXPECT_TRUE(kept);
}

TEST_F(TuneApply, ModeOfAReplacedFileIsRestored) {
    fresh();
    const auto file = root_ / "etc/sysctl.d/99-trainrig.conf";
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    ASSERT_EQ(tune("apply --only sysctl").rc, 0);
    fs::remove(file);  // even a file removed after apply comes back as it was
    ASSERT_EQ(tune("rollback").rc, 0);
    EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    EXPECT_EQ(slurp(file), "# the admin's own\nvm.swappiness = 5");
}

TEST_F(TuneApply, AManagedPathThatIsNotAFileStopsBeforeAnything) {
    fresh();
    fs::create_directories(root_ / "etc/trainrig/nccl.env");
    original_ = tree(root_);
    auto r = tune("diff");
    EXPECT_EQ(r.rc, 2) << r.out;
    r = tune("apply");
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(differences(original_, tree(root_)), "");
}

TEST_F(TuneApply, LockThenDoctorReportsDrift) {
    fresh();
    const auto lock = root_.string() + "-stack.lock";
    auto r = tune("lock -o " + lock);
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::string doctor =
        "doctor --only stack.drift --json --lock " + lock + " --root " + root_.string();
    r = run_trainrig(doctor);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    ASSERT_EQ(tune("apply --only nccl").rc, 0);
    std::ofstream(root_ / "proc/sys/kernel/osrelease") << "6.1.0-28-amd64\n";
    r = run_trainrig(doctor);
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.out.find("kernel: locked 6.1.0-27-amd64, now 6.1.0-28-amd64"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("/etc/trainrig/nccl.env: created since the lock"), std::string::npos);
    r = run_trainrig("doctor --lock /nonexistent.lock --root " + root_.string());
    EXPECT_EQ(r.rc, 2);
    fs::remove(lock);
}

}  // namespace
}  // namespace trainrig::test
