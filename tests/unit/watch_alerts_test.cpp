// Alert rules over time: every scenario feeds ticks with their own timestamps (an injected clock),
// so the exact tick an alert fires or resolves is checked, and nothing sleeps.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/text.h"
#include "doctor/rule.h"
#include "nvml/nvml_api.h"
#include "temp_dir_test.h"
#include "watch/alert_config.h"
#include "watch/alert_engine.h"
#include "watch/gpu_sampler.h"

namespace trainrig::watch {
namespace {

std::vector<GpuIdentity> ids(size_t n) {
    std::vector<GpuIdentity> out;
    for (size_t i = 0; i < n; ++i)
        out.push_back({static_cast<unsigned>(i), "GPU-" + std::to_string(i), "H100",
                       "0000:" + std::to_string(40 + i) + ":00.0"});
    return out;
}

NodeSample tick(double t, size_t gpus, double utilization = 0.9, double temperature = 60) {
    NodeSample n;
    n.time = t;
    for (size_t i = 0; i < gpus; ++i) {
        GpuSample g;
        g.index = static_cast<unsigned>(i);
        g.utilization = utilization;
        g.temperature_celsius = temperature;
        g.temperature_slowdown_celsius = 87;  // an H100's
        g.pcie_replays = 0;
        n.gpus.push_back(g);
    }
    return n;
}

Rule only(const char* name) {
    for (const auto& r : default_rules())
        if (r.name == name) return r;
    ADD_FAILURE() << "no default rule " << name;
    return {};
}

// Feeds ticks t = from..to (1 s apart) built by `make`; returns (time, alert) of each change.
template <class Make>
std::vector<Alert> run(AlertEngine& e, int from, int to, Make make, size_t gpus = 2,
                       const std::vector<KernelEvent>& events_at_from = {}) {
    std::vector<Alert> all;
    for (int t = from; t <= to; ++t) {
        const auto out =
            e.evaluate(make(t), ids(gpus), t == from ? events_at_from : std::vector<KernelEvent>{});
        all.insert(all.end(), out.begin(), out.end());
    }
    return all;
}

TEST(Alerts, TemperatureRampFiresAfterItsDurationAndResolves) {
    AlertEngine e({only("gpu-temperature")});  // within 5 °C of slowdown for 30 s
    // GPU 1 (slowdown at 87 °C, tick()) climbs 1 °C a second from 60 °C: 83 °C, within 5 °C of its
    // slowdown temperature, at t = 23; fires at t = 53.
    auto ramp = [](int t) {
        NodeSample n = tick(t, 2);
        n.gpus[1].temperature_celsius = std::min(60.0 + t, 95.0);
        if (t >= 100) n.gpus[1].temperature_celsius = 70;  // cooling restored
        return n;
    };
    const auto alerts = run(e, 0, 120, ramp);
    ASSERT_EQ(alerts.size(), 2u);
    EXPECT_TRUE(alerts[0].firing);
    EXPECT_EQ(alerts[0].gpu, 1);
    EXPECT_EQ(alerts[0].since, 23);
    EXPECT_EQ(alerts[0].at, 53);
    EXPECT_EQ(alerts[0].uuid, "GPU-1");
    EXPECT_NE(alerts[0].summary.find("temperature 95 °C, slowdown at 87 °C"), std::string::npos)
        << alerts[0].summary;
    EXPECT_FALSE(alerts[0].remedy.empty());
    EXPECT_FALSE(alerts[1].firing);
    EXPECT_EQ(alerts[1].at, 102);  // clear in 3 samples in a row
    EXPECT_TRUE(e.firing().empty());
}

TEST(Alerts, OneOddSampleRaisesNothingWhileASustainedOneIsCaught) {
    // Ticks every 0.5 s, as `watch --interval 0.5`; GPU 0 at or over its slowdown temperature.
    auto at = [](const std::vector<double>& hot_from_to) {
        AlertEngine e(default_rules());
        std::vector<Alert> all;
        for (int i = 0; i <= 80; ++i) {
            const double t = 0.5 * i;
            const bool hot = t >= hot_from_to[0] && t <= hot_from_to[1];
            const auto out = e.evaluate(tick(t, 1, 0.9, hot ? 97 : 60), ids(1), {});
            all.insert(all.end(), out.begin(), out.end());
        }
        return all;
    };
    // One reading of 97 °C (a glitch of the sensor or of the read): nothing at all.
    EXPECT_TRUE(at({10, 10}).empty());
    // Two in a row, still nothing; and a few seconds of it stay under the rule's 10 s.
    EXPECT_TRUE(at({10, 10.5}).empty());
    // Held: gpu-temperature-slowdown fires 10 s after it began, and resolves 3 samples after
    // it ended (gpu-temperature, 30 s, never fires here).
    const auto held = at({5, 25});
    ASSERT_EQ(held.size(), 2u);
    EXPECT_EQ(held[0].rule, "gpu-temperature-slowdown");
    EXPECT_EQ(held[0].severity, Severity::kCritical);
    EXPECT_EQ(held[0].since, 5);
    EXPECT_EQ(held[0].at, 15);
    EXPECT_FALSE(held[1].firing);
    EXPECT_EQ(held[1].at, 26.5);
}

TEST(Alerts, AFiringAlertIsNotEndedByOneOddSample) {
    // Thermal slowdown held for a minute, with one sample in the middle that reads it gone: one
    // alert, not two notifications with a resolution between them.
    Rule r = only("gpu-thermal-slowdown");  // a flag, 10 s
    AlertEngine e({r});
    auto slowed = [](int t) {
        NodeSample n = tick(t, 1);
        if (t != 30) n.gpus[0].clock_event_reasons = nvml::kClocksEventSwThermalSlowdown;
        return n;
    };
    const auto alerts = run(e, 0, 60, slowed, 1);
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_TRUE(alerts[0].firing);
    EXPECT_EQ(alerts[0].at, 10);
}

TEST(Alerts, AFlagSaysWhatItMeansNotItsValueAgainstAHalf) {
    // Thermal slowdown is a 0/1 flag: "1 has been above 0.5" tells a reader nothing.
    auto slowed = [](int t) {
        NodeSample n = tick(t, 1);
        n.gpus[0].clock_event_reasons = nvml::kClocksEventSwThermalSlowdown;
        return n;
    };
    AlertEngine daemon({only("gpu-thermal-slowdown")});  // for 10 s
    const auto fired = run(daemon, 0, 10, slowed, 1);
    ASSERT_EQ(fired.size(), 1u);
    EXPECT_EQ(fired[0].summary,
              "GPU 0 (GPU-0): thermal slowdown is holding its clocks down to cool it (for at "
              "least 10 s)");
    // One look (--once) judges at once: no "for 0 s" either.
    AlertEngine once({only("gpu-thermal-slowdown"), only("gpu-temperature")});
    once.judge_instantly(true);
    auto hot = [&](int t) {
        NodeSample n = slowed(t);
        n.gpus[0].temperature_celsius = 86;  // 1 °C from slowdown
        return n;
    };
    const auto now = run(once, 0, 0, hot, 1);
    ASSERT_EQ(now.size(), 2u);
    for (const auto& a : now) {
        EXPECT_EQ(a.summary.find("above 0.5"), std::string::npos) << a.summary;
        EXPECT_EQ(a.summary.find("for 0 s"), std::string::npos) << a.summary;
    }
}

TEST(Alerts, AThresholdJudgedAtOnceSaysIsNotHasBeenForZeroSeconds) {
    Rule r;
    r.name = "cold";
    r.field = Field::kUtilization;
    r.below = true;
    r.limit = 0.5;
    r.samples = 1;  // the old "fire on one tick"
    AlertEngine e({r});
    const auto fired = run(
        e, 0, 0, [](int t) { return tick(t, 1, 0.2); }, 1);
    ASSERT_EQ(fired.size(), 1u);
    EXPECT_EQ(fired[0].summary, "GPU 0 (GPU-0): utilization 20 % is below 50 %");
}

TEST(Alerts, EveryDoctorTwinIsARealRule) {
    int twins = 0;
    for (const auto& r : default_rules()) {
        if (r.doctor_rule.empty()) continue;
        ++twins;
        EXPECT_NE(find_rule(r.doctor_rule), nullptr) << r.name << " names " << r.doctor_rule;
        EXPECT_NE(r.severity, Severity::kInfo) << r.name;
    }
    EXPECT_GE(twins, 15);
}

TEST(Alerts, OneLookJudgesAtOnceAndCountsSinceTheDriverLoaded) {
    // A GPU at its slowdown temperature with one uncorrectable error since the driver loaded:
    // a daemon waits out nothing here either (for 0, but the rate needs an increase); one look
    // fires both on the first tick, as doctor would.
    auto hot = [](int t) {
        NodeSample n = tick(t, 1, 0.9, 86);  // 1 °C from slowdown: gpu-temperature, for 30 s
        n.gpus[0].ecc_uncorrected = 1;
        return n;
    };
    AlertEngine daemon({only("gpu-temperature"), only("ecc-uncorrected")});
    EXPECT_TRUE(run(daemon, 0, 0, hot, 1).empty());
    AlertEngine once({only("gpu-temperature"), only("ecc-uncorrected")});
    once.judge_instantly(true);
    const auto fired = run(once, 0, 0, hot, 1);
    ASSERT_EQ(fired.size(), 2u);
    EXPECT_EQ(fired[0].rule, "gpu-temperature");
    EXPECT_EQ(fired[1].rule, "ecc-uncorrected");
    EXPECT_NE(fired[1].summary.find("since the driver loaded"), std::string::npos);
    // PCIe replays against the link's own limit (Gen4 x16 when unknown: 15.36 a minute): one
    // look divides the count since the driver loaded by the uptime, as doctor does, and without
    // an uptime of a minute it has no window and stays quiet.
    auto many = [](double uptime) {
        return [uptime](int t) {
            NodeSample n = tick(t, 1);
            n.gpus[0].pcie_replays = 5000;
            if (uptime > 0) n.uptime_seconds = uptime;
            return n;
        };
    };
    for (double uptime : {0.0, 30.0, 86400.0}) {  // none, too short, 3.5 a minute
        AlertEngine replays({only("pcie-replays")});
        replays.judge_instantly(true);
        EXPECT_TRUE(run(replays, 0, 0, many(uptime), 1).empty()) << uptime;
    }
    AlertEngine replays({only("pcie-replays")});
    replays.judge_instantly(true);
    const auto over = run(replays, 0, 0, many(600), 1);  // 500 a minute
    ASSERT_EQ(over.size(), 1u);
    EXPECT_EQ(over[0].severity, Severity::kWarning);
    EXPECT_NE(over[0].summary.find("500.0 per minute over 10 min of uptime, above the 15.36 per "
                                   "minute a healthy Gen4 x16 link allows"),
              std::string::npos)
        << over[0].summary;
}

TEST(Alerts, ABriefPeakDoesNotFire) {
    AlertEngine e({only("gpu-temperature")});
    auto peak = [](int t) { return tick(t, 1, 0.9, t >= 10 && t < 39 ? 85 : 60); };  // 29 s
    EXPECT_TRUE(run(e, 0, 100, peak, 1).empty());
}

TEST(Alerts, LostGpuFiresAtOnceAndResolvesWhenItIsBack) {
    AlertEngine e({only("gpu-lost"), only("gpu-temperature")});
    auto lost = [](int t) {
        NodeSample n = tick(t, 2);
        if (t >= 10 && t < 20) {
            n.gpus[0] = GpuSample{};
            n.gpus[0].index = 0;
            n.gpus[0].state = GpuState::kLost;
            n.gpus[0].problem = "nvmlDeviceGetUtilizationRates: GPU is lost (GPU_IS_LOST)";
        }
        return n;
    };
    const auto alerts = run(e, 0, 30, lost);
    ASSERT_EQ(alerts.size(), 2u);
    EXPECT_EQ(alerts[0].rule, "gpu-lost");
    EXPECT_EQ(alerts[0].at, 10);
    EXPECT_EQ(alerts[0].severity, Severity::kCritical);
    EXPECT_NE(alerts[0].summary.find("GPU 0 (GPU-0) is lost"), std::string::npos);
    EXPECT_FALSE(alerts[1].firing);
    EXPECT_EQ(alerts[1].at, 20);
}

KernelEvent xid(const std::string& device, int code) {
    KernelEvent k;
    k.kind = KernelEvent::Kind::kXid;
    k.device = device;
    k.xid = code;
    k.message = "NVRM: Xid (PCI:" + device + "): " + std::to_string(code) + ", pid=1";
    return k;
}

TEST(Alerts, XidStormIsOneAlertCountingRepeats) {
    AlertEngine e({only("xid-fatal"), only("xid")});
    std::vector<Alert> all;
    for (int t = 0; t < 10; ++t) {
        std::vector<KernelEvent> storm(10, xid("0000:41:00", 79));
        if (t == 5) storm.push_back(xid("0000:41:00", 13));
        auto out = e.evaluate(tick(t, 2), ids(2), storm);
        all.insert(all.end(), out.begin(), out.end());
    }
    ASSERT_EQ(all.size(), 2u);  // Xid 79 once, Xid 13 once
    EXPECT_EQ(all[0].rule, "xid-fatal");
    EXPECT_EQ(all[0].xid, 79);
    EXPECT_EQ(all[0].gpu, 1);  // 0000:41:00 is GPU 1 here
    EXPECT_NE(all[0].summary.find("GPU has fallen off the bus"), std::string::npos);
    EXPECT_NE(all[0].remedy.find("power-cycle"), std::string::npos);  // from the Xid catalog
    EXPECT_EQ(all[1].rule, "xid");
    EXPECT_EQ(all[1].severity, Severity::kWarning);
    const auto firing = e.firing();
    ASSERT_EQ(firing.size(), 2u);
    for (const auto& a : firing) {
        if (a.xid == 79) {
            EXPECT_EQ(a.count, 100u);
        }
    }
    // Resolves once an hour passes without a repeat (xid-fatal holds 3600 s; xid 600 s).
    const auto quiet = run(e, 10, 9 + 3600, [](int t) { return tick(t, 2); });
    ASSERT_EQ(quiet.size(), 2u);
    EXPECT_EQ(quiet[0].rule, "xid");
    EXPECT_EQ(quiet[0].at, 5 + 600);
    EXPECT_EQ(quiet[1].rule, "xid-fatal");
    EXPECT_EQ(quiet[1].at, 9 + 3600);
    EXPECT_NE(quiet[1].summary.find("(100 in all)"), std::string::npos) << quiet[1].summary;
}

TEST(Alerts, IdleGpuWhileTheOthersWorkIsSkew) {
    AlertEngine e({only("utilization-skew")});  // > 20 points off the median for 60 s, busy
    auto one_idle = [](int t) {
        NodeSample n = tick(t, 8, 0.95);
        if (t >= 100) n.gpus[5].utilization = 0.02;
        return n;
    };
    const auto alerts = run(e, 0, 200, one_idle, 8);
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].gpu, 5);
    EXPECT_EQ(alerts[0].at, 160);
    EXPECT_NE(alerts[0].summary.find("utilization 2 % while the node's median is 95 %"),
              std::string::npos)
        << alerts[0].summary;
    // The whole node going idle is not skew: the alert resolves.
    const auto idle = run(
        e, 201, 210, [](int t) { return tick(t, 8, 0.0); }, 8);
    ASSERT_EQ(idle.size(), 1u);
    EXPECT_FALSE(idle[0].firing);
    EXPECT_EQ(idle[0].at, 203);  // clear in 3 samples in a row
}

