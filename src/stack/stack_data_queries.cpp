// The stack data's look-ups and the small version texts every part of stack reads.
#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"
#include "stack/cuda_drivers.h"
#include "stack/stack_data.h"

namespace trainrig::stack {

const CudaRelease* StackData::find_cuda(int c) const {
    for (const auto& r : cuda)
        if (r.cuda == c) return &r;
    return nullptr;
}

const Architecture* StackData::find_architecture(ComputeCapability cc) const {
    for (const auto& a : architectures)
        if (std::find(a.compute_capabilities.begin(), a.compute_capabilities.end(), cc) !=
            a.compute_capabilities.end())
            return &a;
    return nullptr;
}

const DriverBranch* StackData::find_branch(int b) const {
    for (const auto& r : branches)
        if (r.branch == b) return &r;
    return nullptr;
}

const TorchRelease* StackData::find_torch(std::string_view minor) const {
    for (const auto& t : torch)
        if (t.version == minor) return &t;
    return nullptr;
}

const NcclRelease* StackData::find_nccl(std::string_view version) const {
    for (const auto& n : nccl)
        if (n.version == version) return &n;
    return nullptr;
}

const Distro* StackData::find_distro(std::string_view id) const {
    for (const auto& x : distros)
        if (x.id == id) return &x;
    return nullptr;
}

const GpuModel* StackData::find_gpu_by_pci(unsigned device_id) const {
    for (const auto& g : gpus)
        if (std::find(g.pci_device_ids.begin(), g.pci_device_ids.end(), device_id) !=
            g.pci_device_ids.end())
            return &g;
    return nullptr;
}

int StackData::newest_cuda() const { return cuda.empty() ? 0 : cuda.back().cuda; }

int StackData::newest_branch() const {
    int newest = branches.empty() ? 0 : branches.back().branch;
    for (const auto& c : cuda) newest = std::max(newest, driver_branch(c.toolkit_driver));
    return newest;
}

std::string StackData::newest_torch() const { return torch.empty() ? "" : torch.back().version; }

int driver_branch(std::string_view driver_version) {
    const auto parts = split(driver_version, '.');
    const auto major = parse_u64(parts[0]);
    return major && *major < 100000 ? static_cast<int>(*major) : 0;
}

ComputeCapability parse_compute_capability(std::string_view text) {
    text = trim(text);
    if (text.starts_with("sm_") || text.starts_with("SM_")) {
        const auto v = parse_u64(text.substr(3));
        return v && *v >= 10 && *v < 1000 ? static_cast<int>(*v) : 0;
    }
    const auto parts = split(text, '.');
    if (parts.size() > 2) return 0;
    const auto major = parse_u64(parts[0]);
    const auto minor = parts.size() == 2 ? parse_u64(parts[1]) : std::optional<uint64_t>(0);
    if (!major || !minor || *major == 0 || *major > 99 || *minor > 9) return 0;
    return static_cast<int>(*major * 10 + *minor);
}

std::string cc_text(ComputeCapability cc) { return fmt::format("{}.{}", cc / 10, cc % 10); }

std::string sm_text(ComputeCapability cc) { return fmt::format("sm_{}", cc); }

int compare_versions(std::string_view a, std::string_view b) {
    return compare_driver_versions(a, b);
}

std::string minor_version(std::string_view version) {
    const auto plus = version.find('+');
    const auto base = version.substr(0, plus);
    const auto parts = split(base, '.');
    if (parts.size() < 2 || parts.size() > 3) return "";
    for (auto p : parts)
        if (!parse_u64(p)) return "";
    return fmt::format("{}.{}", parts[0], parts[1]);
}

}  // namespace trainrig::stack
