#include "core/maintenance_window.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <system_error>

#include "core/atomic_file.h"
#include "core/quantity.h"
#include "core/root_fs.h"
#include "core/utc_time.h"

namespace trainrig {

namespace {

constexpr const char* kSchema = "trainrig.maintenance";

Status not_a_window(const std::string& where, const std::string& why) {
    return {Errc::kInvalidInput, fmt::format("{} is not a maintenance window: {}", where, why),
            "end it with `trainrig maintenance end`, or open a new one with `trainrig "
            "maintenance start --for 2h`"};
}

}  // namespace

std::string maintenance_json(const MaintenanceWindow& w) {
    const nlohmann::json doc = {{"schema", kSchema},
                                {"schema_version", 1},
                                {"started_at", utc_iso8601(w.started)},
                                {"until", utc_iso8601(w.until)},
                                {"reason", w.reason},
                                {"by", w.by}};
    return doc.dump(1) + "\n";
}

Result<std::optional<MaintenanceWindow>> active_maintenance(const std::filesystem::path& root,
                                                            std::time_t now) {
    const RootFs fs(root);
    if (!fs.exists(kMaintenanceFile)) return std::optional<MaintenanceWindow>{};
    const std::string where = fs.host_path(kMaintenanceFile).string();
    auto text = fs.read(kMaintenanceFile, 1 << 16);
    if (!text) return text.status();
    const auto doc = nlohmann::json::parse(*text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return not_a_window(where, "not a JSON object");
    if (doc.value("schema", "") != kSchema)
        return not_a_window(where, "no \"schema\": \"trainrig.maintenance\"");
    MaintenanceWindow w;
    const auto time_of = [&](const char* key) -> std::optional<std::time_t> {
        if (!doc.contains(key) || !doc[key].is_string()) return std::nullopt;
        return parse_utc_iso8601(doc[key].get<std::string>());
    };
    const auto started = time_of("started_at"), until = time_of("until");
    if (!started || !until)
        return not_a_window(where, "\"started_at\" and \"until\" must be UTC times");
    w.started = *started;
    w.until = *until;
    if (doc.contains("reason") && doc["reason"].is_string()) w.reason = doc["reason"];
    if (doc.contains("by") && doc["by"].is_string()) w.by = doc["by"];
    if (now >= w.until || now < w.started) return std::optional<MaintenanceWindow>{};
    return std::optional(w);
}

std::filesystem::path maintenance_file(const std::filesystem::path& root) {
    return RootFs(root).host_path(kMaintenanceFile);
}

Status start_maintenance(const std::filesystem::path& root, const MaintenanceWindow& w) {
    const auto path = maintenance_file(root);
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec)
        return {Errc::kIo,
                fmt::format("cannot make {}: {}", path.parent_path().string(), ec.message())};
    return write_file_atomic(path, maintenance_json(w));
}

Status end_maintenance(const std::filesystem::path& root) {
    const auto path = maintenance_file(root);
    std::error_code ec;
    std::filesystem::remove(path, ec);
    if (ec) return {Errc::kIo, fmt::format("cannot remove {}: {}", path.string(), ec.message())};
    return ok_status();
}

std::string maintenance_line(const MaintenanceWindow& w, std::time_t now) {
    std::string who = w.by.empty() ? "" : "by " + w.by;
    if (!w.reason.empty()) who += (who.empty() ? "" : ": ") + w.reason;
    return fmt::format("maintenance until {} ({} left{}{})", utc_iso8601(w.until),
                       format_duration(static_cast<double>(w.until - now)), who.empty() ? "" : ", ",
                       who);
}

}  // namespace trainrig
