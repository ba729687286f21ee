// The watch history: every tick's GPU values and every alert, in SQLite (WAL mode), kept for a
// bounded age and size, so `watch report` can summarise days of running (docs/watch.md,
// "History"). Also where the kernel-log position is kept, so a restarted watch resumes after the
// last record it read instead of counting the boot's records again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "watch/alert_engine.h"
#include "watch/gpu_sample.h"

struct sqlite3;
struct sqlite3_stmt;

namespace trainrig::watch {

struct HistoryLimits {
    double max_age_seconds = 30 * 86400.0;
    uint64_t max_bytes = uint64_t{2} << 30;
};

// One stored tick of one GPU.
struct StoredSample {
    double time = 0;
    unsigned gpu = 0;
    GpuState state = GpuState::kOk;
    std::optional<double> utilization, temperature, power, energy;
    std::optional<uint64_t> clock_event_reasons;
};

class History {
public:
    // Opens (creating) the database; kInvalidInput when the file is not a watch history.
    static Result<History> open(const std::string& path, HistoryLimits limits = {});
    // Opens an existing history to read (reports): changes nothing, creates nothing.
    static Result<History> open_to_read(const std::string& path);
    History(History&& other) noexcept;
    History& operator=(History&&) = delete;
    ~History();

    Status record(const NodeSample& tick, const std::vector<GpuIdentity>& gpus);
    Status record_alert(const Alert& alert);
    // Deletes what is past the age limit, then the oldest ticks while the file is over its size.
    Status prune(double now);

    // The kernel log's position: the boot it belongs to and the last sequence number read.
    Status save_kmsg_position(const std::string& boot_id, uint64_t seq);
    std::optional<uint64_t> kmsg_position(const std::string& boot_id);

    // For reports, oldest first.
    Result<std::vector<StoredSample>> samples_since(double since);
    Result<std::vector<Alert>> alerts_since(double since);
    Result<std::vector<GpuIdentity>> gpus();

    // For tests: refuse to grow past `pages` pages, as a full disk would.
    void limit_pages_for_test(int pages);

private:
    explicit History(sqlite3* db) : db_(db) {}
    Status check_schema(bool create);
    Status exec(const char* sql);
    Status error(const char* what) const;

    sqlite3* db_ = nullptr;
    HistoryLimits limits_;
    std::string path_;
    std::vector<GpuIdentity> stored_gpus_;  // written once per change, not every tick
};

}  // namespace trainrig::watch