TEST(Alerts, AllGpusIdleOrOneGpuIsNeverSkew) {
    AlertEngine e({only("utilization-skew")});
    EXPECT_TRUE(run(
                    e, 0, 200, [](int t) { return tick(t, 8, t % 2 ? 0.3 : 0.1); }, 8)
                    .empty());
    AlertEngine single({only("utilization-skew")});
    EXPECT_TRUE(run(
                    single, 0, 200, [](int t) { return tick(t, 1, 0.9); }, 1)
                    .empty());
}

TEST(Alerts, TemperatureSwingsUnderLoadAreInstability) {
    AlertEngine e({only("temperature-stability")});  // std-dev > 3 °C over 600 s, busy
    auto swinging = [](int t) { return tick(t, 1, 0.9, (t / 30) % 2 ? 75 : 65); };
    const auto alerts = run(e, 0, 700, swinging, 1);
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].at, 540);  // the first tick with 90 % of the window covered
    EXPECT_GT(*alerts[0].value, 4.9);
    AlertEngine steady({only("temperature-stability")});
    EXPECT_TRUE(run(
                    steady, 0, 700, [](int t) { return tick(t, 1, 0.9, 70 + (t % 2)); }, 1)
                    .empty());
    // Idle spells restart the window: swings across start/stop of jobs are not judged.
    AlertEngine jobs({only("temperature-stability")});
    auto start_stop = [](int t) {
        return tick(t, 1, (t / 300) % 2 ? 0.0 : 0.9, (t / 300) % 2 ? 35 : 75);
    };
    EXPECT_TRUE(run(jobs, 0, 3000, start_stop, 1).empty());
}

