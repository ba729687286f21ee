// `trainrig launch -- CMD ARGS...`: runs a training command with the NCCL environment `tune`
// wrote, CUDA devices in PCI order, and each rank bound to the CPUs and memory of its GPU's
// NUMA node. With --torchrun/--mpirun/--srun it starts one rank per GPU through that launcher,
// each rank running `trainrig launch` again to bind itself. The command replaces this process
// (exec), so signals reach it directly and its exit status is the job's. No shell is involved.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <climits>
#include <cstdlib>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "core/env_file.h"
#include "core/root_fs.h"
#include "core/text.h"
#include "core/user_file.h"
#include "launch/binding.h"
#include "probe/collect.h"
#include "tune/profile.h"

extern char** environ;

namespace trainrig {

namespace {

using namespace trainrig::launch;

std::map<std::string, std::string> process_env() {
    std::map<std::string, std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string_view kv(*e);
        auto eq = kv.find('=');
        if (eq != std::string_view::npos)
            env[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
    }
    return env;
}

std::string self_path() {
    char buf[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("trainrig");
}

class LaunchCommand : public Command {
public:
    const char* name() const override { return "launch"; }
    const char* summary() const override {
        return "Run a training command with the tuned NCCL environment, each rank bound to its "
               "GPU's NUMA node";
    }
    void declare(CLI::App& app) override {
        declare_gpu_selection(app, gpus_);
        app.add_option("--numa", numa_, "auto (bind each rank to its GPU's node) or none")
            ->check(CLI::IsMember({"auto", "none"}))
            ->default_str("auto");
        app.add_option("--env-file", env_file_,
                       "NCCL environment to apply (default: /etc/trainrig/nccl.env when it "
                       "exists)")
            ->check(existing_input())
            ->type_name("FILE");
        app.add_flag("--no-env-file", no_env_file_, "Apply no environment file");
        auto* torchrun = app.add_flag("--torchrun", torchrun_,
                                      "One rank per GPU through torchrun "
                                      "--no-python");
        auto* mpirun = app.add_flag("--mpirun", mpirun_, "One rank per GPU through mpirun");
        auto* srun = app.add_flag("--srun", srun_, "One rank per GPU through srun");
        torchrun->excludes(mpirun)->excludes(srun);
        mpirun->excludes(srun);
        app.add_flag("--print", print_, "Show the binding, environment and command; run nothing");
        app.add_option("--root", root_,
                       "Read the machine under DIR instead of / (with --print: nothing runs "
                       "inside a machine tree)")
            ->check(existing_input())
            ->type_name("DIR");
        declare_output_options(app, output_);
        declare_json_option(app, json_, "trainrig.launch; with --print");
        declare_verbose_option(app, verbose_,
                               "each GPU's PCI address, NUMA node and CPUs the binding was "
                               "chosen from; without --print, all of it on stderr before running");
        declare_help_footer(
            app,
            {"trainrig launch --torchrun -- python train.py   # one rank per GPU, NUMA-bound",
             "trainrig launch --mpirun --gpus 4,5,6,7 -- ./train",
             "trainrig launch --print --json -- python train.py"},
            "The environment is /etc/trainrig/nccl.env (written by `trainrig tune apply`) unless "
            "--env-file or --no-env-file says otherwise; docs/tuning.md.");
        app.add_option("command", command_, "The command and its arguments, after --")
            ->expected(-1);
    }

    int run(const GlobalOptions&) override {
        if (command_.empty())
            return print_error(name(), {Errc::kInvalidInput,
                                        "no command: give it after --, e.g. `trainrig launch -- "
                                        "python train.py`"});
        if (root_ != "/" && !print_)
            return print_error(name(), {Errc::kInvalidInput,
                                        "--root reads a machine tree, where nothing can run; add "
                                        "--print"});
        if ((json_ || output_.output) && !print_)
            return print_error(name(), {Errc::kInvalidInput,
                                        "--json and -o write what --print shows; add --print"});
        CollectOptions collect;
        collect.root = root_;
        collect.stack = false;
        collect.torch = false;
        auto snap = collect_snapshot(collect);
        if (!snap) return print_error(name(), snap.status());
        const auto places = gpu_places(*snap);
        const auto env = process_env();

        std::vector<int> selected = gpus_;
        if (selected.empty())
            if (auto it = env.find("CUDA_VISIBLE_DEVICES"); it != env.end())
                for (auto part : split(it->second, ','))
                    if (auto v = parse_i64(trim(part))) selected.push_back(static_cast<int>(*v));

        std::vector<EnvOp> ops;
        std::string env_source;
        if (!no_env_file_) {
            const RootFs rootfs(root_);
            std::optional<std::string> text;
            if (env_file_) {
                auto t = read_user_file(*env_file_, "--env-file", 1u << 20);
                if (!t) return print_error(name(), t.status());
                text = *t;
                env_source = *env_file_;
            } else if (auto t = rootfs.read(tune::kNcclFile, 1u << 20); t.ok()) {
                text = *t;
                env_source = tune::kNcclFile;
            }
            if (text) {
                auto parsed = parse_env_file(*text, env_source);
                if (!parsed) return print_error(name(), parsed.status());
                ops = *parsed;
            }
        }
        if (torchrun_ || mpirun_ || srun_) return run_launcher(places, selected);

        auto rank = rank_from_env(env);
        if (!rank) return print_error(name(), rank.status());
        auto binding = choose_binding(places, selected,
                                      numa_ == "none" ? NumaMode::kNone : NumaMode::kAuto, *rank);
        if (!binding) return print_error(name(), binding.status());
        if (!places.empty()) {
            ops.push_back({"CUDA_DEVICE_ORDER", false, "PCI_BUS_ID"});
            std::vector<std::string> ids;
            for (int g : binding->gpus) ids.push_back(std::to_string(g));
            ops.push_back({"CUDA_VISIBLE_DEVICES", false, join(ids, ",")});
        }
        if (print_) {
            if (json_) {
                nlohmann::json set = nlohmann::json::object(), unset = nlohmann::json::array();
                for (const auto& op : ops)
                    op.unset ? unset.push_back(op.name) : void(set[op.name] = op.value);
                return emit(json_result(
                    {{"schema", "trainrig.launch"},
                     {"schema_version", 1},
                     {"binding", binding->why},
                     {"gpus", binding->gpus},
                     {"environment_file",
                      env_source.empty() ? nlohmann::json() : nlohmann::json(env_source)},
                     {"set", set},
                     {"unset", unset},
                     {"argv", command_}},
                    "launch --print", 0));
            }
            return emit(describe(binding->why, env_source, ops, places));
        }
        if (verbose_) std::fputs(describe(binding->why, env_source, ops, places).c_str(), stderr);
        for (const auto& op : ops)
            op.unset ? ::unsetenv(op.name.c_str()) : ::setenv(op.name.c_str(), op.value.c_str(), 1);
        if (auto s = apply_binding(*binding); !s.ok()) return print_error(name(), s);
        std::fprintf(stderr, "trainrig launch: %s\n", binding->why.c_str());
        return exec(command_);
    }

private:
    // `places` are listed with -v: the GPUs the binding was chosen from.
    std::string describe(const std::string& why, const std::string& env_source,
                         const std::vector<EnvOp>& ops, const std::vector<GpuPlace>& places) const {
        std::string out = "binding: " + why + "\n";
        if (verbose_)
            for (const auto& p : places)
                out += fmt::format("  GPU {} at {}: NUMA node {}, CPUs {}\n", p.index, p.address,
                                   p.node >= 0 ? std::to_string(p.node) : "unknown",
                                   p.cpus.empty() ? "unknown" : p.cpus);
        if (!env_source.empty()) out += "environment from " + env_source + ":\n";
        for (const auto& op : ops)
            out += op.unset ? "  unset " + op.name + "\n"
                            : "  " + op.name + "=" + shell_quote(op.value) + "\n";
        return out + "exec: " + shell_command(command_) + "\n";
    }

    int emit(const std::string& text) { return emit_result(name(), output_, text); }

    int run_launcher(const std::vector<GpuPlace>& places, std::vector<int> selected) {
        if (selected.empty())
            for (const auto& p : places) selected.push_back(p.index);
        if (selected.empty())
            return print_error(name(), {Errc::kInvalidInput,
                                        "no GPUs to start ranks for: this machine shows none "
                                        "(--gpus names them)"});
        const std::string n = std::to_string(selected.size());
        std::vector<std::string> argv;
        if (torchrun_) argv = {"torchrun", "--nproc-per-node", n, "--no-python"};
        if (mpirun_) {
            argv = {"mpirun", "-np", n};
            if (::geteuid() == 0) argv.push_back("--allow-run-as-root");  // Open MPI refuses root
        }
        if (srun_) argv = {"srun", "--ntasks-per-node", n};
        std::vector<std::string> ids;
        for (int g : selected) ids.push_back(std::to_string(g));
        argv.insert(argv.end(), {self_path(), "launch", "--gpus", join(ids, ","), "--numa", numa_});
        if (no_env_file_) argv.push_back("--no-env-file");
        if (env_file_) argv.insert(argv.end(), {"--env-file", *env_file_});
        argv.push_back("--");
        argv.insert(argv.end(), command_.begin(), command_.end());
        std::string out = fmt::format("ranks: {} (one per GPU {}), each binding itself\nexec:", n,
                                      join(ids, ","));
        out += " " + shell_command(argv) + "\n";
        if (print_ && json_)
            return emit(json_result({{"schema", "trainrig.launch"},
                                     {"schema_version", 1},
                                     {"ranks", selected.size()},
                                     {"gpus", selected},
                                     {"argv", argv}},
                                    "launch --print", 0));
        if (print_) return emit(out);
        if (verbose_) std::fputs(out.c_str(), stderr);
        return exec(argv);
    }

    int exec(const std::vector<std::string>& argv) {
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        std::fflush(stdout);
        ::execvp(args[0], args.data());
        return print_error(name(), errno_status(errno, "run", argv.front()));
    }

    std::vector<int> gpus_;
    std::string numa_ = "auto";
    std::optional<std::string> env_file_;
    bool no_env_file_ = false, torchrun_ = false, mpirun_ = false, srun_ = false, print_ = false;
    std::string root_ = "/";
    std::vector<std::string> command_;
    OutputOptions output_;
    bool json_ = false, verbose_ = false;
};

}  // namespace

std::unique_ptr<Command> make_launch_command() { return std::make_unique<LaunchCommand>(); }

}  // namespace trainrig
