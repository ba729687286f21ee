// `trainrig stack`: the matched driver / CUDA / cuDNN / NCCL / PyTorch set for a GPU, each part
// with why and its source, the install steps, and a lock file for `doctor --lock`.
// `trainrig stack check`: this machine (or a snapshot) against that set.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <ctime>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "core/atomic_file.h"
#include "core/terminal.h"
#include "core/user_file.h"
#include "core/utc_time.h"
#include "doctor/render_stack.h"
#include "doctor/report.h"
#include "doctor/stack_check.h"
#include "probe/collect.h"
#include "stack/install_steps.h"
#include "stack/recommend.h"
#include "stack/recommended_lock.h"

namespace trainrig {

namespace {

class StackCommand : public Command {
public:
    const char* name() const override { return "stack"; }
    const char* summary() const override {
        return "The matched driver, CUDA, cuDNN, NCCL and PyTorch for a GPU, with install steps; "
               "`stack check` compares this machine with it";
    }

    void declare(CLI::App& app) override {
        check_ = app.add_subcommand("check",
                                    "Compare this machine (or a snapshot) with the recommended "
                                    "stack: each difference with its consequence");
        for (CLI::App* a : {&app, check_}) {
            a->add_option("--gpu", gpu_,
                          "The GPU: a catalog id or name (h100-sxm, \"H100 SXM\", b200), or "
                          "auto: this machine's")
                ->type_name("ID|auto")
                ->default_str("auto");
            a->add_option("--cuda", cuda_, "Pin the CUDA version (12.8 or cu128); the rest follows")
                ->type_name("X.Y");
            a->add_option("--torch", torch_, "Pin the PyTorch release (2.8); the rest follows")
                ->type_name("X.Y");
            // --data is a training run's tokens on train: the stack's data has its own name.
            declare_renamed_option(*a, "--data", "--stack-data",
                                   "--data is a training run's tokens on train");
            a->add_option("--stack-data", data_file_,
                          "Judge by this stack data (TOML, the format of src/stack/"
                          "stack_data.toml) instead of the built-in copy")
                ->envname("TRAINRIG_STACK_DATA")
                ->check(existing_input())
                ->type_name("FILE");
            a->add_option("--snapshot", snapshot_,
                          "Read the GPUs (and, for check, the versions) from a snapshot written "
                          "by `trainrig collect` instead of this machine")
                ->check(existing_input())
                ->type_name("FILE");
            declare_root_options(*a, collect_);
            declare_output_options(*a, output_);
        }
        app.add_option("--distro", distro_,
                       "Install steps for debian12, ubuntu2204 or ubuntu2404; auto reads "
                       "/etc/os-release (under --root)")
            ->type_name("ID|auto")
            ->default_str("auto");
        app.add_option("--lock", lock_file_,
                       "Also write the recommendation as a stack lock (trainrig.stack.lock) that "
                       "`trainrig doctor --lock FILE` checks machines against")
            ->type_name("FILE");
        declare_json_option(app, json_, "trainrig.stack");
        declare_json_option(*check_, json_, "trainrig.stack.check");
        declare_verbose_option(app, verbose_,
                               "why each install step, and where the steps come from");
        declare_verbose_option(*check_, verbose_, "the evidence and the remedy under each finding");
        declare_help_footer(
            app,
            {"trainrig stack --gpu h100-sxm                    # the set, why, sources, install",
             "trainrig stack --gpu b200 --cuda 12.8 --distro ubuntu2404",
             "trainrig stack --gpu a100-80g-sxm --torch 2.8 --json",
             "trainrig stack --gpu h200-sxm --lock stack.lock  # later: doctor --lock stack.lock"},
            "Every rule and its source: docs/stack.md.");
        declare_help_footer(
            *check_,
            {"trainrig stack check                     # this machine, its GPUs detected",
             "trainrig stack check -v --torch 2.8      # against a pinned release",
             "trainrig stack check --snapshot node07.json --json"},
            "Exit 0: no failure (warnings allowed); 1: something fails; 2: could not run.");
    }

