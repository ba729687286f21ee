// The sysctl profile: kernel settings for a training machine, only keys this kernel has.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/text.h"
#include "doctor/rule.h"
#include "tune/profile.h"

namespace trainrig::tune {

using policy::kFileMax;
using policy::kNumaBalancing;
using policy::kSwappiness;

namespace {

std::optional<int64_t> integer(std::string_view w) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    return ec == std::errc() && end == w.data() + w.size() ? std::optional(v) : std::nullopt;
}

// An override's value as the kernel would take it, before anything is written: an integer in
// the kernel's range for the keys tune knows (policy/host_limits.h), and for any other key the
// shape of its live value: as many integers as it holds (net.ipv4.tcp_rmem is three), or one
// line of text where it holds text.
Status check_sysctl_value(const std::string& key, const std::string& value, const std::string& live,
                          const std::string& where) {
    const auto bad = [&](const std::string& what) {
        return Status{Errc::kInvalidInput,
                      fmt::format("{}: [sysctl] {} = \"{}\" {}; the kernel would refuse it", where,
                                  key, value, what)};
    };
    for (const auto* policy : {&kSwappiness, &kNumaBalancing, &kFileMax}) {
        if (key != policy->key) continue;
        const auto v = integer(value);
        if (!v || *v < policy->min || *v > policy->max)
            return bad(
                policy->max == INT64_MAX
                    ? fmt::format("is not an integer of at least {}", policy->min)
                    : fmt::format("is not an integer from {} to {}", policy->min, policy->max));
        return ok_status();
    }
    const auto have = split_ws(live), want = split_ws(value);
    const bool numeric = !have.empty() && std::all_of(have.begin(), have.end(), [](auto w) {
        return integer(w).has_value();
    });
    if (!numeric) return ok_status();
    if (want.size() != have.size() ||
        !std::all_of(want.begin(), want.end(), [](auto w) { return integer(w).has_value(); }))
        return bad(have.size() == 1 ? "is not an integer, as the key holds"
                                    : fmt::format("is not {} integers, as the key holds ({})",
                                                  have.size(), live));
    return ok_status();
}

}  // namespace

Status add_sysctl_profile(const Snapshot& s, const LiveState& live, const TuneRequest& r,
                          Profile& p) {
    if (!r.wants("sysctl")) return ok_status();
    if (!live.proc_sys) {
        if (r.overrides.count("sysctl"))
            return {Errc::kInvalidInput,
                    fmt::format("{}: [sysctl] cannot be checked: /proc/sys is not readable "
                                "here",
                                r.overrides_file)};
        p.notes.push_back("sysctl: /proc/sys is not readable; the kernel's settings are unknown");
        return ok_status();
    }
    std::vector<Setting> out;
    auto add = [&](const policy::SysctlPolicy& policy, int64_t value, std::string reason) {
        auto it = live.sysctl.find(policy.key);
        if (it == live.sysctl.end()) {
            p.notes.push_back(
                fmt::format("sysctl {}: this kernel has no such key; left out", policy.key));
            return;
        }
        Setting x{"sysctl",
                  policy.key,
                  std::to_string(value),
                  it->second,
                  std::move(reason),
                  fmt::format("{}; doctor rule {}", policy.source, policy.rule)};
        x.rule = policy.rule;
        out.push_back(std::move(x));
    };
    auto live_value = [&](const char* key) -> std::optional<int64_t> {
        auto it = live.sysctl.find(key);
        return it == live.sysctl.end() ? std::nullopt : parse_i64(it->second);
    };
    // A value that passes is kept as it is (doctor passes it; applying twice writes the same
    // file); one that does not gets the target.
    auto wanted = [&](const policy::SysctlPolicy& policy) {
        auto v = live_value(policy.key);
        return v && policy.passes(*v) ? *v : policy.target;
    };
    add(kSwappiness, wanted(kSwappiness),
        "above 10 the kernel swaps out trainer and data-loader memory under page-cache "
        "pressure (the default is 60); a lower value is kept");
    const bool multi_numa = s.topology.is_known() && is_multi_node(s.topology.value());
    if (!s.topology.is_known())
        p.notes.push_back("sysctl kernel.numa_balancing: the topology is unknown; left out");
    else if (multi_numa)
        add(kNumaBalancing, kNumaBalancing.target,
            "automatic NUMA balancing unmaps pages to sample access and migrates them, which "
            "stalls ranks that `trainrig launch` binds to their GPU's node");
    else
        p.notes.push_back(
            "sysctl kernel.numa_balancing: one NUMA node, nothing to balance; left out");
    // Raised when below the bound; kept in the file once tune wrote it (applying twice is once).
    if (auto v = live_value(kFileMax.key)) {
        const auto mine = live.files.find(kSysctlFile);
        const bool written = mine != live.files.end() && mine->second &&
                             mine->second->find("\nfs.file-max = ") != std::string::npos;
        if (!kFileMax.passes(*v) || written)
            add(kFileMax, kFileMax.passes(*v) ? *v : kFileMax.target,
                "data-loader workers, NCCL sockets and checkpoint shards need many descriptors");
    }
    // The user's own values replace ours or add keys; only keys this kernel has.
    if (auto it = r.overrides.find("sysctl"); it != r.overrides.end()) {
        for (const auto& [key, value] : it->second) {
            auto have = live.sysctl.find(key);
            if (have == live.sysctl.end())
                return {Errc::kInvalidInput,
                        fmt::format("{}: [sysctl] \"{}\" is not a key of this kernel (no "
                                    "/proc/sys entry); tune writes only keys the kernel has",
                                    r.overrides_file, key)};
            TRAINRIG_TRY(check_sysctl_value(key, value, have->second, r.overrides_file));
            const std::string& name = key;  // a lambda cannot capture a structured binding (C++17)
            auto mine = std::find_if(out.begin(), out.end(),
                                     [&](const Setting& x) { return x.key == name; });
            if (mine == out.end()) {
                out.push_back({"sysctl", key, value, have->second, "set in the overrides file",
                               r.overrides_file, true});
            } else {
                mine->value = value;
                mine->reason = "set in the overrides file (default: " + mine->reason + ")";
                mine->source = r.overrides_file;
                mine->from_override = true;
            }
        }
    }
    std::string file =
        "# Managed by `trainrig tune` (docs/tuning.md): every setting with its reason.\n";
    for (const auto& x : out)
        file += fmt::format("\n# {} ({})\n{} = {}\n", x.reason, x.source, x.key, x.value);
    p.files.push_back({"sysctl", kSysctlFile, file,
                       live.files.count(kSysctlFile) ? live.files.at(kSysctlFile) : std::nullopt});
    p.settings.insert(p.settings.end(), out.begin(), out.end());
    return ok_status();
}

}  // namespace trainrig::tune
