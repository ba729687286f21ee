// JSON form of the Snapshot. Field lists are declared once, here; unknown members are ignored and
// missing ones take their defaults so that a newer minor writer stays readable.
#include <fmt/format.h>

#include "core/text.h"
#include "snapshot/snapshot.h"

namespace trainrig {

#define TRAINRIG_JSON(Type, ...) NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Type, __VA_ARGS__)

TRAINRIG_JSON(HostFacts, hostname, kernel_release, cmdline, uptime_seconds, system_vendor,
              product_name, bios_version, bios_date, hypervisor)
TRAINRIG_JSON(KernelSettings, swappiness, numa_balancing, file_max, nr_open, thp_enabled,
              thp_defrag)
TRAINRIG_JSON(Rlimit, soft, hard)
TRAINRIG_JSON(SysctlSetting, file, line, key, value, optional, exists)
TRAINRIG_JSON(SysctlLine, file, line, text)
TRAINRIG_JSON(SysctlConfig, proc_sys_present, files, settings, malformed, unreadable)
TRAINRIG_JSON(EdacController, name, mc_name, ce_count, ue_count)
TRAINRIG_JSON(ShmMount, size_bytes, size_origin)
TRAINRIG_JSON(MemoryFacts, total_bytes, edac, shm)
TRAINRIG_JSON(PciResource, start, end, flags)
TRAINRIG_JSON(PciDevice, address, sysfs_path, vendor, device, class_code, subsystem_device, driver,
              numa_node, local_cpulist, current_link_speed, max_link_speed, current_link_width,
              max_link_width, resources, iommu_group_type)
TRAINRIG_JSON(NvidiaDriverFacts, loaded, version, version_line, gpus, fabric_manager_running)
TRAINRIG_JSON(KmsgRecord, priority, seq, usec, message)
TRAINRIG_JSON(KernelLog, records_read, records_lost, malformed, records)
TRAINRIG_JSON(Environment, source, vars)
TRAINRIG_JSON(BlockDevice, name, kind, rotational)
TRAINRIG_JSON(DataDir, path, mount_point, fs_type, mount_source, dev, devices, free_bytes,
              total_bytes)
TRAINRIG_JSON(NumaNode, os_index, cpulist, memory_bytes)
TRAINRIG_JSON(PciLocality, address, numa_nodes, cpulist)
TRAINRIG_JSON(Topology, packages, cores, pus, numa_nodes, pci_locality)
TRAINRIG_JSON(Nic, address, sysfs_path, names, vendor, device, numa_node, local_cpulist, firmware)
TRAINRIG_JSON(GpuClocks, sm_mhz, sm_max_mhz, mem_mhz, mem_max_mhz)
TRAINRIG_JSON(GpuPcie, gen, gen_max, gpu_gen_max, width, width_max, replay_count)
TRAINRIG_JSON(GpuEcc, enabled, enabled_pending, volatile_uncorrected, aggregate_uncorrected,
              volatile_corrected, aggregate_corrected)
TRAINRIG_JSON(RemappedRows, correctable, uncorrectable, pending, failure)
TRAINRIG_JSON(RetiredPages, single_bit, double_bit, pending)
TRAINRIG_JSON(NvLink, link, active, remote_bus_id, remote_type)
TRAINRIG_JSON(GpuFabric, state, status)
TRAINRIG_JSON(MigMode, enabled, pending)
TRAINRIG_JSON(NvmlGpu, index, lost, unreachable, name, uuid, vbios_version, bus_id, pci_device_id,
              compute_capability, memory_total_bytes, bar1_total_bytes, temperature_c,
              temperature_slowdown_c, temperature_shutdown_c, temperature_max_operating_c,
              power_draw_w, power_limit_w, power_default_limit_w, clocks, clock_event_reasons, pcie,
              ecc, remapped_rows, retired_pages, persistence_mode, mig, nvlinks, cpu_affinity,
              fabric)
TRAINRIG_JSON(GpuPair, a, b, level)
TRAINRIG_JSON(NvmlFacts, library, fake, driver_version, cuda_driver_version, nvml_version, gpus,
              pairs, seconds)
TRAINRIG_JSON(TorchFacts, version, cuda, nccl, cuda_available, device_count, python, location)
TRAINRIG_JSON(SoftwareStack, cuda_runtime_version, cuda_runtime_library, nccl_version, nccl_library,
              nvcc_version, nvcc_path, torch)
TRAINRIG_JSON(Snapshot, schema, schema_version, trainrig_version, collected_at, root, host, kernel,
              nofile, sysctl, cpu_governors, memory, iommu_units, pci_devices, nvidia, kernel_log,
              environment, infiniband, data_dir, topology, nics, nvml, stack)

nlohmann::json snapshot_to_json(const Snapshot& s) { return s; }
nlohmann::json nvml_fact_to_json(const Fact<NvmlFacts>& f) { return f; }
Fact<NvmlFacts> nvml_fact_from_json(const nlohmann::json& j) { return j.get<Fact<NvmlFacts>>(); }

namespace {

// Every top-level member of a version-1 snapshot. A missing one would read as "the machine
// has no such thing" and could turn a failing machine into a passing one.
constexpr const char* kRequiredMembers[] = {
    "trainrig_version", "collected_at",  "root",       "host",        "kernel",      "nofile",
    "sysctl",           "cpu_governors", "memory",     "iommu_units", "pci_devices", "nvidia",
    "kernel_log",       "environment",   "infiniband", "data_dir",    "topology"};
// Added by version 2.
constexpr const char* kRequiredMembersV2[] = {"nics", "nvml", "stack"};

// Strings from a file are as untrusted as strings from a machine: repair them the same way.
void sanitize_strings(nlohmann::json& j) {
    if (j.is_string()) {
        j = sanitize_text(j.get_ref<const std::string&>());
    } else if (j.is_object()) {
        nlohmann::json clean = nlohmann::json::object();
        for (auto& [k, v] : j.items()) {
            sanitize_strings(v);
            clean[sanitize_text(k)] = std::move(v);
        }
        j = std::move(clean);
    } else if (j.is_array()) {
        for (auto& v : j) sanitize_strings(v);
    }
}

// The first place where `in` does not hold what the Snapshot read from it (a number that did
// not fit its field); members `out` does not know are ignored. Empty when none.
std::string first_mismatch(const nlohmann::json& out, const nlohmann::json& in,
                           const std::string& at) {
    if (out.is_object() && in.is_object()) {
        for (auto& [k, v] : out.items()) {
            if (!in.contains(k)) continue;
            auto m = first_mismatch(v, in.at(k), at + "/" + k);
            if (!m.empty()) return m;
        }
        return {};
    }
    if (out.is_array() && in.is_array() && out.size() == in.size()) {
        for (size_t i = 0; i < out.size(); ++i) {
            auto m = first_mismatch(out[i], in[i], at + "/" + std::to_string(i));
            if (!m.empty()) return m;
        }
        return {};
    }
    bool same = out == in;
    // nlohmann compares a wrapped -1 (read into an unsigned field) equal to the -1 it came
    // from; integers are compared by their text instead, floats by value.
    if (same && out.is_number_integer() && in.is_number()) same = out.dump() == in.dump();
    return same ? std::string() : (at.empty() ? "/" : at);
}

}  // namespace

Result<Snapshot> snapshot_from_json(const nlohmann::json& input, const std::string& where) {
    const auto& j = input;
    if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string() ||
        j["schema"].get<std::string>() != kSnapshotSchema)
        return Status{Errc::kInvalidInput,
                      fmt::format("{} is not a trainrig snapshot (no \"schema\": \"{}\")", where,
                                  kSnapshotSchema),
                      "write one with `trainrig collect -o FILE`"};
    if (!j.contains("schema_version") || !j["schema_version"].is_number_integer())
        return Status{Errc::kInvalidInput,
                      fmt::format("{} has no integer \"schema_version\"", where)};
    const auto version = j["schema_version"].get<int64_t>();
    if (version < 1 || version > kSnapshotSchemaVersion)
        return Status{Errc::kInvalidInput,
                      fmt::format("{} has snapshot schema_version {}, this trainrig reads 1 to {}",
                                  where, version, kSnapshotSchemaVersion),
                      "collect it again with this trainrig, or upgrade trainrig"};
    for (const char* member : kRequiredMembers)
        if (!j.contains(member))
            return Status{Errc::kInvalidInput,
                          fmt::format("{} has no \"{}\" member (null is allowed, missing is not)",
                                      where, member)};
    if (version >= 2)
        for (const char* member : kRequiredMembersV2)
            if (!j.contains(member))
                return Status{
                    Errc::kInvalidInput,
                    fmt::format("{} has no \"{}\" member (null is allowed, missing is not)", where,
                                member)};
    nlohmann::json clean = j;
    sanitize_strings(clean);
    if (version < 2) {
        // Version 1 predates these facts: say so instead of "no driver" or "no NIC".
        const auto why =
            nlohmann::json{{"error",
                            "this snapshot (schema_version 1) predates GPU driver and stack facts; "
                            "collect it again with this trainrig"},
                           {"error_kind", errc_name(Errc::kUnsupported)}};
        for (const char* member : kRequiredMembersV2) clean[member] = why;
        clean["schema_version"] = kSnapshotSchemaVersion;
    }
    Snapshot s;
    try {
        s = clean.get<Snapshot>();
    } catch (const nlohmann::json::exception& e) {
        return Status{Errc::kInvalidInput,
                      fmt::format("{} has a malformed snapshot member: {}", where, e.what())};
    }
    if (auto at = first_mismatch(snapshot_to_json(s), clean, ""); !at.empty())
        return Status{Errc::kInvalidInput,
                      fmt::format("{} has a value out of range for its field at {}", where, at)};
    return s;
}

Result<Snapshot> snapshot_from_text(std::string_view text, const std::string& where) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        return Status{Errc::kInvalidInput,
                      fmt::format("{} is not valid JSON (byte {})", where, e.byte)};
    }
    return snapshot_from_json(j, where);
}

}  // namespace trainrig
