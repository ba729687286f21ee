// stack.drift: the machine against the environment lock written by `trainrig tune lock` —
// every version and tuning file that changed since. article §4.1 (a version-locked stack) and
// §5.2 (a driver rollback plan needs to know what to roll back to).
#include <fmt/format.h>

#include "doctor/rule.h"
#include "stack/stack_lock.h"

namespace trainrig {

namespace {

std::optional<std::string> lock_given(const Snapshot&, const RuleOptions& o) {
    if (!o.lock) return "no --lock file given";
    return std::nullopt;
}

// Versions only the software-stack probe reads (not under --root, nor in an old snapshot).
bool from_stack(const std::string& name) { return name != "kernel" && name != "nvidia_driver"; }

void check_drift(const Snapshot& s, const RuleOptions& o, Finding& f) {
    const StackLock& lock = *o.lock;
    const auto now = stack_versions(s);
    const bool stack_probed = s.stack.is_known() || s.stack.is_absent();
    std::vector<std::string> drift;
    for (const auto& [name, locked] : lock.versions) {
        if (from_stack(name) && !stack_probed) {
            f.evidence.push_back(fmt::format("{}: locked {}; not read here ({})", name, locked,
                                             s.stack.status().message()));
            continue;
        }
        auto it = now.find(name);
        if (it == now.end())
            drift.push_back(fmt::format("{}: locked {}, now not found", name, locked));
        else if (!lock_value_matches(locked, it->second))
            drift.push_back(fmt::format("{}: locked {}, now {}", name, locked, it->second));
        else if (locked == it->second)
            f.evidence.push_back(fmt::format("{}: {} as locked", name, locked));
        else
            f.evidence.push_back(fmt::format("{}: {} (locked {})", name, it->second, locked));
    }
    if (o.profile_files) {
        for (const auto& [path, locked] : lock.profile) {
            auto it = o.profile_files->find(path);
            const std::optional<std::string> current =
                it == o.profile_files->end() ? std::nullopt : it->second;
            if (current == locked)
                f.evidence.push_back(fmt::format("{}: as locked", path));
            else
                drift.push_back(fmt::format("{}: {} since the lock", path,
                                            !current  ? "removed"
                                            : !locked ? "created"
                                                      : "changed"));
        }
    } else if (!lock.profile.empty()) {
        f.evidence.push_back("tuning files not compared: a snapshot does not carry them");
    }
    for (const auto& d : drift) f.evidence.push_back(d);
    if (!drift.empty()) {
        f.raise(FindingStatus::kFail, fmt::format("{} change(s) since the lock of {}: {}",
                                                  drift.size(), lock.created, drift.front()));
        f.remedy =
            "roll back what changed (the driver, `pip install torch==<locked>`, `trainrig "
            "tune rollback`) or, if the change was meant, lock again with `trainrig tune "
            "lock -o FILE`";
        return;
    }
    f.raise(FindingStatus::kPass,
            fmt::format("matches the lock of {} ({} versions, {} tuning files)", lock.created,
                        lock.versions.size(), lock.profile.size()));
}

}  // namespace

std::vector<Rule> stack_lock_rules() {
    return {
        {"stack.drift",
         "versions and tuning files as locked (--lock)",
         {"training-machine article §4.1 (version locking), §5.2 (rollback plan)"},
         lock_given,
         check_drift},
    };
}

}  // namespace trainrig
