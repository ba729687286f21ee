// Kernel-log rules: Xid errors per GPU and code (classified by the catalog), GPUs fallen off the
// bus, and PCIe AER errors per device. article §5.2 ("read the kernel log first"), NVIDIA Xid
// catalog.
#include <fmt/format.h>

#include <map>

#include "core/text.h"
#include "doctor/gpus.h"
#include "doctor/kmsg_events.h"
#include "doctor/rule.h"
#include "doctor/xid_catalog.h"

namespace trainrig {

namespace {

// Common start of both rules: the log could not be read. Permission is a skip (reading the
// kernel log is restricted to root by kernel.dmesg_restrict), anything else an error.
bool log_readable(const Snapshot& s, Finding& f) {
    const auto& log = s.kernel_log;
    if (log.is_failed() && log.status().code() == Errc::kPermission) {
        f.raise(FindingStatus::kSkip, "the kernel log is not readable by this user");
        f.evidence.push_back(log.status().message());
        f.remedy = log.status().next_step();
        return false;
    }
    if (!need(log, f)) return false;
    if (log.is_absent()) {
        f.raise(FindingStatus::kSkip, "no kernel log (/dev/kmsg) on this machine");
        return false;
    }
    return true;
}

std::string at(uint64_t usec) {
    return fmt::format("{:.1f} s after boot", static_cast<double>(usec) / 1e6);
}

struct XidCount {
    int count = 0;
    uint64_t first = 0, last = 0;
    std::string example;
};

void check_xid(const Snapshot& s, const RuleOptions&, Finding& f) {
    if (!log_readable(s, f)) return;
    const auto& log = s.kernel_log.value();
    std::map<std::pair<std::string, int>, XidCount> counts;  // (gpu, code) -> count
    std::map<std::string, XidCount> fallen;                  // gpu -> "fallen off the bus" lines
    for (const auto& r : log.records) {
        if (auto x = parse_xid(r.message)) {
            auto& c = counts[{x->gpu, x->code}];
            if (c.count++ == 0) c.first = r.usec, c.example = r.message;
            c.last = r.usec;
        } else if (auto gpu = parse_fallen_off_bus(r.message)) {
            auto& c = fallen[*gpu];
            if (c.count++ == 0) c.first = r.usec, c.example = r.message;
            c.last = r.usec;
        }
    }
    if (counts.empty() && fallen.empty()) {
        if (select_gpus(s).gpus.empty() && !s.nvidia.loaded)
            return f.raise(FindingStatus::kSkip, "no NVIDIA GPU and no Xid in the kernel log");
        return f.raise(FindingStatus::kPass,
                       fmt::format("no Xid in {} kernel log records", log.records_read));
    }
    auto table = nlohmann::json::array();
    std::vector<std::string> actions;
    int total = 0, fatal = 0;
    std::vector<std::string> parts;
    for (const auto& [key, c] : counts) {
        const auto& [gpu, code] = key;
        const auto* info = find_xid(code);
        const bool is_fatal = info && info->severity == XidSeverity::kFatal;
        total += c.count;
        fatal += is_fatal ? c.count : 0;
        const std::string meaning = info ? info->meaning : "not in trainrig's Xid catalog";
        parts.push_back(fmt::format("Xid {} x{} on {} ({})", code, c.count, gpu, meaning));
        f.evidence.push_back(fmt::format("Xid {} on {}: {} time(s), first {}, last {}: {}", code,
                                         gpu, c.count, at(c.first), at(c.last), c.example));
        table.push_back({{"gpu", gpu},
                         {"code", code},
                         {"count", c.count},
                         {"meaning", meaning},
                         {"severity", is_fatal ? "fatal" : "warn"},
                         {"first_usec", c.first},
                         {"last_usec", c.last}});
        std::string action = info ? fmt::format("Xid {}: {}", code, info->action)
                                  : fmt::format(
                                        "Xid {}: look it up in NVIDIA's Xid catalog "
                                        "(docs.nvidia.com/deploy/xid-errors)",
                                        code);
        if (std::find(actions.begin(), actions.end(), action) == actions.end())
            actions.push_back(action);
    }
    for (const auto& [gpu, c] : fallen) {
        bool has_79 = false;
        for (const auto& [key, xc] : counts)
            has_79 = has_79 || (key.second == kXidFallenOffBus && gpu.starts_with(key.first));
        f.evidence.push_back(fmt::format("{}: {} 'fallen off the bus' line(s), first {}: {}", gpu,
                                         c.count, at(c.first), c.example));
        if (has_79) continue;  // the same event as its Xid 79
        total += c.count;
        fatal += c.count;
        parts.push_back(fmt::format("{} fell off the bus", gpu));
        table.push_back({{"gpu", gpu},
                         {"code", kXidFallenOffBus},
                         {"count", c.count},
                         {"meaning", "GPU has fallen off the bus"},
                         {"severity", "fatal"},
                         {"first_usec", c.first},
                         {"last_usec", c.last}});
        std::string action =
            fmt::format("Xid {}: {}", kXidFallenOffBus, find_xid(kXidFallenOffBus)->action);
        if (std::find(actions.begin(), actions.end(), action) == actions.end())
            actions.push_back(action);
    }
    f.data = {{"xids", table}};
    f.remedy = join(actions, "; ");
    f.raise(fatal ? FindingStatus::kFail : FindingStatus::kWarn,
            fmt::format("{} Xid event(s), {} fatal: {}", total, fatal, join(parts, "; ")));
}

const char* severity_name(AerSeverity s) {
    switch (s) {
        case AerSeverity::kCorrected:
            return "corrected";
        case AerSeverity::kNonFatal:
            return "uncorrected non-fatal";
        case AerSeverity::kFatal:
            return "uncorrected fatal";
    }
    return "?";
}

void check_aer(const Snapshot& s, const RuleOptions&, Finding& f) {
    if (!log_readable(s, f)) return;
    const auto& log = s.kernel_log.value();
    std::map<std::pair<std::string, AerSeverity>, int> counts;
    std::map<std::pair<std::string, AerSeverity>, std::string> examples;
    for (const auto& r : log.records) {
        auto e = parse_aer(r.message);
        if (!e) continue;
        auto key = std::make_pair(e->device, e->severity);
        if (counts[key]++ == 0) examples[key] = kmsg_evidence(r);
    }
    if (counts.empty())
        return f.raise(
            FindingStatus::kPass,
            fmt::format("no PCIe AER errors in {} kernel log records", log.records_read));
    auto table = nlohmann::json::array();
    auto worst = FindingStatus::kPass;
    std::vector<std::string> parts;
    for (const auto& [key, n] : counts) {
        const auto& [dev, sev] = key;
        worst = worst_of(worst, status_of(sev == AerSeverity::kFatal      ? policy::kAerFatal
                                          : sev == AerSeverity::kNonFatal ? policy::kAerNonFatal
                                                                          : policy::kAerCorrected));
        parts.push_back(fmt::format("{} x{} on {}", severity_name(sev), n, dev));
        f.evidence.push_back(
            fmt::format("{}: {} {} error(s), e.g. {}", dev, n, severity_name(sev), examples[key]));
        table.push_back({{"device", dev}, {"severity", severity_name(sev)}, {"count", n}});
    }
    f.data = {{"aer", table}};
    f.raise(worst, "PCIe AER errors: " + join(parts, ", "));
    f.remedy =
        "Errors on a GPU's link point at the slot, riser or cable: reseat, check the "
        "firmware's PCIe generation setting, and watch whether the counts keep growing "
        "(/sys/bus/pci/devices/<address>/aer_dev_correctable).";
}

}  // namespace

std::vector<Rule> kmsg_rules() {
    return {
        {"kmsg.xid",
         "no Xid errors in the kernel log",
         {"training-machine article §5.2", "NVIDIA Xid catalog",
          "DCGM health watches (fatal Xid set)"},
         nullptr,
         check_xid},
        {"kmsg.pcie-aer",
         "no PCIe AER errors in the kernel log",
         {"Documentation/PCI/pcieaer-howto.rst"},
         nullptr,
         check_aer},
    };
}

}  // namespace trainrig
