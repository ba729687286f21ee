// The NVML sampler against the fake library: values in SI units, a lost GPU, and a hung call
// that must not hold up the tick.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "watch/gpu_sampler.h"

namespace trainrig::watch {
namespace {

std::string fixture(const std::string& name) {
    return std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/nvml/" + name;
}

Result<std::unique_ptr<GpuSampler>> open_fake(const std::string& name, double deadline = 2) {
    setenv("TRAINRIG_FAKE_NVML", fixture(name).c_str(), 1);
    nvml::LibraryChoice choice;
    choice.path = TRAINRIG_FAKE_NVML_LIB;
    choice.fake = true;
    return GpuSampler::open(choice, deadline);
}

TEST(GpuSampler, ReadsEveryGpuInBaseUnits) {
    auto s = open_fake("hgx-8xh100.json");
    ASSERT_TRUE(s) << s.status().message();
    GpuSampler& sampler = *s.value();
    ASSERT_EQ(sampler.gpus().size(), 8u);
    EXPECT_EQ(sampler.gpus()[0].name, "NVIDIA H100 80GB HBM3");
    EXPECT_TRUE(sampler.gpus()[0].uuid.starts_with("GPU-"));
    EXPECT_FALSE(sampler.gpus()[0].bus_id.empty());
    EXPECT_FALSE(sampler.driver_version().empty());
    const NodeSample tick = sampler.sample(1234.5);
    EXPECT_EQ(tick.time, 1234.5);
    ASSERT_EQ(tick.gpus.size(), 8u);
    const GpuSample& g = tick.gpus[0];
    EXPECT_EQ(g.state, GpuState::kOk) << g.problem;
    EXPECT_EQ(*g.utilization, 0.0);
    EXPECT_EQ(*g.temperature_celsius, 36);
    EXPECT_DOUBLE_EQ(*g.power_watts, 78.617);
    EXPECT_DOUBLE_EQ(*g.energy_joules, 81292066.943);
    EXPECT_EQ(*g.sm_clock_hertz, 345e6);
    EXPECT_EQ(*g.memory_clock_hertz, 2619e6);
    EXPECT_EQ(*g.memory_used_bytes, 1048576u);
    EXPECT_EQ(*g.memory_total_bytes, 85520809984u);
    EXPECT_EQ(*g.clock_event_reasons, 1u);
    EXPECT_EQ(*g.pcie_replays, 0u);
    EXPECT_EQ(*g.nvlinks_up, 18u);
    EXPECT_EQ(*g.nvlinks_down, 0u);
    EXPECT_EQ(*g.remap_failed, false);
}

TEST(GpuSampler, WhatAGpuDoesNotReportStaysEmpty) {
    auto s = open_fake("rtx4090-workstation.json");
    ASSERT_TRUE(s) << s.status().message();
    const NodeSample tick = s.value()->sample(1);
    ASSERT_FALSE(tick.gpus.empty());
    const GpuSample& g = tick.gpus[0];
    EXPECT_EQ(g.state, GpuState::kOk) << g.problem;
    EXPECT_FALSE(g.ecc_corrected);  // GeForce: no ECC
    EXPECT_FALSE(g.remapped_rows_correctable);
    EXPECT_FALSE(g.nvlinks_up);
    EXPECT_TRUE(g.temperature_celsius);
}

TEST(GpuSampler, LostGpuIsReportedAndTheOthersStillRead) {
    auto s = open_fake("faults/lost-gpu.json");
    ASSERT_TRUE(s) << s.status().message();
    const NodeSample tick = s.value()->sample(1);
    int lost = 0, ok = 0;
    for (const auto& g : tick.gpus) {
        if (g.state == GpuState::kLost) {
            ++lost;
            EXPECT_NE(g.problem.find("GPU_IS_LOST"), std::string::npos) << g.problem;
            EXPECT_FALSE(g.temperature_celsius);
        } else if (g.state == GpuState::kOk) {
            ++ok;
            EXPECT_TRUE(g.temperature_celsius);
        }
    }
    EXPECT_EQ(lost, 1);
    EXPECT_GE(ok, 1);
}

// Runs in a child process: the abandoned call keeps the fake library initialised with the hang
// fixture, which must not leak into the other tests of this process.
void hung_call_scenario() {
    // GPU 1's nvmlDeviceGetTemperature sleeps for an hour.
    auto s = open_fake("faults/hang.json", 0.2);
    if (!s) std::exit(10);
    for (int tick_no = 0; tick_no < 2; ++tick_no) {
        const auto start = std::chrono::steady_clock::now();
        const NodeSample tick = s.value()->sample(1);
        const double took =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (took >= 1.5) std::exit(11);
        if (tick.gpus.size() < 2 || tick.gpus[0].state != GpuState::kOk) std::exit(12);
        if (tick.gpus[1].state != GpuState::kHung) std::exit(13);
        if (tick.gpus[1].problem.find("nvmlDeviceGetTemperature on GPU 1") == std::string::npos)
            std::exit(14);
    }
    std::_Exit(0);  // the hung worker thread is never joined
}

TEST(GpuSampler, HungCallDoesNotHoldUpTheTick) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(hung_call_scenario(), ::testing::ExitedWithCode(0), "");
}

TEST(GpuSampler, NvmlXidEventsArriveAsKernelEvents) {
    // The fixture queues Xid 79 on GPU 1 and Xid 48 on GPU 0 for event sets.
    auto s = open_fake("faults/xid-events.json");
    ASSERT_TRUE(s) << s.status().message();
    std::string why;
    ASSERT_TRUE(s.value()->start_xid_events(why)) << why;
    std::vector<KernelEvent> got;
    for (int i = 0; i < 200 && got.size() < 2; ++i) {
        auto more = s.value()->take_xid_events();
        got.insert(got.end(), more.begin(), more.end());
        if (got.size() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].kind, KernelEvent::Kind::kXid);
    EXPECT_EQ(got[0].xid, 79);
    EXPECT_EQ(got[0].device, s.value()->gpus()[1].bus_id);
    EXPECT_EQ(got[1].xid, 48);
    EXPECT_EQ(got[1].device, s.value()->gpus()[0].bus_id);
    EXPECT_TRUE(s.value()->take_xid_events().empty());  // each once
}

TEST(GpuSampler, NoDriverIsNotFound) {
    auto s = open_fake("faults/init-fails.json");
    ASSERT_FALSE(s);
    unsetenv("TRAINRIG_FAKE_NVML");
    nvml::LibraryChoice choice;
    choice.path = "/nonexistent/libnvidia-ml.so.1";
    auto none = GpuSampler::open(choice, 1);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.status().code(), Errc::kNotFound);
}

}  // namespace
}  // namespace trainrig::watch
