// Software-stack rules: CUDA runtime / nvcc / torch against the driver, NCCL, fabric manager.
#include <gtest/gtest.h>

#include "core/text.h"
#include "nvml_builder.h"
#include "rule_test_util.h"

namespace trainrig::test {
namespace {

SoftwareStack& stack(Snapshot& s) { return s.stack.value(); }

TEST(StackCudaDriver, RuntimeWithinDriverPasses) {
    auto s = healthy_gpus();
    EXPECT_STATUS(judge_one("stack.cuda-driver", s), kPass);
}

TEST(StackCudaDriver, NewerMajorFailsNamingTheDriver) {
    auto s = healthy_gpus();
    stack(s).cuda_runtime_version = known<int64_t>(13000);
    auto f = judge_one("stack.cuda-driver", s);
    EXPECT_STATUS(f, kFail);
    EXPECT_NE(f.remedy.find("580.65.06"), std::string::npos) << f.remedy;
}

TEST(StackCudaDriver, NewerMinorWarnsThroughMinorVersionCompatibility) {
    auto s = healthy_gpus();
    stack(s).cuda_runtime_version = known<int64_t>(12060);
    auto f = judge_one("stack.cuda-driver", s);
    EXPECT_STATUS(f, kWarn);
    EXPECT_NE(f.remedy.find("560.28.03"), std::string::npos) << f.remedy;
}

TEST(StackCudaDriver, DriverBelowTheMinorCompatFloorFails) {
    auto s = healthy_gpus();
    s.nvml.value().driver_version = known<std::string>("520.61.05");
    s.nvml.value().cuda_driver_version = known<int64_t>(11080);
    stack(s).cuda_runtime_version = known<int64_t>(12020);
    EXPECT_STATUS(judge_one("stack.cuda-driver", s), kFail);
}

TEST(StackCudaDriver, NvccIsJudgedToo) {
    auto s = healthy_gpus();
    stack(s).cuda_runtime_version = Fact<int64_t>::absent();
    stack(s).nvcc_version = known<std::string>("12.9.86");
    stack(s).nvcc_path = "/usr/local/cuda/bin/nvcc";
    EXPECT_STATUS(judge_one("stack.cuda-driver", s), kWarn);
}

TEST(StackCudaDriver, NothingFoundOrNoDriverSkips) {
    auto s = healthy_gpus();
    stack(s).cuda_runtime_version = Fact<int64_t>::absent();
    EXPECT_STATUS(judge_one("stack.cuda-driver", s), kSkip);
    s = healthy_gpus();
    s.nvml = Fact<NvmlFacts>::failed({Errc::kNotFound, "no driver"});
    EXPECT_STATUS(judge_one("stack.cuda-driver", s), kSkip);
}

TEST(StackNccl, TorchAndSystemNcclDifferWarns) {
    auto s = healthy_gpus();
    stack(s).torch.value().nccl = known<std::string>("2.21.5");
    auto f = judge_one("stack.nccl", s);
    EXPECT_STATUS(f, kWarn);
    EXPECT_NE(f.summary.find("2.21.5"), std::string::npos);
}

TEST(StackNccl, SameVersionPassesNoneWarnsOnMultiGpu) {
    auto s = healthy_gpus();
    stack(s).nccl_version = known<int64_t>(21903);
    stack(s).torch.value().nccl = known<std::string>("2.19.3");
    EXPECT_STATUS(judge_one("stack.nccl", s), kPass);
    stack(s).nccl_version = Fact<int64_t>::absent();
    stack(s).torch = Fact<TorchFacts>::absent();
    EXPECT_STATUS(judge_one("stack.nccl", s), kWarn);
}

TEST(StackTorch, Cases) {
    auto s = healthy_gpus();
    EXPECT_STATUS(judge_one("stack.torch", s), kPass);
    stack(s).torch.value().cuda = known<std::string>("12.4");
    EXPECT_STATUS(judge_one("stack.torch", s), kWarn);  // cu124 on a 12.2 driver
    stack(s).torch.value().cuda = known<std::string>("13.0");
    EXPECT_STATUS(judge_one("stack.torch", s), kFail);
    stack(s).torch.value().cuda = Fact<std::string>::absent();
    EXPECT_STATUS(judge_one("stack.torch", s), kFail);  // CPU-only build on a GPU machine
    s = healthy_gpus();
    stack(s).torch.value().cuda_available = Fact<bool>::known(false);
    EXPECT_STATUS(judge_one("stack.torch", s), kFail);
    stack(s).torch = Fact<TorchFacts>::absent();
    EXPECT_STATUS(judge_one("stack.torch", s), kSkip);
}

// Read from the installed metadata, torch was not imported: its CUDA build is judged against the
// driver as before, whether CUDA initialises is not claimed either way.
TEST(StackTorch, MetadataOnlyJudgesTheBuildNotTheImport) {
    auto s = healthy_gpus();
    const Status not_imported{Errc::kUnsupported, "torch was not imported"};
    auto& t = stack(s).torch.value();
    t.cuda_available = Fact<bool>::failed(not_imported);
    t.device_count = Fact<int64_t>::failed(not_imported);
    t.location = "/usr/lib/python3/dist-packages";
    auto f = judge_one("stack.torch", s);
    EXPECT_STATUS(f, kPass);
    EXPECT_NE(f.summary.find("matches the driver"), std::string::npos) << f.summary;
    EXPECT_NE(join(f.evidence, "\n").find("was not asked"), std::string::npos);
    t.cuda = known<std::string>("13.0");
    EXPECT_STATUS(judge_one("stack.torch", s), kFail);  // a newer CUDA than the driver's
    // PyTorch's NCCL unnamed and no system NCCL: not judged, never "no NCCL".
    auto n = healthy_gpus();
    stack(n).nccl_version = Fact<int64_t>::absent();
    stack(n).torch.value().nccl = Fact<std::string>::failed(not_imported);
    EXPECT_STATUS(judge_one("stack.nccl", n), kSkip);
}

TEST(StackRules, NotProbedUnderRootSkip) {
    auto s = healthy_gpus();
    s.stack = Fact<SoftwareStack>::failed({Errc::kUnsupported, "not read under --root"});
    for (const char* id : {"stack.cuda-driver", "stack.nccl", "stack.torch"})
        EXPECT_STATUS(judge_one(id, s), kSkip);
}

PciDevice nvswitch(const std::string& bus) {
    PciDevice d;
    d.address = bus;
    d.vendor = known<uint64_t>(0x10de);
    d.device = known<uint64_t>(0x22a3);
    d.class_code = known<uint64_t>(0x068000);
    return d;
}

TEST(StackFabricManager, Cases) {
    auto s = healthy_gpus();
    EXPECT_STATUS(judge_one("stack.fabric-manager", s), kSkip);  // no NVSwitch
    s.pci_devices.value().push_back(nvswitch("0000:4b:00.0"));
    s.nvidia.fabric_manager_running = known(false);
    EXPECT_STATUS(judge_one("stack.fabric-manager", s), kFail);
    s.nvidia.fabric_manager_running = known(true);
    EXPECT_STATUS(judge_one("stack.fabric-manager", s), kPass);
    // Hopper: the fabric state decides.
    for (auto& g : s.nvml.value().gpus) g.fabric = known(GpuFabric{"completed", "SUCCESS"});
    EXPECT_STATUS(judge_one("stack.fabric-manager", s), kPass);
    nvml_at(s, 2).fabric = known(GpuFabric{"in_progress", "SUCCESS"});
    auto f = judge_one("stack.fabric-manager", s);
    EXPECT_STATUS(f, kFail);
    EXPECT_NE(f.summary.find("GPU 2"), std::string::npos);
    // Right after boot the fabric manager may still be registering the GPUs.
    s.host.uptime_seconds = known(90.0);
    f = judge_one("stack.fabric-manager", s);
    EXPECT_STATUS(f, kSkip);
    EXPECT_NE(f.summary.find("may still be setting it up"), std::string::npos) << f.summary;
}

}  // namespace
}  // namespace trainrig::test
