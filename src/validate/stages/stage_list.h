// validate's stages (stages/stage.h), in the order they run and the report lists them. A new
// stage: a file of its own in this folder, its factory below, and one line in make_stages().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "validate/stages/stage.h"

namespace trainrig::validate {

// A fresh set for one run (a stage may keep state between starting and concluding).
std::vector<std::unique_ptr<Stage>> make_stages();

// Each defined in its own <id>_stage.cpp.
std::unique_ptr<Stage> doctor_stage();
std::unique_ptr<Stage> topology_stage();
std::unique_ptr<Stage> host_bench_stage();
std::unique_ptr<Stage> gpu_bench_stage();
std::unique_ptr<Stage> data_path_stage();
std::unique_ptr<Stage> training_stage();
std::unique_ptr<Stage> batch_probe_stage();
std::unique_ptr<Stage> watch_stage();

}  // namespace trainrig::validate
