// `watch replay`: a time line of trainrig.watch.sample documents read back and judged on its own
// clock. Every field `watch --once --json` writes comes back as it was; a held condition fires
// when the rule says, a single odd tick raises nothing; a malformed or backward time line is
// refused with the document's number and judges nothing.
#include <gtest/gtest.h>

#include <sstream>

#include "watch/alert_config.h"
#include "watch/replay.h"
#include "watch/sample_json.h"

namespace trainrig::watch {
namespace {

using nlohmann::json;

GpuSample every_field() {
    GpuSample s;
    s.index = 0;
    s.utilization = 0.5, s.memory_utilization = 0.25;
    s.memory_used_bytes = 1ull << 30, s.memory_total_bytes = 80ull << 30;
    s.temperature_celsius = 61, s.temperature_slowdown_celsius = 89;
    s.temperature_max_operating_celsius = 85;
    s.power_watts = 300, s.power_limit_watts = 400, s.energy_joules = 1e7;
    s.sm_clock_hertz = 1.41e9, s.memory_clock_hertz = 1.593e9;
    s.clock_event_reasons = 0x4 | 0x40;
    s.pcie_replays = 7, s.pcie_gen_max = 4, s.pcie_width_max = 16;
    s.ecc_corrected = 3, s.ecc_uncorrected = 0;
    s.remapped_rows_correctable = 1, s.remapped_rows_uncorrectable = 0;
    s.remap_pending = false, s.remap_failed = false;
    s.nvlinks_up = 11, s.nvlinks_down = 1, s.nvlinks_expected = 12;
    s.nvlink_on_board = true;
    return s;
}

json doc_of(double t, const GpuSample& s, double uptime = 86400) {
    json g = {
        {"index", s.index}, {"uuid", "GPU-0"}, {"name", "A100"}, {"pci_bus_id", "0000:41:00.0"}};
    put_gpu_sample(s, g);
    return {{"schema", "trainrig.watch.sample"},
            {"schema_version", 1},
            {"time", t},
            {"uptime_seconds", uptime},
            {"gpus", json::array({g})},
            {"kernel_events", json::array()}};
}

TEST(WatchReplay, EveryFieldComesBackAsWritten) {
    const GpuSample s = every_field();
    auto t = tick_from_json(doc_of(100, s));
    ASSERT_TRUE(t.ok()) << t.status().message();
    ASSERT_EQ(t->sample.gpus.size(), 1u);
    const GpuSample& r = t->sample.gpus[0];
    EXPECT_EQ(r.utilization, s.utilization);
    EXPECT_EQ(r.memory_total_bytes, s.memory_total_bytes);
    EXPECT_EQ(r.temperature_slowdown_celsius, s.temperature_slowdown_celsius);
    EXPECT_EQ(r.temperature_max_operating_celsius, s.temperature_max_operating_celsius);
    EXPECT_EQ(r.energy_joules, s.energy_joules);
    EXPECT_EQ(r.clock_event_reasons, s.clock_event_reasons);
    EXPECT_EQ(r.pcie_replays, s.pcie_replays);
    EXPECT_EQ(r.pcie_width_max, s.pcie_width_max);
    EXPECT_EQ(r.remap_pending, s.remap_pending);
    EXPECT_EQ(r.nvlinks_down, s.nvlinks_down);
    EXPECT_EQ(r.nvlinks_expected, s.nvlinks_expected);
    EXPECT_TRUE(r.nvlink_on_board);
    EXPECT_EQ(t->gpus[0].bus_id, "0000:41:00.0");
    EXPECT_EQ(t->gpus[0].nvlinks_expected, 12);
    EXPECT_EQ(t->sample.uptime_seconds, 86400);
    // And written again, the same document.
    json again = {
        {"index", 0}, {"uuid", "GPU-0"}, {"name", "A100"}, {"pci_bus_id", "0000:41:00.0"}};
    put_gpu_sample(r, again);
    EXPECT_EQ(again, doc_of(100, s)["gpus"][0]);
}

// 60 ticks a second apart; GPU 0 at `hot` °C (slowdown 89) from `from` to `to`.
std::string timeline(int from, int to, double hot = 95) {
    std::string out;
    for (int t = 0; t < 60; ++t) {
        GpuSample s;
        s.temperature_celsius = t >= from && t <= to ? hot : 60;
        s.temperature_slowdown_celsius = 89;
        s.utilization = 0.9;
        out += doc_of(1000 + t, s).dump() + "\n";
    }
    return out;
}

Result<ReplayResult> replay(const std::string& text) {
    std::istringstream in(text);
    return replay_timeline(in, "ticks.json", default_alert_config().rules);
}

TEST(WatchReplay, AHeldConditionFiresOnTimeAndOneTickRaisesNothing) {
    auto held = replay(timeline(10, 40));
    ASSERT_TRUE(held.ok()) << held.status().message();
    EXPECT_EQ(held->ticks, 60u);
    ASSERT_FALSE(held->alerts.empty());
    EXPECT_EQ(held->alerts[0].rule, "gpu-temperature-slowdown");
    EXPECT_EQ(held->alerts[0].check, "gpu.temperature");
    EXPECT_EQ(held->alerts[0].at - held->first, 20);  // 10 s after it began
    const json doc = replay_json(*held);
    EXPECT_EQ(doc["alerts"][0]["offset_seconds"], 20);
    EXPECT_EQ(doc["alerts"][0]["check"], "gpu.temperature");
    EXPECT_FALSE(doc["rules"].empty());
    EXPECT_TRUE(held->firing.empty());  // resolved before the end
    auto spike = replay(timeline(30, 30));
    ASSERT_TRUE(spike.ok());
    EXPECT_TRUE(spike->alerts.empty());
    EXPECT_NE(render_replay_text(*spike).find("no alert fired"), std::string::npos);
}

TEST(WatchReplay, AMalformedOrBackwardTimeLineJudgesNothing) {
    std::string text = timeline(0, 0);
    auto bad = replay(text + "{\"schema\":\"trainrig.watch.sample\",\"time\":\"soon\"}\n");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().message(), "ticks.json: document 61: time: not a number");
    bad = replay(doc_of(2000, GpuSample{}).dump() + doc_of(1999, GpuSample{}).dump());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("document 2: time 1999 is before"), std::string::npos)
        << bad.status().message();
    bad = replay("{\"schema\":\"trainrig.doctor\"}");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("document 1: schema"), std::string::npos);
    bad = replay("");
    EXPECT_FALSE(bad.ok());
    json g = doc_of(1, GpuSample{});
    g["gpus"][0]["clock_event_reasons"] = json::array({"sw_thermal_slowdwn"});
    bad = replay(g.dump());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("gpus[0].clock_event_reasons: \"sw_thermal_slowdwn\""),
              std::string::npos)
        << bad.status().message();
}

}  // namespace
}  // namespace trainrig::watch
