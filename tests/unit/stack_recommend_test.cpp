// Recommendations: one for every catalog GPU, pins that follow or conflict with one sentence
// naming the rule, releases newer than the data, the driver branch choice, install steps and the
// lock that `doctor --lock` checks.
#include <gtest/gtest.h>

#include "doctor/report.h"
#include "nvml_builder.h"
#include "plan/hardware.h"
#include "stack/compat.h"
#include "stack/cuda_drivers.h"
#include "stack/install_steps.h"
#include "stack/recommend.h"
#include "stack/recommended_lock.h"
#include "stack/stack_lock.h"

namespace trainrig::stack {
namespace {

const StackData& data() { return builtin_stack_data(); }

GpuTarget gpu(const std::string& name) {
    auto t = named_gpu(data(), name);
    EXPECT_TRUE(t.ok()) << t.status().message();
    return t.ok() ? *t : GpuTarget{};
}

Result<Recommendation> rec(const std::string& name, std::optional<std::string> cuda = {},
                           std::optional<std::string> torch = {}, const char* distro = nullptr) {
    Pins p;
    p.cuda = std::move(cuda);
    p.torch = std::move(torch);
    return recommend(data(), gpu(name), p, distro ? data().find_distro(distro) : nullptr);
}

std::string error_of(const Result<Recommendation>& r) {
    EXPECT_FALSE(r.ok());
    return r.ok() ? "" : r.status().message();
}

TEST(StackRecommend, EveryCatalogGpuGetsAStackThatRunsOnIt) {
    for (const auto& g : plan::builtin_hardware().gpus) {
        auto r = rec(g.id, {}, {}, "ubuntu2404");
        ASSERT_TRUE(r.ok()) << g.id << ": " << r.status().message();
        ASSERT_NE(r->build, nullptr) << g.id;
        EXPECT_TRUE(r->judged);
        for (auto cc : r->gpu.ccs) {
            EXPECT_NE(build_arch_fit(*r->build, cc), ArchFit::kNone) << g.id;
            EXPECT_EQ(cuda_gpu_fit(data(), r->cuda, cc), CudaGpuFit::kSupported) << g.id;
        }
        // The driver runs the CUDA build natively and has not ended.
        ASSERT_NE(r->branch, nullptr) << g.id;
        EXPECT_GE(branch_cuda(data(), r->driver_branch), r->cuda) << g.id;
        EXPECT_FALSE(branch_ended(data(), *r->branch)) << g.id;
        EXPECT_GE(compare_versions(r->driver_min, data().find_cuda(r->cuda)->toolkit_driver), 0);
        EXPECT_EQ(r->components.size(), 6u) << g.id;
        for (const auto& c : r->components) {
            EXPECT_FALSE(c.version.empty()) << g.id << " " << c.name;
            EXPECT_FALSE(c.why.empty()) << g.id << " " << c.name;
            EXPECT_FALSE(c.source.empty()) << g.id << " " << c.name;
        }
        EXPECT_FALSE(install_steps(*r, *data().find_distro("ubuntu2404")).empty()) << g.id;
    }
}

TEST(StackRecommend, NamesAreAcceptedWithoutCaseOrPunctuation) {
    for (const char* name : {"H100-SXM", "h100 sxm", "H100 SXM5 80GB", "h100_sxm", "H100"})
        EXPECT_EQ(gpu(name).id, "h100-sxm") << name;
    EXPECT_EQ(gpu("B200").ccs, std::vector<ComputeCapability>{100});
    auto bad = named_gpu(data(), "H1000");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("known: a100-40g-pcie"), std::string::npos);
    EXPECT_NE(bad.status().message().find("b200"), std::string::npos);
}

TEST(StackRecommend, TheNewestReleaseAndItsNewestStableBuild) {
    auto r = rec("h100-sxm");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->torch_version, data().newest_torch());
    EXPECT_FALSE(r->build->experimental);
    for (const auto& b : r->torch->builds)
        if (!b.experimental) {
            EXPECT_LE(b.cuda, r->cuda);
        }
    EXPECT_EQ(pip_install_line(*r), "pip install 'torch==" + r->torch_version +
                                        ".*' --index-url https://download.pytorch.org/whl/" +
                                        cuda_tag(r->cuda));
}

TEST(StackRecommend, LongTermSupportBranchFirst) {
    // CUDA 13.0 runs on R580, a long-term support branch; CUDA 13.2 needs R595 (production).
    auto r = rec("h100-sxm", "13.0");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->driver_branch, 580);
    EXPECT_EQ(r->branch->type, BranchType::kLongTerm);
    EXPECT_EQ(r->driver_min, "580.65.06");
    auto p = rec("h100-sxm", "13.2");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->driver_branch, 595);
    EXPECT_EQ(p->driver_min, "595.45.04");
    // CUDA 12.6: R535 has ended by the data's date, so the long-term R580 runs it.
    auto old = rec("a100-80g-sxm", "12.6");
    ASSERT_TRUE(old.ok());
    EXPECT_EQ(old->driver_branch, 580);
}

