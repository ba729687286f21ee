// Factories of the subcommands, for the command list in commands/commands.cpp.
#pragma once

#include <memory>

#include "cli/command.h"

namespace trainrig {

std::unique_ptr<Command> make_validate_command();
std::unique_ptr<Command> make_report_command();
std::unique_ptr<Command> make_fleet_command();
std::unique_ptr<Command> make_slurm_command();
std::unique_ptr<Command> make_npd_command();
std::unique_ptr<Command> make_maintenance_command();
std::unique_ptr<Command> make_stack_command();
std::unique_ptr<Command> make_doctor_command();
std::unique_ptr<Command> make_collect_command();
std::unique_ptr<Command> make_topo_command();
std::unique_ptr<Command> make_plan_command();
std::unique_ptr<Command> make_tune_command();
std::unique_ptr<Command> make_launch_command();
std::unique_ptr<Command> make_data_command();
std::unique_ptr<Command> make_bench_command();
std::unique_ptr<Command> make_watch_command();
std::unique_ptr<Command> make_train_command();

}  // namespace trainrig
