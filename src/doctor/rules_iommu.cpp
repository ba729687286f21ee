// iommu.mode: an IOMMU that translates GPU DMA (not passthrough) can slow or break peer-to-peer
// traffic between GPUs. article §3.2 (IOMMU on); NCCL troubleshooting (ACS, IOMMU).
#include <fmt/format.h>

#include "core/text.h"
#include "doctor/gpus.h"
#include "doctor/rule.h"

namespace trainrig {

namespace {

bool cmdline_passthrough(const Snapshot& s) {
    if (!s.host.cmdline.is_known()) return false;
    for (auto w : split_ws(s.host.cmdline.value()))
        if (w == "iommu=pt" || w == "iommu.passthrough=1" || w == "intel_iommu=off" ||
            w == "amd_iommu=off" || w == "iommu=off")
            return true;
    return false;
}

void check_iommu(const Snapshot& s, const RuleOptions&, Finding& f) {
    if (!need(s.iommu_units, f)) return;
    if (s.iommu_units.is_absent() || s.iommu_units.value().empty()) {
        f.evidence.push_back("/sys/class/iommu: no IOMMU units");
        return f.raise(FindingStatus::kPass, "IOMMU is off: GPU DMA is not translated");
    }
    f.evidence.push_back("/sys/class/iommu: " + join(s.iommu_units.value(), ", "));
    if (s.host.cmdline.is_known()) f.evidence.push_back("/proc/cmdline: " + s.host.cmdline.value());
    std::vector<std::string> translated;
    int typed = 0;
    for (const auto* g : select_gpus(s).gpus) {
        if (!need(g->iommu_group_type, f) || !g->iommu_group_type.is_known()) continue;
        ++typed;
        const auto& type = g->iommu_group_type.value();
        f.evidence.push_back(fmt::format("{}: iommu_group/type = {}", gpu_label(*g), type));
        if (type != "identity") translated.push_back(g->address);
    }
    if (!translated.empty()) {
        f.raise(FindingStatus::kWarn,
                fmt::format("the IOMMU translates DMA of {} GPU(s) (not passthrough): peer-to-peer "
                            "traffic may slow down or go through the CPU",
                            translated.size()));
    } else if (typed == 0 && !cmdline_passthrough(s)) {
        f.raise(FindingStatus::kWarn,
                "the IOMMU is on and the kernel command line does not set iommu=pt");
    }
    if (f.status == FindingStatus::kWarn) {
        f.remedy =
            "Add iommu=pt to the kernel command line (AMD: amd_iommu=on iommu=pt; Intel: "
            "intel_iommu=on iommu=pt) in GRUB_CMDLINE_LINUX of /etc/default/grub, run "
            "update-grub and reboot; keep the IOMMU on if SR-IOV or VFIO needs it. Then "
            "measure peer-to-peer bandwidth (e.g. nvbandwidth's device_to_device cases).";
        return;
    }
    f.raise(FindingStatus::kPass, "IOMMU in passthrough mode for GPU DMA");
}

}  // namespace

std::vector<Rule> iommu_rules() {
    return {
        {"iommu.mode",
         "IOMMU off or in passthrough for GPU DMA",
         {"training-machine article §3.2",
          "NCCL troubleshooting: PCI Access Control Services (ACS)",
          "Documentation/ABI/testing/sysfs-kernel-iommu_groups"},
         [](const Snapshot& s, const RuleOptions&) { return no_gpu_reason(s); },
         check_iommu},
    };
}

}  // namespace trainrig
