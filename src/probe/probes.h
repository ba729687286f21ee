// The probes: each fills one part of the Snapshot from a machine reached through a RootFs.
// They never fail as a whole; what cannot be read becomes a failed Fact that a rule reports.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "core/root_fs.h"
#include "snapshot/snapshot.h"

namespace trainrig {

void probe_host(const RootFs& fs, HostFacts& out);
void probe_kernel_settings(const RootFs& fs, KernelSettings& out);
Fact<Rlimit> probe_nofile(const RootFs& fs);
SysctlConfig probe_sysctl_config(const RootFs& fs);
Fact<std::map<std::string, int>> probe_cpu_governors(const RootFs& fs);
void probe_memory(const RootFs& fs, MemoryFacts& out);
Fact<std::vector<PciDevice>> probe_nvidia_pci(const RootFs& fs);
Fact<std::vector<std::string>> probe_class_entries(const RootFs& fs, const std::string& dir);
NvidiaDriverFacts probe_nvidia_driver(const RootFs& fs);
Fact<KernelLog> probe_kernel_log(const RootFs& fs);
Fact<Environment> probe_environment(const RootFs& fs);
Fact<DataDir> probe_data_dir(const RootFs& fs, const std::string& path);
Fact<Topology> probe_topology(const RootFs& fs);
// Network adapters on the PCI bus, with their net/ and infiniband/ names.
Fact<std::vector<Nic>> probe_nics(const RootFs& fs);
// Whether an nv-fabricmanager process runs (a scan of /proc/<pid>/comm).
Fact<bool> probe_fabric_manager(const RootFs& fs);

// NVML, read in a child process that is abandoned at the deadline. Not read under --root unless
// TRAINRIG_NVML_LIBRARY or TRAINRIG_FAKE_NVML says which library speaks for the tree.
Fact<NvmlFacts> probe_nvml(const RootFs& fs, std::chrono::milliseconds deadline);

struct StackProbeOptions {
    std::chrono::milliseconds deadline{5000};        // the libraries, nvcc
    bool torch = true;          // read PyTorch's version, CUDA and NCCL from its metadata
    bool torch_import = false;  // import torch in a python3 child: is CUDA usable (seconds)
    std::chrono::milliseconds torch_deadline{20000};
};
// CUDA runtime, NCCL, nvcc and PyTorch of this host; not read under --root.
Fact<SoftwareStack> probe_stack(const RootFs& fs, const StackProbeOptions& options);

// Kernel log records worth keeping in a snapshot: NVIDIA driver, PCI resource, AER lines.
bool kmsg_relevant(std::string_view message);
// Environment variables a snapshot keeps: the ones NCCL, PyTorch distributed and CUDA read.
bool env_relevant(std::string_view key);

}  // namespace trainrig
