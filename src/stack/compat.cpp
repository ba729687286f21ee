// The stack's compatibility rules; see compat.h. Sources are the data rows' (stack_data.toml).
#include "stack/compat.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"
#include "stack/cuda_drivers.h"

namespace trainrig::stack {

std::optional<DriverRequirement> driver_requirement(const StackData& d, int cuda) {
    const CudaRelease* same_major = nullptr;
    for (const auto& r : d.cuda) {
        if (r.cuda == cuda) return DriverRequirement{cuda, r.toolkit_driver, r.minor_compat, &r};
        if (r.cuda / 1000 == cuda / 1000) same_major = &r;  // the newest of that major
    }
    if (!same_major || cuda < same_major->cuda) return std::nullopt;
    return DriverRequirement{cuda, "", same_major->minor_compat, nullptr};
}

DriverFit cuda_driver_fit(const StackData& d, int cuda, int driver_cuda, std::string_view driver) {
    if (driver_cuda <= 0) return DriverFit::kUnknown;
    if (cuda / 1000 > driver_cuda / 1000) return DriverFit::kNewerMajor;
    if (cuda <= driver_cuda) return DriverFit::kRuns;
    const auto req = driver_requirement(d, cuda);
    const bool floor_ok =
        req && !driver.empty() && compare_driver_versions(driver, req->minor_compat) >= 0;
    return floor_ok ? DriverFit::kMinorCompat : DriverFit::kBelowFloor;
}

CudaGpuFit cuda_gpu_fit(const StackData& d, int cuda, ComputeCapability cc) {
    const Architecture* a = d.find_architecture(cc);
    if (!a) return CudaGpuFit::kUnknown;
    if (cuda < a->first_cuda) return CudaGpuFit::kTooOld;
    if (a->last_cuda_major > 0 && cuda / 1000 > a->last_cuda_major) return CudaGpuFit::kDropped;
    return CudaGpuFit::kSupported;
}

std::string cuda_gpu_reason(const StackData& d, ComputeCapability cc) {
    const Architecture* a = d.find_architecture(cc);
    if (!a) return fmt::format("compute capability {} is {}", cc_text(cc), newer_than_data(d));
    std::string out = fmt::format("compute capability {} ({}) needs CUDA {} or newer", cc_text(cc),
                                  a->name, cuda_text(a->first_cuda));
    if (a->last_cuda_major > 0) out += fmt::format(" and at most CUDA {}.x", a->last_cuda_major);
    return out;
}

ArchFit build_arch_fit(const TorchBuild& b, ComputeCapability cc) {
    // A cubin for X.y runs on X.z with z >= y (CUDA C++ Programming Guide, "Binary
    // Compatibility"); PTX is JIT-compiled for any later architecture ("PTX Compatibility").
    for (auto a : b.arch)
        if (a / 10 == cc / 10 && a % 10 <= cc % 10) return ArchFit::kSass;
    if (b.ptx > 0 && b.ptx <= cc) return ArchFit::kPtx;
    return ArchFit::kNone;
}

std::string build_arch_text(const TorchBuild& b) {
    std::vector<std::string> parts;
    for (auto a : b.arch) parts.push_back(sm_text(a));
    std::string out = join(parts, ", ");
    if (b.ptx > 0) out += fmt::format(" + PTX compute_{}", b.ptx);
    return out;
}

std::string cuda_tag(int cuda) { return fmt::format("cu{}{}", cuda / 1000, cuda % 1000 / 10); }

WheelLookup find_wheel(const StackData& d, std::string_view torch_version, int torch_cuda) {
    WheelLookup w;
    const std::string minor = minor_version(torch_version);
    if (minor.empty()) {
        w.why_unknown = fmt::format(
            "torch {} is not a release version (a build of its own, or a pre-release): its "
            "architectures are not in the data",
            torch_version);
        return w;
    }
    w.release = d.find_torch(minor);
    if (!w.release) {
        w.newer_than_data = compare_versions(minor, d.newest_torch()) > 0;
        w.why_unknown = w.newer_than_data
                            ? fmt::format("torch {} is {}", minor, newer_than_data(d))
                            : fmt::format("torch {} is not in the data (it knows {} to {})", minor,
                                          d.torch.front().version, d.newest_torch());
        return w;
    }
    for (const auto& b : w.release->builds)
        if (b.cuda == torch_cuda) w.build = &b;
    if (!w.build) {
        std::vector<std::string> tags;
        for (const auto& b : w.release->builds) tags.push_back(cuda_tag(b.cuda));
        w.why_unknown = fmt::format(
            "torch {} shipped no CUDA {} wheel ({}): a build of its own, whose architectures are "
            "not in the data",
            minor, cuda_text(torch_cuda), join(tags, ", "));
    }
    return w;
}

int branch_cuda(const StackData& d, int branch) {
    int best = 0;
    for (const auto& c : d.cuda)
        if (driver_branch(c.toolkit_driver) <= branch) best = std::max(best, c.cuda);
    return best;
}

std::string branch_first_driver(const StackData& d, int branch) {
    for (const auto& c : d.cuda)  // oldest first
        if (driver_branch(c.toolkit_driver) == branch) return c.toolkit_driver;
    return "";
}

bool branch_ended(const StackData& d, const DriverBranch& b) {
    if (b.ended) return true;
    // An end of life month before the data's month has passed.
    return !b.end_of_life.empty() && b.end_of_life < d.current_to.substr(0, 7);
}

std::string_view branch_type_name(BranchType t) {
    switch (t) {
        case BranchType::kLongTerm:
            return "long-term support branch";
        case BranchType::kProduction:
            return "production branch";
        case BranchType::kNewFeature:
            return "new feature branch";
        case BranchType::kUnknown:
            break;
    }
    return "branch";
}

std::string newer_than_data(const StackData& d) {
    return fmt::format("newer than the data (current to {}); not judged", d.current_to);
}

}  // namespace trainrig::stack
