// A maintenance window (docs/watch.md, "Maintenance windows"): an operator's word that the node
// is being worked on until a given time (a driver upgrade, a planned reboot). While it holds,
// watch announces no new alert, and npd and slurm healthcheck report nothing new and drain
// nothing; it ends by itself at its end time, so a forgotten window cannot silence a node for
// good. It is a file on the machine, so that it survives the reboot it is often for:
// /var/lib/trainrig/maintenance.json, under --root for a machine tree.
#pragma once

#include <ctime>
#include <filesystem>
#include <optional>
#include <string>

#include "core/status.h"

namespace trainrig {

inline constexpr const char* kMaintenanceFile = "/var/lib/trainrig/maintenance.json";
// The longest window one command opens: a week. Longer work opens a new one.
inline constexpr double kMaxMaintenanceSeconds = 7 * 86400.0;

struct MaintenanceWindow {
    std::time_t started = 0;
    std::time_t until = 0;
    std::string reason;  // the operator's words, or ""
    std::string by;      // the user who opened it
};

// The window in force at `now` on the machine under `root`: none without the file or once it has
// ended. A file that cannot be read or is not a window is an error: the caller says so and acts
// as if there were no window (a broken file must not silence a node).
Result<std::optional<MaintenanceWindow>> active_maintenance(const std::filesystem::path& root,
                                                            std::time_t now);

// Where the window's file is on this host's disk for the machine under `root`.
std::filesystem::path maintenance_file(const std::filesystem::path& root);

// Opens (or replaces) the window, written whole (temp file, fsync, rename).
Status start_maintenance(const std::filesystem::path& root, const MaintenanceWindow& w);
// Ends it now; no file is not an error.
Status end_maintenance(const std::filesystem::path& root);

// "maintenance until 2026-12-07T15:00:00Z (1.50 h left, by root: driver upgrade)".
std::string maintenance_line(const MaintenanceWindow& w, std::time_t now);

// The file's content (schema trainrig.maintenance, version 1; docs/formats.md).
std::string maintenance_json(const MaintenanceWindow& w);

}  // namespace trainrig