TEST(Alerts, ReplayRateOverAWindowAndCounterResets) {
    AlertEngine e({only("pcie-replays")});  // Gen5 x16: 1.92 x 16 = 30.72 per 60 s
    auto replays = [](int t) {
        NodeSample n = tick(t, 1);
        n.gpus[0].pcie_gen_max = 5;
        n.gpus[0].pcie_width_max = 16;
        n.gpus[0].pcie_replays = t < 100 ? static_cast<uint64_t>(t / 10)           // 6 a minute
                                         : static_cast<uint64_t>(10 + (t - 100));  // 60 a minute
        if (t >= 200) n.gpus[0].pcie_replays = 3;  // driver reloaded: counter reset
        return n;
    };
    const auto alerts = run(e, 0, 300, replays, 1);
    ASSERT_EQ(alerts.size(), 2u);
    EXPECT_TRUE(alerts[0].firing);
    // At t = 127 the 60 s window back to t = 67 holds 37 - 6 = 31 replays.
    EXPECT_EQ(alerts[0].at, 127);
    EXPECT_FALSE(alerts[1].firing);
    EXPECT_EQ(alerts[1].at, 200);
}

TEST(Alerts, ReplayLimitIsEachGpusOwnLink) {
    // 6 replays a minute on both: within a Gen5 x16 link's 30.72, over a Gen3 x8 link's 3.84
    // (DCGM's per-lane rates, policy/gpu_health.h) — the limit doctor's gpu.pcie-replay uses.
    AlertEngine e({only("pcie-replays")});
    auto replays = [](int t) {
        NodeSample n = tick(t, 2);
        n.gpus[0].pcie_gen_max = 5;
        n.gpus[0].pcie_width_max = 16;
        n.gpus[1].pcie_gen_max = 3;
        n.gpus[1].pcie_width_max = 8;
        for (auto& g : n.gpus) g.pcie_replays = static_cast<uint64_t>(t / 10);
        return n;
    };
    const auto alerts = run(e, 0, 120, replays, 2);
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].gpu, 1);
    EXPECT_NE(alerts[0].summary.find("a healthy Gen3 x8 link allows"), std::string::npos)
        << alerts[0].summary;
}