TEST(StackRecommend, OpenKernelModules) {
    EXPECT_EQ(rec("b200")->open_modules, OpenModules::kRequired);
    EXPECT_EQ(rec("h100-sxm")->open_modules, OpenModules::kRecommended);
    // Volta: the open modules do not support it, and CUDA 13 no longer does either.
    auto v = rec("v100-sxm2");
    ASSERT_TRUE(v.ok()) << v.status().message();
    EXPECT_EQ(v->open_modules, OpenModules::kUnsupported);
    EXPECT_EQ(v->cuda / 1000, 12);
    EXPECT_LE(v->driver_branch, 580);  // R580 is the last branch for Volta
}

// The known traps: a GPU newer than the CUDA pin, a release without the pinned CUDA, a
// release without the GPU's architecture.
TEST(StackRecommend, PinsThatConflictNameThePinAndTheRule) {
    EXPECT_EQ(error_of(rec("b200", "12.4")).rfind("--cuda 12.4 cannot drive the B200", 0), 0u);
    EXPECT_NE(error_of(rec("b200", "11.8"))
                  .find("compute capability 10.0 (Blackwell) needs CUDA "
                        "12.8 or newer (source: NVIDIA Data Center "
                        "Drivers"),
              std::string::npos);
    EXPECT_EQ(error_of(rec("h100-sxm", "11.8", "2.8"))
                  .rfind("--torch 2.8 ships no CUDA 11.8 "
                         "build (cu126, cu128, cu129",
                         0),
              0u);
    const auto no_arch = error_of(rec("b200", {}, "2.5"));
    EXPECT_EQ(no_arch.rfind("--torch 2.5 has no wheel with kernels for compute capability 10.0", 0),
              0u)
        << no_arch;
    EXPECT_NE(no_arch.find("cu124: sm_50"), std::string::npos) << no_arch;
    EXPECT_NE(error_of(rec("b200", "12.8", "2.12")).find("--torch 2.12 ships no CUDA 12.8 build"),
              std::string::npos);
    EXPECT_NE(error_of(rec("h100-sxm", "12.7")).find("no CUDA 12.7 release in the data"),
              std::string::npos);
    EXPECT_NE(error_of(rec("h100-sxm", {}, "1.13")).find("PyTorch 1.13 is not in the data"),
              std::string::npos);
    EXPECT_NE(error_of(rec("h100-sxm", "cu1x")).find("not a CUDA version"), std::string::npos);
    // Volta with a CUDA 13 pin: the architecture was dropped.
    EXPECT_NE(error_of(rec("v100-sxm2", "13.0")).find("at most CUDA 12.x"), std::string::npos);
}

TEST(StackRecommend, PinsThatFit) {
    // A CUDA pin picks the newest release with that build for the GPU.
    auto r = rec("h100-sxm", "12.4");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->torch_version, "2.6");
    EXPECT_EQ(r->cuda, 12040);
    // A torch pin picks its newest stable build for the GPU; "2.8.1" means the 2.8 series.
    auto t = rec("b200", {}, "2.8.1");
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t->torch_version, "2.8");
    EXPECT_EQ(t->cuda, 12080);  // 12.9 is experimental in 2.8
    // The NCCL its wheels pin (nvidia-nccl-cu12), so the install steps name it.
    EXPECT_EQ(t->build->nccl, "2.27.3");
    // Only an experimental build has the architecture: it is taken, with a warning.
    auto x = rec("b200", {}, "2.7");
    ASSERT_TRUE(x.ok()) << x.status().message();
    EXPECT_EQ(x->cuda, 12080);
    EXPECT_TRUE(x->build->experimental);
    EXPECT_FALSE(x->warnings.empty());
    // cu128 wheels of 2.7 have no sm_70: a V100 gets the 12.6 build.
    auto v = rec("v100-sxm2", {}, "2.7");
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->cuda, 12060);
}

TEST(StackRecommend, ReleasesNewerThanTheDataAreWarningsNotGuesses) {
    auto r = rec("h100-sxm", {}, "2.99");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->judged);
    EXPECT_EQ(r->build, nullptr);
    ASSERT_EQ(r->warnings.size(), 1u);
    EXPECT_NE(r->warnings[0].find("newer than the data (current to " + data().current_to +
                                  "); not judged"),
              std::string::npos);
    EXPECT_TRUE(install_steps(*r, *data().find_distro("debian12")).empty());
    EXPECT_FALSE(recommended_lock(*r, "t"));
    auto c = rec("h100-sxm", "13.9");
    ASSERT_TRUE(c.ok());
    EXPECT_FALSE(c->judged);
}

TEST(StackRecommend, PythonIsTheDistributionsWhenSupported) {
    EXPECT_EQ(rec("h100-sxm", {}, {}, "debian12")->python, "3.11");
    EXPECT_EQ(rec("h100-sxm", {}, {}, "ubuntu2204")->python, "3.10");
    EXPECT_EQ(rec("h100-sxm", {}, {}, "ubuntu2404")->python, "3.12");
    EXPECT_EQ(rec("h100-sxm", {}, "2.8", "ubuntu2204")->python, "3.10");
    auto old = rec("h100-sxm", {}, "2.0", "ubuntu2404");  // 2.0: Python 3.8 to 3.11
    ASSERT_TRUE(old.ok());
    EXPECT_EQ(old->python, "3.11");
}

