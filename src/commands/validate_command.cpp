// `trainrig validate`: one command that proves a machine ready to train, with a report a person
// can read and a tool can check (docs/report.md).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <ctime>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "core/local_rank.h"
#include "core/text.h"
#include "fleet/fleet_render.h"
#include "fleet/fleet_validate.h"
#include "train/communicator.h"
#include "validate/report_dir.h"
#include "validate/report_html.h"
#include "validate/report_path.h"
#include "validate/report_render.h"
#include "validate/validate_run.h"

namespace trainrig {

namespace {

class ValidateCommand : public Command {
public:
    const char* name() const override { return "validate"; }
    const char* summary() const override {
        return "Prove this machine ready to train: every check, benchmark and a training run, "
               "one verdict and a report";
    }
    void declare(CLI::App& app) override {
        app.add_option("--level", level_,
                       "quick (an admission check: about a minute), standard (acceptance: about "
                       "15 minutes), long (burn-in: 1-2 hours)")
            ->check(CLI::IsMember({"quick", "standard", "long"}))
            ->default_str("quick");
        app.add_option("--report", report_,
                       "The report directory to write (default trainrig-report-HOST-UTCTIME); "
                       "it must not exist yet. {host}, {rank} and {time} in it are this node's "
                       "host name, MPI/Slurm rank and start time (UTC)")
            ->type_name("DIR");
        app.add_flag("--no-report", no_report_, "Write no report directory; print the verdict");
        auto* fleet = app.add_option_group(
            "fleet", "many nodes at once, under mpirun -npernode 1 or srun --mpi=pmix");
        fleet->add_flag("--fleet", fleet_,
                        "Each rank validates its own node; rank 0 gathers the reports over MPI, "
                        "judges them as a fleet (as `fleet judge`) and writes the fleet report; "
                        "every rank exits with the fleet's code");
        fleet
            ->add_option("--fleet-report", fleet_report_,
                         "The fleet report directory rank 0 writes (default "
                         "trainrig-fleet-report-UTCTIME); it must not exist yet; {host} and "
                         "{time} as in --report")
            ->type_name("DIR");
        fleet
            ->add_option("--fleet-wait", fleet_wait_,
                         "How long rank 0 waits for the other nodes once its own validation is "
                         "done (default: twice its own time + 120 s); a node that has not "
                         "reported by then is UNKNOWN")
            ->check(CLI::Range(0.0, 86400.0))
            ->type_name("SECONDS");
        declare_machine_options(app, options_.collect);
        declare_gpu_selection(app, options_.gpus);
        app.add_option("--skip", options_.skip,
                       "Leave out stages (" + join(validate::stage_names(), ", ") +
                           "), doctor checks or areas, or benchmarks; a check the machine "
                           "requires that is left out keeps the verdict from a plain READY")
            ->delimiter(',')
            ->type_name("NAME,...");
        declare_expect_gpus(app, options_.expect_gpus);
        app.add_option("--stage-timeout", options_.stage_timeout,
                       "Stop a measuring stage that runs longer than SECONDS, and kill it if it "
                       "does not stop (a hung driver call); the verdict is then UNKNOWN "
                       "(default: 3 x the stage's budget + 60 s)")
            ->check(CLI::Range(0.1, 86400.0))
            ->type_name("SECONDS");
        app.add_option("--baseline", options_.baseline,
                       "Expect each measurement's median in this earlier report (a directory or "
                       "its report.json: this machine before, or a golden node) instead of the "
                       "hardware's figure; below bench's tolerance of it is a finding")
            ->check(existing_input())
            ->type_name("REPORT");
        auto* data = app.add_option_group(
            "data path", "the data-path stage (default: the loader on generated tokens)");
        declare_data_path_inputs(*data, options_.tokenizer, options_.inputs, options_.shards);
        declare_output_options(app, output_);
        declare_json_option(app, json_, "trainrig.validate");
        declare_verbose_option(app, verbose_,
                               "every item and stage, and a line on stderr as each stage starts");
        declare_help_footer(
            app, {"trainrig validate                         # quick: verdict and report",
                  "trainrig validate --level standard --data-dir /data",
                  "trainrig validate --json --no-report      # the verdict for a scheduler",
                  "trainrig validate --root /mnt/node07 --report node07",
                  "mpirun -npernode 1 --hostfile hosts trainrig validate --fleet --no-report"});
    }

    int check(const GlobalOptions&) override {
        auto level = validate::level_from_name(level_);
        if (!level.ok()) return print_error(name(), level.status());
        options_.level = *level;
        if (auto s = validate::check_options(options_); !s.ok()) return print_error(name(), s);
        if (no_report_ && report_)
            return print_error(name(), {Errc::kInvalidInput, "--report and --no-report together"});
        if (report_)
            if (auto s = validate::check_report_path(*report_, "--report"); !s.ok())
                return print_error(name(), s);
        if (fleet_report_)
            if (auto s = validate::check_report_path(*fleet_report_, "--fleet-report"); !s.ok())
                return print_error(name(), s);
        return 0;
    }

