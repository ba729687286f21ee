#include "train/device_run.h"

#include <fmt/format.h>

#include "core/emulated_gpu.h"
#include "measure/expectations.h"
#include "plan/hardware.h"

namespace trainrig::train {

Result<DeviceRun> prepare_device_run(TrainOptions& o, Communicator& host, bool alone) {
    auto opened = open_device_world(host, alone);
    if (!opened.ok()) return opened.status();
    DeviceRun run;
    run.world = std::move(opened).value();
    if (needs_device_communicator(*run.world)) run.comm = make_device_communicator(run.world);
    std::shared_ptr<DeviceWorld> world = run.world;
    o.make_backend = [world](const ModelConfig& c, const OptimizerConfig& opt, int batch, int seq) {
        return make_device_backend(world, c, opt, batch, seq);
    };
    // The backend computes in bf16 on the tensor cores: MFU is against the dense bf16 peak.
    const DeviceInfo& d = device_info(*run.world);
    o.device = d.name;
    const plan::HardwareCatalog catalog = plan::builtin_hardware();
    // An emulated device claims a catalog model for its properties, not for its speed: no MFU.
    const plan::GpuSpec* g =
        is_emulated_gpu(d.name) ? nullptr : bench::catalog_gpu(d.name, catalog);
    if (g != nullptr) {
        o.peak_flops = plan::peak_flops(*g, plan::Precision::kBf16);
        o.peak_source = fmt::format("{} dense bf16, {}", g->name, g->source);
    }
    return run;
}

}  // namespace trainrig::train
