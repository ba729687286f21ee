// The CPU reference backend, for both families (GPT-2 blocks and Llama blocks): every parameter
// tensor's gradient against central finite differences (in double), float against double, and
// bit-identical results for any thread count.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <vector>

#include "train/cpu/gpt_cpu.h"
#include "train/rng.h"

namespace trainrig::train {
namespace {

ModelConfig gpt2_micro() {
    ModelConfig c;
    c.name = "gpt2-micro";
    c.layers = 2;
    c.heads = 2;
    c.channels = 8;
    c.max_seq = 6;
    c.vocab = 21;
    c.padded_vocab = pad_vocab(c.vocab);
    return c;
}

// Grouped-query attention (4 query heads on 2 key/value heads), an MLP width that is no multiple
// of anything, an untied output layer.
ModelConfig llama_micro() {
    ModelConfig c = gpt2_micro();
    c.name = "llama-micro";
    c.arch = Arch::kLlama;
    c.heads = 4;
    c.kv_heads = 2;
    c.channels = 16;
    c.ffn = 13;
    c.tied = false;
    c.rope_theta = 10000;
    c.norm_eps = 1e-5;
    return c;
}

// Tied output, multi-head attention, q/k/v biases (Qwen2), and Llama 3.1's frequency rescaling
// with its blend band placed on this head size (θ = 100: wavelengths 6.3 and 62.8).
ModelConfig llama_micro_variant() {
    ModelConfig c = llama_micro();
    c.name = "llama-micro-variant";
    c.kv_heads = 4;
    c.tied = true;
    c.qkv_bias = true;
    c.rope_theta = 100;
    c.rope_scaling = {8, 1, 4, 64};
    return c;
}

// Random parameters of a size that makes every path matter (saturated softmaxes or vanishing
// signals would let a wrong gradient pass).
template <class T>
void randomize(cpu::GptCpu<T>& m, uint64_t seed, double scale) {
    Rng rng(seed);
    for (T& p : m.params()) p = static_cast<T>(rng.normal() * scale);
}

struct ModelBatch {
    int B = 2, T = 5;
    std::vector<uint32_t> inputs, targets;
};

ModelBatch micro_batch(int vocab, uint64_t seed) {
    ModelBatch b;
    Rng rng(seed);
    for (int i = 0; i < b.B * b.T; ++i) {
        b.inputs.push_back(static_cast<uint32_t>(rng.next() % vocab));
        b.targets.push_back(static_cast<uint32_t>(rng.next() % vocab));
    }
    return b;
}

// A double-precision micro model with random parameters (seed) and the gradient of one batch.
struct Backpropagated {
    cpu::GptCpu<double> model;
    ModelBatch batch;
    Backpropagated(const ModelConfig& c, uint64_t param_seed, uint64_t batch_seed) : model(c) {
        randomize(model, param_seed, 0.3);
        batch = micro_batch(model.config().vocab, batch_seed);
        model.zero_grads();
        model.forward(batch.inputs.data(), batch.targets.data(), batch.B, batch.T);
        model.backward(1.0);
    }
};

class TrainGradients : public ::testing::TestWithParam<ModelConfig (*)()> {
protected:
    ModelConfig config() const { return GetParam()(); }
};

TEST_P(TrainGradients, EveryParameterMatchesFiniteDifferences) {
    Backpropagated run(config(), 7, 11);
    cpu::GptCpu<double>& m = run.model;
    const ModelBatch& b = run.batch;
    const std::vector<double> analytic = m.grads();

    const double h = 1e-5;
    for (const TensorSlot& slot : m.layout().slots()) {
        if (slot.size == 0) continue;  // a tensor this family does not have
        double worst = 0;
        size_t nonzero = 0;
        for (size_t k = 0; k < slot.size; ++k) {
            double& p = m.params()[slot.offset + k];
            const double saved = p;
            p = saved + h;
            const double up = m.forward(b.inputs.data(), b.targets.data(), b.B, b.T);
            p = saved - h;
            const double down = m.forward(b.inputs.data(), b.targets.data(), b.B, b.T);
            p = saved;
            const double numeric = (up - down) / (2 * h);
            const double a = analytic[slot.offset + k];
            const double err =
                std::abs(a - numeric) / (1e-6 + std::max(std::abs(a), std::abs(numeric)));
            worst = std::max(worst, err);
            nonzero += a != 0;
        }
        // Central differences in double are good to about h² and rounding/h: ~1e-10 absolute.
        EXPECT_LT(worst, 1e-4) << slot.name;
        EXPECT_GT(nonzero, 0u) << slot.name << " has no gradient at all";
    }
}

TEST_P(TrainGradients, PaddedVocabularyRowsGetNoGradient) {
    Backpropagated run(config(), 3, 5);
    const cpu::GptCpu<double>& m = run.model;
    const size_t C = m.config().channels;
    for (Param p : {Param::kWte, Param::kLmHead}) {
        const TensorSlot& table = m.layout()[p];
        for (size_t i = table.size ? static_cast<size_t>(m.config().vocab) * C : 0; i < table.size;
             ++i)
            ASSERT_EQ(m.grads()[table.offset + i], 0.0) << table.name << " element " << i;
    }
}

TEST_P(TrainGradients, GradientsAccumulateAcrossBackwardCalls) {
    Backpropagated run(config(), 9, 2);
    cpu::GptCpu<double>& m = run.model;
    const ModelBatch& b = run.batch;
    const std::vector<double> once = m.grads();
    m.forward(b.inputs.data(), b.targets.data(), b.B, b.T);
    m.backward(0.5);
    for (size_t i = 0; i < once.size(); ++i) ASSERT_NEAR(m.grads()[i], 1.5 * once[i], 1e-12);
}

TEST_P(TrainGradients, FloatAgreesWithDouble) {
    cpu::GptCpu<double> md(config());
    cpu::GptCpu<float> mf(config());
    randomize(md, 4, 0.3);
    for (size_t i = 0; i < md.params().size(); ++i)
        mf.params()[i] = static_cast<float>(md.params()[i]);
    const ModelBatch b = micro_batch(md.config().vocab, 8);
    md.zero_grads();
    mf.zero_grads();
    const double ld = md.forward(b.inputs.data(), b.targets.data(), b.B, b.T);
    const double lf = mf.forward(b.inputs.data(), b.targets.data(), b.B, b.T);
    EXPECT_NEAR(lf, ld, 1e-5 * std::abs(ld));
    md.backward(1.0);
    mf.backward(1.0f);
    double max_grad = 0;
    for (double g : md.grads()) max_grad = std::max(max_grad, std::abs(g));
    for (size_t i = 0; i < md.grads().size(); ++i)
        ASSERT_NEAR(mf.grads()[i], md.grads()[i], 1e-4 * max_grad) << "element " << i;
}

TEST_P(TrainGradients, ResultsDoNotDependOnTheThreadCount) {
    ModelConfig c = config();
    c.channels = 32;
    c.heads = 4;
    c.kv_heads = c.arch == Arch::kLlama ? 2 : 0;
    c.max_seq = 16;
    auto run = [&](int threads) {
        omp_set_num_threads(threads);
        cpu::GptCpu<float> m(c);
        m.init_weights(1);
        ModelBatch b;
        b.B = 3;
        b.T = 16;
        Rng rng(5);
        for (int i = 0; i < b.B * b.T; ++i) {
            b.inputs.push_back(static_cast<uint32_t>(rng.next() % c.vocab));
            b.targets.push_back(static_cast<uint32_t>(rng.next() % c.vocab));
        }
        m.zero_grads();
        const double loss = m.forward(b.inputs.data(), b.targets.data(), b.B, b.T);
        m.backward(1.0f);
        std::vector<float> out = m.grads();
        out.push_back(static_cast<float>(loss));
        return out;
    };
    const std::vector<float> one = run(1);
    const std::vector<float> three = run(3);
    omp_set_num_threads(omp_get_num_procs());
    ASSERT_EQ(one.size(), three.size());
    for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(one[i], three[i]) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Families, TrainGradients,
                         ::testing::Values(&gpt2_micro, &llama_micro, &llama_micro_variant),
                         [](const auto& param_info) {
                             std::string name = param_info.param().name;
                             std::erase(name, '-');
                             return name;
                         });

TEST(TrainModel, FreshWeightsPredictNearlyUniformly) {
    // The initialisation (N(0, 0.02), scaled residual projections): the first loss is close
    // to ln(V) for both families.
    for (ModelConfig c : {gpt2_micro(), llama_micro()}) {
        c.vocab = 500;
        c.padded_vocab = pad_vocab(c.vocab);
        c.channels = 32;
        cpu::GptCpu<float> m(c);
        m.init_weights(42);
        const ModelBatch b = micro_batch(c.vocab, 1);
        const double loss = m.forward(b.inputs.data(), b.targets.data(), b.B, b.T);
        EXPECT_NEAR(loss, std::log(500.0), 0.1) << c.name;
    }
}

}  // namespace
}  // namespace trainrig::train