TEST(Alerts, FallenOffTheBusLineIsItsXid79) {
    // The driver logs Xid 79 and a plain "fallen off the bus" line for one event; doctor's
    // kmsg.xid counts them as one Xid 79, and watch raises one alert for them.
    KernelEvent plain;
    plain.kind = KernelEvent::Kind::kFallenOffBus;
    plain.device = "0000:41:00.0";
    plain.message = "NVRM: GPU 0000:41:00.0: GPU has fallen off the bus.";
    AlertEngine e(default_rules());
    const auto out = e.evaluate(tick(0, 2), ids(2), {xid("0000:41:00", 79), plain});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].rule, "xid-fatal");
    EXPECT_EQ(out[0].xid, 79);
    EXPECT_EQ(out[0].gpu, 1);
    EXPECT_EQ(e.firing()[0].count, 2u);
    // The plain line alone is still Xid 79 on its GPU.
    AlertEngine alone(default_rules());
    const auto one = alone.evaluate(tick(0, 2), ids(2), {plain});
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].xid, 79);
    EXPECT_EQ(one[0].severity, Severity::kCritical);
}

TEST(Alerts, NvlinkJudgedAgainstThePart) {
    // As doctor's gpu.nvlink (policy::nvlink_verdict): a board (SXM) link down is critical, a
    // bridge link down on a PCIe card a warning, a card without its bridge nothing, and a node
    // of one GPU is not judged.
    auto links = [](unsigned up, unsigned down, std::optional<int> expected, bool on_board) {
        return [=](int t) {
            NodeSample n = tick(t, 2);
            for (auto& g : n.gpus) {
                g.nvlinks_up = 18;
                g.nvlinks_down = 0;
                g.nvlinks_expected = expected;
                g.nvlink_on_board = on_board;
            }
            n.gpus[1].nvlinks_up = up;
            n.gpus[1].nvlinks_down = down;
            return n;
        };
    };
    const std::vector<Rule> rules = {only("nvlink-degraded"), only("nvlink-down")};
    struct Case {
        std::function<NodeSample(int)> make;
        std::vector<std::string> fired;
    };
    const std::vector<Case> cases = {
        {links(16, 2, 18, true), {"nvlink-degraded", "nvlink-down"}},
        {links(18, 0, 18, true), {}},
        {links(2, 1, 3, false), {"nvlink-degraded"}},
        {links(0, 3, 3, false), {}},
        {links(16, 2, std::nullopt, true), {}},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        AlertEngine e(rules);
        std::vector<std::string> fired;
        for (const auto& a : run(e, 0, 30, cases[i].make, 2)) {  // for 30 s
            EXPECT_EQ(a.gpu, 1);
            fired.push_back(a.rule);
        }
        EXPECT_EQ(fired, cases[i].fired) << "case " << i;
    }
}

