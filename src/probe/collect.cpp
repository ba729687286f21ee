// collect_snapshot(): the one place that knows which probe fills which part of the Snapshot.
#include "probe/collect.h"

#include <fmt/format.h>

#include <ctime>

#include "core/cancel_signals.h"
#include "core/env_file.h"
#include "core/root_fs.h"
#include "core/text.h"
#include "core/user_file.h"
#include "core/utc_time.h"
#include "core/version.h"
#include "probe/parsers.h"
#include "probe/probes.h"

namespace trainrig {

namespace {

Result<Environment> read_env_file(const std::string& path) {
    auto text = read_user_file(path, "--env-file");
    if (!text) return text.status();
    auto ops = parse_env_file(*text, path);
    if (!ops) return ops.status();
    Environment env;
    env.source = path;
    // `unset` lines leave the variable out: the file is judged as what it leaves set.
    for (auto& [k, v] : apply_env_ops(*ops))
        if (env_relevant(k)) env.vars[k] = sanitize_text(v);
    return env;
}

}  // namespace

Result<Snapshot> collect_snapshot(const CollectOptions& options) {
    std::error_code ec;
    if (!std::filesystem::is_directory(options.root, ec))
        return Status{Errc::kInvalidInput,
                      fmt::format("--root {} is not a folder", options.root.string())};
    std::optional<Environment> env_override;
    if (options.env_file) {
        auto env = read_env_file(*options.env_file);
        if (!env) return env.status();
        env_override = std::move(env).value();
    }

    // Ctrl-C while a driver call or the PyTorch probe runs stops the child processes with us,
    // and the command exits 130 (docs/cli.md).
    const CancelSignals signals;
    const RootFs fs(options.root);
    Snapshot s;
    s.trainrig_version = kTrainrigVersion;
    s.collected_at = utc_iso8601(std::time(nullptr));
    s.root = fs.root().string();
    probe_host(fs, s.host);
    probe_kernel_settings(fs, s.kernel);
    s.nofile = probe_nofile(fs);
    s.sysctl = probe_sysctl_config(fs);
    s.cpu_governors = probe_cpu_governors(fs);
    probe_memory(fs, s.memory);
    s.iommu_units = probe_class_entries(fs, "/sys/class/iommu");
    s.pci_devices = probe_nvidia_pci(fs);
    s.nvidia = probe_nvidia_driver(fs);
    s.kernel_log = probe_kernel_log(fs);
    s.environment = env_override ? Fact<Environment>::known(*env_override) : probe_environment(fs);
    s.infiniband = probe_class_entries(fs, "/sys/class/infiniband");
    if (options.data_dir) s.data_dir = probe_data_dir(fs, *options.data_dir);
    s.topology = probe_topology(fs);
    s.nics = probe_nics(fs);
    s.nvidia.fabric_manager_running = probe_fabric_manager(fs);
    s.nvml = probe_nvml(fs, options.deadline);
    s.stack = options.stack
                  ? probe_stack(fs, {options.deadline, options.torch, options.torch_import,
                                        options.deadline * 4})
                  : Fact<SoftwareStack>::failed({Errc::kUnsupported, "not read by this command"});
    if (CancelSignals::flag().load())
        return Status{Errc::kIo, "interrupted while reading the machine; nothing was judged"};
    return s;
}

}  // namespace trainrig
