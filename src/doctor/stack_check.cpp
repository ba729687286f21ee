// A machine against the recommended stack; see stack_check.h.
#include "doctor/stack_check.h"

#include <fmt/format.h>

#include "core/text.h"
#include "doctor/rule.h"
#include "hw/snapshot_gpus.h"
#include "probe/stack_parsers.h"
#include "stack/compat.h"
#include "stack/cuda_drivers.h"

namespace trainrig::stack {

namespace stack_check_detail {

constexpr const char* kInsufficient =
    "fail with cudaErrorInsufficientDriver (\"CUDA driver version is insufficient for CUDA "
    "runtime version\")";

std::string wheel_text(const Recommendation& r) {
    return fmt::format("torch {}+{}", r.torch_version, cuda_tag(r.cuda));
}

Finding check_driver(const StackData& d, const Snapshot& s, const Recommendation& r) {
    Finding f;
    f.id = "recommended.driver";
    f.title = "The driver runs the recommended CUDA on a supported branch";
    f.refs = {"docs/stack.md", "NVIDIA Data Center Drivers, driver lifecycle"};
    const std::string driver = installed_driver_version(s);
    if (driver.empty()) {
        f.raise(FindingStatus::kSkip, "no NVIDIA driver found (NVML and /proc/driver/nvidia)");
        return f;
    }
    const int branch = driver_branch(driver);
    f.evidence.push_back(fmt::format("driver {} (R{})", driver, branch));
    if (branch > d.newest_branch()) {
        f.raise(FindingStatus::kWarn,
                fmt::format("driver {} (R{}) is {}", driver, branch, newer_than_data(d)));
        return f;
    }
    if (!r.judged || r.cuda == 0) {
        f.raise(FindingStatus::kSkip,
                "the recommendation was not judged (a pin newer than the "
                "data), so there is nothing to compare with");
        return f;
    }
    f.evidence.push_back(
        fmt::format("recommended: R{} >= {} for {}", r.driver_branch, r.driver_min, wheel_text(r)));
    int driver_cuda = driver_cuda_version(s);
    if (driver_cuda > 0)
        f.evidence.push_back(fmt::format("the driver reports CUDA {}", cuda_text(driver_cuda)));
    else if ((driver_cuda = branch_cuda(d, branch)) > 0)
        f.evidence.push_back(fmt::format("R{} runs CUDA {} (from the data; NVML was not read)",
                                         branch, cuda_text(driver_cuda)));
    const std::string remedy =
        fmt::format("Install driver R{} >= {} (`trainrig stack` prints the steps).",
                    r.driver_branch, r.driver_min);
    switch (cuda_driver_fit(d, r.cuda, driver_cuda, driver)) {
        case DriverFit::kNewerMajor:
        case DriverFit::kBelowFloor:
            f.raise(FindingStatus::kFail,
                    fmt::format("driver {} runs CUDA {} at most: CUDA {} programs ({}, the "
                                "recommended set) {}",
                                driver, cuda_text(driver_cuda), cuda_text(r.cuda), wheel_text(r),
                                kInsufficient));
            f.remedy = remedy;
            break;
        case DriverFit::kMinorCompat:
            f.raise(
                FindingStatus::kWarn,
                fmt::format("driver {} (CUDA {}) runs CUDA {} only through minor-version "
                            "compatibility: features that need a newer driver fail, and PTX "
                            "from CUDA {} does not load",
                            driver, cuda_text(driver_cuda), cuda_text(r.cuda), cuda_text(r.cuda)));
            f.remedy = remedy;
            break;
        case DriverFit::kRuns:
        case DriverFit::kUnknown:
            break;
    }
    for (auto cc : r.gpu.ccs) {
        const Architecture* a = d.find_architecture(cc);
        if (a && a->last_driver_branch > 0 && branch > a->last_driver_branch) {
            f.raise(FindingStatus::kFail,
                    fmt::format("R{} no longer supports {} GPUs (the last branch that does is "
                                "R{}): the driver does not drive them",
                                branch, a->name, a->last_driver_branch));
            f.remedy = fmt::format("Install driver branch R{}.", a->last_driver_branch);
        }
    }
    if (const DriverBranch* b = d.find_branch(branch)) {
        std::vector<std::string> facts;
        if (b->type != BranchType::kUnknown) facts.emplace_back(branch_type_name(b->type));
        if (!b->end_of_life.empty())
            facts.push_back("end of life " + b->end_of_life);
        else if (b->ended)
            facts.emplace_back("end of life");
        f.evidence.push_back(fmt::format("R{}: {} ({})", branch, join(facts, ", "), b->source));
        std::string problem;
        if (branch_ended(d, *b))
            problem = fmt::format(
                "driver branch R{} has reached its end of life: no more "
                "security or bug fixes",
                branch);
        else if (b->type == BranchType::kNewFeature)
            problem = fmt::format(
                "R{} is a new feature branch: short-lived, for trying features, "
                "not for production",
                branch);
        if (!problem.empty()) {
            f.evidence.push_back(problem);  // kept even when a failure is the summary
            f.raise(FindingStatus::kWarn, problem);
            if (f.remedy.empty()) f.remedy = remedy;
        }
    } else {
        f.evidence.push_back(
            fmt::format("R{} is not in the data's branch table: its support "
                        "status is not judged",
                        branch));
    }
    if (branch == r.driver_branch && compare_versions(driver, r.driver_min) < 0) {
        f.raise(FindingStatus::kWarn,
                fmt::format("driver {} is older than the recommended {}", driver, r.driver_min));
        if (f.remedy.empty()) f.remedy = remedy;
    }
    f.raise(FindingStatus::kPass,
            branch == r.driver_branch
                ? fmt::format("driver {} is the recommended branch R{}", driver, branch)
                : fmt::format("driver {} (R{}) runs {}; the recommendation is R{}", driver, branch,
                              wheel_text(r), r.driver_branch));
    return f;
}

// The stack facts, or nullptr after marking the finding skip or error with why they are missing.
const SoftwareStack* stack_facts(const Snapshot& s, Finding& f) {
    if (s.stack.is_known()) return &s.stack.value();
    if (s.stack.is_failed() && s.stack.status().code() == Errc::kUnsupported)
        f.raise(FindingStatus::kSkip, s.stack.status().message());
    else
        f.raise(FindingStatus::kError,
                s.stack.is_failed() ? s.stack.status().message() : "no software stack facts");
    return nullptr;
}

Finding check_torch(const StackData& d, const Snapshot& s, const Recommendation& r) {
    Finding f;
    f.id = "recommended.torch";
    f.title = "PyTorch is the recommended release and CUDA build";
    f.refs = {"docs/stack.md", "pytorch/pytorch RELEASE.md, Release Compatibility Matrix"};
    const SoftwareStack* st = stack_facts(s, f);
    if (!st) return f;
    const std::string pip = pip_install_line(r);
    if (st->torch.is_absent()) {
        f.raise(r.judged ? FindingStatus::kWarn : FindingStatus::kSkip,
                r.judged ? fmt::format("PyTorch is not installed for python3; the recommendation "
                                       "is {}",
                                       wheel_text(r))
                         : std::string("PyTorch is not installed for python3"));
        if (r.judged) f.remedy = fmt::format("`{}`", pip);
        return f;
    }
    if (!need(st->torch, f)) return f;
    const auto& t = st->torch.value();
    const int torch_cuda = t.cuda.is_known() ? cuda_code(t.cuda.value()) : 0;
    f.evidence.push_back(fmt::format("{}: torch {}, CUDA {}", t.python, t.version,
                                     torch_cuda ? cuda_text(torch_cuda) : "none (CPU-only)"));
    const auto wheel = find_wheel(d, t.version, torch_cuda);
    if (wheel.newer_than_data) {
        f.raise(FindingStatus::kWarn, fmt::format("torch {} is {}", t.version, newer_than_data(d)));
        return f;
    }
    if (!r.judged) {
        f.raise(FindingStatus::kSkip,
                "the recommendation was not judged (a pin newer than the "
                "data)");
        return f;
    }
    f.evidence.push_back(fmt::format("recommended: {} ({})", wheel_text(r), pip));
    const std::string minor = minor_version(t.version);
    if (minor != r.torch_version) {
        const bool older = !minor.empty() && compare_versions(minor, r.torch_version) < 0;
        f.raise(
            FindingStatus::kWarn,
            fmt::format("torch {} differs from the recommended {}{}", t.version, r.torch_version,
                        older ? ": an older release, without the fixes and kernels since" : ""));
        f.remedy = fmt::format("`{}`", pip);
    } else if (torch_cuda != r.cuda) {
        f.raise(FindingStatus::kWarn,
                fmt::format("torch {} is the {} build; the recommendation is {}", t.version,
                            torch_cuda ? cuda_tag(torch_cuda) : std::string("CPU-only"),
                            cuda_tag(r.cuda)));
        f.remedy = fmt::format("`{}`", pip);
    }
    f.raise(FindingStatus::kPass, fmt::format("torch {} is the recommended build", t.version));
    return f;
}

// Without torch's own NCCL to compare, the system's against what the recommended wheel bundles:
// nccl-tests and other programs that load the system library measure another NCCL than the
// recommended training stack runs (as nvcc against the wheel's CUDA in check_toolkit).
void check_system_nccl(const SoftwareStack& st, const Recommendation& r, Finding& f) {
    if (!st.nccl_version.is_known()) {
        f.raise(FindingStatus::kSkip,
                "neither PyTorch's NCCL nor a system NCCL is known here (stack.nccl says why)");
        return;
    }
    const std::string system = nccl_version_text(st.nccl_version.value());
    f.evidence.push_back(fmt::format("system NCCL {}; PyTorch's is not known here", system));
    if (!r.judged || !r.build) {
        f.raise(FindingStatus::kSkip,
                "the recommendation was not judged (a pin newer than the data), so there is "
                "nothing to compare with");
        return;
    }
    if (r.build->nccl.empty()) {
        f.raise(FindingStatus::kSkip,
                fmt::format("no source in the data names the NCCL of {}, the recommended wheel",
                            wheel_text(r)));
        return;
    }
    f.evidence.push_back(
        fmt::format("recommended: NCCL {} as {} bundles it", r.build->nccl, wheel_text(r)));
    if (system != r.build->nccl) {
        f.raise(FindingStatus::kWarn,
                fmt::format("the system NCCL {} differs from the {} that {}, the recommended "
                            "wheel, bundles: nccl-tests and programs that load the system "
                            "library measure another NCCL than training runs",
                            system, r.build->nccl, wheel_text(r)));
        f.remedy =
            fmt::format("sudo apt-get install -y libnccl2={0}-1+cuda{1} libnccl-dev={0}-1+cuda{1}",
                        r.build->nccl, cuda_text(r.cuda));
        return;
    }
    f.raise(FindingStatus::kPass,
            fmt::format("system NCCL {} as {} bundles it", system, wheel_text(r)));
}

Finding check_nccl(const StackData& d, const Snapshot& s, const Recommendation& r) {
    Finding f;
    f.id = "recommended.nccl";
    f.title = "NCCL is the one the PyTorch wheel bundles";
    f.refs = {"docs/stack.md"};
    const SoftwareStack* st = stack_facts(s, f);
    if (!st) return f;
    const TorchFacts* t = st->torch.get();
    if (!t || !t->nccl.is_known()) {
        check_system_nccl(*st, r, f);
        return f;
    }
    const auto wheel =
        find_wheel(d, t->version, t->cuda.is_known() ? cuda_code(t->cuda.value()) : 0);
    if (wheel.newer_than_data) {
        f.raise(FindingStatus::kWarn,
                fmt::format("torch {} is {}", t->version, newer_than_data(d)));
        return f;
    }
    const std::string& runs = t->nccl.value();
    const bool own_known = wheel.build && !wheel.build->nccl.empty();
    if (own_known) {
        f.evidence.push_back(fmt::format("torch {} uses NCCL {}; its wheel bundles {} ({})",
                                         t->version, runs, wheel.build->nccl, wheel.build->source));
        if (runs != wheel.build->nccl) {
            f.raise(FindingStatus::kWarn,
                    fmt::format("torch {} runs NCCL {}, not the {} its wheel pins: the "
                                "nvidia-nccl-cu{} package was replaced, and collectives run an "
                                "NCCL this torch was not tested with",
                                t->version, runs, wheel.build->nccl, wheel.build->cuda / 1000));
            f.remedy = fmt::format("Reinstall the pinned one: `pip install nvidia-nccl-cu{}=={}`",
                                   wheel.build->cuda / 1000, wheel.build->nccl);
            return f;
        }
    }
    // Its own wheel's NCCL, and still not the recommendation's: it comes with the recommended
    // torch (recommended.torch names that difference).
    const bool recommended_known = r.judged && r.build && !r.build->nccl.empty();
    if (recommended_known) {
        f.evidence.push_back(
            fmt::format("recommended: NCCL {} as {} bundles it", r.build->nccl, wheel_text(r)));
        if (runs != r.build->nccl) {
            f.raise(FindingStatus::kWarn,
                    fmt::format("torch {} runs NCCL {}; {}, the recommended wheel, bundles {}",
                                t->version, runs, wheel_text(r), r.build->nccl));
            f.remedy = fmt::format("`{}`", pip_install_line(r));
            return f;
        }
    }
    if (!own_known && !recommended_known) {
        f.raise(FindingStatus::kSkip,
                wheel.build
                    ? fmt::format("no source in the data names the NCCL of torch {}", t->version)
                    : wheel.why_unknown);
        return f;
    }
    f.raise(FindingStatus::kPass,
            fmt::format("NCCL {} as {} bundles it", runs,
                        recommended_known ? wheel_text(r) : "torch " + t->version));
    return f;
}

Finding check_toolkit(const Snapshot& s, const Recommendation& r) {
    Finding f;
    f.id = "recommended.cuda";
    f.title = "The CUDA toolkit builds extensions for the wheel's CUDA";
    f.refs = {"docs/stack.md", "torch.utils.cpp_extension (CUDA version check)"};
    const SoftwareStack* st = stack_facts(s, f);
    if (!st) return f;
    if (!st->nvcc_version.is_known()) {
        f.raise(FindingStatus::kSkip, st->nvcc_version.is_failed()
                                          ? st->nvcc_version.status().message()
                                          : "no nvcc found: nothing builds CUDA extensions here");
        return f;
    }
    if (!r.judged || r.cuda == 0) {
        f.raise(FindingStatus::kSkip,
                "the recommendation was not judged (a pin newer than the "
                "data)");
        return f;
    }
    const int nvcc = cuda_code(st->nvcc_version.value());
    f.evidence.push_back(fmt::format("nvcc {} ({})", st->nvcc_version.value(), st->nvcc_path));
    if (nvcc / 1000 != r.cuda / 1000) {
        f.raise(FindingStatus::kWarn,
                fmt::format("nvcc {} and the recommended {} differ in CUDA major: "
                            "torch.utils.cpp_extension refuses to build extensions against them",
                            st->nvcc_version.value(), wheel_text(r)));
        f.remedy = fmt::format("sudo apt-get install -y cuda-toolkit-{}-{}", r.cuda / 1000,
                               r.cuda % 1000 / 10);
    } else if (nvcc != r.cuda) {
        f.raise(FindingStatus::kWarn,
                fmt::format("nvcc {} is not CUDA {}, the recommended wheel's: extensions build "
                            "with a warning and may use features the other does not have",
                            st->nvcc_version.value(), cuda_text(r.cuda)));
        f.remedy = fmt::format("sudo apt-get install -y cuda-toolkit-{}-{}", r.cuda / 1000,
                               r.cuda % 1000 / 10);
    }
    f.raise(FindingStatus::kPass,
            fmt::format("nvcc {} matches CUDA {}", st->nvcc_version.value(), cuda_text(r.cuda)));
    return f;
}

// A row says what its recommended.* finding says: the comparison with the recommendation is
// the row. Doctor's finding about the component may only make it worse (a skip never does),
// and a row whose recommendation the data does not record is at best a skip, never a pass.
FindingStatus row_status(const Finding* recommended, const Finding* doctor, bool recorded = true) {
    FindingStatus status = recommended ? recommended->status : FindingStatus::kSkip;
    if (doctor && doctor->status != FindingStatus::kSkip) status = worst_of(status, doctor->status);
    if (!recorded) status = worst_of(status, FindingStatus::kSkip);
    return status;
}

}  // namespace stack_check_detail

StackCheck check_stack(const StackData& d, const Snapshot& s, const Recommendation& r) {
    using namespace stack_check_detail;
    StackCheck c;
    for (const auto& id : doctor_stack_rule_ids())
        if (const Rule* rule = find_rule(id)) c.findings.push_back(run_rule(*rule, s, {}));
    c.findings.push_back(check_driver(d, s, r));
    c.findings.push_back(check_toolkit(s, r));
    c.findings.push_back(check_torch(d, s, r));
    c.findings.push_back(check_nccl(d, s, r));
    auto by_id = [&](const char* id) -> const Finding* {
        for (const auto& f : c.findings)
            if (f.id == id) return &f;
        return nullptr;
    };

    const std::string driver = installed_driver_version(s);
    const int driver_cuda = driver_cuda_version(s);
    c.rows.push_back({"driver",
                      driver.empty()
                          ? "none found"
                          : fmt::format("{} (R{}{})", driver, driver_branch(driver),
                                        driver_cuda ? ", CUDA " + cuda_text(driver_cuda) : ""),
                      r.judged && r.cuda ? fmt::format("R{} >= {}", r.driver_branch, r.driver_min)
                                         : "not judged",
                      row_status(by_id("recommended.driver"), nullptr)});
    const SoftwareStack* st = s.stack.get();
    const std::string not_read = s.stack.is_known() ? "" : "not read here";
    auto or_none = [&](const std::string& v) { return !not_read.empty() ? not_read : v; };
    c.rows.push_back({"CUDA toolkit",
                      or_none(st && st->nvcc_version.is_known() ? "nvcc " + st->nvcc_version.value()
                              : st && st->cuda_runtime_version.is_known()
                                  ? "runtime " + cuda_text(st->cuda_runtime_version.value())
                                  : "none"),
                      r.cuda ? cuda_text(r.cuda) : "not judged",
                      row_status(by_id("recommended.cuda"), by_id("stack.cuda-driver"))});
    const TorchFacts* t = st ? st->torch.get() : nullptr;
    c.rows.push_back({"PyTorch",
                      or_none(t ? fmt::format("{} (CUDA {})", t->version,
                                              t->cuda.is_known() ? t->cuda.value() : "none")
                                : "none"),
                      r.build ? fmt::format("{} ({})", r.torch_version, cuda_tag(r.cuda))
                      : r.torch_version.empty() ? "not judged"
                                                : r.torch_version,
                      row_status(by_id("recommended.torch"), by_id("stack.torch"))});
    std::vector<std::string> nccl_parts;
    if (t && t->nccl.is_known()) nccl_parts.push_back("torch's " + t->nccl.value());
    if (st && st->nccl_version.is_known())
        nccl_parts.push_back("system " + nccl_version_text(st->nccl_version.value()));
    const std::string nccl = nccl_parts.empty() ? "none" : join(nccl_parts, ", ");
    const bool recorded = r.build && !r.build->nccl.empty();
    c.rows.push_back({"NCCL", or_none(nccl),
                      recorded  ? r.build->nccl
                      : r.build ? "not recorded"
                                : "not judged",
                      row_status(by_id("recommended.nccl"), by_id("stack.nccl"), recorded)});
    return c;
}

}  // namespace trainrig::stack