TEST(Alerts, LinksAreNotJudgedWhileTheyMayStillBeTraining) {
    // An SXM GPU with two links down from boot: nothing while the machine has been up less than
    // policy::kLinkTrainingGraceSeconds, then nvlink-down once they stay down 30 s more.
    AlertEngine e({only("nvlink-down")});
    auto booted = [](int t) {
        NodeSample n = tick(t, 2);
        for (auto& g : n.gpus) {
            g.nvlinks_up = 18;
            g.nvlinks_down = 0;
            g.nvlinks_expected = 18;
            g.nvlink_on_board = true;
        }
        n.gpus[1].nvlinks_up = 16;
        n.gpus[1].nvlinks_down = 2;
        n.uptime_seconds = 20.0 + t;  // watch started 20 s after boot
        return n;
    };
    const auto alerts = run(e, 0, 400, booted, 2);
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].rule, "nvlink-down");
    EXPECT_EQ(alerts[0].since, policy::kLinkTrainingGraceSeconds - 20);
    EXPECT_EQ(alerts[0].at, policy::kLinkTrainingGraceSeconds - 20 + 30);
    // Links that came up while training raise nothing at all.
    AlertEngine clean({only("nvlink-down"), only("nvlink-degraded")});
    auto trained = [&](int t) {
        NodeSample n = booted(t);
        if (t > 60) n.gpus[1].nvlinks_up = 18, n.gpus[1].nvlinks_down = 0;
        return n;
    };
    EXPECT_TRUE(run(clean, 0, 400, trained, 2).empty());
}

