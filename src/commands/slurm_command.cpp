// `trainrig slurm healthcheck`: Slurm's HealthCheckProgram (or a Prolog/Epilog step). Judges this
// node with the health checks (health/node_health.h) inside a time budget, then drains it with a
// reason "trainrig:<id> <detail>", resumes it when trainrig drained it and it is healthy again,
// and otherwise leaves it alone (slurm/drain_decision.h has the rules; docs/fleet.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "commands/health_options.h"
#include "core/text.h"
#include "health/budget_alarm.h"
#include "slurm/drain_decision.h"
#include "slurm/scontrol.h"

namespace trainrig {

namespace {

constexpr const char* kCommand = "slurm healthcheck";

// The Slurm name of this node: --node, else what slurmd tells its programs, else the host name
// up to its first dot (Slurm's NodeName is usually the short name).
std::string node_name(const std::optional<std::string>& flag, const std::string& host) {
    if (flag) return *flag;
    if (const char* env = std::getenv("SLURMD_NODENAME"); env && *env) return env;
    return host.substr(0, host.find('.'));
}

class SlurmCommand : public Command {
public:
    const char* name() const override { return "slurm"; }
    const char* summary() const override {
        return "Slurm's health check: drain this node on a failed check, resume it when trainrig "
               "drained it and it is healthy again";
    }
    void declare(CLI::App& app) override {
        app.require_subcommand(1);
        auto* hc = app.add_subcommand(
            "healthcheck",
            "Judge this node with the health checks and drain or resume it in Slurm; exit 0 "
            "healthy, 1 unhealthy, 2 could not judge (then nothing is changed)");
        declare_health_options(*hc, options_, budget_s_);
        hc->add_option("--node", node_,
                       "This node's Slurm name (default: $SLURMD_NODENAME, else the short host "
                       "name)")
            ->type_name("NAME");
        hc->add_option("--max-drained", policy_.max_share,
                       "Circuit breaker: do not drain when trainrig already drained this share of "
                       "the node's partitions (default 0.5)")
            ->check(CLI::Range(0.0, 1.0))
            ->type_name("SHARE");
        hc->add_flag("--dry-run", dry_run_,
                     "Print the scontrol command instead of running it (states are still read)");
        hc->add_option("--scontrol", scontrol_.program, "The scontrol program (default scontrol)")
            ->type_name("PATH");
        declare_output_options(*hc, output_);
        declare_json_option(*hc, json_, "trainrig.slurm.healthcheck");
        declare_verbose_option(*hc, verbose_, "every problem and note");
        declare_help_footer(
            *hc,
            {"trainrig slurm healthcheck --dry-run     # what it would do to this node",
             "trainrig slurm healthcheck --report /var/lib/trainrig/reports",
             "trainrig slurm healthcheck --json -o /run/trainrig/health.json"},
            "slurm.conf: HealthCheckProgram=/usr/lib/trainrig/slurm-healthcheck (docs/fleet.md).");
    }

    int run(const GlobalOptions&) override {
        if (auto s = check_health_selection(options_); !s.ok()) return print_error(kCommand, s);
        health::BudgetAlarm alarm(budget_s_, kCommand);
        options_.collect.deadline = std::min(options_.collect.deadline, alarm.per_call());
        scontrol_.deadline = std::min(scontrol_.deadline, alarm.per_call());

        alarm.phase("reading the machine");
        auto checked = health::check_health(options_);
        if (!checked) return print_error(kCommand, checked.status());
        health::HealthResult health = std::move(checked).value();
        const std::string node = node_name(node_, health.host);

        alarm.phase("asking slurmctld for the nodes' states (scontrol show node)");
        auto nodes = slurm::show_nodes(scontrol_);
        if (!nodes && !dry_run_) return finish(health, node, {}, {}, nodes.status());
        if (!nodes) {
            // A dry run still says what it would do, on the assumption it states.
            health.notes.push_back(nodes.status().message() + "; assuming the node is not drained");
            nodes = std::vector<slurm::SlurmNode>{{node, "UNKNOWN", "", {}}};
        }
        const auto self = std::find_if(nodes->begin(), nodes->end(),
                                       [&](const auto& n) { return n.name == node; });
        if (self == nodes->end())
            return finish(
                health, node, {}, {},
                {Errc::kNotFound, fmt::format("node {} is not in `scontrol show node`", node),
                 "name it with --node"});

        policy_.dry_run = dry_run_;
        const auto action = slurm::decide(health, *self, *nodes, policy_);
        std::vector<std::string> command;
        if (action.kind == slurm::ActionKind::kDrain)
            command = slurm::drain_command(scontrol_, node, action.reason);
        if (action.kind == slurm::ActionKind::kResume)
            command = slurm::resume_command(scontrol_, node);
        Status done;
        if (!command.empty() && !dry_run_) {
            alarm.phase("updating the node (scontrol update)");
            done = slurm::run_update(scontrol_, command);
        }
        return finish(health, node, action, command, done);
    }

private:
    int finish(const health::HealthResult& h, const std::string& node, const slurm::Action& action,
               const std::vector<std::string>& command, const Status& error) {
        const int code = error.ok() ? health::scheduler_exit_code(h) : 2;
        std::string text;
        if (json_) {
            nlohmann::json doc = health::health_json(h);
            doc["schema"] = "trainrig.slurm.healthcheck";
            doc["schema_version"] = 1;
            doc["node"] = node;
            doc["action"] = {
                {"kind", slurm::action_name(action.kind)},
                {"reason", action.reason},
                {"message", action.message},
                {"command", command},
                {"dry_run", dry_run_},
                {"error", error.ok() ? nlohmann::json(nullptr) : nlohmann::json(error.message())}};
            text = json_result(std::move(doc), kCommand, code);
        } else {
            text = fmt::format("{}: {}", node, health::health_name(h.health));
            if (!h.failures.empty()) text += ": " + health::problem_line(h.failures.front(), 200);
            text += fmt::format(" ({})\n", health::checks_text(h));
            if (verbose_) text += health::render_problems(h);
            if (!action.message.empty()) text += action.message + "\n";
            if (!command.empty())
                text += fmt::format("{}{}\n",
                                    dry_run_     ? "would run: "
                                    : error.ok() ? "ran: "
                                                 : "failed: ",
                                    shell_command(command));
        }
        if (!error.ok()) print_error(kCommand, error);
        return emit_result(kCommand, output_, text, code);
    }

    health::HealthOptions options_;
    double budget_s_ = 20;
    std::optional<std::string> node_;
    slurm::DrainPolicy policy_;
    slurm::Scontrol scontrol_;
    bool dry_run_ = false;
    OutputOptions output_;
    bool json_ = false, verbose_ = false;
};

}  // namespace

std::unique_ptr<Command> make_slurm_command() { return std::make_unique<SlurmCommand>(); }

}  // namespace trainrig
