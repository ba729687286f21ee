#include "core/plugin_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace trainrig {
namespace {

std::vector<std::string> candidates(const char* file, const char* env_var) {
    std::vector<std::string> out;
    if (const char* env = std::getenv(env_var); env && *env) {
        out.emplace_back(env);
        return out;
    }
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        out.push_back((exe.parent_path() / file).string());
        out.push_back((exe.parent_path() / "../lib/trainrig" / file).string());
    }
    out.emplace_back(file);  // LD_LIBRARY_PATH and the system's paths
    return out;
}

}  // namespace

PluginLibrary load_plugin_library(const char* file, const char* env_var) {
    PluginLibrary lib;
    for (const auto& path : candidates(file, env_var)) {
        const bool bare = path.find('/') == std::string::npos;
        if (!bare && ::access(path.c_str(), F_OK) != 0) continue;
        lib.handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (lib.handle) {
            lib.error.clear();
            return lib;
        }
        const std::string e = ::dlerror();
        if (bare && e.starts_with(std::string(file) + ": cannot open shared object")) continue;
        lib.error += (lib.error.empty() ? "" : "; ") + e;
    }
    return lib;
}

}  // namespace trainrig