TEST(Alerts, ChangedRulesResolveTheirAlerts) {
    AlertEngine e({only("gpu-lost")});
    NodeSample n = tick(0, 1);
    n.gpus[0].state = GpuState::kLost;
    ASSERT_EQ(e.evaluate(n, ids(1), {}).size(), 1u);
    EXPECT_TRUE(e.replace_rules({only("gpu-lost")}, 1).empty());  // same rule: carries over
    EXPECT_EQ(e.firing().size(), 1u);
    const auto gone = e.replace_rules({only("gpu-temperature")}, 2);
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_FALSE(gone[0].firing);
    EXPECT_TRUE(e.firing().empty());
}

TEST(Alerts, FakeNvmlThermalFixtureFiresOnTime) {
    // The fake NVML answers for a GPU at 91 °C with HW thermal slowdown (tests/fixtures/nvml/
    // faults/thermal.json); ticks are stamped 1 s apart whatever the real clock says.
    setenv("TRAINRIG_FAKE_NVML",
           (std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/nvml/faults/thermal.json").c_str(),
           1);
    nvml::LibraryChoice choice;
    choice.path = TRAINRIG_FAKE_NVML_LIB;
    auto sampler = GpuSampler::open(choice, 2);
    ASSERT_TRUE(sampler) << sampler.status().message();
    AlertEngine e({only("gpu-temperature"), only("gpu-thermal-slowdown")});
    std::vector<Alert> all;
    for (int t = 1000; t <= 1040; ++t) {
        auto out = e.evaluate(sampler.value()->sample(t), sampler.value()->gpus(), {});
        all.insert(all.end(), out.begin(), out.end());
    }
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0].rule, "gpu-thermal-slowdown");
    EXPECT_EQ(all[0].at, 1010);
    EXPECT_EQ(all[0].gpu, 0);
    EXPECT_EQ(all[1].rule, "gpu-temperature");
    EXPECT_EQ(all[1].at, 1030);
    EXPECT_EQ(*all[1].value, 91);
}

