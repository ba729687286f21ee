#include "watch/history.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <utility>

namespace trainrig::watch {
namespace {

constexpr int kSchemaVersion = 1;

// A prepared statement, finalized when it goes out of scope.
class Statement {
public:
    Statement(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
    ~Statement() { sqlite3_finalize(s_); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    explicit operator bool() const { return s_ != nullptr; }
    sqlite3_stmt* get() { return s_; }

    void bind(int i, double v) { sqlite3_bind_double(s_, i, v); }
    void bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
    void bind(int i, const std::string& v) {
        sqlite3_bind_text(s_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    }
    template <class T>
    void bind(int i, const std::optional<T>& v) {
        if (!v)
            sqlite3_bind_null(s_, i);
        else if constexpr (std::is_floating_point_v<T>)
            bind(i, static_cast<double>(*v));
        else
            bind(i, static_cast<int64_t>(*v));
    }
    int step() { return sqlite3_step(s_); }
    void reset() {
        sqlite3_reset(s_);
        sqlite3_clear_bindings(s_);
    }
    std::optional<double> real(int col) {
        if (sqlite3_column_type(s_, col) == SQLITE_NULL) return std::nullopt;
        return sqlite3_column_double(s_, col);
    }
    int64_t integer(int col) { return sqlite3_column_int64(s_, col); }
    std::string text(int col) {
        const auto* t = sqlite3_column_text(s_, col);
        return t ? reinterpret_cast<const char*>(t) : "";
    }

private:
    sqlite3_stmt* s_ = nullptr;
};

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS gpus (gpu INTEGER PRIMARY KEY, uuid TEXT, name TEXT, pci_bus_id TEXT);
CREATE TABLE IF NOT EXISTS samples (
    time REAL NOT NULL, gpu INTEGER NOT NULL, state INTEGER NOT NULL,
    utilization REAL, memory_used REAL, temperature REAL, power REAL, energy REAL,
    sm_clock REAL, clock_event_reasons INTEGER, pcie_replays INTEGER, ecc_uncorrected INTEGER);
CREATE INDEX IF NOT EXISTS samples_by_time ON samples (time);
CREATE TABLE IF NOT EXISTS alerts (
    at REAL NOT NULL, since REAL NOT NULL, rule TEXT NOT NULL, severity TEXT NOT NULL,
    firing INTEGER NOT NULL, gpu INTEGER, uuid TEXT, pci_bus_id TEXT, xid INTEGER,
    count INTEGER NOT NULL, value REAL, summary TEXT NOT NULL, remedy TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS alerts_by_time ON alerts (at);
)";

}  // namespace

Status History::error(const char* what) const {
    return Status{Errc::kIo, fmt::format("history {}: {}: {}", path_, what, sqlite3_errmsg(db_)),
                  sqlite3_errcode(db_) == SQLITE_FULL ? "free space on its disk, or lower "
                                                        "--history-max-size"
                                                      : ""};
}

Status History::exec(const char* sql) {
    char* msg = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) == SQLITE_OK) return {};
    std::string m = msg ? msg : sqlite3_errmsg(db_);
    sqlite3_free(msg);
    return Status{Errc::kIo, fmt::format("history {}: {}", path_, m)};
}

Result<History> History::open(const std::string& path, HistoryLimits limits) {
    sqlite3* db = nullptr;
    const int rc =
        sqlite3_open_v2(path.c_str(), &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    History h(db);
    h.path_ = path;
    h.limits_ = limits;
    if (rc != SQLITE_OK)
        return Status{Errc::kIo, fmt::format("cannot open the history {}: {}", path,
                                             db ? sqlite3_errmsg(db) : "out of memory")};
    sqlite3_busy_timeout(db, 2000);
    // auto_vacuum must be chosen before the first table exists; it lets pruning give space back.
    if (Status s = h.exec("PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL; "
                          "PRAGMA synchronous = NORMAL;");
        !s.ok())
        return Status{Errc::kInvalidInput,
                      fmt::format("{} is not a watch history (SQLite): {}", path, s.message())};
    // A database with tables of its own must already be a watch history: never add ours to it.
    Statement tables(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'");
    const bool fresh = tables && tables.step() == SQLITE_ROW && tables.integer(0) == 0;
    if (!fresh) TRAINRIG_TRY(h.check_schema(false));
    TRAINRIG_TRY(h.exec(kSchema));
    TRAINRIG_TRY(h.check_schema(true));
    return h;
}

Status History::check_schema(bool create) {
    const std::string want = fmt::format("trainrig.watch.history/{}", kSchemaVersion);
    Statement get(db_, "SELECT value FROM meta WHERE key = 'schema'");
    if (get && get.step() == SQLITE_ROW) {
        if (get.text(0) == want) return {};
        return Status{Errc::kInvalidInput,
                      fmt::format("{} holds \"{}\", not a {}", path_, get.text(0), want)};
    }
    if (!create)
        return Status{Errc::kInvalidInput,
                      fmt::format("{} is not a trainrig watch history (no {} in its meta table)",
                                  path_, want)};
    return exec(fmt::format("INSERT INTO meta VALUES ('schema', '{}')", want).c_str());
}

Result<History> History::open_to_read(const std::string& path) {
    // Read-write (never creating), with writes refused: only a connection that may write can
    // checkpoint the WAL and remove the -wal and -shm files when it is the last to close, as
    // after a watch that was killed. Where the file cannot be written, read-only it is.
    sqlite3* db = nullptr;
    int rc =
        sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3_close_v2(db);
        db = nullptr;
        rc =
            sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
    }
    History h(db);
    h.path_ = path;
    if (rc != SQLITE_OK)
        return Status{Errc::kIo, fmt::format("cannot open the history {}: {}", path,
                                             db ? sqlite3_errmsg(db) : "out of memory")};
    sqlite3_busy_timeout(db, 2000);
    if (!sqlite3_db_readonly(db, "main")) TRAINRIG_TRY(h.exec("PRAGMA query_only = 1"));
    TRAINRIG_TRY(h.check_schema(false));
    return h;
}

History::History(History&& o) noexcept
    : db_(std::exchange(o.db_, nullptr)),
      limits_(o.limits_),
      path_(std::move(o.path_)),
      stored_gpus_(std::move(o.stored_gpus_)) {}

History::~History() {
    if (db_) sqlite3_close_v2(db_);
}

Status History::record(const NodeSample& tick, const std::vector<GpuIdentity>& gpus) {
    TRAINRIG_TRY(exec("BEGIN"));
    // A GPU lost since the last start answers with blanks: what was stored about it stays.
    Statement id(db_,
                 "INSERT OR REPLACE INTO gpus VALUES (?1, "
                 "COALESCE(NULLIF(?2, ''), (SELECT uuid FROM gpus WHERE gpu = ?1), ''), "
                 "COALESCE(NULLIF(?3, ''), (SELECT name FROM gpus WHERE gpu = ?1), ''), "
                 "COALESCE(NULLIF(?4, ''), (SELECT pci_bus_id FROM gpus WHERE gpu = ?1), ''))");
    Statement ins(db_, "INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    if (!id || !ins) {
        Status s = error("prepare");
        (void)exec("ROLLBACK");
        return s;
    }
    const bool same = gpus.size() == stored_gpus_.size() &&
                      std::equal(gpus.begin(), gpus.end(), stored_gpus_.begin(),
                                 [](const GpuIdentity& a, const GpuIdentity& b) {
                                     return a.index == b.index && a.uuid == b.uuid &&
                                            a.name == b.name && a.bus_id == b.bus_id;
                                 });
    for (const auto& g : same ? std::vector<GpuIdentity>{} : gpus) {
        id.bind(1, static_cast<int64_t>(g.index));
        id.bind(2, g.uuid);
        id.bind(3, g.name);
        id.bind(4, g.bus_id);
        if (id.step() != SQLITE_DONE) {
            Status s = error("write");
            (void)exec("ROLLBACK");
            return s;
        }
        id.reset();
    }
    for (const auto& g : tick.gpus) {
        ins.bind(1, tick.time);
        ins.bind(2, static_cast<int64_t>(g.index));
        ins.bind(3, static_cast<int64_t>(g.state));
        ins.bind(4, g.utilization);
        ins.bind(5, g.memory_used_bytes);
        ins.bind(6, g.temperature_celsius);
        ins.bind(7, g.power_watts);
        ins.bind(8, g.energy_joules);
        ins.bind(9, g.sm_clock_hertz);
        ins.bind(10, g.clock_event_reasons);
        ins.bind(11, g.pcie_replays);
        ins.bind(12, g.ecc_uncorrected);
        if (ins.step() != SQLITE_DONE) {
            Status s = error("write");
            (void)exec("ROLLBACK");
            return s;
        }
        ins.reset();
    }
    if (Status s = exec("COMMIT"); !s.ok()) {
        (void)exec("ROLLBACK");
        return s;
    }
    stored_gpus_ = gpus;
    return {};
}

Status History::record_alert(const Alert& a) {
    Statement ins(db_, "INSERT INTO alerts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    if (!ins) return error("prepare");
    ins.bind(1, a.at);
    ins.bind(2, a.since);
    ins.bind(3, a.rule);
    ins.bind(4, std::string(severity_name(a.severity)));
    ins.bind(5, static_cast<int64_t>(a.firing ? 1 : 0));
    ins.bind(6, a.gpu >= 0 ? std::optional<int64_t>(a.gpu) : std::nullopt);
    ins.bind(7, a.uuid);
    ins.bind(8, a.device);
    ins.bind(9, a.xid ? std::optional<int64_t>(a.xid) : std::nullopt);
    ins.bind(10, static_cast<int64_t>(a.count));
    ins.bind(11, a.value);
    ins.bind(12, a.summary);
    ins.bind(13, a.remedy);
    if (ins.step() != SQLITE_DONE) return error("write an alert");
    return {};
}

Status History::prune(double now) {
    {
        Statement del(db_, "DELETE FROM samples WHERE time < ?");
        Statement del_alerts(db_, "DELETE FROM alerts WHERE at < ?");
        if (!del || !del_alerts) return error("prepare");
        del.bind(1, now - limits_.max_age_seconds);
        del_alerts.bind(1, now - limits_.max_age_seconds);
        if (del.step() != SQLITE_DONE || del_alerts.step() != SQLITE_DONE) return error("prune");
    }
    // Over the size limit: drop the oldest tenth of the ticks until under it (alerts are few
    // and stay for their age).
    for (int round = 0; round < 20; ++round) {
        Statement size(db_,
                       "SELECT page_count * page_size, freelist_count * page_size FROM "
                       "pragma_page_count(), pragma_page_size(), pragma_freelist_count()");
        if (!size || size.step() != SQLITE_ROW) return error("read its size");
        const auto used = static_cast<uint64_t>(size.integer(0) - size.integer(1));
        if (used <= limits_.max_bytes) break;
        Statement oldest(db_,
                         "DELETE FROM samples WHERE time <= (SELECT time FROM samples ORDER BY "
                         "time LIMIT 1 OFFSET (SELECT COUNT(*) / 10 FROM samples))");
        if (!oldest || oldest.step() != SQLITE_DONE) return error("prune");
        if (sqlite3_changes(db_) == 0) break;
    }
    return exec("PRAGMA incremental_vacuum");
}

Status History::save_kmsg_position(const std::string& boot_id, uint64_t seq) {
    Statement put(db_, "INSERT OR REPLACE INTO meta VALUES ('kmsg_position', ?)");
    if (!put) return error("prepare");
    put.bind(1, boot_id + " " + std::to_string(seq));
    if (put.step() != SQLITE_DONE) return error("write");
    return {};
}

std::optional<uint64_t> History::kmsg_position(const std::string& boot_id) {
    Statement get(db_, "SELECT value FROM meta WHERE key = 'kmsg_position'");
    if (!get || get.step() != SQLITE_ROW) return std::nullopt;
    const std::string v = get.text(0);
    const size_t space = v.find(' ');
    if (space == std::string::npos || v.substr(0, space) != boot_id) return std::nullopt;
    return std::strtoull(v.c_str() + space + 1, nullptr, 10);
}

Result<std::vector<StoredSample>> History::samples_since(double since) {
    Statement q(db_,
                "SELECT time, gpu, state, utilization, temperature, power, energy, "
                "clock_event_reasons FROM samples WHERE time >= ? ORDER BY time, gpu");
    if (!q) return error("prepare");
    q.bind(1, since);
    std::vector<StoredSample> out;
    int rc = 0;
    while ((rc = q.step()) == SQLITE_ROW) {
        StoredSample s;
        s.time = *q.real(0);
        s.gpu = static_cast<unsigned>(q.integer(1));
        s.state = static_cast<GpuState>(q.integer(2));
        s.utilization = q.real(3);
        s.temperature = q.real(4);
        s.power = q.real(5);
        s.energy = q.real(6);
        if (auto r = q.real(7)) s.clock_event_reasons = static_cast<uint64_t>(q.integer(7));
        out.push_back(s);
    }
    if (rc != SQLITE_DONE) return error("read");
    return out;
}

Result<std::vector<Alert>> History::alerts_since(double since) {
    Statement q(db_,
                "SELECT at, since, rule, severity, firing, gpu, uuid, pci_bus_id, xid, count, "
                "value, summary, remedy FROM alerts WHERE at >= ? ORDER BY at, rowid");
    if (!q) return error("prepare");
    q.bind(1, since);
    std::vector<Alert> out;
    int rc = 0;
    while ((rc = q.step()) == SQLITE_ROW) {
        Alert a;
        a.at = *q.real(0);
        a.since = *q.real(1);
        a.rule = q.text(2);
        const std::string sev = q.text(3);
        a.severity = sev == "critical" ? Severity::kCritical
                     : sev == "info"   ? Severity::kInfo
                                       : Severity::kWarning;
        a.firing = q.integer(4) != 0;
        a.gpu = q.real(5) ? static_cast<int>(q.integer(5)) : -1;
        a.uuid = q.text(6);
        a.device = q.text(7);
        a.xid = q.real(8) ? static_cast<int>(q.integer(8)) : 0;
        a.count = static_cast<uint64_t>(q.integer(9));
        a.value = q.real(10);
        a.summary = q.text(11);
        a.remedy = q.text(12);
        out.push_back(std::move(a));
    }
    if (rc != SQLITE_DONE) return error("read");
    return out;
}

Result<std::vector<GpuIdentity>> History::gpus() {
    Statement q(db_, "SELECT gpu, uuid, name, pci_bus_id FROM gpus ORDER BY gpu");
    if (!q) return error("prepare");
    std::vector<GpuIdentity> out;
    while (q.step() == SQLITE_ROW)
        out.push_back({static_cast<unsigned>(q.integer(0)), q.text(1), q.text(2), q.text(3)});
    return out;
}

void History::limit_pages_for_test(int pages) {
    (void)exec(fmt::format("PRAGMA max_page_count = {}", pages).c_str());
}

}  // namespace trainrig::watch
