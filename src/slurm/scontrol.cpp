#include "slurm/scontrol.h"

#include <fmt/format.h>

#include "core/child_process.h"
#include "core/text.h"

namespace trainrig::slurm {

namespace {

Result<CommandOutput> run_scontrol(const Scontrol& s, const std::vector<std::string>& argv) {
    auto out = run_command(argv, s.deadline);
    if (!out) {
        if (out.status().code() == Errc::kNotFound)
            return Status(Errc::kNotFound, fmt::format("{} was not found", s.program),
                          "install slurm-client, or name it with --scontrol");
        return out.status();
    }
    if (out->exit_code != 0) {
        // scontrol's last line says it best ("fatal: Could not establish a configuration
        // source."); the lines before it are the attempts that led there.
        std::string_view err = trim(out->err.empty() ? out->out : out->err);
        err = err.substr(err.rfind('\n') == std::string_view::npos ? 0 : err.rfind('\n') + 1);
        while (!err.empty() && err.back() == '.') err.remove_suffix(1);
        return Status(Errc::kIo, fmt::format("`{}` failed: {}", join(argv, " "),
                                             err.empty() ? "no message" : std::string(err)));
    }
    return out;
}

}  // namespace

Result<std::vector<SlurmNode>> show_nodes(const Scontrol& s) {
    auto out = run_scontrol(s, {s.program, "show", "node", "-o"});
    if (!out) return out.status();
    return parse_nodes(out->out);
}

std::vector<std::string> drain_command(const Scontrol& s, const std::string& node,
                                       const std::string& reason) {
    return {s.program, "update", "nodename=" + node, "state=drain", "reason=" + reason};
}

std::vector<std::string> resume_command(const Scontrol& s, const std::string& node) {
    return {s.program, "update", "nodename=" + node, "state=resume"};
}

Status run_update(const Scontrol& s, const std::vector<std::string>& argv) {
    auto out = run_scontrol(s, argv);
    return out ? ok_status() : out.status();
}

}  // namespace trainrig::slurm