    int run(const GlobalOptions& global) override {
        const bool check = check_->parsed();
        const char* command = check ? "stack check" : "stack";
        if (snapshot_ && global.typed("--root"))
            return print_error(command, invalid_input("--root applies when reading a machine, "
                                                      "not to --snapshot"));
        if (data_file_) {
            auto text = read_user_file(*data_file_, "--stack-data", 4u << 20);
            if (!text) return print_error(command, text.status());
            auto parsed = stack::parse_stack_data(*text, *data_file_);
            if (!parsed) return print_error(command, parsed.status());
            stack::use_stack_data(std::move(parsed).value());
        }
        const stack::StackData& data = stack::stack_data();
        const bool color = !output_.output && color_wanted(stdout, global.no_color);
        return check ? run_check(data, color) : run_stack(data, color);
    }

private:
    // The machine: a snapshot file, or this machine (or --root tree) read now.
    Result<Snapshot> read_machine(bool with_stack) {
        if (snapshot_) {
            auto text = read_user_file(*snapshot_, "--snapshot");
            if (!text) return text.status();
            return snapshot_from_text(*text, *snapshot_);
        }
        CollectOptions o = collect_;
        o.stack = with_stack;
        o.torch = with_stack;
        return collect_snapshot(o);
    }

    // `command` is the one the no-GPU hint tells the user to run again with --gpu.
    Result<stack::GpuTarget> target(const stack::StackData& data, const Snapshot* machine,
                                    std::string_view command) {
        if (gpu_ != "auto") return stack::named_gpu(data, gpu_);
        return stack::detected_gpus(data, *machine, command);
    }

    stack::Pins pins() const {
        stack::Pins p;
        p.cuda = cuda_;
        p.torch = torch_;
        return p;
    }

    int run_stack(const stack::StackData& data, bool color) {
        std::optional<Snapshot> machine;
        if (gpu_ == "auto") {
            auto snap = read_machine(false);
            if (!snap) return print_error(name(), snap.status());
            machine = std::move(snap).value();
        }
        auto gpu = target(data, machine ? &*machine : nullptr, name());
        if (!gpu) return print_error(name(), gpu.status());

        std::string distro_note;
        const stack::Distro* distro = nullptr;
        if (snapshot_ && distro_ == "auto") {
            distro_note = "a snapshot does not say its distribution (--distro names one)";
        } else {
            auto d = stack::resolve_distro(data, distro_, RootFs(collect_.root), distro_note);
            if (!d) return print_error(name(), d.status());
            distro = *d;
        }
        auto rec = stack::recommend(data, *gpu, pins(), distro);
        if (!rec) return print_error(name(), rec.status());

        stack::StackView view;
        view.data = &data;
        view.rec = &*rec;
        view.distro = distro;
        view.distro_note = distro_note;
        if (distro) view.steps = stack::install_steps(*rec, *distro);

        if (lock_file_) {
            auto lock = stack::recommended_lock(*rec, utc_iso8601(std::time(nullptr)));
            if (!lock)
                return print_error(name(), invalid_input("--lock: nothing to lock, the "
                                                         "recommendation was not judged (a pin "
                                                         "newer than the data)"));
            if (auto s =
                    write_file_atomic(*lock_file_, stack::recommended_lock_text(*lock, *rec, data));
                !s.ok())
                return print_error(name(), s);
        }
        const std::string text = json_ ? json_result(stack::render_stack_json(view), name(), 0)
                                       : stack::render_stack_table(view, verbose_, color);
        return emit_result(name(), output_, text, 0);
    }

    int run_check(const stack::StackData& data, bool color) {
        const char* command = "stack check";
        auto snap = read_machine(true);
        if (!snap) return print_error(command, snap.status());
        auto gpu = target(data, &*snap, command);
        if (!gpu) return print_error(command, gpu.status());
        auto rec = stack::recommend(data, *gpu, pins(), nullptr);
        if (!rec) return print_error(command, rec.status());
        const auto result = stack::check_stack(data, *snap, *rec);

        stack::CheckView view;
        view.data = &data;
        view.rec = &*rec;
        view.check = &result;
        view.hostname =
            snap->host.hostname.is_known() ? snap->host.hostname.value() : "unknown host";
        view.source = snapshot_ ? fmt::format("snapshot {}", *snapshot_)
                                : (snap->root == "/" ? std::string("live machine")
                                                     : "machine tree " + snap->root);
        const int code = doctor_exit_code(result.findings, false);
        const std::string text = json_ ? json_result(stack::render_check_json(view), command, code)
                                       : stack::render_check_table(view, verbose_, color);
        return emit_result(command, output_, text, code);
    }

    CLI::App* check_ = nullptr;
    std::string gpu_ = "auto";
    std::optional<std::string> cuda_, torch_, data_file_, snapshot_, lock_file_;
    std::string distro_ = "auto";
    CollectOptions collect_;
    OutputOptions output_;
    bool json_ = false;
    bool verbose_ = false;
};

}  // namespace

std::unique_ptr<Command> make_stack_command() { return std::make_unique<StackCommand>(); }

}  // namespace trainrig
