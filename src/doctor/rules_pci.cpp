// PCI rules: are all GPUs usable by the driver, are their BARs assigned, did their links train
// at full width. article §3.2 (Above 4G Decoding), §2.3 (x16 per GPU), §5.1.
#include <fmt/format.h>

#include "core/quantity.h"
#include "core/text.h"
#include "doctor/gpus.h"
#include "doctor/nvml_gpus.h"
#include "doctor/rule.h"
#include "hw/nvidia_gpus.h"
#include "policy/gpu_health.h"

namespace trainrig {

namespace {

constexpr uint64_t kIoresourceMem = 0x200;
constexpr uint64_t kIoresourcePrefetch = 0x2000;
constexpr uint64_t kIoresourceUnset = 0x20000000;
constexpr uint64_t kIoresourceMem64 = 0x100000;  // include/linux/ioport.h

std::optional<std::string> applies_with_gpus(const Snapshot& s, const RuleOptions& o) {
    if (o.expect_gpus && *o.expect_gpus > 0) return std::nullopt;
    return no_gpu_reason(s);
}

// The kernel's words for a BAR it could not place: "BAR 1: no space for [mem ...]" and
// "BAR 1: failed to assign [mem ...]" (drivers/pci/setup-res.c up to 6.7), "BAR 1 [mem ...]:
// can't assign; no space" and "...: failed to assign" (6.8 on); and the NVIDIA driver's
// "BAR1 is 0M @ 0x0" after "This PCI I/O region assigned to your NVIDIA device is invalid".
bool is_bar_failure(std::string_view line) {
    return (contains(line, "BAR") &&
            (contains(line, "no space") || contains(line, "failed to assign") ||
             contains(line, "can't assign"))) ||
           contains(line, "BAR1 is 0M") ||
           contains(line, "region assigned to your NVIDIA device is invalid");
}

bool mentions_bar_failure(const std::vector<std::string>& lines) {
    return std::any_of(lines.begin(), lines.end(), [](const auto& l) { return is_bar_failure(l); });
}

void check_gpu_visible(const Snapshot& s, const RuleOptions& o, Finding& f) {
    if (!need(s.pci_devices, f)) return;
    auto sel = select_gpus(s);
    for (const auto* d : sel.unknown) {
        f.raise(FindingStatus::kError, "cannot tell whether " + d->address + " is a GPU");
        if (d->vendor.is_failed()) f.evidence.push_back(d->vendor.status().message());
        if (d->class_code.is_failed()) f.evidence.push_back(d->class_code.status().message());
    }
    const int on_bus = static_cast<int>(sel.gpus.size());
    bool bar_failures = false;
    if (o.expect_gpus && on_bus < *o.expect_gpus) {
        f.raise(FindingStatus::kFail,
                fmt::format("{} of {} expected GPUs are on the PCI bus", on_bus, *o.expect_gpus));
        f.evidence.push_back(fmt::format(
            "--expect-gpus {}; /sys/bus/pci/devices lists {} NVIDIA GPUs", *o.expect_gpus, on_bus));
        if (s.kernel_log.is_known())
            for (const auto& r : s.kernel_log.value().records)
                if (is_bar_failure(r.message)) {
                    f.evidence.push_back(kmsg_evidence(r));
                    bar_failures = true;
                }
    }
    if (!s.nvidia.loaded) {
        f.raise(FindingStatus::kSkip, "the nvidia kernel module is not loaded (see driver.nvidia)");
    } else {
        std::vector<std::string> listed;
        if (s.nvidia.gpus.is_known()) listed = s.nvidia.gpus.value();
        std::vector<std::string> missing;
        for (const auto* g : sel.gpus) {
            bool bound = g->driver.is_known() && g->driver.value() == "nvidia";
            bool in_proc = std::find(listed.begin(), listed.end(), g->address) != listed.end();
            if (bound || in_proc) continue;
            missing.push_back(g->address);
            std::string why =
                g->driver.is_known() ? "bound to " + g->driver.value() : "no driver bound";
            f.evidence.push_back(
                fmt::format("{}: {}, not in /proc/driver/nvidia/gpus", gpu_label(*g), why));
            auto lines = kmsg_lines_about(s, g->address, 6);
            bar_failures = bar_failures || mentions_bar_failure(lines);
            for (auto& l : lines)  // --expect-gpus may have quoted the same line already
                if (std::find(f.evidence.begin(), f.evidence.end(), l) == f.evidence.end())
                    f.evidence.push_back(std::move(l));
        }
        if (!missing.empty()) {
            f.raise(FindingStatus::kFail,
                    fmt::format(
                        "{} of {} NVIDIA GPUs are on the PCI bus but not usable by the driver: {}",
                        missing.size(), on_bus, join(missing, ", ")));
        } else {
            f.raise(
                FindingStatus::kPass,
                fmt::format("{} of {} NVIDIA GPUs are bound to the nvidia driver", on_bus, on_bus));
        }
    }
    if (bar_failures) {
        f.remedy =
            "The firmware could not place the GPUs' large BAR1 below the 64-bit MMIO limit: "
            "enable \"Above 4G Decoding\" (also called MMIO above 4G / 64-bit resources; on "
            "some boards also raise the MMIOH size), reboot, and check that "
            "`lspci -d 10de: -v` shows every GPU with its memory regions assigned.";
    } else if (f.status == FindingStatus::kFail) {
        f.remedy =
            "Check the kernel log for the missing GPUs (`dmesg | grep -i -e NVRM -e <address>`), "
            "reseat the cards and their power cables, and check the firmware's PCIe settings.";
    }
}

void check_gpu_bar(const Snapshot& s, const RuleOptions&, Finding& f) {
    if (!need(s.pci_devices, f)) return;
    int ok = 0;
    auto gpus = select_gpus(s).gpus;
    for (const auto* g : gpus) {
        if (!need(g->resources, f)) continue;
        if (g->resources.is_absent()) {
            f.raise(FindingStatus::kError, g->address + " has no resource file");
            continue;
        }
        const auto& res = g->resources.value();
        // NVIDIA's "BAR1" (the framebuffer aperture) is the BAR after BAR0. BAR0 is 32-bit on
        // bare-metal A100/H100 (BAR1 is resource 1) but 64-bit on some parts and under some
        // hypervisors (an H200 in a VM: BAR1 is resource 2), and a 64-bit BAR takes two slots.
        const size_t index = !res.empty() && (res[0].flags & kIoresourceMem64) ? 2 : 1;
        if (res.size() <= index) {
            f.raise(FindingStatus::kError, g->address + ": resource file has no BAR1 line");
            continue;
        }
        const auto& bar1 = res[index];
        bool assigned =
            bar1.flags != 0 && !(bar1.flags & kIoresourceUnset) && bar1.end > bar1.start;
        if (!assigned) {
            f.raise(FindingStatus::kFail, fmt::format("BAR1 of {} is not assigned", gpu_label(*g)));
            f.evidence.push_back(
                fmt::format("/sys/bus/pci/devices/{}/resource line {}: 0x{:016x} 0x{:016x} "
                            "0x{:016x} (unassigned)",
                            g->address, index + 1, bar1.start, bar1.end, bar1.flags));
            continue;
        }
        const uint64_t size = bar1.end - bar1.start + 1;
        const auto* model = g->device.is_known() ? find_nvidia_gpu(g->device.value()) : nullptr;
        std::string line = fmt::format("{}: BAR1 {} at 0x{:x}{}{}", gpu_label(*g),
                                       format_bytes(static_cast<double>(size)), bar1.start,
                                       (bar1.flags & kIoresourcePrefetch) ? ", prefetchable" : "",
                                       (bar1.flags & kIoresourceMem) ? "" : " (not a memory BAR?)");
        f.evidence.push_back(line);
        if (model && model->datacenter && size < (uint64_t(model->memory_gib) << 30)) {
            f.raise(
                FindingStatus::kWarn,
                fmt::format("BAR1 of {} is {}, smaller than its {} GiB of memory", gpu_label(*g),
                            format_bytes(static_cast<double>(size)), model->memory_gib));
            continue;
        }
        ++ok;
    }
    if (!gpus.empty() && ok == static_cast<int>(gpus.size()))
        f.raise(FindingStatus::kPass, fmt::format("BAR1 assigned on all {} GPUs", gpus.size()));
    if (f.status == FindingStatus::kFail)
        f.remedy =
            "Enable \"Above 4G Decoding\" in the firmware (data-centre GPUs need a BAR1 as large "
            "as their memory, 64-128 GiB), reboot, and check `lspci -d 10de: -vv | grep Region`.";
    else if (f.status == FindingStatus::kWarn)
        f.remedy =
            "A data-centre GPU normally maps all its memory through BAR1; check the firmware's "
            "MMIO / Resizable BAR settings and the GPU's mode (`nvidia-smi -q -d MEMORY`).";
}

void check_gpu_link(const Snapshot& s, const RuleOptions&, Finding& f) {
    if (!need(s.pci_devices, f)) return;
    int judged = 0, slow = 0, idle_low = 0;
    for (const auto* g : select_gpus(s).gpus) {
        if (!need(g->current_link_width, f) || !need(g->max_link_width, f)) continue;
        if (g->current_link_width.is_absent() || g->max_link_width.is_absent()) continue;
        ++judged;
        const auto cur = g->current_link_width.value(), max = g->max_link_width.value();
        std::string speeds;
        if (g->current_link_speed.is_known() && g->max_link_speed.is_known())
            speeds = fmt::format(", {:g} of {:g} GT/s", g->current_link_speed.value(),
                                 g->max_link_speed.value());
        need(g->current_link_speed, f);
        need(g->max_link_speed, f);
        const bool speeds_known = g->current_link_speed.is_known() && g->max_link_speed.is_known();
        // The same verdict as gpu.pcie-link (policy/gpu_health.h), busy as the driver says.
        const NvmlGpu* n = nvml_gpu_at(s, g->address);
        const bool busy = n && gpu_busy(*n);
        const bool lower =
            speeds_known && g->current_link_speed.value() < g->max_link_speed.value() && !busy;
        idle_low += lower;
        f.evidence.push_back(
            fmt::format("{}: x{} of x{}{}{}", gpu_label(*g), cur, max, speeds,
                        !lower ? ""
                        : n    ? " (idle: a lower speed is normal)"
                               : " (speed not judged: no driver to say whether the GPU is busy)"));
        const auto verdict =
            policy::pcie_link_verdict(static_cast<double>(cur), static_cast<double>(max),
                                      speeds_known ? g->current_link_speed.value() : 0,
                                      speeds_known ? g->max_link_speed.value() : 0, busy);
        if (cur < max) {
            f.raise(status_of(verdict),
                    fmt::format("{} trained at x{} of x{}", gpu_label(*g), cur, max));
        } else if (verdict != policy::Verdict::kPass) {
            ++slow;
            f.raise(status_of(verdict),
                    fmt::format("{} runs at {:g} of {:g} GT/s while busy", gpu_label(*g),
                                g->current_link_speed.value(), g->max_link_speed.value()));
        }
    }
    if (judged == 0) {
        f.raise(FindingStatus::kSkip, "the GPUs' link width is not exposed (virtual machine?)");
        return;
    }
    f.raise(FindingStatus::kPass,
            idle_low ? fmt::format("all {} GPU links at full width; {} at a lower speed while "
                                   "idle, which is normal",
                                   judged, idle_low)
                     : fmt::format("all {} GPU links at full width and speed", judged));
    if (f.status == FindingStatus::kFail)
        f.remedy =
            "A narrow link halves host<->GPU bandwidth: reseat the GPU or riser, check the slot's "
            "lane wiring and bifurcation setting in the firmware, and compare with "
            "`lspci -vv -s <address> | grep LnkSta`.";
    else if (slow)
        f.remedy =
            "GPUs drop their PCIe speed when idle to save power; check again under load "
            "(`nvidia-smi -q -d PCIE` while training). Lower speed under load means a "
            "signal-integrity problem: reseat, check risers and the firmware's PCIe generation.";
}

}  // namespace

std::vector<Rule> pci_rules() {
    return {
        {"pci.gpu-visible",
         "every GPU on the PCI bus is usable by the driver",
         {"training-machine article §3.2 (Above 4G Decoding), §5.1 (only 2 GPUs visible)"},
         applies_with_gpus,
         check_gpu_visible},
        {"pci.gpu-bar",
         "GPU BAR1 assigned and as large as GPU memory",
         {"training-machine article §3.2", "NVIDIA A100 datasheet (BAR1 64/128 GiB)"},
         [](const Snapshot& s, const RuleOptions&) { return no_gpu_reason(s); },
         check_gpu_bar},
        {"pci.gpu-link",
         "GPU PCIe links at full width and speed",
         {"training-machine article §2.3 (x16 per GPU)", "Documentation/ABI/testing/sysfs-bus-pci"},
         [](const Snapshot& s, const RuleOptions&) { return no_gpu_reason(s); },
         check_gpu_link},
    };
}

}  // namespace trainrig
