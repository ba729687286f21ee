// Applying a profile and undoing it. Before anything changes, every file and live value the
// apply will touch is saved under /var/lib/trainrig/backups/<id>/ with a manifest (written
// last, atomically); then each file is replaced atomically and each live value written; an
// `applied` marker ends it. `rollback` restores a backup's "before" state exactly: files byte
// for byte (or removed, when they did not exist), live values as they were. A crash at any
// point leaves either an incomplete backup (nothing changed yet) or a complete one that
// rollback restores. Everything goes through the root, so tests run inside a fixture tree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/root_fs.h"
#include "core/status.h"
#include "tune/profile.h"

namespace trainrig::tune {

inline constexpr const char* kBackupDir = "/var/lib/trainrig/backups";

struct Change {
    enum class Kind { kFile, kLive };
    Kind kind = Kind::kFile;
    std::string path;                   // machine path: a managed file, a /proc/sys or /sys file
    std::string label;                  // "vm.swappiness", "policy0 scaling_governor", the file
    std::optional<std::string> before;  // content or value now; none = the file does not exist
    std::string after;                  // what apply writes
    // Mode and owner of the file before apply (files that existed); restored with its bytes.
    std::optional<unsigned> mode{};
    unsigned uid = 0, gid = 0;
};

// What applying the profile would change on this machine, in the order it is done.
std::vector<Change> plan_changes(const Profile& p, const RootFs& fs);

struct ApplyReport {
    std::string backup_id;  // empty: nothing to change
    std::vector<Change> changes;
};
// `id` names the backup (the UTC time; "-02", "-03" are appended when taken). A failure part
// way undoes what was changed before it.
Result<ApplyReport> apply_changes(const std::vector<Change>& changes, const RootFs& fs,
                                  const std::string& id);

struct RollbackReport {
    std::string backup_id;
    std::vector<std::string> restored;  // labels
    std::string nothing;                // non-empty: why nothing was done
};
// The newest applied backup, or `id`; refuses an older one while a newer is applied, and a
// file edited since apply unless `force` (the edited bytes are kept in the backup).
Result<RollbackReport> rollback(const RootFs& fs, const std::optional<std::string>& id,
                                bool force = false);

struct StatusReport {
    std::vector<std::string> lines;    // one per backup, newest first, with its state
    std::vector<std::string> drift;    // applied values the machine no longer has
    std::vector<std::string> applied;  // what the latest applied backup set: "label = value", path
    bool interrupted = false;          // an apply stopped part way and was not rolled back
};
Result<StatusReport> tune_status(const RootFs& fs);

// A new backup id: the UTC time, "20261130T064012Z".
std::string backup_id_now();

}  // namespace trainrig::tune
