// The limits profile: open files for data loaders and NCCL, locked memory for RDMA.
#include <fmt/format.h>

#include "core/text.h"
#include "tune/profile.h"

namespace trainrig::tune {

namespace {

std::string limit_text(uint64_t v) {
    return v == Rlimit::kUnlimited ? "unlimited" : std::to_string(v);
}

bool valid_limit(const std::string& v) { return v == "unlimited" || parse_u64(v).has_value(); }

}  // namespace

Status add_limits_profile(const Snapshot& s, const LiveState& live, const TuneRequest& r,
                          Profile& p) {
    if (!r.wants("limits")) return ok_status();
    const auto& nofile = policy::kNofile;
    std::map<std::string, std::string> want = {{"nofile", std::to_string(nofile.target)}};
    std::map<std::string, std::string> why = {
        {"nofile", fmt::format("data-loader workers and NCCL open many descriptors; 1024 ends in "
                               "\"Too many open files\"; a limit of {} or more is kept (doctor "
                               "rule {})",
                               nofile.min_soft, nofile.rule)}};
    const bool rdma = s.infiniband.is_known() && !s.infiniband.value().empty();
    if (rdma) {
        want["memlock"] = "unlimited";
        why["memlock"] =
            "RDMA memory registration (InfiniBand, GPUDirect RDMA) counts against "
            "RLIMIT_MEMLOCK and fails with ENOMEM at the default (8 MiB since Linux 5.16, "
            "64 KiB before) "
            "(rdma-core ibv_reg_mr(3); NVIDIA MLNX_OFED docs)";
    } else {
        p.notes.push_back(
            "limits memlock: no InfiniBand/RDMA device; CUDA pins host memory "
            "through the driver, not RLIMIT_MEMLOCK; left out");
    }
    std::set<std::string> overridden;
    if (auto it = r.overrides.find("limits"); it != r.overrides.end()) {
        for (const auto& [key, value] : it->second) {
            if (key != "nofile" && key != "memlock")
                return {Errc::kInvalidInput,
                        fmt::format("{}: [limits] \"{}\" is not one tune manages (nofile, "
                                    "memlock)",
                                    r.overrides_file, key)};
            if (!valid_limit(value))
                return {Errc::kInvalidInput,
                        fmt::format("{}: [limits] {} = \"{}\" is not a number or "
                                    "\"unlimited\"",
                                    r.overrides_file, key, value)};
            if (key == "nofile") {
                // RLIMIT_NOFILE cannot exceed fs.nr_open: setrlimit fails and pam_limits may
                // refuse the login.
                auto nr_open = live.sysctl.count("fs.nr_open")
                                   ? parse_u64(live.sysctl.at("fs.nr_open"))
                                   : std::nullopt;
                if (value == "unlimited" ||
                    (nr_open && parse_u64(value) && *parse_u64(value) > *nr_open))
                    return {Errc::kInvalidInput,
                            fmt::format("{}: [limits] nofile = {} is above fs.nr_open ({}): "
                                        "logins would fail to set it",
                                        r.overrides_file, value,
                                        nr_open ? std::to_string(*nr_open) : "finite")};
            }
            want[key] = value;
            why[key] = "set in the overrides file";
            overridden.insert(key);
        }
    }
    std::string file =
        "# Managed by `trainrig tune` (docs/tuning.md). Applies to new login sessions;\n"
        "# systemd services and containers need LimitNOFILE=/LimitMEMLOCK= or --ulimit.\n";
    for (const auto& [key, wanted] : want) {
        std::optional<Rlimit> now;
        if (key == "nofile" && s.nofile.is_known()) now = s.nofile.value();
        if (key == "memlock" && live.memlock) {
            // /proc/<pid>/limits counts bytes; limits.conf(5) memlock is in KiB.
            now = *live.memlock;
            for (auto* v : {&now->soft, &now->hard})
                if (*v != Rlimit::kUnlimited) *v /= 1024;
        }
        file += fmt::format("\n# {}{}\n", why[key], key == "memlock" ? " (KiB)" : "");
        for (const char* kind : {"soft", "hard"}) {
            std::optional<std::string> was;
            std::string value = wanted;
            if (now) {
                const uint64_t have = std::string(kind) == "soft" ? now->soft : now->hard;
                was = limit_text(have);
                // Never lower a limit the machine already has above ours; open-file limits
                // that doctor passes (soft at least its minimum) are kept as they are.
                auto mine = parse_u64(wanted);
                const bool passes = key == "nofile" && now->soft >= nofile.min_soft;
                if (!overridden.count(key) && mine && (passes || have > *mine)) value = *was;
                if (!overridden.count(key) && have == Rlimit::kUnlimited) value = "unlimited";
            }
            p.settings.push_back({"limits", fmt::format("* {} {}", kind, key), value, was, why[key],
                                  overridden.count(key) ? r.overrides_file : "limits.conf(5)",
                                  overridden.count(key) > 0, key == "nofile" ? nofile.rule : ""});
            file += fmt::format("* {} {} {}\n", kind, key, value);
        }
    }
    p.files.push_back({"limits", kLimitsFile, file,
                       live.files.count(kLimitsFile) ? live.files.at(kLimitsFile) : std::nullopt});
    return ok_status();
}

}  // namespace trainrig::tune
