// `trainrig collect`: write this machine's snapshot (schema "trainrig.snapshot") for offline
// judging with `doctor --snapshot` or for a fleet.
#include <CLI/CLI.hpp>

#include "cli/shared_options.h"
#include "commands/commands.h"
#include "commands/print_error.h"
#include "probe/collect.h"

namespace trainrig {

namespace {

class CollectCommand : public Command {
public:
    const char* name() const override { return "collect"; }
    const char* summary() const override {
        return "Write a machine snapshot (JSON) for offline judging or a fleet";
    }
    void declare(CLI::App& app) override {
        declare_machine_options(app, collect_);
        declare_output_options(app, output_);
    }
    int run(const GlobalOptions&) override {
        auto snap = collect_snapshot(collect_);
        if (!snap) return print_error(name(), snap.status());
        auto text =
            snapshot_to_json(*snap).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
        if (auto s = write_output(output_, text + "\n"); !s.ok()) return print_error(name(), s);
        return 0;
    }

private:
    CollectOptions collect_;
    OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> make_collect_command() { return std::make_unique<CollectCommand>(); }

}  // namespace trainrig
