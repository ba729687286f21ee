// Naming or detecting the GPU a stack is for; see gpu_target.h.
#include "stack/gpu_target.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/text.h"
#include "hw/snapshot_gpus.h"
#include "plan/hardware.h"

namespace trainrig::stack {

namespace gpu_target_detail {

// "h100sxm" from "H100-SXM", "h100 sxm" or "H100_SXM".
std::string squash(std::string_view s) {
    std::string out;
    for (char c : s)
        if (c != ' ' && c != '-' && c != '_') out += c;
    return to_lower(out);
}

void add_cc(std::vector<ComputeCapability>& ccs, ComputeCapability cc) {
    if (std::find(ccs.begin(), ccs.end(), cc) == ccs.end()) ccs.push_back(cc);
    std::sort(ccs.begin(), ccs.end());
}

// "8 x NVIDIA H100 80GB HBM3" from the models counted.
std::string count_text(const std::map<std::string, int>& models) {
    std::vector<std::string> parts;
    for (const auto& [model, n] : models) parts.push_back(fmt::format("{} x {}", n, model));
    return join(parts, ", ");
}

}  // namespace gpu_target_detail

Result<GpuTarget> named_gpu(const StackData& d, std::string_view name) {
    using namespace gpu_target_detail;
    const std::string want = squash(name);
    const auto catalog = plan::builtin_hardware();
    for (const auto& g : d.gpus) {
        std::vector<std::string> names = g.names;
        names.push_back(g.id);
        std::string display = g.names.front();
        if (const auto* spec = catalog.gpu(g.id)) {
            names.push_back(spec->name);
            display = spec->name;
        }
        for (const auto& n : names)
            if (squash(n) == want)
                return GpuTarget{g.id, display, {g.compute_capability}, "named with --gpu"};
    }
    std::vector<std::string> ids;
    for (const auto& g : d.gpus) ids.push_back(g.id);
    return invalid_input(
        fmt::format("--gpu {}: no such GPU (known: {}, or auto)", name, join(ids, ", ")),
        "name the GPU by one of these ids, or let --gpu auto read this machine's");
}

Result<GpuTarget> detected_gpus(const StackData& d, const Snapshot& s, std::string_view command) {
    using namespace gpu_target_detail;
    GpuTarget t;
    std::map<std::string, int> models;
    if (s.nvml.is_known()) {
        for (const NvmlGpu* g : answering_gpus(s.nvml.value())) {
            const auto cc = g->compute_capability.is_known()
                                ? parse_compute_capability(g->compute_capability.value())
                                : 0;
            const GpuModel* m =
                g->pci_device_id.is_known()
                    ? d.find_gpu_by_pci(static_cast<unsigned>(g->pci_device_id.value() & 0xffff))
                    : nullptr;
            const ComputeCapability use = cc ? cc : m ? m->compute_capability : 0;
            if (use == 0)
                return invalid_input(
                    fmt::format("{}: the driver reports no compute capability and the data has "
                                "no such model",
                                nvml_gpu_label(*g)),
                    "name the GPU with --gpu");
            add_cc(t.ccs, use);
            if (m && t.id.empty()) t.id = m->id;
            ++models[g->name.is_known() ? g->name.value() : nvml_gpu_label(*g)];
        }
        if (!t.ccs.empty()) {
            t.name = count_text(models);
            t.how = "detected through the driver (NVML)";
            return t;
        }
    }
    const auto sel = select_gpus(s);
    for (const PciDevice* p : sel.gpus) {
        const auto device = p->device.is_known() ? static_cast<unsigned>(p->device.value()) : 0u;
        const GpuModel* m = d.find_gpu_by_pci(device);
        if (!m)
            return invalid_input(fmt::format("the GPU at {} (10de:{:04x}) is not in the stack "
                                             "data, and no driver reports its compute capability",
                                             p->address, device),
                                 "name the GPU with --gpu");
        add_cc(t.ccs, m->compute_capability);
        if (t.id.empty()) t.id = m->id;
        ++models[m->names.front()];
    }
    if (t.ccs.empty()) {
        std::string why = s.nvml.is_failed() ? s.nvml.status().message() : "no GPU answered NVML";
        return invalid_input(
            fmt::format("no NVIDIA GPU found on this machine ({}; none on the PCI bus)", why),
            fmt::format("name the GPU with --gpu ID (trainrig {} --gpu h100-sxm)", command));
    }
    t.name = count_text(models);
    t.how = "detected on the PCI bus";
    return t;
}

std::vector<GpuCapability> reported_capabilities(const Snapshot& s) {
    std::vector<GpuCapability> out;
    if (!s.nvml.is_known()) return out;
    for (const NvmlGpu* g : answering_gpus(s.nvml.value())) {
        if (!g->compute_capability.is_known()) continue;
        const auto cc = parse_compute_capability(g->compute_capability.value());
        if (cc == 0) continue;
        bool seen = false;
        for (const auto& o : out) seen |= o.cc == cc;
        if (!seen) out.push_back({cc, nvml_gpu_label(*g)});
    }
    return out;
}

}  // namespace trainrig::stack
