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

}  // namespace

std::optional<std::string> parse_default_route(std::string_view table) {
    for (auto line : split(table, '\n')) {
        auto f = split_ws(line);
        // Iface Destination Gateway Flags RefCnt Use Metric Mask ...
        if (f.size() < 8 || f[0] == "Iface" || f[1] != "00000000" || f[7] != "00000000") continue;
        auto flags = parse_hex(f[3]);
        if (flags && (*flags & 0x1)) return sanitize_text(f[0]);  // RTF_UP
    }
    return std::nullopt;
}

std::vector<std::string> sysctl_keys_of_interest(const Overrides& overrides) {
    std::vector<std::string> keys = {"vm.swappiness", "kernel.numa_balancing", "fs.file-max",
                                     "fs.nr_open"};
    if (auto it = overrides.find("sysctl"); it != overrides.end())
        for (const auto& [key, value] : it->second) keys.push_back(key);
    return keys;
}

LiveState read_live_state(const RootFs& fs, const std::vector<std::string>& sysctl_keys) {
    LiveState live;
    live.proc_sys = fs.is_dir("/proc/sys");
    for (const auto& key : sysctl_keys)
        if (auto v = fs.read_trimmed(sysctl_path(key)); v.ok())
            live.sysctl[key] = sanitize_text(*v);
    if (auto text = fs.read("/proc/self/limits", 1 << 20); text.ok())
        if (auto l = parse_limit(*text, "Max locked memory"); l.ok()) live.memlock = *l;
    if (auto route = fs.read("/proc/net/route", 1 << 20); route.ok())
        live.default_route_interface = parse_default_route(*route);
    // Every policy's offer; a governor is usable when all of them offer it.
    if (auto policies = fs.list("/sys/devices/system/cpu/cpufreq"); policies.ok()) {
        bool first = true;
        for (const auto& name : *policies) {
            if (!name.starts_with("policy")) continue;
            auto text = fs.read_trimmed("/sys/devices/system/cpu/cpufreq/" + name +
                                        "/scaling_available_governors");
            if (!text.ok()) continue;
            std::set<std::string> offered;
            for (const auto w : split(*text, ' '))
                if (!w.empty()) offered.insert(std::string(w));
            if (first) {
                live.governors = offered;
                first = false;
            } else {
                std::erase_if(live.governors,
                              [&](const std::string& g) { return !offered.count(g); });
            }
        }
    }
    for (const char* path : {kSysctlFile, kLimitsFile, kNcclFile}) {
        // Absent is only "does not exist": a file too big or unreadable is never replaced
        // as if it were not there.
        auto text = fs.read(path);
        if (text.ok())
            live.files[path] = *text;
        else if (text.status().code() == Errc::kNotFound)
            live.files[path] = std::nullopt;
        else
            live.unreadable.push_back(text.status().message());
    }
    return live;
}

}  // namespace trainrig::tune
