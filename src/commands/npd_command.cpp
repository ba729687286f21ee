// `trainrig npd`: a custom plugin for Kubernetes' node-problem-detector. Its protocol: exit 0 the
// node is fine, 1 it has the problem, anything else unknown; the first line of stdout, cut to
// max_output_length (80 in the examples), becomes the node condition's message. So: one line,
// at most 80 characters, the check id first (packaging/kubernetes/, docs/fleet.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "commands/health_options.h"
#include "health/budget_alarm.h"

namespace trainrig {

namespace {

constexpr size_t kMaxMessage = 80;

// The condition's message: the first problem, id first, and how many more there are; in a
// maintenance window, that window (nothing new is raised while it holds).
std::string message(const health::HealthResult& h) {
    if (h.maintenance)
        return "ok: " + maintenance_line(*h.maintenance, h.judged_at).substr(0, kMaxMessage - 4);
    const auto& list = h.health == health::Health::kUnhealthy ? h.failures : h.unknowns;
    if (list.empty()) return "ok: " + health::checks_text(h);
    const std::string more = list.size() > 1 ? fmt::format(" (+{} more)", list.size() - 1) : "";
    return health::problem_line(list.front(), kMaxMessage - more.size()) + more;
}

class NpdCommand : public Command {
public:
    const char* name() const override { return "npd"; }
    const char* summary() const override {
        return "node-problem-detector plugin: this node's health as exit 0/1/2 and one line of "
               "at most 80 characters";
    }
    void declare(CLI::App& app) override {
        declare_health_options(app, options_, budget_s_);
        declare_output_options(app, output_);
        declare_json_option(app, json_, "trainrig.health");
        declare_verbose_option(app, verbose_,
                               "every problem and note under the line (for people: the plugin "
                               "protocol reads the first line only)");
        declare_help_footer(app,
                            {"trainrig npd                   # ok: 18 checks passed",
                             "trainrig npd --root /host      # in a pod with the host at /host",
                             "trainrig npd -v --expect-gpus 8"},
                            "The ConfigMap and DaemonSet: packaging/kubernetes/ (docs/fleet.md).");
    }

    int run(const GlobalOptions&) override {
        if (auto s = check_health_selection(options_); !s.ok()) {
            // Still the protocol: an unknown with a reason a person can act on.
            std::printf("unknown: %s\n", s.message().substr(0, kMaxMessage - 9).c_str());
            return print_error(name(), s);
        }
        health::BudgetAlarm alarm(budget_s_, name());
        options_.collect.deadline = std::min(options_.collect.deadline, alarm.per_call());
        alarm.phase("reading the machine");
        auto health = health::check_health(options_);
        if (!health) {
            std::printf("unknown: %s\n",
                        health.status().message().substr(0, kMaxMessage - 9).c_str());
            return print_error(name(), health.status());
        }
        const int code = health::scheduler_exit_code(*health);
        std::string text;
        if (json_) {
            auto doc = health::health_json(*health);
            doc["schema"] = "trainrig.health";
            doc["schema_version"] = 1;
            doc["message"] = message(*health);
            text = json_result(std::move(doc), name(), code);
        } else {
            text = message(*health) + "\n";
            if (verbose_) text += health::render_problems(*health);
        }
        return emit_result(name(), output_, text, code);
    }

private:
    health::HealthOptions options_;
    double budget_s_ = 20;
    OutputOptions output_;
    bool json_ = false, verbose_ = false;
};

}  // namespace

std::unique_ptr<Command> make_npd_command() { return std::make_unique<NpdCommand>(); }

}  // namespace trainrig
