#include "topo/render_topo.h"

#include <fmt/format.h>

#include <algorithm>

namespace trainrig {

namespace {

constexpr const char* kLegend =
    "Legend:\n"
    "  X    = self\n"
    "  SYS  = through PCIe and the interconnect between NUMA nodes (e.g. AMD Infinity Fabric, "
    "Intel UPI)\n"
    "  NODE = through PCIe and the interconnect between PCIe host bridges of one NUMA node\n"
    "  PHB  = through PCIe and a PCIe host bridge (the CPU)\n"
    "  PXB  = through several PCIe bridges, not a host bridge\n"
    "  PIX  = through at most one PCIe bridge\n"
    "  NV#  = through # NVLinks (directly or through NVSwitches)\n";
// Only when a cell says it: on a sound machine every place is known.
constexpr const char* kUnknownLegend =
    "  ?    = not known: a device's place on the PCI bus could not be read (a lost GPU has no "
    "bus id)\n";

bool any_unknown(const std::vector<std::vector<TopoLink>>& rows) {
    for (const auto& row : rows)
        for (const auto& t : row)
            if (t.label == "?") return true;
    return false;
}

// The CPU Affinity and NUMA Affinity cells of a row.
std::string affinity(const TopoDevice& d) {
    return fmt::format("{:<16}{}\n", d.cpus.empty() ? "N/A" : d.cpus, d.numa);
}

nlohmann::json device_json(const TopoDevice& d) {
    return {{"name", d.name},
            {"bus_id", d.bus_id},
            {"model", d.model},
            {"cpus", d.cpus},
            {"numa", d.numa}};
}

nlohmann::json links_json(const std::vector<std::vector<TopoLink>>& rows) {
    auto out = nlohmann::json::array();
    for (const auto& row : rows) {
        auto r = nlohmann::json::array();
        for (const auto& t : row)
            r.push_back({{"label", t.label},
                         {"nvlinks", t.nvlinks},
                         {"via_switch", t.via_switch},
                         {"pcie", t.pcie}});
        out.push_back(r);
    }
    return out;
}

}  // namespace

std::string render_topo_table(const GpuMatrix& m) {
    if (m.gpus.empty() && m.nics.empty()) return "No NVIDIA GPU and no network adapter found.\n";
    std::vector<std::string> cols;
    for (const auto& g : m.gpus) cols.push_back(g.name);
    for (const auto& n : m.nics) cols.push_back(n.name);
    size_t width = 6;
    for (const auto& row : m.gpu_gpu)
        for (const auto& t : row) width = std::max(width, t.label.size() + 2);
    std::string out = fmt::format("{:<8}", "");
    for (const auto& c : cols) out += fmt::format("{:<{}}", c, width);
    out += "CPU Affinity    NUMA Affinity\n";
    for (size_t i = 0; i < m.gpus.size(); ++i) {
        out += fmt::format("{:<8}", m.gpus[i].name);
        for (const auto& t : m.gpu_gpu[i]) out += fmt::format("{:<{}}", t.label, width);
        if (i < m.gpu_nic.size())
            for (const auto& t : m.gpu_nic[i]) out += fmt::format("{:<{}}", t.label, width);
        out += affinity(m.gpus[i]);
    }
    for (size_t k = 0; k < m.nics.size(); ++k) {
        out += fmt::format("{:<8}", m.nics[k].name);
        for (size_t i = 0; i < m.gpus.size(); ++i)
            out += fmt::format("{:<{}}", m.gpu_nic[i][k].label, width);
        for (const auto& t : m.nic_nic[k]) out += fmt::format("{:<{}}", t.label, width);
        out += affinity(m.nics[k]);
    }
    out += "\n";
    out += kLegend;
    if (any_unknown(m.gpu_gpu) || any_unknown(m.gpu_nic) || any_unknown(m.nic_nic))
        out += kUnknownLegend;
    out += fmt::format("\nGPUs ({}):\n", m.source == "NVML" ? "from NVML"
                                                            : "from the PCI bus; no NVLink "
                                                              "information without the driver");
    for (const auto& g : m.gpus)
        out += fmt::format("  {}: {} {}\n", g.name,
                           g.bus_id.empty() ? "(bus id unknown)" : g.bus_id, g.model);
    if (m.gpus.empty()) out += "  none\n";
    if (!m.nics.empty()) {
        out += "\nNICs:\n";
        for (const auto& n : m.nics) out += fmt::format("  {}: {} {}\n", n.name, n.bus_id, n.model);
    }
    return out;
}

nlohmann::json render_topo_json(const GpuMatrix& m) {
    auto gpus = nlohmann::json::array(), nics = nlohmann::json::array();
    for (const auto& g : m.gpus) gpus.push_back(device_json(g));
    for (const auto& n : m.nics) nics.push_back(device_json(n));
    return {{"schema", kTopoSchema},
            {"schema_version", kTopoSchemaVersion},
            {"source", m.source},
            {"gpus", gpus},
            {"nics", nics},
            {"gpu_gpu", links_json(m.gpu_gpu)},
            {"gpu_nic", links_json(m.gpu_nic)},
            {"nic_nic", links_json(m.nic_nic)}};
}

}  // namespace trainrig
