// The small pieces under the GPU layer: bus ids, CPU masks, topology levels, version texts and
// parsers, the CUDA driver table, and PCIe levels from sysfs paths.
#include <gtest/gtest.h>

#include "core/text.h"
#include "nvml/nvml_reader.h"
#include "probe/stack_parsers.h"
#include "stack/cuda_drivers.h"
#include "topo/gpu_matrix.h"

namespace trainrig {
namespace {

TEST(NvmlBusId, NormalisedToSysfsForm) {
    EXPECT_EQ(nvml::normalize_bus_id("00000000:C1:00.0"), "0000:c1:00.0");
    EXPECT_EQ(nvml::normalize_bus_id("0000:41:00.0"), "0000:41:00.0");
    EXPECT_EQ(nvml::normalize_bus_id("00010000:01:00.0"), "10000:01:00.0");
    EXPECT_EQ(nvml::normalize_bus_id(""), "");
}

TEST(NvmlCpuMask, BitsBecomeACpulist) {
    unsigned long words[2] = {0xffffUL | (0xffffUL << 32), 0x3UL};
    EXPECT_EQ(nvml::cpu_mask_to_list(words, 2), "0-15,32-47,64-65");
    unsigned long none[1] = {0};
    EXPECT_EQ(nvml::cpu_mask_to_list(none, 1), "");
}

TEST(FormatCpulist, RoundTripsWithParse) {
    for (const char* text : {"0", "0-3", "0-15,32-47", "1,3,5", "0-1,3-4,7"}) {
        auto cpus = parse_cpulist(text);
        ASSERT_TRUE(cpus);
        EXPECT_EQ(format_cpulist(*cpus), text);
    }
}

TEST(NvmlTopologyLevel, NamesAndLabels) {
    EXPECT_EQ(nvml::topology_level_name(10), "SINGLE");
    EXPECT_EQ(nvml::topology_level_name(50), "SYSTEM");
    EXPECT_EQ(nvml::topology_level_name(7), "LEVEL_7");
    EXPECT_EQ(level_label("SINGLE"), "PIX");
    EXPECT_EQ(level_label("MULTIPLE"), "PXB");
    EXPECT_EQ(level_label("HOSTBRIDGE"), "PHB");
    EXPECT_EQ(level_label("SYSTEM"), "SYS");
    EXPECT_EQ(level_label("LEVEL_7"), "?");
}

TEST(PcieLevel, FromSysfsPaths) {
    const std::string sw = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0";
    EXPECT_EQ(
        pcie_level(sw + "/0000:02:00.0/0000:03:00.0", 0, sw + "/0000:02:01.0/0000:04:00.0", 0),
        "PIX");
    EXPECT_EQ(pcie_level(sw + "/0000:02:00.0/0000:03:00.0/0000:05:00.0/0000:06:00.0", 0,
                         sw + "/0000:02:01.0/0000:04:00.0", 0),
              "PXB");
    EXPECT_EQ(pcie_level("/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0", 0,
                         "/sys/devices/pci0000:40/0000:40:03.1/0000:43:00.0", 0),
              "PHB");
    EXPECT_EQ(pcie_level("/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0", 0,
                         "/sys/devices/pci0000:60/0000:60:01.1/0000:61:00.0", 0),
              "NODE");
    EXPECT_EQ(pcie_level("/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0", 0,
                         "/sys/devices/pci0000:c0/0000:c0:01.1/0000:c1:00.0", 1),
              "SYS");
    EXPECT_EQ(pcie_level("", 0, "/sys/devices/pci0000:c0/0000:c1:00.0", 1), "");
}

TEST(CudaDrivers, TableAndMinorCompatibility) {
    auto r = cuda_driver_requirement(12040);
    ASSERT_TRUE(r);
    EXPECT_STREQ(r->toolkit_driver, "550.54.14");
    EXPECT_STREQ(r->minor_compat, "525.60.13");
    auto future = cuda_driver_requirement(12100);  // a 12.x newer than the table
    ASSERT_TRUE(future);
    EXPECT_EQ(future->toolkit_driver, nullptr);
    EXPECT_STREQ(future->minor_compat, "525.60.13");
    EXPECT_FALSE(cuda_driver_requirement(12070));  // there was no 12.7
    EXPECT_FALSE(cuda_driver_requirement(10020));
    EXPECT_STREQ(cuda_driver_requirement(13000)->minor_compat, "580.65.06");
}

TEST(CudaDrivers, VersionComparison) {
    EXPECT_LT(compare_driver_versions("535.104.05", "535.129.03"), 0);
    EXPECT_GT(compare_driver_versions("550.54.15", "550.54.14"), 0);
    EXPECT_EQ(compare_driver_versions("570.26", "570.26.0"), 0);
    EXPECT_LT(compare_driver_versions("525.60.13", "580.65.06"), 0);
    EXPECT_EQ(cuda_text(12020), "12.2");
    EXPECT_EQ(cuda_text(11080), "11.8");
    EXPECT_EQ(cuda_code("12.4"), 12040);
    EXPECT_EQ(cuda_code("12.6.85"), 12060);
    EXPECT_EQ(cuda_code("13"), 13000);
    EXPECT_EQ(cuda_code("cu124"), 0);
    EXPECT_EQ(cuda_code(""), 0);
}

TEST(StackParsers, NvccVersion) {
    const char* out =
        "nvcc: NVIDIA (R) Cuda compiler driver\n"
        "Copyright (c) 2005-2024 NVIDIA Corporation\n"
        "Built on Thu_Sep_12_02:18:05_PDT_2024\n"
        "Cuda compilation tools, release 12.6, V12.6.77\n"
        "Build cuda_12.6.r12.6/compiler.34841621_0\n";
    EXPECT_EQ(*parse_nvcc_version(out), "12.6.77");
    EXPECT_EQ(*parse_nvcc_version("Cuda compilation tools, release 11.8\n"), "11.8");
    EXPECT_FALSE(parse_nvcc_version("bash: nvcc: command not found"));
}

TEST(StackParsers, NcclVersionText) {
    EXPECT_EQ(nccl_version_text(22304), "2.23.4");
    EXPECT_EQ(nccl_version_text(21903), "2.19.3");
    EXPECT_EQ(nccl_version_text(2708), "2.7.8");
}

TEST(StackParsers, TorchProbeOutput) {
    auto none = parse_torch_probe("{\"torch\": null}\n");
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none);
    auto t = parse_torch_probe(
        "/usr/lib/python3/dist-packages/torch/cuda/__init__.py:1: UserWarning: something\n"
        "{\"torch\": {\"version\": \"2.5.1+cu124\", \"cuda\": \"12.4\", \"nccl\": \"2.21.5\", "
        "\"python\": \"/usr/bin/python3\", \"cuda_available\": true, \"device_count\": 8}}\n");
    ASSERT_TRUE(t);
    ASSERT_TRUE(*t);
    EXPECT_EQ((*t)->version, "2.5.1+cu124");
    EXPECT_EQ((*t)->cuda.value(), "12.4");
    EXPECT_EQ((*t)->nccl.value(), "2.21.5");
    EXPECT_EQ((*t)->device_count.value(), 8);
    auto old = parse_torch_probe(
        "{\"torch\": {\"version\": \"1.9.0\", \"cuda\": null, \"nccl\": 2708, \"python\": \"p\"}}");
    ASSERT_TRUE(old && *old);
    EXPECT_TRUE((*old)->cuda.is_absent());
    EXPECT_EQ((*old)->nccl.value(), "2.7.8");
    EXPECT_FALSE(parse_torch_probe("Traceback (most recent call last):\n  ...\n"));
    EXPECT_FALSE(parse_torch_probe("{\"torch\": {\"cuda\": 1}}"));
}

}  // namespace
}  // namespace trainrig
