// The software stack a training job would meet: the CUDA runtime and NCCL found by the dynamic
// loader (their own version calls, in a child process), nvcc, and PyTorch (its installed metadata;
// a python3 child that imports it when asked).
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "core/child_process.h"
#include "core/text.h"
#include "probe/probes.h"
#include "probe/python_site.h"
#include "probe/stack_parsers.h"
#include "probe/torch_metadata.h"

namespace trainrig {

namespace {

// Library folders of a CUDA install that the loader may not search: CUDA_HOME's, then the
// default prefix.
std::vector<std::string> cuda_lib_dirs() {
    std::vector<std::string> dirs;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* v = std::getenv(var); v && *v) dirs.push_back(std::string(v) + "/lib64");
    dirs.push_back("/usr/local/cuda/lib64");
    return dirs;
}

struct LoadedVersion {
    int version = 0;
    std::string library;
};

// Tries each name with the loader's search, then in the CUDA folders; calls `symbol`(int*).
std::optional<LoadedVersion> load_version(const std::vector<std::string>& names,
                                          const char* symbol) {
    std::vector<std::string> candidates = names;
    for (const auto& dir : cuda_lib_dirs())
        for (const auto& n : names) candidates.push_back(dir + "/" + n);
    for (const auto& c : candidates) {
        void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) continue;
        auto fn = reinterpret_cast<int (*)(int*)>(dlsym(h, symbol));
        if (!fn) continue;
        int v = 0;
        if (fn(&v) != 0) continue;
        LoadedVersion out{v, c};
        if (Dl_info info{}; dladdr(reinterpret_cast<void*>(fn), &info) && info.dli_fname)
            out.library = info.dli_fname;
        return out;
    }
    return std::nullopt;
}

void probe_libraries(SoftwareStack& s, std::chrono::milliseconds deadline) {
    auto text = run_isolated(
        [](IsolatedChannel& ch) {
            nlohmann::json j = nlohmann::json::object();
            ch.step("cudaRuntimeGetVersion");
            // cudaRuntimeGetVersion needs no driver: it reports the runtime library's own version.
            if (auto v = load_version(
                    {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"},
                    "cudaRuntimeGetVersion"))
                j["cudart"] = {{"version", v->version}, {"library", sanitize_text(v->library)}};
            ch.step("ncclGetVersion");
            if (auto v = load_version({"libnccl.so.2", "libnccl.so"}, "ncclGetVersion"))
                j["nccl"] = {{"version", v->version}, {"library", sanitize_text(v->library)}};
            ch.out() = j.dump();
        },
        deadline, "the CUDA runtime and NCCL libraries");
    if (!text) {
        s.cuda_runtime_version = Fact<int64_t>::failed(text.status());
        s.nccl_version = Fact<int64_t>::failed(text.status());
        return;
    }
    auto j = nlohmann::json::parse(*text, nullptr, false);
    auto take = [&](const char* key, Fact<int64_t>& version, std::string& library) {
        if (j.is_object() && j.contains(key) && j[key].is_object()) {
            version = Fact<int64_t>::known(j[key].value("version", int64_t{0}));
            library = sanitize_text(j[key].value("library", std::string()));
        }
    };
    take("cudart", s.cuda_runtime_version, s.cuda_runtime_library);
    take("nccl", s.nccl_version, s.nccl_library);
}

std::string find_nvcc() {
    if (const char* path = std::getenv("PATH"))
        for (auto dir : split(path, ':'))
            if (!dir.empty() && access((std::string(dir) + "/nvcc").c_str(), X_OK) == 0)
                return std::string(dir) + "/nvcc";
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* v = std::getenv(var); v && *v)
            if (access((std::string(v) + "/bin/nvcc").c_str(), X_OK) == 0)
                return std::string(v) + "/bin/nvcc";
    if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0) return "/usr/local/cuda/bin/nvcc";
    return {};
}

void probe_nvcc(SoftwareStack& s, std::chrono::milliseconds deadline) {
    s.nvcc_path = find_nvcc();
    if (s.nvcc_path.empty()) return;
    auto out = run_command({s.nvcc_path, "--version"}, deadline);
    if (!out) {
        s.nvcc_version = Fact<std::string>::failed(out.status());
        return;
    }
    s.nvcc_version = Fact<std::string>::from(parse_nvcc_version(out->out));
    if (s.nvcc_version.is_absent())  // parse errors are never kNotFound; keep the shape honest
        s.nvcc_version = Fact<std::string>::failed({Errc::kInvalidInput, "nvcc printed nothing"});
}

Fact<TorchFacts> import_torch(const std::string& python, std::chrono::milliseconds deadline) {
    auto out = run_command({python, "-c", torch_probe_script()}, deadline);
    if (!out) return Fact<TorchFacts>::from(out.status());  // no python3 -> absent
    auto parsed = parse_torch_probe(out->out);
    if (!parsed) {
        auto err = trim(out->err);
        auto last = err.substr(err.rfind('\n') == std::string_view::npos ? 0 : err.rfind('\n') + 1);
        return Fact<TorchFacts>::failed(
            {Errc::kInvalidInput, last.empty() ? parsed.status().message()
                                               : fmt::format("python3 could not import torch: {}",
                                                             sanitize_text(last))});
    }
    if (!*parsed) return Fact<TorchFacts>::absent();
    return Fact<TorchFacts>::known(std::move(**parsed));
}

Fact<TorchFacts> probe_torch(const StackProbeOptions& o) {
    const auto env = process_env();
    const std::string python = find_python3(env);
    if (python.empty()) return Fact<TorchFacts>::absent();
    if (o.torch_import) return import_torch(python, o.torch_deadline);
    std::error_code ec;
    const auto interpreter = resolve_interpreter(python, env, std::filesystem::current_path(ec));
    if (auto dirs = interpreter ? site_dirs_from_layout(*interpreter, env) : std::nullopt)
        return torch_from_metadata(*interpreter, *dirs);
    auto dirs = python_sys_path(python, o.deadline);
    if (!dirs)
        return Fact<TorchFacts>::failed(
            {dirs.status().code(), fmt::format("{}'s site directories could not be read: {}",
                                               python, dirs.status().message())});
    return torch_from_metadata(python, *dirs);
}

}  // namespace

Fact<SoftwareStack> probe_stack(const RootFs& fs, const StackProbeOptions& o) {
    if (!fs.is_live())
        return Fact<SoftwareStack>::failed(
            {Errc::kUnsupported,
             "the software stack was not read: --root names a machine tree, and this host's "
             "libraries cannot speak for it"});
    SoftwareStack s;
    // The library probe forks: do it before any other thread exists.
    probe_libraries(s, o.deadline);
    // Asking Python (a wrapper's start, importing torch) takes time: it runs while nvcc is asked.
    std::thread torch;
    if (o.torch) torch = std::thread([&] { s.torch = probe_torch(o); });
    probe_nvcc(s, o.deadline);
    if (torch.joinable()) torch.join();
    return Fact<SoftwareStack>::known(std::move(s));
}

}  // namespace trainrig
