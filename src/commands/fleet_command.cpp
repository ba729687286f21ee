// `trainrig fleet judge PATH...`: many nodes' validate reports or snapshots judged together
// (docs/fleet.md): each node's own verdict, then drift, hardware shape and performance outliers
// across the fleet, and the node pairs' bandwidth with --pairs; the nodes to drain, with their
// reasons; with --out, the fleet report.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "fleet/fleet_judge.h"
#include "fleet/fleet_render.h"
#include "fleet/fleet_report.h"
#include "fleet/node_input.h"
#include "fleet/pair_input.h"

namespace trainrig {

namespace {

class FleetCommand : public Command {
public:
    const char* name() const override { return "fleet"; }
    const char* summary() const override {
        return "Judge many nodes together: drift, hardware that differs, slow nodes, the drain "
               "list";
    }
    void declare(CLI::App& app) override {
        app.require_subcommand(1);
        judge_ = app.add_subcommand(
            "judge",
            "Judge the nodes' validate reports (directories or report.json) or snapshots "
            "(`trainrig collect`) together, each host by its newest; exit 2 when a node could "
            "not be judged, else 1 when one is to be drained or has drifted");
        judge_
            ->add_option("paths", paths_,
                         "Report directories, report.json or snapshot files, or directories "
                         "holding them")
            ->required()
            ->expected(1, -1)
            ->check(existing_input())
            ->type_name("PATH");
        judge_
            ->add_option("--z", options_.z,
                         "Outlier threshold in robust standard deviations (default 3)")
            ->check(CLI::Range(1.0, 100.0));
        judge_
            ->add_option("--min-deviation", options_.min_deviation,
                         "Smallest difference from the fleet median that is an outlier, as a "
                         "fraction (default 0.03)")
            ->check(CLI::Range(0.0, 1.0));
        judge_
            ->add_option("--lemon-drains", options_.lemon.drains,
                         "A node drained in this many of its last --lemon-reports reports within "
                         "--lemon-days is a lemon, drained until repaired (default 3; 0: never)")
            ->check(CLI::Range(0, 1000));
        judge_
            ->add_option("--lemon-reports", options_.lemon.reports,
                         "How many of a node's latest reports the lemon rule counts (default 10)")
            ->check(CLI::Range(1, 1000));
        judge_
            ->add_option("--lemon-days", options_.lemon.days,
                         "How far back from a node's newest report the lemon rule looks "
                         "(default 30)")
            ->check(CLI::Range(0.01, 3650.0));
        judge_
            ->add_option("--pairs", pairs_,
                         "Bandwidth measured between pairs of nodes (a trainrig.fleet.pairs "
                         "document, docs/formats.md, or `bench run nccl-pairs --json`): a node "
                         "slow with every partner, one of them known good, is drained")
            ->check(existing_input())
            ->type_name("FILE");
        judge_
            ->add_option("--out", out_,
                         "Write the fleet report into DIR: fleet-report.json, .md and .html "
                         "(created, or its three files replaced; nothing else in it is touched); "
                         "-o/--output is the summary, as on every command")
            ->type_name("DIR");
        declare_output_options(*judge_, output_);
        declare_json_option(*judge_, json_, "trainrig.fleet");
        declare_verbose_option(*judge_, verbose_, "every finding, its evidence and every node");
        declare_help_footer(*judge_,
                            {"trainrig fleet judge reports/          # one report directory "
                             "per node",
                             "trainrig fleet judge --json node*/report.json -o fleet.json",
                             "trainrig fleet judge snapshots/*.json",
                             "trainrig fleet judge reports/ --pairs pairs.json --out fleet-report"},
                            "Method and thresholds: docs/fleet.md.");
    }

    int run(const GlobalOptions&) override {
        auto nodes = fleet::load_nodes(paths_);
        auto set_aside = fleet::keep_newest_per_host(nodes);
        if (nodes.empty())
            return print_error("fleet judge",
                               {Errc::kInvalidInput, "no report or snapshot in the paths given"});
        std::optional<fleet::FleetPairs> pairs;
        if (pairs_) {
            auto loaded = fleet::load_pairs(*pairs_, nodes);
            if (!loaded) return print_error("fleet judge", loaded.status());
            pairs = std::move(loaded).value();
        }
        auto result = fleet::judge_fleet(nodes, options_, std::move(pairs), std::move(set_aside));
        const int code = result.exit_code();
        if (out_)
            if (auto s = fleet::write_fleet_report(result, *out_); !s.ok())
                return print_error("fleet judge", s);
        std::string text = json_ ? json_result(fleet::fleet_json(result), "fleet judge", code)
                                 : fleet::render_fleet_text(result, verbose_);
        if (out_ && !json_)
            text +=
                "\nreport: " + (std::filesystem::path(*out_) / fleet::kFleetReportHtml).string() +
                "\n";
        return emit_result("fleet judge", output_, text, code);
    }

private:
    CLI::App* judge_ = nullptr;
    std::vector<std::string> paths_;
    std::optional<std::string> pairs_, out_;
    fleet::FleetOptions options_;
    OutputOptions output_;
    bool json_ = false, verbose_ = false;
};

}  // namespace

std::unique_ptr<Command> make_fleet_command() { return std::make_unique<FleetCommand>(); }

}  // namespace trainrig
