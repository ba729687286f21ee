#include "backend_match.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "train/communicator.h"
#include "train/param_layout.h"
#include "train/rng.h"

namespace trainrig::train::testing {
namespace {

constexpr uint64_t kInitSeed = 3, kBatchSeed = 5;
constexpr double kLr = 1e-3;

// ‖a − b‖ / ‖b‖ over equal-length spans, in double; ‖a‖ when b is all zeros.
double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
    double d = 0, r = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        const double x = static_cast<double>(a[i]) - b[i];
        d += x * x;
        r += static_cast<double>(b[i]) * b[i];
    }
    return r > 0 ? std::sqrt(d / r) : std::sqrt(d);
}

double l2(const std::vector<float>& a) {
    double s = 0;
    for (float x : a) s += static_cast<double>(x) * x;
    return std::sqrt(s);
}

double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }

// The K-bias slices of qkv_b ((L, C + 2·KVH·hd) as [q | k | v] per layer): their gradient is
// rounding residue (see MatchLimits::k_bias_grad), and Adam turns residue above its eps into
// full ±lr steps in a direction nothing determines, so their updates are not compared.
bool in_k_bias(const ModelConfig& c, size_t k) {
    const size_t C = static_cast<size_t>(c.channels), kv = static_cast<size_t>(c.kv_width());
    const size_t within = k % static_cast<size_t>(c.qkv_width());
    return within >= C && within < C + kv;
}

// The elements of one tensor in `all`: every one, or only those outside (or inside) the K-bias
// slices for qkv_b.
enum class Part { kAll, kWithoutKBias, kKBias };
std::vector<float> gather(const std::vector<float>& all, const TensorSlot& t, const ModelConfig& c,
                          Part part) {
    std::vector<float> out;
    out.reserve(t.size);
    for (size_t k = 0; k < t.size; ++k) {
        if (part != Part::kAll && (part == Part::kKBias) != in_k_bias(c, k)) continue;
        out.push_back(all[t.offset + k]);
    }
    return out;
}

// qkv_b where the model has it: an empty slot can share its offset with the next tensor.
bool is_qkv_b(const ParamLayout& layout, const TensorSlot& t) {
    return t.size > 0 && &t == &layout[Param::kQkvB];
}

std::vector<float> minus(const std::vector<float>& a, const std::vector<float>& b) {
    std::vector<float> d(a.size());
    for (size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
    return d;
}

Status step_failed(const Status& s, std::string_view backend, std::string_view call, int step) {
    return Status(s.code(),
                  fmt::format("{} backend, {} of step {}: {}", backend, call, step, s.message()));
}

}  // namespace

std::string shape_name(const MatchShape& s) {
    const int hs = s.channels / s.heads;
    if (s.kv_heads > 0) return fmt::format("llama_hs{}_G{}_T{}", hs, s.heads / s.kv_heads, s.T);
    return fmt::format("hs{}_T{}", hs, s.T);
}

ModelConfig config_of(const MatchShape& s) {
    ModelConfig c;
    c.layers = s.layers;
    c.heads = s.heads;
    c.channels = s.channels;
    c.max_seq = s.T;
    c.vocab = s.vocab;
    c.padded_vocab = pad_vocab(s.vocab);
    if (s.kv_heads > 0) {
        c.arch = Arch::kLlama;
        c.kv_heads = s.kv_heads;
        c.ffn = (8 * s.channels / 3 + 15) / 16 * 16;  // Llama's 8/3·C, as llama-tiny rounds it
        c.tied = false;
    }
    return c;
}

const std::vector<MatchShape>& device_match_shapes() {
    static const std::vector<MatchShape> shapes = {
        {2, 4, 64, 500, 4, 64},      // hs16: the tiny preset's head size; one tile
        {2, 4, 128, 1000, 2, 200},   // hs32: 3 full tiles and a part
        {2, 2, 128, 1000, 2, 100},   // hs64 (every GPT-2 size): a tile and a part
        {2, 2, 256, 1000, 2, 40},    // hs128: less than a tile
        {1, 2, 128, 1000, 1, 1024},  // hs64 at 16 tiles
        {1, 2, 256, 1000, 1, 1024},  // hs128 at 16 tiles
    };
    return shapes;
}

