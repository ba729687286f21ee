// `trainrig tune show|diff`: the tuning profile this machine should have (sysctl, limits, NCCL
// environment, CPU governor, NUMA binding), each setting with its reason and source, and what
// would change. Computed from the same facts `doctor` reads; reads only, needs no root.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/shared_options.h"
#include "commands/commands.h"
#include "commands/print_error.h"
#include "core/user_file.h"
#include "probe/collect.h"
#include "tune/render_tune.h"

namespace trainrig {

namespace {

class TuneCommand : public Command {
public:
    const char* name() const override { return "tune"; }
    const char* summary() const override {
        return "Show the tuning profile for this machine and how it differs (sysctl, limits, NCCL, "
               "CPU, NUMA)";
    }
    void declare(CLI::App& app) override {
        show_ = app.add_subcommand("show",
                                   "Every setting of the profile, its value now, reason "
                                   "and source");
        diff_ = app.add_subcommand("diff",
                                   "The files tune manages as a unified diff, then the "
                                   "live values that would change");
        app.require_subcommand(1);
        for (auto* sub : {show_, diff_}) {
            declare_machine_options(*sub, collect_);
            declare_output_options(*sub, output_);
            sub->add_option("--only", only_,
                            "Only these profiles (sysctl, limits, nccl, cpu, numa)")
                ->delimiter(',')
                ->type_name("LIST");
            sub->add_option("--overrides", overrides_,
                            "TOML file with your own values "
                            "(docs/tuning.md)")
                ->type_name("FILE");
            sub->add_flag("--multi-node", multi_node_,
                          "The job spans machines: name NCCL's socket interface when there is no "
                          "InfiniBand");
            sub->add_flag("--json", json_, "Write JSON (schema trainrig.tune)");
        }
    }

    int run(const GlobalOptions&) override {
        tune::TuneRequest request;
        request.only = {only_.begin(), only_.end()};
        request.multi_node = multi_node_;
        if (overrides_) {
            auto text = read_user_file(*overrides_, "--overrides", 1u << 20);
            if (!text) return print_error(name(), text.status());
            auto parsed = tune::parse_overrides(*text, *overrides_);
            if (!parsed) return print_error(name(), parsed.status());
            request.overrides = *parsed;
            request.overrides_file = *overrides_;
        }
        collect_.torch = request.wants("nccl");  // renames depend on the PyTorch version
        auto snap = collect_snapshot(collect_);
        if (!snap) return print_error(name(), snap.status());
        const RootFs fs(collect_.root);
        const auto live =
            tune::read_live_state(fs, tune::sysctl_keys_of_interest(request.overrides));
        auto profile = tune::build_profile(*snap, live, request);
        if (!profile) return print_error(name(), profile.status());
        std::string text;
        if (json_)
            text = tune::profile_to_json(*profile).dump(2) + "\n";
        else
            text = diff_->parsed() ? tune::render_diff(*profile) : tune::render_show(*profile);
        if (auto s = write_output(output_, text); !s.ok()) return print_error(name(), s);
        return 0;
    }

private:
    CLI::App* show_ = nullptr;
    CLI::App* diff_ = nullptr;
    CollectOptions collect_;
    OutputOptions output_;
    std::vector<std::string> only_;
    std::optional<std::string> overrides_;
    bool multi_node_ = false, json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_tune_command() { return std::make_unique<TuneCommand>(); }

}  // namespace trainrig
