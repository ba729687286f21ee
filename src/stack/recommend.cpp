// Choosing the stack for a GPU; see recommend.h. Every choice names the data row it rests on.
#include "stack/recommend.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"
#include "hw/cuda_drivers.h"
#include "stack/compat.h"

namespace trainrig::stack {

namespace recommend_detail {

// 12040 from "12.4", "12.4.1" or "cu124"; 0 when it is none of these.
int parse_cuda_pin(std::string_view text) {
    if (text.starts_with("cu") && text.size() == 5) {
        const auto digits = parse_u64(text.substr(2));
        if (!digits) return 0;
        return static_cast<int>(*digits / 10 * 1000 + *digits % 10 * 10);
    }
    return cuda_code(text);
}

std::string cc_list(const std::vector<ComputeCapability>& ccs) {
    std::vector<std::string> parts;
    for (auto cc : ccs) parts.push_back(cc_text(cc));
    return join(parts, " and ");
}

std::string sm_list(const std::vector<ComputeCapability>& ccs) {
    std::vector<std::string> parts;
    for (auto cc : ccs) parts.push_back(sm_text(cc));
    return join(parts, " and ");
}

// Why a build cannot serve the GPU, or "" when it can: its CUDA predates (or dropped) the
// architecture, or its wheel has no kernels for it.
std::string build_problem(const StackData& d, const TorchBuild& b,
                          const std::vector<ComputeCapability>& ccs) {
    for (auto cc : ccs) {
        const auto fit = cuda_gpu_fit(d, b.cuda, cc);
        if (fit == CudaGpuFit::kTooOld || fit == CudaGpuFit::kDropped)
            return fmt::format("CUDA {}: {}", cuda_text(b.cuda), cuda_gpu_reason(d, cc));
        if (build_arch_fit(b, cc) == ArchFit::kNone)
            return fmt::format("its {} wheel has no kernels for compute capability {} ({})",
                               cuda_tag(b.cuda), cc_text(cc), build_arch_text(b));
    }
    return "";
}

// The build of a release to recommend: the newest stable one that serves the GPU, else the
// newest experimental one; nullptr when none does. `only_cuda` restricts to a pinned CUDA.
const TorchBuild* pick_build(const StackData& d, const TorchRelease& t,
                             const std::vector<ComputeCapability>& ccs, int only_cuda) {
    const TorchBuild* stable = nullptr;
    const TorchBuild* experimental = nullptr;
    for (const auto& b : t.builds) {  // ascending CUDA
        if (only_cuda && b.cuda != only_cuda) continue;
        if (!build_problem(d, b, ccs).empty()) continue;
        (b.experimental ? experimental : stable) = &b;
    }
    return stable ? stable : experimental;
}

std::string tags_of(const TorchRelease& t) {
    std::vector<std::string> tags;
    for (const auto& b : t.builds) tags.push_back(cuda_tag(b.cuda));
    return join(tags, ", ");
}

// The driver branch to run `cuda` on: a long-term support branch before a production one, the
// longest-supported first, among those that have not ended, run that CUDA natively and still
// support the GPU's architecture. New-feature branches only when nothing else does.
const DriverBranch* pick_branch(const StackData& d, int cuda,
                                const std::vector<ComputeCapability>& ccs, bool& new_feature) {
    auto supports_gpu = [&](const DriverBranch& b) {
        for (auto cc : ccs) {
            const Architecture* a = d.find_architecture(cc);
            if (a && a->last_driver_branch > 0 && b.branch > a->last_driver_branch) return false;
        }
        return true;
    };
    auto rank = [](BranchType t) {
        return t == BranchType::kLongTerm ? 0 : t == BranchType::kProduction ? 1 : 2;
    };
    const DriverBranch* best = nullptr;
    for (const auto& b : d.branches) {
        if (b.type == BranchType::kUnknown || branch_ended(d, b) || !supports_gpu(b)) continue;
        if (branch_cuda(d, b.branch) < cuda) continue;
        if (!best || rank(b.type) < rank(best->type) ||
            (rank(b.type) == rank(best->type) && b.end_of_life > best->end_of_life))
            best = &b;
    }
    new_feature = best && best->type == BranchType::kNewFeature;
    return best;
}

std::string eol_text(const DriverBranch& b) {
    return b.end_of_life.empty() ? std::string() : fmt::format(" (end of life {})", b.end_of_life);
}

}  // namespace recommend_detail

std::string pip_install_line(const Recommendation& r) {
    if (!r.build) return "";
    return fmt::format("pip install 'torch=={}.*' --index-url https://download.pytorch.org/whl/{}",
                       r.torch_version, cuda_tag(r.cuda));
}

Result<Recommendation> recommend(const StackData& d, const GpuTarget& gpu, const Pins& pins,
                                 const Distro* distro) {
    using namespace recommend_detail;
    Recommendation r;
    r.gpu = gpu;
    r.pins = pins;
    r.distro = distro;
    const std::string gpu_name =
        fmt::format("compute capability {} ({})", cc_list(gpu.ccs), gpu.name);
    for (auto cc : gpu.ccs)
        if (!d.find_architecture(cc))
            r.warnings.push_back(
                fmt::format("compute capability {} is {}: which CUDA supports "
                            "it is not checked",
                            cc_text(cc), newer_than_data(d)));

    // --cuda: a release the data knows, able to drive the GPU.
    int pin_cuda = 0;
    bool cuda_newer = false;
    if (pins.cuda) {
        pin_cuda = parse_cuda_pin(*pins.cuda);
        if (pin_cuda == 0)
            return invalid_input(
                fmt::format("--cuda {}: not a CUDA version (such as 12.8 or cu128)", *pins.cuda));
        if (!d.find_cuda(pin_cuda)) {
            if (pin_cuda < d.newest_cuda())
                return invalid_input(
                    fmt::format("--cuda {}: there is no CUDA {} release in the "
                                "data (it knows {} to {})",
                                *pins.cuda, cuda_text(pin_cuda), cuda_text(d.cuda.front().cuda),
                                cuda_text(d.newest_cuda())));
            cuda_newer = true;
            r.warnings.push_back(fmt::format("--cuda {}: CUDA {} is {}", *pins.cuda,
                                             cuda_text(pin_cuda), newer_than_data(d)));
        }
        for (auto cc : gpu.ccs) {
            const auto fit = cuda_gpu_fit(d, pin_cuda, cc);
            if (fit == CudaGpuFit::kTooOld || fit == CudaGpuFit::kDropped)
                return invalid_input(fmt::format(
                    "--cuda {} cannot drive the {}: {} (source: {})", cuda_text(pin_cuda), gpu.name,
                    cuda_gpu_reason(d, cc), d.find_architecture(cc)->source));
        }
    }

    // --torch: a release the data knows.
    bool torch_newer = false;
    const TorchRelease* pinned_torch = nullptr;
    if (pins.torch) {
        const std::string minor = minor_version(*pins.torch);
        if (minor.empty())
            return invalid_input(
                fmt::format("--torch {}: not a PyTorch version (such as 2.8)", *pins.torch));
        pinned_torch = d.find_torch(minor);
        if (!pinned_torch) {
            if (compare_versions(minor, d.newest_torch()) < 0)
                return invalid_input(
                    fmt::format("--torch {}: PyTorch {} is not in the data (it "
                                "knows {} to {})",
                                *pins.torch, minor, d.torch.front().version, d.newest_torch()));
            torch_newer = true;
            r.torch_version = minor;
            r.warnings.push_back(fmt::format("--torch {}: PyTorch {} is {}", *pins.torch, minor,
                                             newer_than_data(d)));
        }
    }

    if (torch_newer || cuda_newer) {
        // Nothing follows from a release the data does not know: say so, guess nothing.
        r.judged = false;
        if (!r.torch_version.empty() || pinned_torch)
            r.components.push_back(
                {"PyTorch", pinned_torch ? pinned_torch->version : r.torch_version,
                 torch_newer ? "pinned (--torch); " + newer_than_data(d) : "pinned (--torch)", ""});
        if (pin_cuda)
            r.components.push_back(
                {"CUDA", cuda_text(pin_cuda),
                 cuda_newer ? "pinned (--cuda); " + newer_than_data(d) : "pinned (--cuda)", ""});
        return r;
    }

    // The PyTorch release and its CUDA build.
    std::vector<const TorchRelease*> releases;
    if (pinned_torch)
        releases.push_back(pinned_torch);
    else
        for (auto it = d.torch.rbegin(); it != d.torch.rend(); ++it) releases.push_back(&*it);
    for (const TorchRelease* t : releases) {
        if (const TorchBuild* b = pick_build(d, *t, gpu.ccs, pin_cuda)) {
            r.torch = t;
            r.build = b;
            break;
        }
    }
    if (!r.build) {
        if (pinned_torch && pin_cuda) {
            const TorchBuild* b = nullptr;
            for (const auto& x : pinned_torch->builds)
                if (x.cuda == pin_cuda) b = &x;
            if (!b)
                return invalid_input(
                    fmt::format("--torch {} ships no CUDA {} build ({}; source: "
                                "{})",
                                pinned_torch->version, cuda_text(pin_cuda), tags_of(*pinned_torch),
                                pinned_torch->source));
            return invalid_input(
                fmt::format("--torch {} with --cuda {} cannot serve {}: {} "
                            "(source: {})",
                            pinned_torch->version, cuda_text(pin_cuda), gpu_name,
                            build_problem(d, *b, gpu.ccs), b->source));
        }
        if (pinned_torch) {
            std::vector<std::string> why;
            for (const auto& b : pinned_torch->builds)
                why.push_back(fmt::format("{}: {}", cuda_tag(b.cuda), build_arch_text(b)));
            return invalid_input(fmt::format(
                "--torch {} has no wheel with kernels for {}: {} "
                "(source: {})",
                pinned_torch->version, gpu_name, join(why, "; "), pinned_torch->source));
        }
        if (pin_cuda) {
            std::vector<std::string> with;
            for (const auto& t : d.torch)
                for (const auto& b : t.builds)
                    if (b.cuda == pin_cuda) with.push_back(t.version);
            return invalid_input(fmt::format(
                "--cuda {}: no PyTorch release in the data ships a CUDA {} wheel with kernels "
                "for {} ({})",
                cuda_text(pin_cuda), cuda_text(pin_cuda), gpu_name,
                with.empty() ? std::string("no release has a ") + cuda_tag(pin_cuda) + " wheel"
                             : cuda_tag(pin_cuda) + " wheels: " + join(with, ", ")));
        }
        return invalid_input(
            fmt::format("no PyTorch release in the data (newest {}) has a wheel "
                        "with kernels for {}",
                        d.newest_torch(), gpu_name));
    }
    r.torch_version = r.torch->version;
    r.cuda = r.build->cuda;
    const CudaRelease& cuda_row = *d.find_cuda(r.cuda);

    // The driver.
    bool new_feature = false;
    r.branch = pick_branch(d, r.cuda, gpu.ccs, new_feature);
    std::string driver_why, driver_source;
    if (r.branch) {
        r.driver_branch = r.branch->branch;
        r.driver_min = branch_first_driver(d, r.driver_branch);
        if (r.driver_min.empty() || compare_versions(r.driver_min, cuda_row.toolkit_driver) < 0)
            r.driver_min = cuda_row.toolkit_driver;
        const int native = branch_cuda(d, r.driver_branch);
        driver_why =
            native == r.cuda
                ? fmt::format("{}{} that runs CUDA {} natively", branch_type_name(r.branch->type),
                              eol_text(*r.branch), cuda_text(r.cuda))
                : fmt::format("{}{}: its CUDA {} runs CUDA {} builds",
                              branch_type_name(r.branch->type), eol_text(*r.branch),
                              cuda_text(native), cuda_text(r.cuda));
        driver_source = r.branch->source;
        if (new_feature)
            r.warnings.push_back(fmt::format(
                "no long-term support or production branch in the data runs CUDA {}: R{} is a "
                "new feature branch (short-lived)",
                cuda_text(r.cuda), r.driver_branch));
    } else {
        r.driver_branch = driver_branch(cuda_row.toolkit_driver);
        r.driver_min = cuda_row.toolkit_driver;
        driver_why = fmt::format(
            "CUDA {}'s own driver: no supported data-centre branch in the "
            "data runs it natively",
            cuda_text(r.cuda));
        driver_source = cuda_row.source;
        r.warnings.push_back(driver_why);
    }
    // Open kernel modules: required on Blackwell (and Grace Hopper), the default from R560 on
    // Turing and later, unsupported before Turing (NVIDIA, "NVIDIA Transitions Fully Towards
    // Open-Source GPU Kernel Modules", 2024-07-17).
    r.open_modules = OpenModules::kRecommended;
    for (auto cc : gpu.ccs) {
        if (cc < 75) r.open_modules = OpenModules::kUnsupported;
        if (cc >= 100 && r.open_modules != OpenModules::kUnsupported)
            r.open_modules = OpenModules::kRequired;
    }
    if (gpu.id == "gh200") r.open_modules = OpenModules::kRequired;
    const char* modules = r.open_modules == OpenModules::kRequired      ? "open kernel modules"
                          : r.open_modules == OpenModules::kRecommended ? "open kernel modules"
                                                                        : "proprietary modules";
    const char* modules_why = r.open_modules == OpenModules::kRequired
                                  ? "; this GPU needs the open kernel modules"
                              : r.open_modules == OpenModules::kRecommended
                                  ? "; open kernel modules, NVIDIA's default since R560"
                                  : "; the open modules do not support GPUs before Turing";

    // Python: the distribution's own python3 when the release has wheels for it.
    if (distro && compare_versions(distro->python, r.torch->python_min) >= 0 &&
        compare_versions(distro->python, r.torch->python_max) <= 0) {
        r.python = distro->python;
    } else {
        r.python = r.torch->python_max;
    }
    const std::string python_why =
        r.python == (distro ? distro->python : "")
            ? fmt::format("{}'s python3; torch {} has wheels for {} to {}", distro->name,
                          r.torch_version, r.torch->python_min, r.torch->python_max)
            : fmt::format("the newest Python torch {} has wheels for ({} to {}){}", r.torch_version,
                          r.torch->python_min, r.torch->python_max,
                          distro ? fmt::format("; {}'s python3 {} is outside that range",
                                               distro->name, distro->python)
                                 : "");

    const std::string wheel = fmt::format("torch {}+{}", r.torch_version, cuda_tag(r.cuda));
    const bool cuda_pinned = pin_cuda != 0, torch_pinned = pinned_torch != nullptr;
    std::string torch_why =
        torch_pinned
            ? "pinned (--torch)"
            : fmt::format("newest release in the data whose wheels include {}", sm_list(gpu.ccs));
    if (!torch_pinned && cuda_pinned)
        torch_why = fmt::format("newest release with a {} wheel that includes {}", cuda_tag(r.cuda),
                                sm_list(gpu.ccs));
    std::string cuda_why = cuda_pinned
                               ? "pinned (--cuda)"
                               : fmt::format("newest {}CUDA build of torch {} for {}",
                                             r.build->experimental ? "(experimental) " : "stable ",
                                             r.torch_version, sm_list(gpu.ccs));
    if (r.build->experimental && !cuda_pinned)
        r.warnings.push_back(
            fmt::format("torch {} has no stable CUDA build for {}: {} is "
                        "experimental",
                        r.torch_version, sm_list(gpu.ccs), cuda_tag(r.cuda)));

    r.components = {
        {"driver", fmt::format("R{} >= {}, {}", r.driver_branch, r.driver_min, modules),
         driver_why + modules_why, driver_source},
        {"CUDA", cuda_text(r.cuda), cuda_why, r.build->source + "; " + cuda_row.source},
        {"cuDNN", r.build->cudnn.empty() ? "not recorded" : r.build->cudnn,
         r.build->cudnn.empty() ? "no source names the cuDNN of " + wheel
                                : "the one " + wheel + " bundles",
         r.build->source},
        {"NCCL", r.build->nccl.empty() ? "not recorded" : r.build->nccl,
         r.build->nccl.empty() ? "no source names the NCCL of " + wheel
                               : "the one " + wheel + " bundles",
         r.build->source},
        {"PyTorch", fmt::format("{} ({})", r.torch_version, cuda_tag(r.cuda)), torch_why,
         r.torch->source},
        {"Python", r.python, python_why,
         distro && r.python == distro->python ? distro->source : r.torch->source},
    };
    return r;
}

}  // namespace trainrig::stack
