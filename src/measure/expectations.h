// What each measurement should reach on this machine, and where that number comes from: memory
// channels × transfer rate for the CPU (a table by processor family), the PCIe link for host
// copies and NVMe, the plan hardware catalog for HBM, GEMM and interconnects. Every factor is
// sourced in expectations.cpp and described in docs/METHODOLOGY.md. A measurement with no
// entry keeps no expectation and is reported as "info".
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "measure/bench_record.h"
#include "plan/hardware.h"

namespace trainrig::bench {

struct CpuMemoryPlatform {
    const char* name;  // "AMD EPYC 9004 (Genoa)"
    int channels;      // DDR channels per socket
    int mega_transfers;
    const char* source;
    double bytes_per_s() const { return channels * mega_transfers * 1e6 * 8; }  // per socket
};

// The platform of the CPU described by machine facts' "cpu" (machine_facts.h), or nullptr.
const CpuMemoryPlatform* cpu_memory_platform(const nlohmann::json& cpu);

// Raw bytes/s of one direction of a PCIe link after line encoding.
double pcie_bytes_per_s(double gigatransfers, int lanes);

// The catalog entry for a GPU name as CUDA or NVML give it ("NVIDIA H200", "NVIDIA
// A100-SXM4-80GB").
const plan::GpuSpec* catalog_gpu(std::string_view gpu_name, const plan::HardwareCatalog& catalog);

struct Expectation {
    double value = 0;
    std::string source;
    // An acceptance bar rather than what the hardware typically reaches: a measurement passes
    // at or above it, not within the --pass tolerance below it.
    bool floor = false;
};

// An expectation, or the sentence that says why a measurement has none ("virtual machine: its
// memory channels are shared ..."), shown beside the measurement instead of a bare "info".
struct Reference {
    std::optional<Expectation> expected;
    std::string why_not;
};

Reference reference_for(const BenchRecord& r, const nlohmann::json& machine,
                        const plan::HardwareCatalog& catalog);
std::optional<Expectation> expectation_for(const BenchRecord& r, const nlohmann::json& machine,
                                           const plan::HardwareCatalog& catalog);

// Sets expected and expected_source on every record that has an expectation.
// Sets expected and expected_source, or no_expectation, on every record.
void apply_expectations(std::vector<BenchRecord>& records, const nlohmann::json& machine,
                        const plan::HardwareCatalog& catalog);

}  // namespace trainrig::bench
