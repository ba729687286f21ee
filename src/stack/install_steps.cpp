// Install steps for a recommended stack; see install_steps.h for the sources.
#include "stack/install_steps.h"

#include <fmt/format.h>

#include "core/text.h"
#include "stack/compat.h"
#include "stack/cuda_drivers.h"

namespace trainrig::stack {

namespace install_steps_detail {

// VALUE from a KEY=VALUE line of os-release(5), quotes removed; "" when absent.
std::string os_release_value(std::string_view text, std::string_view key) {
    for (auto line : split(text, '\n')) {
        line = trim(line);
        if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != '=')
            continue;
        auto value = line.substr(key.size() + 1);
        if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
            value.back() == value.front())
            value = value.substr(1, value.size() - 2);
        return std::string(value);
    }
    return "";
}

}  // namespace install_steps_detail

Result<const Distro*> resolve_distro(const StackData& d, std::string_view option,
                                     const RootFs& root, std::string& why) {
    using namespace install_steps_detail;
    if (option != "auto") {
        if (const Distro* x = d.find_distro(option)) return x;
        std::vector<std::string> ids;
        for (const auto& x : d.distros) ids.push_back(x.id);
        return invalid_input(fmt::format("--distro {}: no install steps for it (known: {}, auto)",
                                         option, join(ids, ", ")));
    }
    std::string text;
    for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
        auto read = root.read(path, 1u << 16);
        if (read) {
            text = *read;
            break;
        }
    }
    if (text.empty()) {
        why = "no /etc/os-release to tell the distribution (--distro names one)";
        return static_cast<const Distro*>(nullptr);
    }
    const std::string id = os_release_value(text, "ID");
    const std::string version = os_release_value(text, "VERSION_ID");
    for (const auto& x : d.distros)
        if (x.os_release_id == id && x.os_release_version == version) return &x;
    why = fmt::format(
        "no install steps for {} {} (they are given for Debian 12, Ubuntu 22.04 and "
        "24.04: --distro)",
        id.empty() ? "this distribution" : id, version);
    return static_cast<const Distro*>(nullptr);
}

std::vector<InstallStep> install_steps(const Recommendation& r, const Distro& distro) {
    std::vector<InstallStep> s;
    if (!r.judged || !r.build) return s;
    const std::string deb = distro.keyring_url.substr(distro.keyring_url.rfind('/') + 1);
    s.push_back(
        {"wget " + distro.keyring_url,
         fmt::format("NVIDIA's CUDA network repository for {}: its keyring package", distro.name)});
    s.push_back({"sudo dpkg -i " + deb, "trust the repository"});
    s.push_back({"sudo apt-get update", "read the repository's package lists"});
    if (r.driver_branch >= 580) {
        s.push_back(
            {fmt::format("sudo apt-get install -y nvidia-driver-pinning-{}", r.driver_branch),
             fmt::format("keep apt on driver branch R{} (>= {})", r.driver_branch, r.driver_min)});
        if (r.open_modules == OpenModules::kUnsupported)
            s.push_back({"sudo apt-get install -y cuda-drivers",
                         "the proprietary kernel modules: the open ones do not support this GPU"});
        else
            s.push_back({"sudo apt-get install -y nvidia-open",
                         r.open_modules == OpenModules::kRequired
                             ? "the open kernel modules, which this GPU requires"
                             : "the open kernel modules (NVIDIA's default from R560 on Turing "
                               "and later)"});
    } else {
        // Before R580 a branch is installed through its meta package (proprietary modules).
        s.push_back({fmt::format("sudo apt-get install -y cuda-drivers-{}", r.driver_branch),
                     fmt::format("driver branch R{} (>= {}), its meta package", r.driver_branch,
                                 r.driver_min)});
    }
    const int major = r.cuda / 1000, minor = r.cuda % 1000 / 10;
    s.push_back({fmt::format("sudo apt-get install -y cuda-toolkit-{}-{}", major, minor),
                 fmt::format("nvcc and the CUDA {} libraries, to build extensions for this wheel",
                             cuda_text(r.cuda))});
    if (!r.build->cudnn.empty())
        s.push_back({fmt::format("sudo apt-get install -y libcudnn9-cuda-{0}={1}-1 "
                                 "libcudnn9-dev-cuda-{0}={1}-1",
                                 major, r.build->cudnn),
                     "the cuDNN the wheel bundles, for building against the same version"});
    if (!r.build->nccl.empty())
        s.push_back({fmt::format("sudo apt-get install -y libnccl2={0}-1+cuda{1} "
                                 "libnccl-dev={0}-1+cuda{1}",
                                 r.build->nccl, cuda_text(r.cuda)),
                     "the NCCL the wheel bundles, so nccl-tests measure what training uses "
                     "(`apt-cache madison libnccl2` lists the CUDA builds NVIDIA published)"});
    s.push_back({"sudo reboot", "load the new driver"});
    if (r.python == distro.python) {
        s.push_back({"sudo apt-get install -y python3-venv",
                     fmt::format("{}'s python3 {} with venv", distro.name, distro.python)});
        s.push_back({"python3 -m venv ~/venv", "an environment of its own for the wheel"});
        s.push_back({"~/venv/bin/" + pip_install_line(r),
                     fmt::format("torch {} for CUDA {} with its cuDNN and NCCL", r.torch_version,
                                 cuda_text(r.cuda))});
    } else {
        s.push_back({fmt::format("python{} -m venv ~/venv", r.python),
                     fmt::format("Python {} (not {}'s python3 {}, which torch {} has no wheels "
                                 "for); install it first",
                                 r.python, distro.name, distro.python, r.torch_version)});
        s.push_back({"~/venv/bin/" + pip_install_line(r),
                     fmt::format("torch {} for CUDA {}", r.torch_version, cuda_text(r.cuda))});
    }
    return s;
}

}  // namespace trainrig::stack