const std::vector<MatchShape>& llama_match_shapes() {
    static const std::vector<MatchShape> shapes = {
        {2, 4, 128, 1000, 2, 64, 4},    // hs32, G1 (multi-head): one tile
        {2, 4, 256, 1000, 2, 200, 2},   // hs64, G2: 3 full tiles and a part
        {1, 4, 512, 1000, 1, 1024, 1},  // hs128, G4 (Llama 3 8B's head): 16 tiles
        {1, 8, 1024, 1000, 1, 80, 1},   // hs128, G8 (Llama 3 70B's grouping): a tile and a part
    };
    return shapes;
}

bool MatchReport::passed() const {
    return std::all_of(checks.begin(), checks.end(),
                       [](const MatchCheck& c) { return c.passed(); });
}

std::vector<MatchCheck> MatchReport::failures() const {
    std::vector<MatchCheck> out;
    for (const MatchCheck& c : checks)
        if (!c.passed()) out.push_back(c);
    return out;
}

const MatchCheck* MatchReport::find(std::string_view name) const {
    for (const MatchCheck& c : checks)
        if (c.name == name) return &c;
    return nullptr;
}

double MatchReport::worst_ratio(std::string_view prefix) const {
    double worst = 0;
    for (const MatchCheck& c : checks) {
        if (!c.name.starts_with(prefix)) continue;
        const double r = c.error / c.limit;
        if (std::isnan(r)) return std::numeric_limits<double>::infinity();
        worst = std::max(worst, r);
    }
    return worst;
}

double update_limit(double grad_limit) { return 2 * std::sqrt(2 * grad_limit / std::numbers::pi); }

// The values of match_limits.json, defined by tests/support/CMakeLists.txt.
MatchLimits default_match_limits() {
    return {.loss = TRAINRIG_MATCH_LOSS,
            .logits = TRAINRIG_MATCH_LOGITS,
            .grads = TRAINRIG_MATCH_GRADS,
            .grad_norm = TRAINRIG_MATCH_GRAD_NORM,
            .updates = TRAINRIG_MATCH_UPDATES,
            .bf16_spacing = TRAINRIG_MATCH_BF16_SPACING,
            .k_bias_grad = TRAINRIG_MATCH_K_BIAS_GRAD};
}