// Scenarios through the fake NVML: a fixture is written for each phase, and the sampler is
// opened again (the fake reads its fixture at nvmlInit), while the ticks keep their injected
// times and the engine its state.
class FakeNvmlScenario : public test::TempDirTest {
protected:
    static nlohmann::json load(const std::string& name) {
        std::ifstream in(std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/nvml/" + name);
        return nlohmann::json::parse(in);
    }
    // Ticks t = from..to through a sampler reading `fixture`.
    std::vector<Alert> phase(AlertEngine& e, const nlohmann::json& fixture, int from, int to) {
        const std::string path = (dir_ / ("phase-" + std::to_string(from) + ".json")).string();
        std::ofstream(path) << fixture.dump();
        setenv("TRAINRIG_FAKE_NVML", path.c_str(), 1);
        nvml::LibraryChoice choice;
        choice.path = TRAINRIG_FAKE_NVML_LIB;
        auto sampler = GpuSampler::open(choice, 2);
        EXPECT_TRUE(sampler) << sampler.status().message();
        std::vector<Alert> all;
        if (!sampler) return all;
        for (int t = from; t <= to; ++t) {
            auto out = e.evaluate(sampler.value()->sample(t), sampler.value()->gpus(), {});
            all.insert(all.end(), out.begin(), out.end());
        }
        return all;
    }
};

TEST_F(FakeNvmlScenario, GpuFallsOffTheBusAndComesBack) {
    const nlohmann::json lost = load("faults/lost-gpu.json");
    nlohmann::json back = lost;  // the same machine with GPU 1 answering again
    for (auto& g : back["gpus"]) g.erase("lost");
    AlertEngine e({only("gpu-lost")});
    EXPECT_TRUE(phase(e, back, 0, 9).empty());
    const auto fell = phase(e, lost, 10, 19);
    ASSERT_EQ(fell.size(), 1u);
    EXPECT_TRUE(fell[0].firing);
    EXPECT_EQ(fell[0].at, 10);
    EXPECT_EQ(fell[0].gpu, 1);
    EXPECT_NE(fell[0].summary.find("GPU_IS_LOST"), std::string::npos) << fell[0].summary;
    const auto recovered = phase(e, back, 20, 25);
    ASSERT_EQ(recovered.size(), 1u);
    EXPECT_FALSE(recovered[0].firing);
    EXPECT_EQ(recovered[0].at, 20);
}

TEST_F(FakeNvmlScenario, OneIdleGpuAmongEightBusyOnes) {
    nlohmann::json hgx = load("hgx-8xh100.json");
    for (auto& g : hgx["gpus"]) g["utilization"]["gpu"] = 96;
    hgx["gpus"][6]["utilization"]["gpu"] = 0;
    AlertEngine e({only("utilization-skew")});
    const auto alerts = phase(e, hgx, 1000, 1100);
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].gpu, 6);
    EXPECT_EQ(alerts[0].at, 1060);  // 60 s after the first tick that saw it
    EXPECT_NE(alerts[0].summary.find("utilization 0 % while the node's median is 96 %"),
              std::string::npos)
        << alerts[0].summary;
}

TEST(AlertConfig, OverridesDisablesAndAddsRules) {
    auto c = parse_alert_config(R"(
[[rule]]
name = "gpu-temperature"
above = 85
for = "2m"

[[rule]]
name = "utilization-skew"
enabled = false

[[rule]]
name = "memory-full"
kind = "threshold"
field = "memory_used_ratio"
above = 0.98
for = 30
severity = "info"
remedy = "lower the micro-batch"

[[action]]
kind = "command"
argv = ["/usr/local/bin/page", "--team", "ml"]
timeout = "5s"

[[action]]
kind = "webhook"
url = "http://127.0.0.1:9000/hook"
)",
                                "rules.toml");
    ASSERT_TRUE(c) << c.status().message();
    const auto find = [&](const char* n) -> const Rule* {
        for (const auto& r : c->rules)
            if (r.name == n) return &r;
        return nullptr;
    };
    ASSERT_TRUE(find("gpu-temperature"));
    EXPECT_EQ(find("gpu-temperature")->limit, 85);
    EXPECT_EQ(find("gpu-temperature")->for_seconds, 120);
    EXPECT_FALSE(find("gpu-temperature")->remedy.empty());  // kept from the default
    EXPECT_FALSE(find("utilization-skew"));
    ASSERT_TRUE(find("memory-full"));
    EXPECT_EQ(find("memory-full")->field, Field::kMemoryUsedRatio);
    EXPECT_EQ(find("memory-full")->severity, Severity::kInfo);
    EXPECT_TRUE(find("gpu-lost"));  // the other defaults stay
    ASSERT_EQ(c->actions.size(), 2u);
    EXPECT_EQ(c->actions[0].argv.size(), 3u);
    EXPECT_EQ(c->actions[0].timeout_seconds, 5);
    EXPECT_EQ(c->actions[1].url, "http://127.0.0.1:9000/hook");
}

