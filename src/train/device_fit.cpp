// The CUDA backend's fit checks and setup errors; see device_fit.h.
#include "train/device_fit.h"

#include <fmt/format.h>

#include <array>
#include <utility>
#include <vector>

#include "core/text.h"
#include "train/attention_smem.h"

namespace trainrig::train {
namespace {

// "111.5 KiB", "99 KiB".
std::string kib(size_t bytes) {
    std::string s = fmt::format("{:.1f}", static_cast<double>(bytes) / 1024.0);
    if (s.ends_with(".0")) s.resize(s.size() - 2);
    return s + " KiB";
}

std::string bytes_text(size_t bytes) { return fmt::format("{} bytes ({})", bytes, kib(bytes)); }

std::string gpu_text(const GpuLimits& g) {
    return fmt::format("the {} (compute capability {}.{})", g.name, g.cc_major, g.cc_minor);
}

// The kernels of one training step at head size hs, with the shared memory each takes.
std::array<std::pair<const char*, size_t>, 3> attention_kernels(int hs) {
    const AttentionSmem a{hs};
    return {{{"forward", a.forward_bytes()},
             {"backward dQ", a.dq_bytes()},
             {"backward dK/dV", a.dkv_bytes()}}};
}

constexpr const char* kLargerGpus =
    "a GPU that grants more per block (an A100 grants 166912 bytes, an H100 or H200 232448)";

}  // namespace

Status check_attention_fits(const GpuLimits& gpu, int hs) {
    const char* worst = nullptr;
    size_t need = 0;
    for (const auto& [kernel, bytes] : attention_kernels(hs))
        if (bytes > gpu.smem_optin && bytes > need) worst = kernel, need = bytes;
    if (worst == nullptr) return ok_status();
    int smaller = 0;
    for (int h : AttentionSmem::kHeadSizes)
        if (h < hs && AttentionSmem{h}.training_bytes() <= gpu.smem_optin) smaller = h;
    const std::string next =
        smaller > 0 ? fmt::format(
                          "choose a model with a head size of {} or less (its kernels need at "
                          "most {}), or {}",
                          smaller, bytes_text(AttentionSmem{smaller}.training_bytes()), kLargerGpus)
                    : fmt::format("run on {}", kLargerGpus);
    return Status(
        Errc::kUnsupported,
        fmt::format("{} lets a block use at most {} of shared memory, but attention at "
                    "head size {} needs {} in its {} kernel",
                    gpu_text(gpu), bytes_text(gpu.smem_optin), hs, bytes_text(need), worst),
        next);
}

Status kernel_setup_status(const GpuLimits& gpu, const KernelSetupFailure& f, int hs,
                           std::string_view built_for) {
    if (f.kind == SetupFailure::kNoKernelImage) {
        const std::string cc = fmt::format("{}{}", gpu.cc_major, gpu.cc_minor);
        return Status(
            Errc::kUnsupported,
            fmt::format("the CUDA training plugin holds no code that {} can run ({}: {}): it "
                        "is built with {}",
                        gpu_text(gpu), f.kernel, f.cuda_error,
                        describe_cuda_architectures(built_for)),
            gpu.cc_major < 8
                ? std::string("its bf16 tensor-core kernels need compute capability 8.0 or "
                              "newer: run on an A100, H100 or newer GPU")
                : fmt::format("rebuild with -DCMAKE_CUDA_ARCHITECTURES=\"{};{}-real\"", built_for,
                              cc));
    }
    return Status(Errc::kUnsupported,
                  fmt::format("{} refused {} of shared memory per block for {} (head size {}; it "
                              "grants at most {}): {}",
                              gpu_text(gpu), bytes_text(f.smem_bytes), f.kernel, hs,
                              bytes_text(gpu.smem_optin), f.cuda_error),
                  fmt::format("choose a model with a smaller head size, or {}", kLargerGpus));
}

std::string describe_cuda_architectures(std::string_view cmake_list) {
    std::vector<std::string> native, ptx;
    auto cc = [](std::string_view arch) {
        // "90" -> "9.0", "100" -> "10.0"; a suffix such as "90a" keeps its letter.
        size_t digits = 0;
        while (digits < arch.size() && arch[digits] >= '0' && arch[digits] <= '9') ++digits;
        if (digits < 2) return std::string(arch);
        return fmt::format("{}.{}{}", arch.substr(0, digits - 1), arch.substr(digits - 1, 1),
                           arch.substr(digits));
    };
    for (std::string_view item : split(cmake_list, ';')) {
        item = trim(item);
        if (item.empty()) continue;
        const size_t dash = item.find('-');
        const std::string arch = cc(item.substr(0, dash));
        const std::string_view kind = dash == std::string_view::npos ? "" : item.substr(dash + 1);
        if (kind != "virtual") native.push_back(arch);
        if (kind != "real") ptx.push_back(arch);
    }
    auto list = [](const std::vector<std::string>& v) {
        if (v.size() <= 1) return v.empty() ? std::string("none") : v.front();
        return join({v.begin(), v.end() - 1}, ", ") + " and " + v.back();
    };
    std::string out = "native code for compute capability " + list(native);
    if (!ptx.empty()) out += ", PTX for " + list(ptx);
    return out;
}

}  // namespace trainrig::train
