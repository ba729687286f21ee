// The software stack against the driver: the CUDA runtime/toolkit, NCCL and PyTorch the machine
// would train with, and the fabric manager that NVSwitch systems need. article §4.1 (a
// version-locked stack).
#include <fmt/format.h>

#include "core/quantity.h"
#include "core/text.h"
#include "doctor/gpus.h"
#include "doctor/nvml_gpus.h"
#include "doctor/rule.h"
#include "hw/snapshot_gpus.h"
#include "policy/gpu_health.h"
#include "probe/stack_parsers.h"
#include "stack/compat.h"
#include "stack/cuda_drivers.h"
#include "stack/gpu_target.h"
#include "stack/recommend.h"

namespace trainrig {

namespace {

std::optional<std::string> stack_skip(const Snapshot& s) {
    if (s.stack.is_failed() && s.stack.status().code() == Errc::kUnsupported)
        return s.stack.status().message();
    return std::nullopt;
}

const SoftwareStack* need_stack(const Snapshot& s, Finding& f) {
    if (s.stack.is_known()) return &s.stack.value();
    const std::string why =
        s.stack.is_failed() ? s.stack.status().message() : std::string("no software stack facts");
    f.raise(FindingStatus::kError, why);
    return nullptr;
}

// Judges one CUDA version (runtime, toolkit or torch's) against the driver. `what` names it.
// The verdict is stack::cuda_driver_fit's, the rule `trainrig stack check` applies too.
void judge_cuda(int cuda, const std::string& what, int driver_cuda, const std::string& driver,
                Finding& f) {
    const auto req = cuda_driver_requirement(cuda);
    std::string need;
    if (req && req->toolkit_driver)
        need = fmt::format(
            "; CUDA {} wants driver {} (≥ {} through minor-version "
            "compatibility)",
            cuda_text(cuda), req->toolkit_driver, req->minor_compat);
    else if (req)
        need = fmt::format("; CUDA {}.x runs on driver ≥ {}", cuda / 1000, req->minor_compat);
    f.evidence.push_back(fmt::format("{}: CUDA {}{}", what, cuda_text(cuda), need));
    const auto fit = stack::cuda_driver_fit(stack::stack_data(), cuda, driver_cuda, driver);
    if (fit == stack::DriverFit::kUnknown || fit == stack::DriverFit::kRuns) return;
    if (fit == stack::DriverFit::kNewerMajor) {
        f.raise(FindingStatus::kFail,
                fmt::format("{} is CUDA {}, but driver {} supports CUDA {} at most", what,
                            cuda_text(cuda), driver, cuda_text(driver_cuda)));
        f.remedy = req ? fmt::format("Install driver {} or newer (or a CUDA {} build).",
                                     req->toolkit_driver ? req->toolkit_driver : req->minor_compat,
                                     cuda_text(driver_cuda))
                       : fmt::format("Install a newer driver, or a CUDA {} build.",
                                     cuda_text(driver_cuda));
        return;
    }
    const bool floor_ok = fit == stack::DriverFit::kMinorCompat;
    f.raise(floor_ok ? FindingStatus::kWarn : FindingStatus::kFail,
            fmt::format("{} is CUDA {}, newer than driver {}'s CUDA {}{}", what, cuda_text(cuda),
                        driver, cuda_text(driver_cuda),
                        floor_ok ? ": it runs through minor-version compatibility, without "
                                   "features that need the newer driver, and PTX from a "
                                   "newer compiler fails to load"
                                 : ""));
    if (f.remedy.empty() && req && req->toolkit_driver)
        f.remedy = fmt::format("Upgrade the driver to {} or newer for full CUDA {} support.",
                               req->toolkit_driver, cuda_text(cuda));
}

// Judges one CUDA version against the GPUs the driver reports: an architecture newer than the
// CUDA (Blackwell needs 12.8) gets no native code from it; one it dropped (Volta after 12.x),
// none at all.
void judge_cuda_on_gpus(const Snapshot& s, int cuda, const std::string& what, Finding& f) {
    const auto& data = stack::stack_data();
    for (const auto& gpu : stack::reported_capabilities(s)) {
        const auto fit = stack::cuda_gpu_fit(data, cuda, gpu.cc);
        if (fit == stack::CudaGpuFit::kTooOld) {
            f.raise(FindingStatus::kWarn,
                    fmt::format("{} is CUDA {}, older than {}: {}, so what it builds has no "
                                "native kernels for this GPU, only PTX it may JIT-compile",
                                what, cuda_text(cuda), gpu.label,
                                stack::cuda_gpu_reason(data, gpu.cc)));
        } else if (fit == stack::CudaGpuFit::kDropped) {
            f.raise(FindingStatus::kFail,
                    fmt::format("{} is CUDA {}, which no longer supports {}: {}; its libraries "
                                "have no kernels for this GPU",
                                what, cuda_text(cuda), gpu.label,
                                stack::cuda_gpu_reason(data, gpu.cc)));
        } else {
            continue;
        }
        if (f.remedy.empty())
            f.remedy = fmt::format(
                "Install a CUDA this GPU supports ({}); `trainrig stack` "
                "gives the matched set.",
                stack::cuda_gpu_reason(data, gpu.cc));
    }
}

// Judges an installed PyTorch's wheel against the GPUs the driver reports: a wheel without
// kernels for the GPU's architecture fails at the first kernel launch.
void judge_wheel_on_gpus(const Snapshot& s, const TorchFacts& t, Finding& f) {
    const auto& data = stack::stack_data();
    const auto gpus = stack::reported_capabilities(s);
    if (gpus.empty()) return;
    const auto wheel = stack::find_wheel(data, t.version, cuda_code(t.cuda.value()));
    if (!wheel.build) {
        f.evidence.push_back(wheel.why_unknown);
        return;
    }
    const std::string tag = stack::cuda_tag(wheel.build->cuda);
    for (const auto& gpu : gpus) {
        const auto fit = stack::build_arch_fit(*wheel.build, gpu.cc);
        if (fit == stack::ArchFit::kSass) {
            f.evidence.push_back(
                fmt::format("its {} wheel has kernels for compute capability {} "
                            "({})",
                            tag, stack::cc_text(gpu.cc), gpu.label));
            continue;
        }
        if (fit == stack::ArchFit::kPtx) {
            f.evidence.push_back(fmt::format(
                "its {} wheel runs on compute capability {} ({}) only through PTX: kernels are "
                "JIT-compiled at first use",
                tag, stack::cc_text(gpu.cc), gpu.label));
            continue;
        }
        f.raise(FindingStatus::kFail,
                fmt::format("torch {} has no kernels for compute capability {} ({}): its {} "
                            "wheel is built for {}, so kernels fail with \"no kernel image is "
                            "available for execution on the device\"",
                            t.version, stack::cc_text(gpu.cc), gpu.label, tag,
                            stack::build_arch_text(*wheel.build)));
        stack::GpuTarget target{"", gpu.label, {gpu.cc}, "reported by the driver"};
        auto rec = stack::recommend(data, target, {}, nullptr);
        if (f.remedy.empty())
            f.remedy = rec ? fmt::format(
                                 "Install a wheel with {} kernels: `{}` (`trainrig stack` "
                                 "gives the matched driver too).",
                                 stack::sm_text(gpu.cc), stack::pip_install_line(*rec))
                           : "No PyTorch release in the data has kernels for this GPU: " +
                                 rec.status().message() + ".";
    }
}

void check_cuda_driver(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* st = need_stack(s, f);
    if (!st) return;
    const int driver_cuda = driver_cuda_version(s);
    const std::string driver = installed_driver_version(s);
    if (driver_cuda > 0)
        f.evidence.push_back(fmt::format("driver {}: CUDA {}", driver.empty() ? "?" : driver,
                                         cuda_text(driver_cuda)));
    bool any = false;
    if (st->cuda_runtime_version.is_known()) {
        any = true;
        const int cuda = static_cast<int>(st->cuda_runtime_version.value());
        const std::string what = fmt::format("CUDA runtime {}", st->cuda_runtime_library);
        judge_cuda(cuda, what, driver_cuda, driver, f);
        judge_cuda_on_gpus(s, cuda, what, f);
    } else if (st->cuda_runtime_version.is_failed()) {
        f.raise(FindingStatus::kError, st->cuda_runtime_version.status().message());
    }
    if (st->nvcc_version.is_failed())
        f.raise(FindingStatus::kError,
                fmt::format("nvcc ({}): {}", st->nvcc_path, st->nvcc_version.status().message()));
    if (st->nvcc_version.is_known()) {
        any = true;
        const int cuda = cuda_code(st->nvcc_version.value());
        const std::string what =
            fmt::format("nvcc {} ({})", st->nvcc_version.value(), st->nvcc_path);
        judge_cuda(cuda, what, driver_cuda, driver, f);
        judge_cuda_on_gpus(s, cuda, what, f);
    }
    if (!any)
        return f.raise(FindingStatus::kSkip,
                       "no CUDA runtime library or nvcc found (PyTorch brings its own: see "
                       "stack.torch)");
    if (driver_cuda <= 0)
        return f.raise(FindingStatus::kSkip,
                       "no NVIDIA driver answers, so there is nothing to match CUDA against");
    f.raise(FindingStatus::kPass,
            fmt::format("driver {} (CUDA {}) runs the CUDA found", driver, cuda_text(driver_cuda)));
}

void check_nccl(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* st = need_stack(s, f);
    if (!st) return;
    std::string system;
    if (st->nccl_version.is_known()) {
        system = nccl_version_text(st->nccl_version.value());
        f.evidence.push_back(fmt::format("NCCL {} ({})", system, st->nccl_library));
    } else if (st->nccl_version.is_failed()) {
        return f.raise(FindingStatus::kError, st->nccl_version.status().message());
    } else {
        f.evidence.push_back(
            "no libnccl.so.2 found by the dynamic loader or in $CUDA_HOME/lib64, "
            "$CUDA_PATH/lib64 or /usr/local/cuda/lib64");
    }
    if (st->torch.is_failed())
        f.evidence.push_back("PyTorch: " + st->torch.status().message() + " (see stack.torch)");
    const TorchFacts* torch = st->torch.get();
    std::string torch_nccl;
    if (torch && torch->nccl.is_known()) {
        torch_nccl = torch->nccl.value();
        f.evidence.push_back(
            fmt::format("PyTorch {}: NCCL {} (its own)", torch->version, torch_nccl));
    }
    if (system.empty() && torch_nccl.empty() && st->torch.is_failed())
        return f.raise(FindingStatus::kError,
                       "no system NCCL, and PyTorch (which may bring its own) could not be read");
    if (system.empty() && torch_nccl.empty() && torch && torch->nccl.is_failed())
        return f.raise(FindingStatus::kSkip,
                       "no system NCCL; PyTorch's own is not named by its installed packages: " +
                           torch->nccl.status().message());
    if (system.empty() && torch_nccl.empty()) {
        const bool multi = s.nvml.is_known() && s.nvml.value().gpus.size() > 1;
        f.raise(multi ? FindingStatus::kWarn : FindingStatus::kSkip,
                "no NCCL: neither a system libnccl nor a PyTorch with NCCL");
        if (multi)
            f.remedy =
                "Install NCCL (`apt install libnccl2 libnccl-dev` from NVIDIA's CUDA repository) "
                "or a PyTorch build with NCCL; multi-GPU training needs it.";
        return;
    }
    if (!system.empty() && !torch_nccl.empty() && !torch_nccl.starts_with(system) &&
        !system.starts_with(torch_nccl)) {
        f.raise(FindingStatus::kWarn,
                fmt::format("PyTorch uses NCCL {}, the system has {}: tests built against the "
                            "system NCCL (nccl-tests) measure a different NCCL than training "
                            "uses",
                            torch_nccl, system));
        f.remedy =
            "Benchmark with the NCCL training uses: build nccl-tests against PyTorch's NCCL "
            "(`NCCL_HOME=$(python3 -c 'import nvidia.nccl,os;print(os.path.dirname("
            "nvidia.nccl.__file__))')`), or install the matching libnccl2 version.";
        return;
    }
    f.raise(FindingStatus::kPass,
            fmt::format("NCCL {}", !torch_nccl.empty() ? torch_nccl : system));
}

void check_torch(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* st = need_stack(s, f);
    if (!st) return;
    if (st->torch.is_absent())
        return f.raise(FindingStatus::kSkip, "PyTorch is not installed for python3");
    if (!need(st->torch, f)) return;
    const auto& t = st->torch.value();
    const bool imported = t.cuda_available.is_known();
    f.evidence.push_back(
        fmt::format("{}: torch {}, CUDA {}, NCCL {}{}", t.python, t.version,
                    t.cuda.is_known() ? t.cuda.value() : "none",
                    t.nccl.is_known()    ? t.nccl.value()
                    : t.nccl.is_absent() ? "none"
                                         : "not named",
                    t.location.empty() ? "" : fmt::format(" (its metadata in {})", t.location)));
    if (imported)
        f.evidence.push_back(fmt::format("cuda.is_available() {}, {} device(s)",
                                         t.cuda_available.value() ? "True" : "False",
                                         t.device_count.optional().value_or(0)));
    else
        f.evidence.push_back("whether torch can use CUDA was not asked: " +
                             t.cuda_available.status().message());
    const bool gpus = s.nvml.is_known() && !s.nvml.value().gpus.empty();
    if (!t.cuda.is_known()) {
        f.raise(gpus ? FindingStatus::kFail : FindingStatus::kPass,
                fmt::format("torch {} is a CPU-only build", t.version));
        if (gpus)
            f.remedy =
                "Install a CUDA build: `pip install torch --index-url "
                "https://download.pytorch.org/whl/cu<XY>` with <XY> no newer than the driver's "
                "CUDA.";
        return;
    }
    judge_cuda(cuda_code(t.cuda.value()), fmt::format("torch {}", t.version),
               driver_cuda_version(s), installed_driver_version(s), f);
    judge_wheel_on_gpus(s, t, f);
    if (gpus && imported && !t.cuda_available.value()) {
        f.raise(FindingStatus::kFail,
                "torch.cuda.is_available() is False although the driver answers for GPUs");
        if (f.remedy.empty())
            f.remedy =
                "Run `python3 -c 'import torch; torch.cuda.init()'` to see CUDA's error "
                "(error 802: start the fabric manager; 804: driver too old for this torch).";
    }
    f.raise(FindingStatus::kPass,
            imported
                ? fmt::format("torch {} (CUDA {}) sees {} GPU(s)", t.version, t.cuda.value(),
                              t.device_count.optional().value_or(0))
                : fmt::format("torch {} (CUDA {}) matches the driver", t.version, t.cuda.value()));
}

void check_fabric_manager(const Snapshot& s, const RuleOptions&, Finding& f) {
    if (!need(s.pci_devices, f)) return;
    const size_t switches = count_nvswitches(s);
    f.evidence.push_back(fmt::format("{} NVSwitch(es) on the PCI bus", switches));
    const bool* running = s.nvidia.fabric_manager_running.get();
    if (running)
        f.evidence.push_back(
            fmt::format("nv-fabricmanager process: {}", *running ? "running" : "not running"));
    std::vector<std::string> not_done;
    size_t registered = 0;
    if (s.nvml.is_known())
        for (const auto& g : s.nvml.value().gpus) {
            if (!g.fabric.is_known() || g.fabric.value().state == "not_supported") continue;
            const auto& fab = g.fabric.value();
            f.evidence.push_back(
                fmt::format("{}: fabric {} ({})", nvml_gpu_label(g), fab.state, fab.status));
            if (fab.state == "completed" && fab.status == "SUCCESS")
                ++registered;
            else
                not_done.push_back(fmt::format("GPU {} ({} {})", g.index, fab.state, fab.status));
        }
    const std::optional<double> uptime = s.host.uptime_seconds.is_known()
                                             ? std::optional(s.host.uptime_seconds.value())
                                             : std::nullopt;
    if (!not_done.empty() && policy::links_may_be_training(uptime)) {
        return f.raise(
            FindingStatus::kSkip,
            fmt::format("GPUs not yet registered in the NVLink fabric ({}), but the machine has "
                        "been up only {}: the fabric manager may still be setting it up; judged "
                        "from {} after boot",
                        join(not_done, ", "), format_duration(*uptime),
                        format_duration(policy::kLinkTrainingGraceSeconds)));
    }
    if (!not_done.empty()) {
        f.raise(FindingStatus::kFail,
                "GPUs not registered in the NVLink fabric: " + join(not_done, ", "));
    } else if (registered == 0 && running && !*running) {
        f.raise(FindingStatus::kFail,
                "NVSwitches are present but the fabric manager is not running");
    }
    if (f.status == FindingStatus::kFail) {
        f.remedy =
            "Start it: `systemctl enable --now nvidia-fabricmanager` (its version must equal "
            "the driver's); until then CUDA fails with error 802 \"system not yet initialized\". "
            "`journalctl -u nvidia-fabricmanager` says why it stopped.";
        return;
    }
    if (registered > 0)
        return f.raise(FindingStatus::kPass,
                       fmt::format("{} GPU(s) registered in the NVLink fabric", registered));
    if (running && *running) return f.raise(FindingStatus::kPass, "the fabric manager is running");
    f.raise(FindingStatus::kSkip, "fabric state unknown: no NVML fabric info and no process list");
}

}  // namespace

std::vector<Rule> stack_rules() {
    return {
        {"stack.cuda-driver",
         "The driver runs the CUDA runtime and toolkit installed",
         {"training-machine article §4.1", "CUDA Toolkit Release Notes, Table 3",
          "NVIDIA CUDA Toolkit, Driver, and Architecture Matrix (stack data, docs/stack.md)"},
         [](const Snapshot& s, const RuleOptions&) { return stack_skip(s); },
         check_cuda_driver},
        {"stack.nccl",
         "NCCL is there, and PyTorch's NCCL is the one tests measure",
         {"training-machine article §4.1"},
         [](const Snapshot& s, const RuleOptions&) { return stack_skip(s); },
         check_nccl},
        {"stack.torch",
         "PyTorch is a CUDA build the driver runs",
         {"training-machine article §4.1", "CUDA minor-version compatibility",
          "PyTorch wheels' architectures (stack data, docs/stack.md)"},
         [](const Snapshot& s, const RuleOptions&) { return stack_skip(s); },
         check_torch},
        {"stack.fabric-manager",
         "NVSwitch systems run the fabric manager and the GPUs joined the fabric",
         {"NVIDIA Fabric Manager User Guide"},
         [](const Snapshot& s, const RuleOptions&) -> std::optional<std::string> {
             if (s.pci_devices.is_failed()) return std::nullopt;  // check() reports it
             if (count_nvswitches(s) == 0) return "no NVSwitch on this machine";
             return std::nullopt;
         },
         check_fabric_manager},
    };
}

}  // namespace trainrig
