// Maintenance windows (core/maintenance_window.h): the file written and read back, a window
// that ends by itself, a broken file that silences nothing; and watch's gate
// (watch/maintenance_gate.h): held back while the window holds, announced when it ends.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/maintenance_window.h"
#include "temp_dir_test.h"
#include "watch/maintenance_gate.h"

namespace trainrig {
namespace {

constexpr std::time_t kNow = 1796638500;  // 2026-12-07 10:15 UTC

class MaintenanceWindowTest : public test::TempDirTest {};

TEST_F(MaintenanceWindowTest, WrittenReadBackAndEndsByItself) {
    EXPECT_FALSE(active_maintenance(dir_, kNow)->has_value());  // no file: none
    ASSERT_TRUE(start_maintenance(dir_, {kNow, kNow + 7200, "driver upgrade", "ops"}).ok());
    auto w = active_maintenance(dir_, kNow + 60);
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_TRUE(w->has_value());
    EXPECT_EQ((*w)->until, kNow + 7200);
    EXPECT_EQ((*w)->reason, "driver upgrade");
    EXPECT_EQ((*w)->by, "ops");
    EXPECT_EQ(maintenance_line(**w, kNow + 60),
              "maintenance until 2026-12-07T12:15:00Z (1.98 h left, by ops: driver upgrade)");
    // At its end it is over, whatever is in the file.
    EXPECT_FALSE(active_maintenance(dir_, kNow + 7200)->has_value());
    ASSERT_TRUE(end_maintenance(dir_).ok());
    EXPECT_FALSE(active_maintenance(dir_, kNow + 60)->has_value());
    EXPECT_TRUE(end_maintenance(dir_).ok());  // nothing to end is fine
}

TEST_F(MaintenanceWindowTest, ABrokenFileIsAnErrorNotASilence) {
    std::filesystem::create_directories(dir_ / "var/lib/trainrig");
    for (const char* text : {"{", "[]", R"({"schema":"other"})",
                             R"({"schema":"trainrig.maintenance","until":"tomorrow"})"}) {
        std::ofstream(dir_ / "var/lib/trainrig/maintenance.json") << text;
        auto w = active_maintenance(dir_, kNow);
        ASSERT_FALSE(w.ok()) << text;
        EXPECT_NE(w.status().message().find("is not a maintenance window"), std::string::npos)
            << w.status().message();
    }
}

watch::Alert alert(const char* rule, int gpu, bool firing, double at) {
    watch::Alert a;
    a.rule = rule;
    a.gpu = gpu;
    a.firing = firing;
    a.since = at;
    a.at = at;
    return a;
}

TEST(MaintenanceGate, HoldsBackWhatFiresInTheWindowAndAnnouncesWhatOutlastsIt) {
    watch::MaintenanceGate gate;
    const MaintenanceWindow w{kNow, kNow + 3600, "reboot", "ops"};
    const auto before = alert("xid", 0, true, 10);
    // An alert from before the window is announced as always, and so is its resolution.
    EXPECT_EQ(gate.pass({before}, {before}, std::nullopt).size(), 1u);
    const auto down = alert("nvlink-down", 1, true, 20);
    const auto hot = alert("gpu-temperature-slowdown", 2, true, 21);
    EXPECT_TRUE(gate.pass({down, hot}, {before, down, hot}, w).empty());
    EXPECT_TRUE(gate.holding());
    auto resolved_before = before;
    resolved_before.firing = false;
    EXPECT_EQ(gate.pass({resolved_before}, {down, hot}, w).size(), 1u);
    // The links came back during the work: its resolution is held back with it.
    auto up = down;
    up.firing = false;
    EXPECT_TRUE(gate.pass({up}, {hot}, w).empty());
    EXPECT_EQ(gate.held(), 1u);
    // The window ends with the GPU still hot: announced now, with its own start.
    const auto out = gate.pass({}, {hot}, std::nullopt);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].rule, "gpu-temperature-slowdown");
    EXPECT_TRUE(out[0].firing);
    EXPECT_EQ(out[0].since, 21);
    EXPECT_FALSE(gate.holding());
    EXPECT_EQ(gate.held(), 0u);
}

TEST(MaintenanceGate, AResolutionAtTheWindowsEndOfAnAlertNeverAnnouncedIsNotSaid) {
    watch::MaintenanceGate gate;
    const MaintenanceWindow w{kNow, kNow + 3600, "", "ops"};
    const auto down = alert("nvlink-down", 1, true, 20);
    EXPECT_TRUE(gate.pass({down}, {down}, w).empty());
    auto up = down;
    up.firing = false;
    EXPECT_TRUE(gate.pass({up}, {}, std::nullopt).empty());
}

}  // namespace
}  // namespace trainrig
