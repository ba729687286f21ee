// What a bench document says about the machine it ran on: host, kernel, CPU model (the key to
// the memory-bandwidth table), sockets, cores, NUMA nodes and memory. GPUs are added by the GPU
// benchmarks when they run.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace trainrig::bench {

nlohmann::json collect_machine_facts();

// The fields of /proc/cpuinfo's first processor that name the CPU: "model_name", "vendor",
// "family" and "model" on x86; "implementer" and "part" on Arm.
nlohmann::json parse_cpuinfo(std::string_view cpuinfo);

}  // namespace trainrig::bench
