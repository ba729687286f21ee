// Finding and loading one of trainrig's optional shared libraries (the GPU benchmarks, the CUDA
// training backend): in $ENV when it is set (only there), else beside the executable, else in
// ../lib/trainrig/ from it, else on the dynamic loader's search path.
#pragma once

#include <string>

namespace trainrig {

struct PluginLibrary {
    void* handle = nullptr;  // never closed: CUDA libraries do not unload cleanly
    // When handle is null: empty if the file was found nowhere (this build has no such part),
    // else why a copy that exists did not load (a library it needs is missing).
    std::string error;
};

PluginLibrary load_plugin_library(const char* file, const char* env_var);

}  // namespace trainrig
