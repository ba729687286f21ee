#include "watch/known_identity.h"

#include <algorithm>
#include <string>

#include "core/text.h"

namespace trainrig::watch {
namespace {

// What NVML did say stays: only the blanks are filled.
void fill_blanks(GpuIdentity& g, const GpuIdentity& known) {
    if (g.uuid.empty()) g.uuid = known.uuid;
    if (g.name.empty()) g.name = known.name;
    if (g.bus_id.empty()) g.bus_id = known.bus_id;
}

}  // namespace

void fill_identities(std::vector<GpuIdentity>& gpus, const std::vector<GpuIdentity>& known) {
    for (auto& g : gpus)
        for (const auto& k : known)
            if (k.index == g.index) fill_blanks(g, k);
}

std::vector<GpuIdentity> driver_identities(const RootFs& fs) {
    std::vector<GpuIdentity> out;
    auto entries = fs.list("/proc/driver/nvidia/gpus");
    if (!entries) return out;
    for (const auto& entry : *entries) {  // sorted: bus order
        auto text = fs.read("/proc/driver/nvidia/gpus/" + entry + "/information", 64 << 10);
        if (!text) continue;
        GpuIdentity id;
        for (const auto line : split(*text, '\n')) {
            const auto colon = line.find(':');
            if (colon == std::string_view::npos) continue;
            const auto key = trim(line.substr(0, colon));
            const std::string value = sanitize_text(trim(line.substr(colon + 1)));
            if (key == "Model") id.name = value;
            if (key == "GPU UUID") id.uuid = value;
            if (key == "Bus Location") id.bus_id = to_lower(value);
        }
        if (id.bus_id.empty()) id.bus_id = to_lower(sanitize_text(entry));
        out.push_back(std::move(id));
    }
    return out;
}

void fill_from_driver(std::vector<GpuIdentity>& gpus, const std::vector<GpuIdentity>& driver) {
    std::vector<GpuIdentity*> unknown;
    for (auto& g : gpus)
        if (g.bus_id.empty()) unknown.push_back(&g);
    std::vector<const GpuIdentity*> unclaimed;
    for (const auto& d : driver) {
        const bool claimed = std::any_of(gpus.begin(), gpus.end(), [&](const GpuIdentity& g) {
            return to_lower(g.bus_id) == d.bus_id;
        });
        if (!claimed) unclaimed.push_back(&d);
    }
    if (unknown.empty() || unknown.size() != unclaimed.size()) return;
    for (size_t i = 0; i < unknown.size(); ++i) fill_blanks(*unknown[i], *unclaimed[i]);
}

}  // namespace trainrig::watch