TEST(AlertConfig, Periods) {
    EXPECT_EQ(parse_period("90s"), 90);
    EXPECT_EQ(parse_period("10m"), 600);
    EXPECT_EQ(parse_period("72h"), 72 * 3600);
    EXPECT_EQ(parse_period("1.5d"), 1.5 * 86400);
    EXPECT_EQ(parse_period("45"), 45);
    EXPECT_FALSE(parse_period(""));
    EXPECT_FALSE(parse_period("ten"));
    EXPECT_FALSE(parse_period("-5m"));
    EXPECT_FALSE(parse_period("5w"));
}

TEST(AlertConfig, DefaultsOffAndXidLists) {
    auto c = parse_alert_config(
        "defaults = false\n[[rule]]\nname = \"ecc\"\nkind = \"event\"\nevent = \"xid\"\n"
        "xid = [48, 94, 95]\nhold = \"1h\"\n",
        "r.toml");
    ASSERT_TRUE(c) << c.status().message();
    ASSERT_EQ(c->rules.size(), 1u);
    EXPECT_EQ(c->rules[0].xids, "48,94,95");
    EXPECT_EQ(c->rules[0].hold_seconds, 3600);
    ASSERT_EQ(c->actions.size(), 1u);  // no [[action]]: JSON lines on stderr
    EXPECT_EQ(c->actions[0].path, "-");
}

TEST(AlertConfig, ReplaysAgainstTheLinkOrAFixedNumber) {
    // The default judges each GPU's own link; a number in the file replaces that, and "link"
    // brings it back on a rule of one's own.
    auto fixed = parse_alert_config("[[rule]]\nname = \"pcie-replays\"\nabove = 100\n", "r.toml");
    ASSERT_TRUE(fixed) << fixed.status().message();
    for (const auto& r : fixed->rules)
        if (r.name == "pcie-replays") {
            EXPECT_FALSE(r.limit_per_link);
            EXPECT_EQ(r.limit, 100);
        }
    auto own = parse_alert_config(
        "[[rule]]\nname = \"replays-5m\"\nkind = \"rate\"\nfield = \"pcie_replays\"\n"
        "above = \"link\"\nwindow = \"5m\"\n",
        "r.toml");
    ASSERT_TRUE(own) << own.status().message();
    EXPECT_TRUE(own->rules.back().limit_per_link);
    EXPECT_EQ(own->rules.back().window_seconds, 300);
}

TEST(AlertConfig, MistakesNameFileLineAndKey) {
    const std::pair<const char*, const char*> cases[] = {
        {"[[rule]]\nname = \"x\"\nkind = \"threshold\"\nfield = \"temp\"\nabove = 1\n",
         "r.toml line 4: \"field\" must be one of utilization"},
        {"[[rule]]\nname = \"x\"\nkind = \"threshold\"\nfield = \"temperature_celsius\"\n"
         "above = 1\nfor = \"ten\"\n",
         "r.toml line 6: \"for\" must be a duration"},
        {"[[rule]]\nname = \"x\"\nkind = \"threshold\"\nfield = \"temperature_celsius\"\n",
         "rule \"x\" needs a limit"},
        {"[[rule]]\nname = \"gpu-lost\"\nsevere = \"critical\"\n",
         "r.toml line 3: unknown key \"severe\""},
        {"[[rule]]\nname = \"r\"\nkind = \"rate\"\nfield = \"temperature_celsius\"\nabove = 1\n",
         "\"field\" must be a counter"},
        {"[[action]]\nkind = \"webhook\"\nurl = \"https://x\"\n", "\"url\" must be an http://"},
        {"[[action]]\nkind = \"mail\"\n", "\"kind\" must be log, command or webhook"},
        {"rule = 1\n", "write \"rule\" as [[rule]] tables"},
        {"[[rule]\n", "r.toml line 1:"},
        {"[[rule]]\nname = \"a\"\nkind = \"event\"\n[[rule]]\nname = \"a\"\nkind = \"event\"\n",
         "a second rule named \"a\""},
        {"[[rule]]\nname = \"r\"\nkind = \"rate\"\nfield = \"ecc_corrected\"\nabove = \"link\"\n",
         "\"link\" is the limit of a rate of pcie_replays"},
        {"[[rule]]\nname = \"pcie-replays\"\nabove = \"lanes\"\n", "a number or \"link\""},
    };
    for (const auto& [text, want] : cases) {
        auto c = parse_alert_config(text, "r.toml");
        ASSERT_FALSE(c) << text;
        EXPECT_NE(c.status().message().find(want), std::string::npos)
            << text << "\n got: " << c.status().message();
    }
}

}  // namespace
}  // namespace trainrig::watch
