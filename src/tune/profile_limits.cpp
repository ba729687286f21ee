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
    std::map<std::string, std::string> want = {{"nofile", "1048576"}};
    std::map<std::string, std::string> why = {
        {"nofile",
         "data-loader workers and NCCL open many descriptors; 1024 ends in \"Too many open "
         "files\" (doctor rule files.nofile)"}};
    const bool rdma = s.infiniband.is_known() && !s.infiniband.value().empty();
    if (rdma) {
        want["memlock"] = "unlimited";
        why["memlock"] =
            "RDMA memory registration (InfiniBand, GPUDirect RDMA) counts against "
            "RLIMIT_MEMLOCK and fails with ENOMEM at the 8 MiB default "
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
            want[key] = value;
            why[key] = "set in the overrides file";
            overridden.insert(key);
        }
    }
    std::string file =
        "# Managed by `trainrig tune` (docs/tuning.md). Applies to new login sessions;\n"
        "# systemd services and containers need LimitNOFILE=/LimitMEMLOCK= or --ulimit.\n";
    for (const auto& [key, value] : want) {
        std::optional<Rlimit> now;
        if (key == "nofile" && s.nofile.is_known()) now = s.nofile.value();
        if (key == "memlock") now = live.memlock;
        file += fmt::format("\n# {}\n", why[key]);
        for (const char* kind : {"soft", "hard"}) {
            std::optional<std::string> was;
            if (now) was = limit_text(std::string(kind) == "soft" ? now->soft : now->hard);
            p.settings.push_back({"limits", fmt::format("* {} {}", kind, key), value, was, why[key],
                                  overridden.count(key) ? r.overrides_file : "limits.conf(5)",
                                  overridden.count(key) > 0});
            file += fmt::format("* {} {} {}\n", kind, key, value);
        }
    }
    p.files.push_back({kLimitsFile, file,
                       live.files.count(kLimitsFile) ? live.files.at(kLimitsFile) : std::nullopt});
    return ok_status();
}

}  // namespace trainrig::tune
