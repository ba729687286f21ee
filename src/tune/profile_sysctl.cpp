// The sysctl profile: kernel settings for a training machine, only keys this kernel has.
#include <fmt/format.h>

#include "core/text.h"
#include "doctor/rule.h"
#include "tune/profile.h"

namespace trainrig::tune {

namespace {

// Never lower a limit: fs.file-max is huge on current kernels; raise it only when below this
// (doctor's files.nofile threshold).
constexpr int64_t kFileMax = 1048576;

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
    auto add = [&](const std::string& key, const std::string& value, std::string reason,
                   std::string source) {
        auto it = live.sysctl.find(key);
        if (it == live.sysctl.end()) {
            p.notes.push_back(fmt::format("sysctl {}: this kernel has no such key; left out", key));
            return;
        }
        out.push_back({"sysctl", key, value, it->second, std::move(reason), std::move(source)});
    };
    // At most 10, never raised: doctor passes anything up to 10 and its remedy writes 1. A
    // lower value is written as it is, so applying twice writes the same file.
    {
        auto it = live.sysctl.find("vm.swappiness");
        auto v = it == live.sysctl.end() ? std::nullopt : parse_i64(it->second);
        add("vm.swappiness", std::to_string(v ? std::min<int64_t>(*v, 10) : 10),
            "above 10 the kernel swaps out trainer and data-loader memory under page-cache "
            "pressure (the default is 60); a lower value is kept",
            "TuneD throughput-performance profile (vm.swappiness=10); doctor rule "
            "kernel.swappiness");
    }
    const bool multi_numa = s.topology.is_known() && is_multi_node(s.topology.value());
    if (!s.topology.is_known())
        p.notes.push_back("sysctl kernel.numa_balancing: the topology is unknown; left out");
    else if (multi_numa)
        add("kernel.numa_balancing", "0",
            "automatic NUMA balancing unmaps pages to sample access and migrates them, which "
            "stalls ranks that `trainrig launch` binds to their GPU's node",
            "kernel docs admin-guide/sysctl/kernel.rst (numa_balancing); doctor rule "
            "kernel.numa_balancing");
    else
        p.notes.push_back(
            "sysctl kernel.numa_balancing: one NUMA node, nothing to balance; left out");
    // Raised when below ours; kept in the file once tune wrote it (applying twice is once).
    if (auto it = live.sysctl.find("fs.file-max"); it != live.sysctl.end()) {
        auto v = parse_i64(it->second);
        const auto mine = live.files.find(kSysctlFile);
        const bool written = mine != live.files.end() && mine->second &&
                             mine->second->find("\nfs.file-max = ") != std::string::npos;
        if (v && (*v < kFileMax || written))
            add("fs.file-max", std::to_string(std::max<int64_t>(*v, kFileMax)),
                "data-loader workers, NCCL sockets and checkpoint shards need many descriptors",
                "doctor rule files.nofile");
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
