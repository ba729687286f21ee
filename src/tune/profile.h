// Tuning profiles: the settings this machine should have for training, each with the value it
// has now, the reason and the source. Computed from the Snapshot (doctor's facts) and a few live
// values; pure, so every rule is unit-tested on snapshots. `tune show` prints a profile,
// `tune diff` compares it with the machine (docs/tuning.md lists every setting).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/root_fs.h"
#include "core/status.h"
#include "policy/host_limits.h"
#include "snapshot/snapshot.h"

namespace trainrig::tune {

// The files `tune` owns (defined with the limits doctor judges by, policy/host_limits.h).
inline constexpr const char* kSysctlFile = policy::kSysctlFile;
inline constexpr const char* kLimitsFile = policy::kLimitsFile;
inline constexpr const char* kNcclFile = policy::kNcclFile;

// Why the nccl profile sets nothing, in its file's comment and in `tune show`.
inline constexpr const char* kNcclNothingToSet = "NCCL's own choices suit this machine";

inline const std::vector<std::string>& profile_names() {
    static const std::vector<std::string> names = {"sysctl", "limits", "nccl", "cpu", "numa"};
    return names;
}

struct Setting {
    std::string profile;  // sysctl, limits, nccl, cpu, numa
    std::string key;      // vm.swappiness, "* soft nofile", NCCL_SOCKET_IFNAME, governor, GPU ...
    std::string value;    // what the profile wants; "(unset)" for a variable to remove
    std::optional<std::string> live;  // what the machine has now; none = not set or unknown
    std::string reason;
    std::string source;
    bool from_override = false;
    std::string rule{};  // the doctor rule this setting satisfies; empty = none judges it
    bool changes() const { return !live || *live != value; }
};

struct ManagedFile {
    std::string profile;                  // the profile that owns it
    std::string path;                     // machine path, e.g. /etc/sysctl.d/99-trainrig.conf
    std::string proposed;                 // the whole content tune would write
    std::optional<std::string> existing;  // what is there now; none = absent
};

struct Profile {
    std::vector<Setting> settings;
    std::vector<ManagedFile> files;
    std::vector<std::string> notes;  // what was left out, and why
};

// User overrides from a TOML file: profile -> key -> value (docs/tuning.md).
using Overrides = std::map<std::string, std::map<std::string, std::string>>;
Result<Overrides> parse_overrides(std::string_view text, std::string_view where);

struct TuneRequest {
    std::set<std::string> only;  // empty = every profile
    bool multi_node = false;     // the job spans machines (NCCL bootstraps over sockets)
    Overrides overrides;
    std::string overrides_file;  // for messages
    bool wants(const std::string& profile) const { return only.empty() || only.count(profile); }
};

// Values the Snapshot does not carry, read through the same root.
struct LiveState {
    bool proc_sys = false;                               // /proc/sys could be read at all
    std::map<std::string, std::string> sysctl;           // key -> value, for the keys asked about
    std::optional<Rlimit> memlock;                       // /proc/self/limits "Max locked memory"
    std::optional<std::string> default_route_interface;  // /proc/net/route
    std::map<std::string, std::optional<std::string>> files;  // managed file -> content
    std::vector<std::string> unreadable;  // managed files that exist but could not be read
    // The governors every cpufreq policy offers (scaling_available_governors, intersected);
    // empty when none could be read.
    std::set<std::string> governors;
};

// The governors of Linux's cpufreq (admin-guide/pm/cpufreq.rst), for a machine whose policies
// do not list theirs: an override naming none of them is a typo.
inline const std::set<std::string>& kernel_governors() {
    static const std::set<std::string> names = {"performance", "powersave",    "schedutil",
                                                "ondemand",    "conservative", "userspace"};
    return names;
}
// The interface of the default route in /proc/net/route: destination and mask 0, route up.
std::optional<std::string> parse_default_route(std::string_view route_table);
LiveState read_live_state(const RootFs& fs, const std::vector<std::string>& sysctl_keys);
// The sysctl keys a profile may touch: the defaults and the overrides'.
std::vector<std::string> sysctl_keys_of_interest(const Overrides& overrides);

// --only: each name is one of profile_names().
Status check_profile_names(const std::vector<std::string>& only);
Result<Profile> build_profile(const Snapshot& s, const LiveState& live, const TuneRequest& r);

// Per-profile builders (profile_*.cpp); each appends its settings, file and notes.
Status add_sysctl_profile(const Snapshot& s, const LiveState& live, const TuneRequest& r,
                          Profile& p);
Status add_limits_profile(const Snapshot& s, const LiveState& live, const TuneRequest& r,
                          Profile& p);
Status add_nccl_profile(const Snapshot& s, const LiveState& live, const TuneRequest& r, Profile& p);
Status add_cpu_profile(const Snapshot& s, const LiveState& live, const TuneRequest& r, Profile& p);
Status add_numa_profile(const Snapshot& s, const TuneRequest& r, Profile& p);

}  // namespace trainrig::tune
