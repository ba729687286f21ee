// Probe of the environment NCCL and PyTorch would see: /proc/self/environ under the root (the
// process's own environment on a live machine, a fixture's file in tests).
#include "core/text.h"
#include "probe/parsers.h"
#include "probe/probes.h"

namespace trainrig {

bool env_relevant(std::string_view key) {
    return key.starts_with("NCCL_") || key.starts_with("TORCH_NCCL_") ||
           key.starts_with("TORCH_DISTRIBUTED_") || key.starts_with("CUDA_");
}

Fact<Environment> probe_environment(const RootFs& fs) {
    auto text = fs.read("/proc/self/environ", 4u << 20);
    if (!text) return Fact<Environment>::from(text.status());
    Environment env;
    env.source = "/proc/self/environ";
    auto vars = parse_environ(*text, [](const std::string& k) { return env_relevant(k); });
    for (const auto& [k, v] : vars) env.vars[sanitize_text(k)] = sanitize_text(v);
    return Fact<Environment>::known(std::move(env));
}

}  // namespace trainrig
