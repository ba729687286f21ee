#include "validate/stages/stage_list.h"

namespace trainrig::validate {

std::vector<std::unique_ptr<Stage>> make_stages() {
    std::vector<std::unique_ptr<Stage>> stages;
    stages.push_back(doctor_stage());
    stages.push_back(topology_stage());
    stages.push_back(host_bench_stage());
    stages.push_back(gpu_bench_stage());
    stages.push_back(data_path_stage());
    stages.push_back(training_stage());
    stages.push_back(batch_probe_stage());
    stages.push_back(watch_stage());
    return stages;
}

}  // namespace trainrig::validate
