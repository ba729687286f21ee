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

#include "cli/shared_options.h"
#include "commands/commands.h"
#include "commands/print_error.h"
#include "core/root_fs.h"
#include "core/text.h"
#include "core/user_file.h"
#include "launch/binding.h"
#include "core/env_file.h"
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
        app.add_option("--gpus", gpus_,
                       "GPUs the job uses, CUDA indices in PCI order (default: "
                       "all, or CUDA_VISIBLE_DEVICES)")
            ->delimiter(',')
            ->type_name("LIST");
        app.add_option("--numa", numa_, "auto (bind each rank to its GPU's node) or none")
            ->check(CLI::IsMember({"auto", "none"}))
            ->default_str("auto");
        app.add_option("--env-file", env_file_,
                       "NCCL environment to apply (default: /etc/trainrig/nccl.env when it "
                       "exists)")
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
        app.add_option("--root", root_, "Read the topology from a machine tree (with --print)")
            ->type_name("DIR");
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
            std::string out = "binding: " + binding->why + "\n";
            if (!env_source.empty()) out += "environment from " + env_source + ":\n";
            for (const auto& op : ops)
                out += op.unset ? "  unset " + op.name + "\n"
                                : "  " + op.name + "=" + shell_quote(op.value) + "\n";
            out += "exec:";
            for (const auto& w : command_) out += " " + shell_quote(w);
            std::fputs((out + "\n").c_str(), stdout);
            return 0;
        }
        for (const auto& op : ops)
            op.unset ? ::unsetenv(op.name.c_str()) : ::setenv(op.name.c_str(), op.value.c_str(), 1);
        if (auto s = apply_binding(*binding); !s.ok()) return print_error(name(), s);
        std::fprintf(stderr, "trainrig launch: %s\n", binding->why.c_str());
        return exec(command_);
    }

private:
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
        if (print_) {
            std::string out = fmt::format(
                "ranks: {} (one per GPU {}), each binding itself\nexec:", n, join(ids, ","));
            for (const auto& w : argv) out += " " + shell_quote(w);
            std::fputs((out + "\n").c_str(), stdout);
            return 0;
        }
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
};

}  // namespace

std::unique_ptr<Command> make_launch_command() { return std::make_unique<LaunchCommand>(); }

}  // namespace trainrig
