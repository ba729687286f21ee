// `trainrig topo`: how GPUs and NICs connect (NVLink, PCIe switch, host bridge, NUMA node,
// socket), as `nvidia-smi topo -m` prints it, from this machine, a machine tree or a snapshot.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "core/user_file.h"
#include "probe/collect.h"
#include "topo/render_topo.h"

namespace trainrig {

namespace {

class TopoCommand : public Command {
public:
    const char* name() const override { return "topo"; }
    const char* summary() const override {
        return "Show the GPU x GPU and GPU x NIC connection matrix (like nvidia-smi topo -m)";
    }
    void declare(CLI::App& app) override {
        declare_root_options(app, collect_);  // topo reads no data folder or env file
        app.add_option("--snapshot", snapshot_, "Read a snapshot written by `trainrig collect`")
            ->check(existing_input())
            ->type_name("FILE");
        declare_output_options(app, output_);
        declare_json_option(app, json_, "trainrig.topo");
        declare_verbose_option(app, verbose_,
                               "each GPU's and NIC's PCI address, model, NUMA node and CPUs");
        declare_help_footer(app,
                            {"trainrig topo                           # this machine",
                             "trainrig topo -v --snapshot node07.json  # with PCI addresses",
                             "trainrig topo --json -o topo.json"},
                            "The matrix's labels are nvidia-smi topo -m's; docs/checks.md.");
    }
    int run(const GlobalOptions& global) override {
        if (snapshot_ && global.typed("--root"))
            return print_error(name(), {Errc::kInvalidInput,
                                        "--root applies when probing a machine, not to "
                                        "--snapshot"});
        collect_.stack = false;
        Result<Snapshot> snap = Status{};
        if (snapshot_) {
            auto text = read_user_file(*snapshot_, "--snapshot");
            if (!text) return print_error(name(), text.status());
            snap = snapshot_from_text(*text, *snapshot_);
        } else {
            snap = collect_snapshot(collect_);
        }
        if (!snap) return print_error(name(), snap.status());
        const auto matrix = build_gpu_matrix(*snap);
        // Why NVLink is missing from the matrix, when NVML was there but failed.
        std::string nvml_error;
        if (snap->nvml.is_failed() && snap->nvml.status().code() != Errc::kNotFound &&
            snap->nvml.status().code() != Errc::kUnsupported)
            nvml_error = snap->nvml.status().message();
        std::string text;
        if (json_) {
            auto doc = render_topo_json(matrix);
            doc["nvml_error"] = nvml_error.empty() ? nlohmann::json() : nlohmann::json(nvml_error);
            text = json_result(std::move(doc), name(), 0);
        } else {
            text = render_topo_table(matrix);
            if (verbose_) text += device_list(matrix);
            if (!nvml_error.empty()) text += "\nNVML: " + nvml_error + "\n";
        }
        return emit_result(name(), output_, text, 0);
    }

private:
    static std::string device_list(const GpuMatrix& m) {
        std::string out = "\nDevices:\n";
        for (const auto* list : {&m.gpus, &m.nics})
            for (const auto& d : *list)
                out += fmt::format("  {:<6} {:<14} NUMA {:<4} CPUs {:<16} {}\n", d.name, d.bus_id,
                                   d.numa, d.cpus.empty() ? "?" : d.cpus, d.model);
        return out;
    }

    CollectOptions collect_;
    OutputOptions output_;
    std::optional<std::string> snapshot_;
    bool json_ = false, verbose_ = false;
};

}  // namespace

std::unique_ptr<Command> make_topo_command() { return std::make_unique<TopoCommand>(); }

}  // namespace trainrig
