// driver.nvidia: the NVIDIA kernel module is loaded and which version it is.
// article §4.1 (version-locked driver).
#include <fmt/format.h>

#include "core/text.h"
#include "doctor/gpus.h"
#include "doctor/nvml_gpus.h"
#include "doctor/rule.h"

namespace trainrig {

namespace {

void check_driver(const Snapshot& s, const RuleOptions&, Finding& f) {
    if (!need(s.pci_devices, f)) return;
    const auto gpus = select_gpus(s).gpus;
    std::vector<std::string> nouveau;
    for (const auto* g : gpus)
        if (g->driver.is_known() && g->driver.value() == "nouveau") nouveau.push_back(g->address);
    if (!nouveau.empty()) {
        f.raise(FindingStatus::kFail,
                "GPUs are bound to nouveau, not the NVIDIA driver: " + join(nouveau, ", "));
        f.remedy =
            "Blacklist nouveau (`echo 'blacklist nouveau' > "
            "/etc/modprobe.d/blacklist-nouveau.conf; update-initramfs -u`), reboot, and "
            "install the NVIDIA driver.";
        return;
    }
    if (!s.nvidia.loaded) {
        f.raise(FindingStatus::kFail,
                fmt::format(
                    "{} NVIDIA GPU(s) on the PCI bus, but the nvidia kernel module is not loaded",
                    gpus.size()));
        f.evidence.push_back("/proc/driver/nvidia and /sys/module/nvidia: absent");
        f.remedy =
            "modprobe nvidia, then read `dmesg | grep -i -e nvidia -e NVRM` (unsigned module "
            "under Secure Boot, kernel/driver version mismatch after a kernel update: "
            "reinstall the driver or its DKMS module).";
        return;
    }
    if (auto why = driver_unreachable(s)) {
        f.raise(FindingStatus::kFail,
                fmt::format("the nvidia kernel module is loaded, but the driver does not answer "
                            "for the {} GPU(s) on the PCI bus: {}",
                            gpus.size(), *why));
        f.evidence.push_back("NVML: " + *why);
        f.remedy =
            "Install the driver's user-space libraries of the same version as the module "
            "(libnvidia-ml.so.1, libcuda.so.1), or reload the module (`rmmod nvidia_uvm "
            "nvidia_drm nvidia_modeset nvidia; modprobe nvidia`) and read `dmesg | grep NVRM`.";
        return;
    }
    if (!need(s.nvidia.version, f)) return;
    if (s.nvidia.version_line.is_known())
        f.evidence.push_back("/proc/driver/nvidia/version: " + s.nvidia.version_line.value());
    if (s.nvidia.version.is_absent()) {
        f.raise(FindingStatus::kWarn,
                "nvidia module loaded but /proc/driver/nvidia/version is missing");
        return;
    }
    const bool open = s.nvidia.version_line.is_known() &&
                      contains(s.nvidia.version_line.value(), "Open Kernel Module");
    f.data = {{"version", s.nvidia.version.value()}, {"open_kernel_module", open}};
    f.raise(FindingStatus::kPass,
            fmt::format("NVIDIA driver {} loaded ({} kernel module)", s.nvidia.version.value(),
                        open ? "open" : "proprietary"));
}

}  // namespace

std::vector<Rule> driver_rules() {
    return {
        {"driver.nvidia",
         "NVIDIA kernel module loaded",
         {"training-machine article §4.1", "/proc/driver/nvidia/version"},
         [](const Snapshot& s, const RuleOptions&) { return no_gpu_reason(s); },
         check_driver},
    };
}

}  // namespace trainrig
