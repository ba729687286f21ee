// The NVML probe: loads the library and reads it in a child process with a deadline, so a driver
// that hangs (or crashes) costs at most the deadline and becomes a finding.
#include <fmt/format.h>

#include "core/child_process.h"
#include "nvml/nvml_library.h"
#include "nvml/nvml_reader.h"
#include "probe/probes.h"

namespace trainrig {

Fact<NvmlFacts> probe_nvml(const RootFs& fs, std::chrono::milliseconds deadline) {
    const auto choice = nvml::choose_library();
    if (!fs.is_live() && !choice.from_environment)
        return Fact<NvmlFacts>::failed(
            {Errc::kUnsupported,
             "NVML was not read: --root names a machine tree, and this host's driver cannot "
             "speak for it (set TRAINRIG_NVML_LIBRARY or TRAINRIG_FAKE_NVML to read one)"});
    auto text = run_isolated(
        [&](IsolatedChannel& channel) {
            channel.step("dlopen " + choice.path);
            auto lib = nvml::Library::open(choice.path);
            Fact<NvmlFacts> facts =
                lib ? nvml::read_nvml(*lib, channel) : Fact<NvmlFacts>::failed(lib.status());
            channel.out() = nvml_fact_to_json(facts).dump();
        },
        deadline, "NVML");
    if (!text) return Fact<NvmlFacts>::failed(text.status());
    Fact<NvmlFacts> facts;
    try {
        facts = nvml_fact_from_json(nlohmann::json::parse(*text));
    } catch (const nlohmann::json::exception& e) {
        return Fact<NvmlFacts>::failed(
            {Errc::kInternal, fmt::format("the NVML probe answered garbage: {}", e.what())});
    }
    if (facts.is_known()) facts.value().fake = choice.fake;
    return facts;
}

}  // namespace trainrig
