#include <algorithm>

#include "core/text.h"
#include "probe/parsers.h"
#include "tune/profile.h"

namespace trainrig::tune {

namespace {

std::string sysctl_path(const std::string& key) {
    std::string path = "/proc/sys/" + key;
    std::replace(path.begin() + 10, path.end(), '.', '/');
    return path;
}

// The interface of the default route: /proc/net/route's row whose Destination is 00000000.
std::optional<std::string> default_route(const RootFs& fs) {
    auto text = fs.read("/proc/net/route", 1 << 20);
    if (!text) return std::nullopt;
    for (auto line : split(*text, '\n')) {
        auto f = split_ws(line);
        if (f.size() >= 2 && f[1] == "00000000" && f[0] != "Iface") return sanitize_text(f[0]);
    }
    return std::nullopt;
}

}  // namespace

std::vector<std::string> sysctl_keys_of_interest(const Overrides& overrides) {
    std::vector<std::string> keys = {"vm.swappiness", "kernel.numa_balancing", "fs.file-max"};
    if (auto it = overrides.find("sysctl"); it != overrides.end())
        for (const auto& [key, value] : it->second) keys.push_back(key);
    return keys;
}

LiveState read_live_state(const RootFs& fs, const std::vector<std::string>& sysctl_keys) {
    LiveState live;
    for (const auto& key : sysctl_keys)
        if (auto v = fs.read_trimmed(sysctl_path(key)); v.ok())
            live.sysctl[key] = sanitize_text(*v);
    if (auto text = fs.read("/proc/self/limits", 1 << 20); text.ok())
        if (auto l = parse_limit(*text, "Max locked memory"); l.ok()) live.memlock = *l;
    live.default_route_interface = default_route(fs);
    for (const char* path : {kSysctlFile, kLimitsFile, kNcclFile}) {
        auto text = fs.read(path, 1 << 20);
        live.files[path] = text.ok() ? std::optional<std::string>(*text) : std::nullopt;
    }
    return live;
}

}  // namespace trainrig::tune
