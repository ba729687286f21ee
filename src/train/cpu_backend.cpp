// The CPU backend: GptCpu<float> and AdamW, gradients all-reduced through the communicator.
#include <algorithm>
#include <cstring>

#include "core/fnv1a.h"
#include "train/backend.h"
#include "train/cpu/gpt_cpu.h"

namespace trainrig::train {
namespace {

class CpuBackend final : public Backend {
public:
    CpuBackend(const ModelConfig& config, const OptimizerConfig& opt)
        : model_(config), adam_(model_.layout(), opt) {}

    std::string name() const override { return "cpu"; }
    const ModelConfig& config() const override { return model_.config(); }
    Status init_weights(uint64_t seed) override {
        model_.init_weights(seed);
        return ok_status();
    }
    Status zero_grads() override {
        model_.zero_grads();
        return ok_status();
    }
    Result<double> forward(const uint32_t* inputs, const uint32_t* targets, int B,
                           int Tn) override {
        const double loss = model_.forward(inputs, targets, B, Tn);
        peak_ = std::max(peak_, state_bytes() + model_.activation_bytes());
        return loss;
    }
    Status backward(float loss_scale, bool) override {
        model_.backward(loss_scale);
        return ok_status();
    }
    Status all_reduce_grads(Communicator& comm) override {
        return comm.all_reduce_sum(model_.grads().data(), model_.grads().size());
    }
    Result<double> grad_norm() override { return global_norm(model_.grads()); }
    Status update(double lr, int64_t t, double norm) override {
        adam_.step(model_.params(), model_.grads(), lr, t, norm);
        return ok_status();
    }
    Status save_state(CheckpointState& s) override {
        s.params = model_.params();
        s.adam_m = adam_.m();
        s.adam_v = adam_.v();
        return ok_status();
    }
    Status load_state(const CheckpointState& s) override {
        const size_t n = model_.params().size();
        if (s.params.size() != n || s.adam_m.size() != n || s.adam_v.size() != n)
            return Status(Errc::kInvalidInput,
                          "the checkpoint does not hold this model's parameters");
        std::copy(s.params.begin(), s.params.end(), model_.params().begin());
        std::copy(s.adam_m.begin(), s.adam_m.end(), adam_.m().begin());
        std::copy(s.adam_v.begin(), s.adam_v.end(), adam_.v().begin());
        return ok_status();
    }
    Status copy_grads(std::vector<float>& out) override {
        out = model_.grads();
        return ok_status();
    }
    Status copy_logits(std::vector<float>& out) override {
        out = model_.logits();
        return ok_status();
    }
    size_t peak_memory_bytes() const override { return peak_; }
    Result<uint64_t> params_digest() override {
        return fnv1a64(model_.params().data(), model_.params().size() * sizeof(float));
    }

private:
    size_t state_bytes() const { return model_.params().size() * sizeof(float) * 4; }
    cpu::GptCpu<float> model_;
    AdamW adam_;
    size_t peak_ = 0;
};

}  // namespace

size_t cpu_training_bytes(const ModelConfig& c, int B, int Tn) {
    return ParamLayout(c).total() * sizeof(float) * 4 +
           cpu::GptCpu<float>::activation_bytes_for(c, B, Tn);
}

std::unique_ptr<Backend> make_cpu_backend(const ModelConfig& config, const OptimizerConfig& opt) {
    return std::make_unique<CpuBackend>(config, opt);
}

}  // namespace trainrig::train
