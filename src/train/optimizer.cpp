#include "train/optimizer.h"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

namespace trainrig::train {

Status validate(const OptimizerConfig& c) {
    auto bad = [](std::string s) { return Status(Errc::kInvalidInput, std::move(s)); };
    if (!(c.lr > 0) || !std::isfinite(c.lr))
        return bad(fmt::format("--lr must be a positive number, not {}", c.lr));
    if (c.warmup < 0) return bad(fmt::format("--warmup must not be negative, not {}", c.warmup));
    if (!(c.final_lr_frac >= 0 && c.final_lr_frac <= 1))
        return bad(fmt::format("--final-lr-frac must be in [0, 1], not {}", c.final_lr_frac));
    if (!(c.beta1 >= 0 && c.beta1 < 1))
        return bad(fmt::format("beta1 must be in [0, 1), not {}", c.beta1));
    if (!(c.beta2 >= 0 && c.beta2 < 1))
        return bad(fmt::format("beta2 must be in [0, 1), not {}", c.beta2));
    if (!(c.eps > 0)) return bad(fmt::format("eps must be positive, not {}", c.eps));
    if (!(c.weight_decay >= 0))
        return bad(fmt::format("--weight-decay must not be negative, not {}", c.weight_decay));
    if (!(c.grad_clip >= 0))
        return bad(fmt::format("--grad-clip must not be negative, not {}", c.grad_clip));
    return ok_status();
}

double learning_rate(const OptimizerConfig& c, int64_t step, int64_t total) {
    if (step < c.warmup)
        return c.lr * static_cast<double>(step + 1) / static_cast<double>(c.warmup);
    const int64_t decay_steps = total - c.warmup - 1;
    if (decay_steps <= 0) return c.lr;
    const double progress =
        std::min(1.0, static_cast<double>(step - c.warmup) / static_cast<double>(decay_steps));
    const double floor = c.lr * c.final_lr_frac;
    return floor + 0.5 * (1.0 + std::cos(std::numbers::pi * progress)) * (c.lr - floor);
}

double global_norm(std::span<const float> grads) {
    constexpr size_t kChunk = 1 << 16;
    const long chunks = static_cast<long>((grads.size() + kChunk - 1) / kChunk);
    std::vector<double> partial(static_cast<size_t>(chunks));
#pragma omp parallel for schedule(static)
    for (long k = 0; k < chunks; ++k) {
        const size_t begin = static_cast<size_t>(k) * kChunk;
        const size_t end = std::min(grads.size(), begin + kChunk);
        double s = 0;
        for (size_t i = begin; i < end; ++i) s += static_cast<double>(grads[i]) * grads[i];
        partial[static_cast<size_t>(k)] = s;
    }
    double total = 0;
    for (double s : partial) total += s;
    return std::sqrt(total);
}

AdamW::AdamW(const ParamLayout& layout, OptimizerConfig config)
    : slots_(layout.slots().begin(), layout.slots().end()),
      config_(config),
      m_(layout.total()),
      v_(layout.total()) {}

AdamWStep adamw_step(const OptimizerConfig& c, double lr, int64_t t, double norm) {
    AdamWStep a;
    if (c.grad_clip > 0 && norm > c.grad_clip && std::isfinite(norm))
        a.clip = static_cast<float>(c.grad_clip / norm);
    a.lr = static_cast<float>(lr);
    a.beta1 = static_cast<float>(c.beta1);
    a.beta2 = static_cast<float>(c.beta2);
    a.c1 = static_cast<float>(1.0 - std::pow(c.beta1, static_cast<double>(t)));
    a.c2 = static_cast<float>(1.0 - std::pow(c.beta2, static_cast<double>(t)));
    a.eps = static_cast<float>(c.eps);
    a.decay = static_cast<float>(c.weight_decay);
    return a;
}

void AdamW::step(std::span<float> params, std::span<float> grads, double lr, int64_t t,
                 double norm) {
    const AdamWStep a = adamw_step(config_, lr, t, norm);
    const float clip = a.clip, b1 = a.beta1, b2 = a.beta2, c1 = a.c1, c2 = a.c2, flr = a.lr,
                eps = a.eps;
    for (const TensorSlot& s : slots_) {
        const float wd = s.matrix ? a.decay : 0.0f;
        float* p = params.data() + s.offset;
        float* g = grads.data() + s.offset;
        float* m = m_.data() + s.offset;
        float* v = v_.data() + s.offset;
#pragma omp parallel for schedule(static)
        for (long i = 0; i < static_cast<long>(s.size); ++i) {
            const float gi = g[i] * clip;
            g[i] = gi;
            m[i] = b1 * m[i] + (1.0f - b1) * gi;
            v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
            const float mhat = m[i] / c1, vhat = v[i] / c2;
            p[i] -= flr * (mhat / (std::sqrt(vhat) + eps) + wd * p[i]);
        }
    }
}

}  // namespace trainrig::train
