// The CUDA backend's decisions before any launch (train/device_fit.h): attention's shared memory
// per head size against each GPU class's opt-in limit, and the sentences a failed kernel setup
// becomes. The limits are the CUDA C Programming Guide's ("Compute Capabilities" table).
#include "train/device_fit.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <utility>

#include "train/attention_smem.h"

namespace trainrig::train {
namespace {

const GpuLimits kA100{"NVIDIA A100-SXM4-80GB", 8, 0, 166912};
const GpuLimits kH100{"NVIDIA H100 80GB HBM3", 9, 0, 232448};
const GpuLimits kRtx4090{"NVIDIA GeForce RTX 4090", 8, 9, 101376};
const GpuLimits kA10{"NVIDIA A10", 8, 6, 101376};

TEST(AttentionSmem, HeadSize128NeedsWhatTheKernelsAllocate) {
    // The figures the layout comment and docs give: dQ 111 KiB, dK/dV 111.5 KiB.
    const AttentionSmem a{128};
    EXPECT_EQ(a.forward_bytes(), 95232u);
    EXPECT_EQ(a.dq_bytes(), 113664u);
    EXPECT_EQ(a.dkv_bytes(), 114176u);
    EXPECT_EQ(a.training_bytes(), 114176u);
    // Head size 64 fits the 99 KiB of compute capability 8.6 and 8.9.
    EXPECT_EQ(AttentionSmem{64}.training_bytes(), 81408u);
    EXPECT_LE(AttentionSmem{64}.training_bytes(), kRtx4090.smem_optin);
    // Each larger head size needs more.
    for (size_t i = 1; i < AttentionSmem::kHeadSizes.size(); ++i)
        EXPECT_GT(AttentionSmem{AttentionSmem::kHeadSizes[i]}.training_bytes(),
                  AttentionSmem{AttentionSmem::kHeadSizes[i - 1]}.training_bytes());
}

// Both backward kernels are built for two blocks per SM (__launch_bounds__): at head size 128
// two of each fit an H100's SM, 228 KiB of shared memory of which the system reserves 1 KiB per
// resident block (CUDA C Programming Guide, "Compute Capabilities" and "Shared Memory").
// At head size 64 (GPT-2 124M), two fit an A100's 164 KiB too.
TEST(AttentionSmem, TwoBackwardBlocksFitAnSm) {
    constexpr size_t kH100Sm = 228 * 1024, kA100Sm = 164 * 1024, kReservedPerBlock = 1024;
    for (const auto& [hs, sm] : {std::pair{128, kH100Sm}, std::pair{64, kA100Sm}}) {
        const AttentionSmem a{hs};
        EXPECT_LE(2 * (a.dq_bytes() + kReservedPerBlock), sm) << hs;
        EXPECT_LE(2 * (a.dkv_bytes() + kReservedPerBlock), sm) << hs;
    }
}

TEST(AttentionFit, DataCentreGpusTakeEveryHeadSize) {
    for (int hs : AttentionSmem::kHeadSizes) {
        EXPECT_TRUE(check_attention_fits(kA100, hs).ok()) << hs;
        EXPECT_TRUE(check_attention_fits(kH100, hs).ok()) << hs;
    }
}

TEST(AttentionFit, A99KiBGpuIsRefusedByNameAtHeadSize128) {
    for (const GpuLimits& g : {kRtx4090, kA10}) {
        const Status s = check_attention_fits(g, 128);
        ASSERT_FALSE(s.ok());
        EXPECT_EQ(s.code(), Errc::kUnsupported);
        EXPECT_NE(s.message().find(g.name), std::string::npos) << s.message();
        EXPECT_NE(s.message().find(fmt::format("compute capability {}.{}", g.cc_major, g.cc_minor)),
                  std::string::npos)
            << s.message();
        EXPECT_NE(s.message().find("at most 101376 bytes (99 KiB)"), std::string::npos)
            << s.message();
        EXPECT_NE(s.message().find("head size 128 needs 114176 bytes (111.5 KiB) in its "
                                   "backward dK/dV kernel"),
                  std::string::npos)
            << s.message();
        EXPECT_NE(s.next_step().find("head size of 64 or less"), std::string::npos)
            << s.next_step();
        for (int hs : {16, 32, 64}) EXPECT_TRUE(check_attention_fits(g, hs).ok()) << hs;
    }
}

TEST(AttentionFit, NoSmallerHeadSizeIsOfferedWhenNoneFits) {
    const GpuLimits tiny{"a GPU of 48 KiB", 7, 5, 49152};
    const Status s = check_attention_fits(tiny, 32);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.next_step().find("head size of"), std::string::npos) << s.next_step();
    EXPECT_NE(s.next_step().find("A100"), std::string::npos) << s.next_step();
}

TEST(KernelSetup, NoKernelImageSaysWhatTheBuildHolds) {
    const GpuLimits v100{"Tesla V100-SXM2-32GB", 7, 0, 98304};
    const Status s =
        kernel_setup_status(v100,
                            {SetupFailure::kNoKernelImage, "attention_forward_kernel", 0,
                             "no kernel image is available for execution on the device"},
                            64, "80-real;90-real;100-real;100-virtual");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("no code that the Tesla V100-SXM2-32GB (compute capability 7.0) "
                               "can run"),
              std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find("native code for compute capability 8.0, 9.0 and 10.0, PTX for "
                               "10.0"),
              std::string::npos)
        << s.message();
    EXPECT_EQ(s.message().find("shared memory"), std::string::npos) << s.message();
    EXPECT_NE(s.next_step().find("8.0 or newer"), std::string::npos) << s.next_step();

    // A GPU the build could cover: rebuild naming it.
    const GpuLimits b300{"NVIDIA B300", 10, 3, 232448};
    const Status r = kernel_setup_status(
        b300, {SetupFailure::kNoKernelImage, "k", 0, "no kernel image"}, 64, "90-real");
    EXPECT_NE(r.next_step().find("-DCMAKE_CUDA_ARCHITECTURES=\"90-real;103-real\""),
              std::string::npos)
        << r.next_step();
}

TEST(KernelSetup, ARefusalNamesTheKernelTheBytesAndTheLimit) {
    const Status s = kernel_setup_status(
        kA100,
        {SetupFailure::kRefused, "attention_backward_dkv_kernel", 200000, "invalid argument"}, 192,
        "80-real");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("refused 200000 bytes (195.3 KiB) of shared memory per block for "
                               "attention_backward_dkv_kernel (head size 192; it grants at most "
                               "166912 bytes (163 KiB))"),
              std::string::npos)
        << s.message();
}

TEST(KernelSetup, DescribesCudaArchitectureLists) {
    EXPECT_EQ(describe_cuda_architectures("80-real;90-real;100-real;100-virtual"),
              "native code for compute capability 8.0, 9.0 and 10.0, PTX for 10.0");
    EXPECT_EQ(describe_cuda_architectures("90"),
              "native code for compute capability 9.0, PTX for 9.0");
    EXPECT_EQ(describe_cuda_architectures("90a-real"), "native code for compute capability 9.0a");
    EXPECT_EQ(describe_cuda_architectures(""), "native code for compute capability none");
}

}  // namespace
}  // namespace trainrig::train
