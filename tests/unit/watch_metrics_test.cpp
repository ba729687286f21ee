// Prometheus text writing and the names and values watch exposes.
#include <gtest/gtest.h>

#include "watch/metrics_render.h"
#include "watch/prometheus_text.h"

namespace trainrig::watch {
namespace {

TEST(PrometheusText, EscapesLabelValuesAndHelp) {
    PrometheusText t;
    t.family("x_total", "counter", "a \\ b\nc");
    t.sample({{"name", "a\"b\\c\nd"}}, 3);
    EXPECT_EQ(t.str(),
              "# HELP x_total a \\\\ b\\nc\n# TYPE x_total counter\n"
              "x_total{name=\"a\\\"b\\\\c\\nd\"} 3\n");
}

TEST(PrometheusText, NumbersReadBackExactly) {
    EXPECT_EQ(PrometheusText::number(0), "0");
    EXPECT_EQ(PrometheusText::number(12345678901234.0), "12345678901234");
    EXPECT_EQ(PrometheusText::number(0.25), "0.25");
    EXPECT_EQ(PrometheusText::number(1.0 / 3), "0.3333333333333333");
    EXPECT_EQ(PrometheusText::number(1e300), "1e+300");
    EXPECT_EQ(PrometheusText::number(std::numeric_limits<double>::quiet_NaN()), "NaN");
    EXPECT_EQ(PrometheusText::number(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(PrometheusText, FamilyWithoutSamplesIsLeftOut) {
    PrometheusText t;
    t.family("empty", "gauge", "nothing");
    t.family("full", "gauge", "one");
    t.sample({}, 1);
    EXPECT_EQ(t.str(), "# HELP full one\n# TYPE full gauge\nfull 1\n");
}

WatchView two_gpus() {
    WatchView v;
    v.driver_version = "550.90.07";
    v.gpus = {{0, "GPU-aaa", "NVIDIA H100 80GB HBM3", "0000:41:00.0"},
              {1, "GPU-bbb", "NVIDIA H100 80GB HBM3", "0000:c1:00.0"}};
    v.start_time = 1000;
    v.interval = 1;
    v.ticks = 7;
    NodeSample n;
    n.time = 1010;
    n.seconds = 0.002;
    GpuSample a;
    a.index = 0;
    a.utilization = 0.97;
    a.memory_used_bytes = 1024;
    a.temperature_celsius = 71;
    a.power_watts = 650.5;
    a.energy_joules = 123456.789;
    a.sm_clock_hertz = 1980e6;
    a.clock_event_reasons = 0x4 | 0x40;
    a.ecc_corrected = 2;
    a.ecc_uncorrected = 0;
    a.nvlinks_up = 18;
    a.nvlinks_down = 0;
    GpuSample b;
    b.index = 1;
    b.state = GpuState::kLost;
    b.problem = "nvmlDeviceGetUtilizationRates: GPU is lost (GPU_IS_LOST)";
    n.gpus = {a, b};
    v.last = n;
    KernelEvent x;
    x.kind = KernelEvent::Kind::kXid;
    x.device = "0000:C1:00";
    x.xid = 79;
    v.events.add(x);
    v.events.add(x);
    x.xid = 48;
    x.device = "0000:99:00";  // not one of the GPUs
    v.events.add(x);
    v.kmsg_followed = true;
    return v;
}

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos || text.starts_with(line + "\n");
}

TEST(RenderMetrics, BaseUnitsRatiosAndGpuLabels) {
    const std::string m = render_metrics(two_gpus(), 1010.5);
    EXPECT_TRUE(has_line(m, "trainrig_gpu_utilization_ratio{gpu=\"0\",uuid=\"GPU-aaa\"} 0.97"));
    EXPECT_TRUE(has_line(m, "trainrig_gpu_temperature_celsius{gpu=\"0\",uuid=\"GPU-aaa\"} 71"));
    EXPECT_TRUE(has_line(m, "trainrig_gpu_power_watts{gpu=\"0\",uuid=\"GPU-aaa\"} 650.5"));
    EXPECT_TRUE(
        has_line(m, "trainrig_gpu_energy_joules_total{gpu=\"0\",uuid=\"GPU-aaa\"} 123456.789"));
    EXPECT_TRUE(has_line(m, "trainrig_gpu_sm_clock_hertz{gpu=\"0\",uuid=\"GPU-aaa\"} 1980000000"));
    EXPECT_TRUE(has_line(m, "# TYPE trainrig_gpu_energy_joules_total counter"));
    EXPECT_TRUE(has_line(m,
                         "trainrig_gpu_info{gpu=\"1\",uuid=\"GPU-bbb\",name=\"NVIDIA H100 80GB "
                         "HBM3\",pci_bus_id=\"0000:c1:00.0\",driver_version=\"550.90.07\"} 1"));
    // A value the GPU did not give is left out, not written as 0.
    EXPECT_FALSE(has_line(m, "trainrig_gpu_utilization_ratio{gpu=\"1\",uuid=\"GPU-bbb\"} 0"));
    EXPECT_EQ(m.find("trainrig_gpu_pcie_replays_total"), std::string::npos);
}

TEST(RenderMetrics, StatesAndClockEventReasons) {
    const std::string m = render_metrics(two_gpus(), 1010.5);
    EXPECT_TRUE(has_line(m, "trainrig_gpu_up{gpu=\"0\",uuid=\"GPU-aaa\"} 1"));
    EXPECT_TRUE(has_line(m, "trainrig_gpu_up{gpu=\"1\",uuid=\"GPU-bbb\"} 0"));
    EXPECT_TRUE(has_line(m, "trainrig_gpu_state{gpu=\"1\",uuid=\"GPU-bbb\",state=\"lost\"} 1"));
    EXPECT_TRUE(has_line(m, "trainrig_gpu_state{gpu=\"1\",uuid=\"GPU-bbb\",state=\"ok\"} 0"));
    EXPECT_TRUE(has_line(
        m,
        "trainrig_gpu_clock_event_active{gpu=\"0\",uuid=\"GPU-aaa\",reason=\"sw_power_cap\"} 1"));
    EXPECT_TRUE(has_line(m,
                         "trainrig_gpu_clock_event_active{gpu=\"0\",uuid=\"GPU-aaa\",reason=\"hw_"
                         "thermal_slowdown\"} "
                         "1"));
    EXPECT_TRUE(has_line(
        m, "trainrig_gpu_clock_event_active{gpu=\"0\",uuid=\"GPU-aaa\",reason=\"gpu_idle\"} 0"));
    EXPECT_TRUE(has_line(
        m, "trainrig_gpu_ecc_errors_total{gpu=\"0\",uuid=\"GPU-aaa\",type=\"corrected\"} 2"));
    EXPECT_TRUE(has_line(m, "trainrig_gpu_nvlinks{gpu=\"0\",uuid=\"GPU-aaa\",state=\"up\"} 18"));
}

TEST(RenderMetrics, XidCountedPerGpuAndCodeSoRepeatsStayVisible) {
    const std::string m = render_metrics(two_gpus(), 1010.5);
    EXPECT_TRUE(has_line(m,
                         "trainrig_gpu_xid_events_total{gpu=\"1\",uuid=\"GPU-bbb\",pci_bus_id="
                         "\"0000:C1:00\",xid=\"79\"} 2"));
    EXPECT_TRUE(has_line(m,
                         "trainrig_gpu_xid_events_total{gpu=\"\",uuid=\"\",pci_bus_id=\"0000:99:"
                         "00\",xid=\"48\"} 1"));
}

TEST(RenderMetrics, WatchUpFollowsTheLastTick) {
    WatchView v = two_gpus();
    EXPECT_TRUE(has_line(render_metrics(v, 1011), "trainrig_watch_up 1"));
    EXPECT_TRUE(has_line(render_metrics(v, 1010 + 5), "trainrig_watch_up 0"));  // stale
    v.nvml_problem = "nvmlInit: Unknown Error (UNKNOWN)";
    EXPECT_TRUE(has_line(render_metrics(v, 1011), "trainrig_watch_up 0"));
    EXPECT_TRUE(has_line(render_metrics(v, 1011), "trainrig_watch_nvml_available 0"));
    v.nvml_absent = true;  // no driver at all: nothing is wrong with the watcher
    EXPECT_TRUE(has_line(render_metrics(v, 1011), "trainrig_watch_up 1"));
    EXPECT_TRUE(has_line(render_metrics(v, 1011), "trainrig_watch_ticks_total 7"));
}

TEST(RenderMetrics, EveryFamilyHasHelpAndTypeAndBaseUnitNames) {
    const std::string m = render_metrics(two_gpus(), 1010.5) + render_scrape_duration(0.001);
    size_t pos = 0;
    std::string family;
    while (pos < m.size()) {
        const size_t nl = m.find('\n', pos);
        const std::string line = m.substr(pos, nl - pos);
        pos = nl + 1;
        if (line.starts_with("# HELP ")) {
            family = line.substr(7, line.find(' ', 7) - 7);
            EXPECT_TRUE(family.starts_with("trainrig_")) << family;
            EXPECT_EQ(family.find("percent"), std::string::npos) << family;
            EXPECT_EQ(family.find("celsius_total"), std::string::npos) << family;
            continue;
        }
        if (line.starts_with("# TYPE ")) {
            const bool counter = line.ends_with(" counter");
            EXPECT_EQ(counter, family.ends_with("_total")) << line;
            continue;
        }
        EXPECT_TRUE(line.starts_with(family)) << line << " outside its family " << family;
    }
}

}  // namespace
}  // namespace trainrig::watch
