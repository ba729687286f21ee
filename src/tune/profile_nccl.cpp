// The nccl profile: an environment file with only what helps on this topology — harmful or
// dead variables removed, renamed ones renamed, the socket interface named for multi-node jobs
// without InfiniBand. Never a variable that switches a transport off.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/text.h"
#include "doctor/nccl_env_problems.h"
#include "tune/profile.h"

namespace trainrig::tune {

namespace {

constexpr const char* kNcclDocs = "NCCL docs: Environment Variables";

// PyTorch before 2.2 reads only the old names; renaming would turn the setting off there.
bool torch_before_2_2(const Snapshot& s) {
    if (!s.stack.is_known() || !s.stack.value().torch.is_known()) return false;
    const auto parts = split(s.stack.value().torch.value().version, '.');
    if (parts.size() < 2) return false;
    auto major = parse_i64(parts[0]), minor = parse_i64(parts[1]);
    return major && minor && (*major < 2 || (*major == 2 && *minor < 2));
}

bool variable_name(const std::string& k) {
    return !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
        return std::isupper(static_cast<unsigned char>(c)) ||
               std::isdigit(static_cast<unsigned char>(c)) || c == '_';
    });
}

}  // namespace

Status add_nccl_profile(const Snapshot& s, const LiveState& live, const TuneRequest& r,
                        Profile& p) {
    if (!r.wants("nccl")) return ok_status();
    const std::map<std::string, std::string> none;
    const auto& vars = s.environment.is_known() ? s.environment.value().vars : none;
    auto now = [&](const std::string& k) -> std::optional<std::string> {
        auto it = vars.find(k);
        return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    const std::vector<std::string> ib =
        s.infiniband.is_known() ? s.infiniband.value() : std::vector<std::string>{};
    std::vector<Setting> out;
    for (const auto& problem : nccl_env_problems(vars, ib)) {
        if (!problem.rename_to.empty() && torch_before_2_2(s)) {
            p.notes.push_back(fmt::format("nccl {}: PyTorch {} reads only this name; kept",
                                          problem.key, s.stack.value().torch.value().version));
            continue;
        }
        out.push_back({"nccl", problem.key, "(unset)", now(problem.key), problem.why,
                       "doctor rule nccl.env; " + std::string(kNcclDocs), false, "nccl.env"});
        // The new name, unless it is set already: then PyTorch uses that value, and it stays.
        if (!problem.rename_to.empty() && !now(problem.rename_to))
            out.push_back({"nccl", problem.rename_to, vars.at(problem.key), now(problem.rename_to),
                           "the current name of " + problem.key, "PyTorch ProcessGroupNCCL"});
    }
    if (r.multi_node && ib.empty()) {
        if (auto mine = now("NCCL_SOCKET_IFNAME")) {
            p.notes.push_back("nccl NCCL_SOCKET_IFNAME: already set to " + *mine + "; kept");
        } else if (live.default_route_interface) {
            out.push_back({"nccl", "NCCL_SOCKET_IFNAME", *live.default_route_interface,
                           std::nullopt,
                           "without InfiniBand NCCL moves data over sockets; with several "
                           "interfaces (docker0, a management port) it may pick a slow one. "
                           "This is the default route's interface; name the data network's in "
                           "the overrides file if it differs",
                           std::string(kNcclDocs) + " (NCCL_SOCKET_IFNAME)"});
        } else {
            p.notes.push_back(
                "nccl NCCL_SOCKET_IFNAME: no default route in /proc/net/route; "
                "name the data network's interface in the overrides file");
        }
    }
    if (auto it = r.overrides.find("nccl"); it != r.overrides.end()) {
        for (const auto& [key, value] : it->second) {
            if (!variable_name(key) ||
                (!key.starts_with("NCCL_") && !key.starts_with("TORCH_NCCL_") &&
                 !key.starts_with("TORCH_DISTRIBUTED_")))
                return {Errc::kInvalidInput,
                        fmt::format("{}: [nccl] \"{}\" is not an NCCL_, TORCH_NCCL_ or "
                                    "TORCH_DISTRIBUTED_ variable",
                                    r.overrides_file, key)};
            const auto harm = nccl_env_problems({{key, value}}, ib);
            if (!harm.empty())
                return {Errc::kInvalidInput,
                        fmt::format("{}: [nccl] {}={} is refused: {}", r.overrides_file, key, value,
                                    harm.front().why)};
            const std::string& name = key;  // a lambda cannot capture a structured binding
            std::erase_if(out, [&](const Setting& x) { return x.key == name; });
            out.push_back({"nccl", key, value, now(key), "set in the overrides file",
                           r.overrides_file, true});
        }
    }
    std::string file =
        "# Managed by `trainrig tune` (docs/tuning.md). Source it before a job:\n"
        "#   set -a; . /etc/trainrig/nccl.env; set +a\n";
    if (out.empty()) file += fmt::format("\n# Nothing to set: {}.\n", kNcclNothingToSet);
    for (const auto& x : out)
        file += fmt::format(
            "\n# {} ({})\n{}\n", x.reason, x.source,
            // Sourced by a shell: a value that is not plain is quoted, so it can never run.
            x.value == "(unset)" ? "unset " + x.key : x.key + "=" + shell_quote(x.value));
    p.files.push_back({"nccl", kNcclFile, file,
                       live.files.count(kNcclFile) ? live.files.at(kNcclFile) : std::nullopt});
    p.settings.insert(p.settings.end(), out.begin(), out.end());
    return ok_status();
}

}  // namespace trainrig::tune