Result<MatchReport> match_backends(Backend& device, Backend& reference, const MatchShape& s,
                                   int steps, const MatchLimits& limits) {
    const ModelConfig c = config_of(s);
    const ParamLayout layout(c);
    MatchReport report;
    auto check = [&](std::string name, double error, double limit) {
        report.checks.push_back({std::move(name), error, limit});
    };

    for (Backend* b : {&device, &reference})
        if (Status st = b->init_weights(kInitSeed); !st.ok())
            return step_failed(st, b->name(), "init_weights", 0);
    CheckpointState start;
    if (Status st = reference.save_state(start); !st.ok())
        return step_failed(st, reference.name(), "save_state", 0);

    Rng rng(kBatchSeed);
    const size_t n = static_cast<size_t>(s.B) * s.T;
    std::vector<uint32_t> in(n), tg(n);
    for (size_t i = 0; i < n; ++i) {
        in[i] = static_cast<uint32_t>(rng.next() % static_cast<uint64_t>(s.vocab));
        tg[i] = static_cast<uint32_t>(rng.next() % static_cast<uint64_t>(s.vocab));
    }
    LocalCommunicator none;
    std::vector<double> grad_error;  // per tensor, first step, in layout order
    for (int step = 1; step <= steps; ++step) {
        double loss[2] = {}, norm[2] = {};
        Backend* both[2] = {&device, &reference};
        for (int i = 0; i < 2; ++i) {
            Backend& b = *both[i];
            if (Status st = b.zero_grads(); !st.ok())
                return step_failed(st, b.name(), "zero_grads", step);
            auto l = b.forward(in.data(), tg.data(), s.B, s.T);
            if (!l.ok()) return step_failed(l.status(), b.name(), "forward", step);
            loss[i] = *l;
        }
        check(fmt::format("loss step {}", step), rel(loss[0], loss[1]), limits.loss);
        if (step == 1) {
            std::vector<float> z[2];
            for (int i = 0; i < 2; ++i)
                if (Status st = both[i]->copy_logits(z[i]); !st.ok())
                    return step_failed(st, both[i]->name(), "copy_logits", step);
            // Rows of padded_vocab; the padded columns are no model output.
            std::vector<float> real[2];
            const size_t Vp = static_cast<size_t>(c.padded_vocab), V = static_cast<size_t>(c.vocab);
            for (int i = 0; i < 2; ++i)
                for (size_t row = 0; row < n; ++row)
                    real[i].insert(real[i].end(), z[i].begin() + static_cast<long>(row * Vp),
                                   z[i].begin() + static_cast<long>(row * Vp + V));
            check("logits step 1", rel_l2(real[0], real[1]), limits.logits);
        }
        for (int i = 0; i < 2; ++i) {
            Backend& b = *both[i];
            if (Status st = b.backward(1.0f, true); !st.ok())
                return step_failed(st, b.name(), "backward", step);
            if (Status st = b.all_reduce_grads(none); !st.ok())
                return step_failed(st, b.name(), "all_reduce_grads", step);
        }
        if (step == 1) {
            std::vector<float> g[2];
            for (int i = 0; i < 2; ++i)
                if (Status st = both[i]->copy_grads(g[i]); !st.ok())
                    return step_failed(st, both[i]->name(), "copy_grads", step);
            for (const TensorSlot& t : layout.slots()) {
                const bool qkv_b = is_qkv_b(layout, t);
                const Part part = qkv_b ? Part::kWithoutKBias : Part::kAll;
                const double e = rel_l2(gather(g[0], t, c, part), gather(g[1], t, c, part));
                grad_error.push_back(e);
                if (t.size == 0) continue;  // a tensor this family does not have
                check(fmt::format("grad {}{}", t.name, qkv_b ? " (q, v)" : ""), e, limits.grads);
                if (qkv_b)
                    check("k-bias grad / q,v-bias grad",
                          l2(gather(g[0], t, c, Part::kKBias)) /
                              l2(gather(g[1], t, c, Part::kWithoutKBias)),
                          limits.k_bias_grad);
            }
        }
        for (int i = 0; i < 2; ++i) {
            auto nrm = both[i]->grad_norm();
            if (!nrm.ok()) return step_failed(nrm.status(), both[i]->name(), "grad_norm", step);
            norm[i] = *nrm;
        }
        check(fmt::format("grad-norm step {}", step), rel(norm[0], norm[1]), limits.grad_norm);
        for (int i = 0; i < 2; ++i)
            if (Status st = both[i]->update(kLr, step, norm[i]); !st.ok())
                return step_failed(st, both[i]->name(), "update", step);
    }

    CheckpointState end[2];
    for (int i = 0; i < 2; ++i) {
        Backend& b = i == 0 ? device : reference;
        if (Status st = b.save_state(end[i]); !st.ok())
            return step_failed(st, b.name(), "save_state", steps);
    }
    for (size_t k = 0; k < layout.slots().size(); ++k) {
        const TensorSlot& t = layout.slots()[k];
        if (t.size == 0) continue;
        const bool qkv_b = is_qkv_b(layout, t);
        const Part part = qkv_b ? Part::kWithoutKBias : Part::kAll;
        const std::string name = fmt::format("{}{}", t.name, qkv_b ? " (q, v)" : "");
        const std::vector<float> p0 = gather(start.params, t, c, part);
        const std::vector<float> ud = minus(gather(end[0].params, t, c, part), p0);
        const std::vector<float> uc = minus(gather(end[1].params, t, c, part), p0);
        const double e = rel_l2(ud, uc);
        check("update " + name, e, limits.updates);
        // Matrices and embeddings start away from zero and have many elements, each moved a
        // little: their updates must agree as closely as their own gradients did.
        if (t.matrix && l2(p0) > 0 && k < grad_error.size())
            check("tight update " + name, e,
                  update_limit(std::max(grad_error[k], limits.bf16_spacing)));
    }
    return report;
}

}  // namespace trainrig::train::testing