    int run(const GlobalOptions& global) override {
        std::unique_ptr<train::Communicator> comm;
        if (fleet_) {
            auto c = fleet::join_fleet();
            if (!c) return print_error(name(), c.status());
            comm = std::move(c).value();
        }
        facts_.time = std::time(nullptr);
        if (comm) {
            facts_.rank = comm->rank();
        } else {
            auto rank = world_rank_from_process_env();
            if (!rank) return print_error(name(), rank.status());
            facts_.rank = rank->rank.value_or(0);
        }
        options_.progress = verbose_ || ::isatty(STDERR_FILENO) == 1;
        options_.argv = {"trainrig"};
        options_.argv.insert(options_.argv.end(), global.args.begin(), global.args.end());

        const auto started = std::chrono::steady_clock::now();
        auto result = validate::run_validate(options_);
        std::map<std::string, std::string> files;
        std::string dir;
        Status written;
        if (result.ok()) {
            files = result->raw;
            files["report.json"] = json_result(
                result->report, name(), validate::verdict_exit_code(result->outcome.verdict));
            facts_.host = result->report["host"].is_string()
                              ? result->report["host"].get<std::string>()
                              : std::string("unknown");
            if (!no_report_) {
                auto where = report_dir();
                written = where.ok() ? write_report(*where, result->report, files) : where.status();
                if (where.ok()) dir = *where;
            }
        }
        if (fleet_) {
            // A report that could not be written here (a shared path, a full disk) still reached
            // rank 0: the node is judged from it, with the failure as a warning.
            if (!result.ok()) print_error(name(), result.status());
            if (!written.ok()) print_error(name(), written);
            const double own =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            return run_fleet(
                *comm,
                fleet::encode_node_payload(files, result.status().message(), written.message()),
                own);
        }
        if (!result.ok()) return print_error(name(), result.status());
        if (!written.ok()) return print_error(name(), written);
        const int code = validate::verdict_exit_code(result->outcome.verdict);
        const std::string text = json_
                                     ? files["report.json"]
                                     : validate::render_report_text(result->report, dir, verbose_);
        return emit_result(name(), output_, text, code);
    }

private:
    // Rank 0 gathers every rank's report, judges the fleet and writes its report; every rank then
    // ends with the fleet's exit code, so that mpirun's and srun's is the fleet's verdict.
    int run_fleet(train::Communicator& comm, const std::string& payload, double own_seconds) {
        const double wait = fleet_wait_ >= 0 ? fleet_wait_ : 2 * own_seconds + 120;
        auto payloads = comm.gather(payload, 0,
                                    std::chrono::steady_clock::now() +
                                        std::chrono::milliseconds(static_cast<long>(wait * 1000)));
        if (!payloads) {
            print_error(name(), payloads.status());
            comm.abort(2);
        }
        int code = 2;
        if (comm.rank() != 0) {
            if (auto s = comm.broadcast(&code, sizeof code, 0); !s.ok()) print_error(name(), s);
            return code;
        }
        code = judge_gathered(*payloads, wait);
        const bool all_reported = std::all_of(payloads->begin(), payloads->end(),
                                              [](const auto& p) { return p.has_value(); });
        if (!all_reported) comm.abort(code);  // the missing ranks would wait in a collective
        if (auto s = comm.broadcast(&code, sizeof code, 0); !s.ok()) print_error(name(), s);
        return code;
    }

    int judge_gathered(const std::vector<std::optional<std::string>>& payloads, double wait) {
        auto judged = fleet::judge_payloads(payloads, wait);
        if (!judged) return print_error(name(), judged.status());
        const int code = judged->result.exit_code();
        if (facts_.host.empty()) facts_.host = "unknown";
        auto where = fleet_report_
                         ? validate::expand_report_path(*fleet_report_, facts_, "--fleet-report")
                         : Result<std::string>(validate::fresh_dir_name("trainrig-fleet-report"));
        if (!where) return print_error(name(), where.status());
        const std::string dir = *where;
        if (auto s = validate::write_report_dir(
                dir, fleet::fleet_report_files(judged->result, judged->gathered, code));
            !s.ok())
            return print_error(name(), s);
        const std::string text =
            json_ ? json_result(fleet::fleet_json(judged->result), "validate --fleet", code)
                  : fleet::render_fleet_text(judged->result, verbose_) +
                        fmt::format("Fleet report: {}\n", dir);
        return emit_result(name(), output_, text, code);
    }

    // --report with its placeholders expanded, or the default name.
    Result<std::string> report_dir() const {
        if (report_) return validate::expand_report_path(*report_, facts_, "--report");
        return validate::fresh_dir_name("trainrig-report-" + facts_.host);
    }

    static Status write_report(const std::string& dir, const nlohmann::json& report,
                               std::map<std::string, std::string> files) {
        files["report.md"] = validate::render_report_markdown(report);
        files["report.html"] = validate::render_report_html(report);
        return validate::write_report_dir(dir, files);
    }

private:
    validate::ValidateOptions options_;
    validate::PathFacts facts_;
    std::string level_ = "quick";
    std::optional<std::string> report_;
    bool no_report_ = false;
    bool fleet_ = false;
    std::optional<std::string> fleet_report_;
    double fleet_wait_ = -1;
    OutputOptions output_;
    bool json_ = false;
    bool verbose_ = false;
};

}  // namespace

std::unique_ptr<Command> make_validate_command() { return std::make_unique<ValidateCommand>(); }

}  // namespace trainrig
