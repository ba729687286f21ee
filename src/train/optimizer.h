// AdamW (Loshchilov & Hutter 2019) with decoupled weight decay on the 2-D tensors only (as
// GPT-2 reproductions do: biases and LayerNorm gains are not decayed), gradient clipping by
// global L2 norm, and the warm-up + cosine learning-rate schedule. Host-side, fp32 state.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "train/param_layout.h"

namespace trainrig::train {

struct OptimizerConfig {
    double lr = 6e-4;
    int64_t warmup = 0;          // steps of linear warm-up
    double final_lr_frac = 0.1;  // the cosine ends at lr × this
    double beta1 = 0.9;
    double beta2 = 0.95;
    double eps = 1e-8;
    double weight_decay = 0.1;
    double grad_clip = 1.0;  // max global norm; 0 = no clipping
};

// One sentence naming the first hyper-parameter outside its range.
Status validate(const OptimizerConfig& c);

// Learning rate of 0-based step `step` of `total`: linear warm-up to lr over `warmup` steps,
// then half a cosine down to lr × final_lr_frac at the last step.
double learning_rate(const OptimizerConfig& c, int64_t step, int64_t total);

// Global L2 norm of a gradient, summed in fixed-size chunks in a fixed order (in double), so
// the value does not depend on the thread count.
double global_norm(std::span<const float> grads);

// The scalars of one AdamW update, in the float arithmetic every backend applies per element:
//   g = grad·clip; m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²
//   p -= lr · (m/c1 / (sqrt(v/c2) + eps) + wd · p)
// clip scales the gradients down to grad_clip when `norm` exceeds it; t is 1-based.
struct AdamWStep {
    float clip = 1, lr = 0, beta1 = 0, beta2 = 0, c1 = 1, c2 = 1, eps = 0;
    float decay = 0;  // for matrices; 0 for biases and norms
};
AdamWStep adamw_step(const OptimizerConfig& c, double lr, int64_t t, double norm);

class AdamW {
public:
    AdamW(const ParamLayout& layout, OptimizerConfig config);

    // Clips grads in place to config.grad_clip when `norm` (their global norm, global_norm())
    // exceeds it, then updates params. `t` is the 1-based update count (bias correction).
    void step(std::span<float> params, std::span<float> grads, double lr, int64_t t, double norm);

    std::vector<float>& m() { return m_; }
    std::vector<float>& v() { return v_; }
    const std::vector<float>& m() const { return m_; }
    const std::vector<float>& v() const { return v_; }
    const OptimizerConfig& config() const { return config_; }

private:
    std::vector<TensorSlot> slots_;
    OptimizerConfig config_;
    std::vector<float> m_, v_;
};

}  // namespace trainrig::train
