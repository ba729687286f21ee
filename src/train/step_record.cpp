#include "train/step_record.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "plan/flops.h"
#include "train/param_layout.h"

namespace trainrig::train {

double train_flops_per_token(const ModelConfig& c, int seq) {
    return plan::palm_flops_per_token(static_cast<double>(ParamLayout(c).matmul_params()), c.layers,
                                      c.heads, c.head_dim(), seq);
}

std::string step_json(const StepRecord& r) {
    nlohmann::ordered_json j = {
        {"step", r.step},
        {"loss", r.loss},
        {"lr", r.lr},
        {"grad_norm", r.grad_norm},
        {"tokens", r.tokens},
        {"tokens_per_s", r.tokens_per_s},
        {"flops_per_s", r.flops_per_s},
        {"mfu", r.mfu ? nlohmann::ordered_json(*r.mfu) : nlohmann::ordered_json(nullptr)},
        {"data_wait_s", r.time.data_wait},
        {"forward_s", r.time.forward},
        {"backward_s", r.time.backward},
        {"comm_s", r.time.comm},
        {"optimizer_s", r.time.optimizer},
        {"checkpoint_s", r.time.checkpoint},
        {"val_s", r.time.eval},
        {"step_s", r.time.total},
        {"memory_bytes", r.memory_bytes},
    };
    if (r.val_loss) j["val_loss"] = *r.val_loss;
    if (!r.checkpoint.empty()) j["checkpoint"] = r.checkpoint;
    // A diverged loss is written as null (JSON has no NaN), the run stops after it.
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string status_line(const StepRecord& r) {
    std::string line = fmt::format(
        "step {}/{}  loss {:.4f}  lr {:.2e}  {:.0f} tok/s  {:.0f} ms (data {:.0f}, fwd {:.0f}, "
        "bwd {:.0f}, comm {:.0f}, opt {:.0f})",
        r.step, r.steps, r.loss, r.lr, r.tokens_per_s, r.time.total * 1e3, r.time.data_wait * 1e3,
        r.time.forward * 1e3, r.time.backward * 1e3, r.time.comm * 1e3, r.time.optimizer * 1e3);
    if (r.mfu) line += fmt::format("  MFU {:.1f}%", *r.mfu * 100);
    if (r.val_loss) line += fmt::format("  val {:.4f}", *r.val_loss);
    return line;
}

}  // namespace trainrig::train
