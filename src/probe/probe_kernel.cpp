// Probes of the host identity, live kernel settings, RLIMIT_NOFILE and sysctl files.
#include <algorithm>
#include <set>

#include "core/text.h"
#include "probe/parsers.h"
#include "probe/probes.h"
#include "probe/read_fact.h"

namespace trainrig {

void probe_host(const RootFs& fs, HostFacts& out) {
    out.hostname = read_string_fact(fs, "/proc/sys/kernel/hostname");
    out.kernel_release = read_string_fact(fs, "/proc/sys/kernel/osrelease");
    out.cmdline = read_string_fact(fs, "/proc/cmdline");
    out.uptime_seconds = read_parsed_fact<double>(fs, "/proc/uptime", parse_uptime);
    out.system_vendor = read_string_fact(fs, "/sys/class/dmi/id/sys_vendor");
    out.product_name = read_string_fact(fs, "/sys/class/dmi/id/product_name");
    out.bios_version = read_string_fact(fs, "/sys/class/dmi/id/bios_version");
    out.bios_date = read_string_fact(fs, "/sys/class/dmi/id/bios_date");
    out.hypervisor = read_parsed_fact<bool>(fs, "/proc/cpuinfo", parse_cpuinfo_hypervisor);
}

void probe_kernel_settings(const RootFs& fs, KernelSettings& out) {
    out.swappiness = read_i64_fact(fs, "/proc/sys/vm/swappiness");
    out.numa_balancing = read_i64_fact(fs, "/proc/sys/kernel/numa_balancing");
    out.file_max = read_i64_fact(fs, "/proc/sys/fs/file-max");
    out.nr_open = read_i64_fact(fs, "/proc/sys/fs/nr_open");
    out.thp_enabled = read_parsed_fact<std::string>(
        fs, "/sys/kernel/mm/transparent_hugepage/enabled", parse_bracket_choice);
    out.thp_defrag = read_parsed_fact<std::string>(fs, "/sys/kernel/mm/transparent_hugepage/defrag",
                                                   parse_bracket_choice);
}

Fact<Rlimit> probe_nofile(const RootFs& fs) {
    return read_parsed_fact<Rlimit>(fs, "/proc/self/limits", parse_limits_nofile);
}

SysctlConfig probe_sysctl_config(const RootFs& fs) {
    // sysctl.d(5): a file name in an earlier folder shadows the same name in later ones; files
    // apply in lexical order of their names; procps' `sysctl --system` reads /etc/sysctl.conf last.
    static const char* kDirs[] = {"/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d",
                                  "/usr/lib/sysctl.d", "/lib/sysctl.d"};
    SysctlConfig cfg;
    cfg.proc_sys_present = fs.is_dir("/proc/sys");
    std::map<std::string, std::string> by_name;  // file name -> machine path that wins
    for (const char* dir : kDirs) {
        auto names = fs.list(dir);
        if (!names) {
            if (names.status().code() != Errc::kNotFound)
                cfg.unreadable.push_back(names.status().message());
            continue;
        }
        for (const auto& name : *names)
            if (name.ends_with(".conf") && !by_name.count(name))
                by_name[name] = std::string(dir) + "/" + name;
    }
    std::vector<std::string> files;
    for (const auto& [name, path] : by_name) files.push_back(path);
    files.push_back("/etc/sysctl.conf");

    std::set<std::string> seen;  // resolved paths: 99-sysctl.conf is often a link to sysctl.conf
    for (const auto& path : files) {
        auto real = fs.resolve(path);
        if (!real) {
            if (real.status().code() != Errc::kNotFound)
                cfg.unreadable.push_back(real.status().message());
            continue;
        }
        if (!seen.insert(*real).second) continue;
        if (*real == "/dev/null") continue;  // sysctl.d(5): a link to /dev/null masks the file
        auto text = fs.read(path);
        if (!text) {
            cfg.unreadable.push_back(text.status().message());
            continue;
        }
        // Name the file a user edits: /etc/sysctl.conf, not the 99-sysctl.conf link to it.
        cfg.files.push_back(*real);
        parse_sysctl_conf(*text, *real, cfg.settings, cfg.malformed);
    }
    for (auto& s : cfg.settings) {
        // Glob keys (systemd >= 247, e.g. net.ipv4.conf.*.rp_filter) are not checked.
        bool glob = s.key.find_first_of("*?[") != std::string::npos;
        s.exists = glob || fs.exists(sysctl_key_path(s.key));
    }
    return cfg;
}

}  // namespace trainrig
