// kernel.sysctl-obsolete: sysctl files that set keys this kernel does not have, so `sysctl
// --system` fails on them and the tuning someone copied silently does nothing.
// the article's kernel section (sched_latency_ns), sysctl.d(5).
#include <fmt/format.h>

#include "core/text.h"
#include "doctor/rule.h"

namespace trainrig {

namespace {

// Why well-known keys vanished, so the finding can say more than "does not exist".
std::string known_fate(const std::string& key) {
    static const std::pair<const char*, const char*> kFates[] = {
        {"kernel.sched_latency_ns",
         "moved to /sys/kernel/debug/sched/ in Linux 5.13; gone with EEVDF in 6.6"},
        {"kernel.sched_min_granularity_ns",
         "moved to /sys/kernel/debug/sched/ in Linux 5.13; replaced by base_slice_ns in 6.6"},
        {"kernel.sched_wakeup_granularity_ns",
         "moved to /sys/kernel/debug/sched/ in Linux 5.13; gone with EEVDF in 6.6"},
        {"kernel.sched_migration_cost_ns", "moved to /sys/kernel/debug/sched/ in Linux 5.13"},
        {"kernel.sched_nr_migrate", "moved to /sys/kernel/debug/sched/ in Linux 5.13"},
        {"net.ipv4.tcp_tw_recycle", "removed in Linux 4.12"},
    };
    for (const auto& [k, fate] : kFates)
        if (key == k) return fate;
    return {};
}

// Keys that appear only once a module is loaded or an interface exists, so their absence says
// nothing about the kernel; the owner in words, or empty.
std::string loadable_owner(const std::string& key) {
    static const std::pair<const char*, const char*> kModules[] = {
        {"net.bridge.", "module br_netfilter is not loaded"},
        {"net.netfilter.", "module nf_conntrack is not loaded"},
        {"net.nf_conntrack_max", "module nf_conntrack is not loaded"},
        {"net.ipv4.netfilter.", "module nf_conntrack is not loaded"},
        {"net.ipv4.vs.", "module ip_vs is not loaded"},
        {"fs.binfmt_misc.", "binfmt_misc is not mounted"},
    };
    for (const auto& [prefix, owner] : kModules)
        if (key.starts_with(prefix)) return owner;
    // net.ipv4.conf.eth0.rp_filter: per-interface keys exist only while the interface does.
    for (const char* family :
         {"net.ipv4.conf.", "net.ipv6.conf.", "net.ipv4.neigh.", "net.ipv6.neigh."}) {
        if (!key.starts_with(family)) continue;
        auto rest = std::string_view(key).substr(std::string_view(family).size());
        auto iface = rest.substr(0, rest.find('.'));
        if (iface != "all" && iface != "default")
            return fmt::format("interface {} does not exist now", iface);
    }
    return {};
}

void check_obsolete(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto& cfg = s.sysctl;
    const std::string kernel =
        s.host.kernel_release.is_known() ? s.host.kernel_release.value() : "?";
    auto table = nlohmann::json::array();
    for (const auto& u : cfg.unreadable) {
        f.raise(FindingStatus::kError, "cannot read a sysctl file: " + u);
        f.evidence.push_back(u);
    }
    int missing = 0;
    for (const auto& st : cfg.settings) {
        if (st.exists || st.optional) continue;
        if (auto owner = loadable_owner(st.key); !owner.empty()) {
            // Not the kernel's fault: systemd-sysctl applies these when the module loads or
            // the interface appears.
            f.evidence.push_back(
                fmt::format("{}:{}: {} is not present now ({})", st.file, st.line, st.key, owner));
            continue;
        }
        ++missing;
        auto fate = known_fate(st.key);
        f.evidence.push_back(fmt::format("{}:{}: {} = {} — no such key on kernel {}{}", st.file,
                                         st.line, st.key, st.value, kernel,
                                         fate.empty() ? "" : " (" + fate + ")"));
        table.push_back({{"file", st.file}, {"line", st.line}, {"key", st.key}});
    }
    for (const auto& m : cfg.malformed)
        f.evidence.push_back(fmt::format("{}:{}: not KEY = VALUE: {}", m.file, m.line, m.text));
    if (missing || !cfg.malformed.empty()) {
        std::vector<std::string> parts;
        if (missing)
            parts.push_back(fmt::format("{} setting{} for keys kernel {} does not have", missing,
                                        missing == 1 ? "" : "s", kernel));
        if (!cfg.malformed.empty())
            parts.push_back(fmt::format("{} line{} that {} not KEY = VALUE", cfg.malformed.size(),
                                        cfg.malformed.size() == 1 ? "" : "s",
                                        cfg.malformed.size() == 1 ? "is" : "are"));
        f.raise(FindingStatus::kWarn, "sysctl files have " + join(parts, " and "));
        f.remedy =
            "Delete these lines (or prefix the key with '-' if it is meant for other kernels); "
            "`sysctl --system` reports them as errors and they change nothing.";
        f.data = {{"missing", table}};
        return;
    }
    f.raise(FindingStatus::kPass, fmt::format("{} settings in {} files, every key exists",
                                              cfg.settings.size(), cfg.files.size()));
}

}  // namespace

std::vector<Rule> sysctl_rules() {
    return {
        {"kernel.sysctl-obsolete",
         "sysctl files set only keys this kernel has",
         {"training-machine article §3.3 and Corrections", "sysctl.d(5)"},
         [](const Snapshot& s, const RuleOptions&) -> std::optional<std::string> {
             if (!s.sysctl.proc_sys_present) return "no /proc/sys to check keys against";
             return std::nullopt;
         },
         check_obsolete},
    };
}

}  // namespace trainrig
