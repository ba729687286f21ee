// The one explicit list of trainrig's commands. To add a command: implement Command in
// src/commands/<name>_command.cpp, add its factory below, and document it in the README.
#include "commands/commands.h"

#include "cli/command.h"

namespace trainrig {

std::vector<std::unique_ptr<Command>> make_commands() {
    std::vector<std::unique_ptr<Command>> commands;
    commands.push_back(make_validate_command());
    commands.push_back(make_doctor_command());
    commands.push_back(make_collect_command());
    commands.push_back(make_topo_command());
    commands.push_back(make_plan_command());
    commands.push_back(make_stack_command());
    commands.push_back(make_tune_command());
    commands.push_back(make_launch_command());
    commands.push_back(make_data_command());
    commands.push_back(make_bench_command());
    commands.push_back(make_watch_command());
    commands.push_back(make_train_command());
    commands.push_back(make_report_command());
    commands.push_back(make_fleet_command());
    commands.push_back(make_slurm_command());
    commands.push_back(make_npd_command());
    commands.push_back(make_maintenance_command());
    return commands;
}

}  // namespace trainrig
