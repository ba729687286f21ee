// Choosing the stack for a GPU; see recommend.h. Every choice names the data row it rests on.
#include "stack/recommend.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"
#include "stack/compat.h"
#include "stack/cuda_drivers.h"

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

// The phases of recommend(), in the order it runs them.
namespace {

// What --cuda asks for: the release (0: not pinned) and whether it is newer than the data.
struct CudaPin {
    int cuda = 0;
    bool newer = false;
};

// --cuda: a release the data knows, able to drive the GPU.
Result<CudaPin> check_cuda_pin(const StackData& d, const GpuTarget& gpu, const Pins& pins,
                               Recommendation& r) {
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
    return CudaPin{pin_cuda, cuda_newer};
}

// What --torch asks for: the release the data has (nullptr: not pinned, or newer than the data)
// and whether it is newer than the data.
struct TorchPin {
    const TorchRelease* release = nullptr;
    bool newer = false;
};

// --torch: a release the data knows.
Result<TorchPin> check_torch_pin(const StackData& d, const Pins& pins, Recommendation& r) {
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
    return TorchPin{pinned_torch, torch_newer};
}

// The error when no release has a build that serves the GPU: it names the pins and what each
// build lacks.
Status no_release_error(const StackData& d, const GpuTarget& gpu, const TorchRelease* pinned_torch,
                        int pin_cuda, const std::string& gpu_name) {
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
        return invalid_input(
            fmt::format("--torch {} has no wheel with kernels for {}: {} "
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

// The PyTorch release and its CUDA build: the pinned release, else the newest with a build that
// serves the GPU (of the pinned CUDA, if any).
Status pick_release(const StackData& d, const GpuTarget& gpu, const TorchRelease* pinned_torch,
                    int pin_cuda, const std::string& gpu_name, Recommendation& r) {
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
    if (!r.build) return no_release_error(d, gpu, pinned_torch, pin_cuda, gpu_name);
    return ok_status();
}

// Why the driver, and the data row that says so.
struct DriverChoice {
    std::string why, source;
};

// The driver: a supported data-centre branch that runs the build's CUDA, else the CUDA
// release's own driver (with a warning).
DriverChoice choose_driver(const StackData& d, const GpuTarget& gpu, const CudaRelease& cuda_row,
                           Recommendation& r) {
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
    return {driver_why, driver_source};
}

// The kernel modules to install with the driver, and the clause that says why.
struct ModulesChoice {
    const char* name;
    const char* why;
};

// Open kernel modules: required on Blackwell (and Grace Hopper), the default from R560 on
// Turing and later, unsupported before Turing (NVIDIA, "NVIDIA Transitions Fully Towards
// Open-Source GPU Kernel Modules", 2024-07-17).
ModulesChoice choose_kernel_modules(const GpuTarget& gpu, Recommendation& r) {
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
    return {modules, modules_why};
}

// Python: the distribution's own python3 when the release has wheels for it. Returns why.
std::string choose_python(const Distro* distro, Recommendation& r) {
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
    return python_why;
}

// Why this PyTorch release and why this CUDA build.
struct ReleaseWhy {
    std::string torch, cuda;
};

// Why the release and its CUDA build: pinned, or the newest that serves the GPU; warns when
// that build is experimental.
ReleaseWhy explain_release(const GpuTarget& gpu, bool torch_pinned, bool cuda_pinned,
                           Recommendation& r) {
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
    return {torch_why, cuda_why};
}

}  // namespace

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

    auto cuda_pin = check_cuda_pin(d, gpu, pins, r);
    if (!cuda_pin) return cuda_pin.status();
    const int pin_cuda = cuda_pin->cuda;
    const bool cuda_newer = cuda_pin->newer;
    auto torch_pin = check_torch_pin(d, pins, r);
    if (!torch_pin) return torch_pin.status();
    const TorchRelease* pinned_torch = torch_pin->release;
    const bool torch_newer = torch_pin->newer;

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

    TRAINRIG_TRY(pick_release(d, gpu, pinned_torch, pin_cuda, gpu_name, r));
    r.torch_version = r.torch->version;
    r.cuda = r.build->cuda;
    const CudaRelease& cuda_row = *d.find_cuda(r.cuda);
    const DriverChoice driver = choose_driver(d, gpu, cuda_row, r);
    const ModulesChoice modules = choose_kernel_modules(gpu, r);
    const std::string python_why = choose_python(distro, r);

    const std::string wheel = fmt::format("torch {}+{}", r.torch_version, cuda_tag(r.cuda));
    const bool cuda_pinned = pin_cuda != 0, torch_pinned = pinned_torch != nullptr;
    const ReleaseWhy why = explain_release(gpu, torch_pinned, cuda_pinned, r);

    r.components = {
        {"driver", fmt::format("R{} >= {}, {}", r.driver_branch, r.driver_min, modules.name),
         driver.why + modules.why, driver.source},
        {"CUDA", cuda_text(r.cuda), why.cuda, r.build->source + "; " + cuda_row.source},
        {"cuDNN", r.build->cudnn.empty() ? "not recorded" : r.build->cudnn,
         r.build->cudnn.empty() ? "no source names the cuDNN of " + wheel
                                : "the one " + wheel + " bundles",
         r.build->source},
        {"NCCL", r.build->nccl.empty() ? "not recorded" : r.build->nccl,
         r.build->nccl.empty() ? "no source names the NCCL of " + wheel
                               : "the one " + wheel + " bundles",
         r.build->source},
        {"PyTorch", fmt::format("{} ({})", r.torch_version, cuda_tag(r.cuda)), why.torch,
         r.torch->source},
        {"Python", r.python, python_why,
         distro && r.python == distro->python ? distro->source : r.torch->source},
    };
    return r;
}

}  // namespace trainrig::stack