TEST(StackRecommend, InstallStepsForTheDistribution) {
    auto r = rec("b200", {}, {}, "ubuntu2404");
    ASSERT_TRUE(r.ok());
    std::string all;
    for (const auto& s : install_steps(*r, *data().find_distro("ubuntu2404")))
        all += s.command + "\n";
    const std::string major = std::to_string(r->cuda / 1000);
    const std::string minor = std::to_string(r->cuda % 1000 / 10);
    for (const std::string& want : std::vector<std::string>{
             std::string("wget https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/"
                         "x86_64/cuda-keyring_1.1-1_all.deb"),
             "sudo dpkg -i cuda-keyring_1.1-1_all.deb",
             "nvidia-driver-pinning-" + std::to_string(r->driver_branch), "nvidia-open",
             "cuda-toolkit-" + major + "-" + minor,
             "libcudnn9-cuda-" + major + "=" + r->build->cudnn + "-1",
             "libnccl2=" + r->build->nccl + "-1+cuda" + cuda_text(r->cuda),
             "~/venv/bin/" + pip_install_line(*r)})
        EXPECT_NE(all.find(want), std::string::npos) << want << "\n" << all;
}

TEST(StackRecommend, DistroFromOsRelease) {
    std::string why;
    auto d = resolve_distro(
        data(), "auto",
        RootFs(std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/machines/hgx-8xh100"), why);
    ASSERT_TRUE(d.ok());
    ASSERT_NE(*d, nullptr) << why;
    EXPECT_EQ((*d)->id, "ubuntu2204");
    auto none = resolve_distro(data(), "auto", RootFs("/nonexistent-root"), why);
    ASSERT_TRUE(none.ok());
    EXPECT_EQ(*none, nullptr);
    EXPECT_NE(why.find("os-release"), std::string::npos);
    auto bad = resolve_distro(data(), "fedora44", RootFs("/"), why);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("known: debian12, ubuntu2204, ubuntu2404"),
              std::string::npos);
}

// The recommendation as a lock: doctor's stack.drift passes a machine that has it and names each
// part of one that does not.
TEST(StackRecommend, TheLockIsWhatDoctorChecks) {
    auto r = rec("a100-80g-sxm");
    ASSERT_TRUE(r.ok());
    auto lock = recommended_lock(*r, "2026-09-08T00:00:00Z");
    ASSERT_TRUE(lock);
    auto parsed = stack_lock_from_text(recommended_lock_text(*lock, *r, data()), "stack.lock");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(parsed->versions.at("nvidia_driver"), ">=" + r->driver_min);
    EXPECT_EQ(parsed->versions.at("torch"), r->torch_version + ".*");

    Snapshot good = test::healthy_gpus();
    good.nvidia.version = Fact<std::string>::known(r->driver_min);
    auto& t = good.stack.value().torch.value();
    t.version = r->torch_version + ".0+" + cuda_tag(r->cuda);
    t.cuda = Fact<std::string>::known(cuda_text(r->cuda));
    t.nccl = Fact<std::string>::known(r->build->nccl);
    RuleOptions o;
    o.lock = &*parsed;
    Selection only;
    only.only = {"stack.drift"};
    auto f = judge(good, o, only).front();
    EXPECT_EQ(f.status, FindingStatus::kPass) << f.summary;

    Snapshot bad = test::healthy_gpus();  // torch 2.3.1+cu121
    bad.nvidia.version = Fact<std::string>::known("535.183.01");
    f = judge(bad, o, only).front();
    EXPECT_EQ(f.status, FindingStatus::kFail);
    std::string all;
    for (const auto& e : f.evidence) all += e + "\n";
    EXPECT_NE(all.find("nvidia_driver: locked >=" + r->driver_min + ", now 535.183.01"),
              std::string::npos)
        << all;
    EXPECT_NE(all.find("torch: locked " + r->torch_version + ".*, now 2.3.1+cu121"),
              std::string::npos)
        << all;
}

TEST(StackRecommend, LockValuesMatch) {
    EXPECT_TRUE(lock_value_matches(">=595.45.04", "595.45.04"));
    EXPECT_TRUE(lock_value_matches(">=595.45.04", "610.43.02"));
    EXPECT_FALSE(lock_value_matches(">=595.45.04", "580.126.09"));
    EXPECT_TRUE(lock_value_matches("2.14.*", "2.14.0+cu132"));
    EXPECT_TRUE(lock_value_matches("2.14.*", "2.14"));
    EXPECT_FALSE(lock_value_matches("2.14.*", "2.140.0"));
    EXPECT_FALSE(lock_value_matches("2.14.*", "2.13.1"));
    EXPECT_TRUE(lock_value_matches("550.90.07", "550.90.07"));
    EXPECT_FALSE(lock_value_matches("550.90.07", "550.90.08"));
}

}  // namespace
}  // namespace trainrig::stack
