#include "fake_nvml_gpu_reader.h"

#include "fake_nvml_names.h"
#include "fake_nvml_text.h"

namespace fake_nvml {
namespace {

using namespace trainrig::nvml;

PciAddress to_pci_address(const Json& value, const std::string& path) {
    auto address = parse_pci_address(to_string(value, path));
    if (!address) fail(path, "expected a bus id like \"00000000:41:00.0\"");
    return *address;
}

std::pair<int, int> to_compute_capability(const Json& value, const std::string& path) {
    if (!value.is_array() || value.size() != 2) fail(path, "expected [major, minor]");
    return {to_int(value[0], path + "[0]"), to_int(value[1], path + "[1]")};
}

// {"total": bytes, "used": bytes}, the shape of both "memory" and "bar1".
std::pair<unsigned long long, unsigned long long> to_total_used(const Json& value,
                                                                const std::string& path) {
    ObjectReader reader(value, path);
    const auto total = reader.required("total", to_uint64);
    const auto used = reader.required("used", to_uint64);
    if (used > total) fail(reader.path("used"), "larger than total");
    reader.reject_unknown();
    return {total, used};
}

// Members of `reader` that each hold one unsigned value, stored under an NVML enum value.
void read_keyed(ObjectReader& reader, std::map<int, unsigned>& into,
                std::initializer_list<std::pair<const char*, int>> keys) {
    for (const auto& [key, nvml_value] : keys)
        if (auto value = reader.optional(key, to_uint)) into[nvml_value] = *value;
}

void read_thresholds(const Json& value, const std::string& path, Gpu& gpu) {
    ObjectReader reader(value, path);
    read_keyed(reader, gpu.thresholds,
               {{"shutdown", kTemperatureThresholdShutdown},
                {"slowdown", kTemperatureThresholdSlowdown},
                {"gpu_max", kTemperatureThresholdGpuMax},
                {"mem_max", kTemperatureThresholdMemMax}});
    reader.reject_unknown();
}

void read_clocks(const Json& value, const std::string& path, Gpu& gpu) {
    ObjectReader reader(value, path);
    read_keyed(reader, gpu.clocks,
               {{"graphics", kClockGraphics}, {"sm", kClockSm}, {"mem", kClockMem}});
    read_keyed(reader, gpu.max_clocks,
               {{"graphics_max", kClockGraphics}, {"sm_max", kClockSm}, {"mem_max", kClockMem}});
    reader.reject_unknown();
}

void read_pcie(const Json& value, const std::string& path, Gpu& gpu) {
    ObjectReader reader(value, path);
    gpu.pcie_gen = reader.optional("gen", to_uint);
    gpu.pcie_gen_max = reader.optional("gen_max", to_uint);
    gpu.pcie_gpu_gen_max = reader.optional("gpu_gen_max", to_uint);
    gpu.pcie_width = reader.optional("width", to_uint);
    gpu.pcie_width_max = reader.optional("width_max", to_uint);
    gpu.pcie_replay_counter = reader.optional("replay_counter", to_uint);
    reader.reject_unknown();
}

void read_ecc(const Json& value, const std::string& path, Gpu& gpu) {
    ObjectReader reader(value, path);
    gpu.ecc_current = reader.optional("current", to_bool);
    gpu.ecc_pending = reader.optional("pending", to_bool);
    const std::pair<const char*, std::pair<int, int>> counters[] = {
        {"volatile_corrected", {kMemoryErrorCorrected, kVolatileEcc}},
        {"volatile_uncorrected", {kMemoryErrorUncorrected, kVolatileEcc}},
        {"aggregate_corrected", {kMemoryErrorCorrected, kAggregateEcc}},
        {"aggregate_uncorrected", {kMemoryErrorUncorrected, kAggregateEcc}},
    };
    for (const auto& [key, types] : counters)
        if (auto count = reader.optional(key, to_uint64)) gpu.ecc_errors[types] = *count;
    reader.reject_unknown();
}

RemappedRows to_remapped_rows(const Json& value, const std::string& path) {
    ObjectReader reader(value, path);
    RemappedRows rows;
    rows.correctable = reader.required("correctable", to_uint);
    rows.uncorrectable = reader.required("uncorrectable", to_uint);
    rows.pending = reader.required("pending", to_bool);
    rows.failure = reader.required("failure", to_bool);
    reader.reject_unknown();
    return rows;
}

MigMode to_mig_mode(const Json& value, const std::string& path) {
    ObjectReader reader(value, path);
    MigMode mode;
    mode.current = reader.required("current", to_bool);
    mode.pending = reader.required("pending", to_bool);
    reader.reject_unknown();
    return mode;
}

void read_retired_pages(const Json& value, const std::string& path, Gpu& gpu) {
    ObjectReader reader(value, path);
    read_keyed(reader, gpu.retired_pages,
               {{"single_bit", kPageRetirementMultipleSingleBitEcc},
                {"double_bit", kPageRetirementDoubleBitEcc}});
    gpu.retired_pages_pending = reader.optional("pending", to_bool);
    reader.reject_unknown();
}

int to_remote_type(const Json& value, const std::string& path) {
    const std::string name = to_string(value, path);
    if (name == "gpu") return kNvLinkDeviceGpu;
    if (name == "switch") return kNvLinkDeviceSwitch;
    if (name == "ibmnpu") return kNvLinkDeviceIbmNpu;
    if (name == "unknown") return kNvLinkDeviceUnknown;
    fail(path, "expected \"gpu\", \"switch\", \"ibmnpu\" or \"unknown\"");
}

std::vector<NvLink> to_nvlinks(const Json& value, const std::string& path) {
    if (!value.is_array()) fail(path, "expected an array");
    if (value.size() > kNvLinkMaxLinks) fail(path, "more than 18 links");
    std::vector<NvLink> links;
    for (const auto& link_value : value) {
        ObjectReader reader(link_value, path + "[" + std::to_string(links.size()) + "]");
        NvLink& link = links.emplace_back();
        link.active = reader.optional("active", to_bool);
        link.remote_pci = reader.optional("remote_pci_bus_id", to_pci_address);
        link.remote_type = reader.optional("remote_type", to_remote_type);
        reader.reject_unknown();
    }
    return links;
}

std::vector<CpuRange> to_cpu_ranges(const Json& value, const std::string& path) {
    auto ranges = parse_cpulist(to_string(value, path));
    if (!ranges) fail(path, "expected a cpulist like \"0-15,32-47\"");
    return *ranges;
}

uint8_t to_fabric_state(const Json& value, const std::string& path) {
    const std::string name = to_string(value, path);
    if (name == "not_supported") return kGpuFabricStateNotSupported;
    if (name == "not_started") return kGpuFabricStateNotStarted;
    if (name == "in_progress") return kGpuFabricStateInProgress;
    if (name == "completed") return kGpuFabricStateCompleted;
    fail(path, "expected \"not_supported\", \"not_started\", \"in_progress\" or \"completed\"");
}

Fabric to_fabric(const Json& value, const std::string& path) {
    ObjectReader reader(value, path);
    Fabric fabric;
    fabric.state = reader.required("state", to_fabric_state);
    fabric.status = reader.optional("status", to_return_code).value_or(kSuccess);
    fabric.clique_id = reader.optional("clique_id", to_uint).value_or(0);
    if (auto uuid = reader.optional("cluster_uuid", to_string)) {
        auto bytes = parse_uuid_bytes(*uuid);
        if (!bytes) fail(reader.path("cluster_uuid"), "expected 32 hex digits");
        fabric.cluster_uuid = *bytes;
    }
    reader.reject_unknown();
    return fabric;
}

void read_errors(const Json& value, const std::string& path, Gpu& gpu) {
    ObjectReader reader(value, path);
    for (const auto& [function, code] : value.items()) {
        if (names_device_call(function) != true)
            fail(reader.path(function), "not an NVML device entry point the fake exports");
        const Return forced = to_return_code(reader.get(function), reader.path(function));
        if (forced == kSuccess) fail(reader.path(function), "SUCCESS is not an error");
        gpu.errors.emplace(function, forced);
    }
}

}  // namespace

Gpu read_gpu(const Json& value, const std::string& path, unsigned index) {
    ObjectReader reader(value, path);
    Gpu gpu;
    gpu.index = index;
    gpu.name = reader.optional("name", to_string);
    gpu.uuid = reader.optional("uuid", to_string);
    gpu.vbios_version = reader.optional("vbios_version", to_string);
    gpu.pci = reader.optional("pci_bus_id", to_pci_address);
    gpu.pci_device_id = reader.optional("pci_device_id", to_uint_or_hex).value_or(0);
    gpu.pci_subsystem_id = reader.optional("pci_subsystem_id", to_uint_or_hex).value_or(0);
    gpu.compute_capability = reader.optional("compute_capability", to_compute_capability);
    if (auto memory = reader.optional("memory", to_total_used))
        gpu.memory = Memory{memory->first, memory->first - memory->second, memory->second};
    if (auto bar1 = reader.optional("bar1", to_total_used))
        gpu.bar1 = Bar1Memory{bar1->first, bar1->first - bar1->second, bar1->second};
    gpu.temperature = reader.optional("temperature", to_uint);
    if (const Json* thresholds = reader.find("thresholds"))
        read_thresholds(*thresholds, reader.path("thresholds"), gpu);
    gpu.power_usage_mw = reader.optional("power_usage_mw", to_uint);
    gpu.power_limit_mw = reader.optional("power_limit_mw", to_uint);
    gpu.power_default_limit_mw = reader.optional("power_default_limit_mw", to_uint);
    gpu.energy_mj = reader.optional("energy_mj", to_uint64);
    if (const Json* clocks = reader.find("clocks"))
        read_clocks(*clocks, reader.path("clocks"), gpu);
    gpu.clock_event_reasons = reader.optional("clock_event_reasons", to_uint64);
    if (const Json* utilization = reader.find("utilization")) {
        ObjectReader util(*utilization, reader.path("utilization"));
        gpu.utilization =
            Utilization{util.required("gpu", to_uint), util.required("memory", to_uint)};
        util.reject_unknown();
    }
    if (const Json* pcie = reader.find("pcie")) read_pcie(*pcie, reader.path("pcie"), gpu);
    if (const Json* ecc = reader.find("ecc")) read_ecc(*ecc, reader.path("ecc"), gpu);
    gpu.remapped_rows = reader.optional("remapped_rows", to_remapped_rows);
    if (const Json* pages = reader.find("retired_pages"))
        read_retired_pages(*pages, reader.path("retired_pages"), gpu);
    gpu.persistence_mode = reader.optional("persistence_mode", to_bool);
    gpu.mig_mode = reader.optional("mig_mode", to_mig_mode);
    gpu.nvlinks = reader.optional("nvlinks", to_nvlinks);
    gpu.cpu_affinity = reader.optional("cpu_affinity", to_cpu_ranges);
    gpu.fabric = reader.optional("fabric", to_fabric);
    gpu.lost = reader.optional("lost", to_bool).value_or(false);
    if (const Json* errors = reader.find("errors"))
        read_errors(*errors, reader.path("errors"), gpu);
    reader.reject_unknown();
    return gpu;
}

}  // namespace fake_nvml
