// `trainrig collect`: write this machine's snapshot (schema "trainrig.snapshot") for offline
// judging with `doctor --snapshot` or for a fleet.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "probe/collect.h"

namespace trainrig {

namespace {

// One line per part of the snapshot: what was read, or why it was not (for -v, on stderr).
template <typename T, typename Count>
std::string part_line(const char* part, const Fact<T>& fact, Count count) {
    if (fact.is_known()) return fmt::format("  {:<12} {}\n", part, count(fact.value()));
    if (fact.is_absent()) return fmt::format("  {:<12} absent\n", part);
    return fmt::format("  {:<12} not read: {}\n", part, fact.status().message());
}

std::string snapshot_digest(const Snapshot& s) {
    std::string out = fmt::format("trainrig collect: {} at {}\n", s.root, s.collected_at);
    out += part_line("pci", s.pci_devices,
                     [](const auto& v) { return fmt::format("{} NVIDIA functions", v.size()); });
    out += part_line("nvml", s.nvml,
                     [](const auto& v) { return fmt::format("{} GPUs", v.gpus.size()); });
    out += part_line("kernel log", s.kernel_log, [](const auto& v) {
        return fmt::format("{} records ({} lost, {} malformed)", v.records_read, v.records_lost,
                           v.malformed);
    });
    out += part_line("nics", s.nics, [](const auto& v) { return fmt::format("{}", v.size()); });
    out += part_line("topology", s.topology, [](const auto& v) {
        return fmt::format("{} NUMA nodes, {} cores", v.numa_nodes.size(), v.cores);
    });
    out += part_line("data dir", s.data_dir, [](const auto& v) { return v.path; });
    out += part_line("environment", s.environment,
                     [](const auto& v) { return fmt::format("{} variables", v.vars.size()); });
    out += part_line("stack", s.stack, [](const auto&) { return std::string("read"); });
    out += fmt::format("  {:<12} {} files, {} settings\n", "sysctl", s.sysctl.files.size(),
                       s.sysctl.settings.size());
    return out;
}

class CollectCommand : public Command {
public:
    const char* name() const override { return "collect"; }
    const char* summary() const override {
        return "Write a machine snapshot (JSON) for offline judging or a fleet";
    }
    void declare(CLI::App& app) override {
        declare_machine_options(app, collect_);
        declare_output_options(app, output_);
        declare_json_option(app, json_,
                            "trainrig.snapshot, always JSON: the flag is accepted for scripts "
                            "that pass it to every command");
        declare_verbose_option(app, verbose_,
                               "each part of the snapshot, what it holds or why it was not "
                               "read, on stderr");
        declare_help_footer(
            app,
            {"trainrig collect -o node07.json         # then: trainrig doctor --snapshot "
             "node07.json",
             "trainrig collect --root DIR -o tree.json -v"},
            "The snapshot's format: docs/formats.md.");
    }
    int run(const GlobalOptions&) override {
        auto snap = collect_snapshot(collect_);
        if (!snap) return print_error(name(), snap.status());
        if (verbose_) std::fputs(snapshot_digest(*snap).c_str(), stderr);
        const auto text = json_result(snapshot_to_json(*snap), name(), 0);
        return emit_result(name(), output_, text, 0);
    }

private:
    CollectOptions collect_;
    OutputOptions output_;
    bool json_ = false, verbose_ = false;
};

}  // namespace

std::unique_ptr<Command> make_collect_command() { return std::make_unique<CollectCommand>(); }

}  // namespace trainrig
