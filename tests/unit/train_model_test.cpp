// The CPU reference backend: every parameter tensor's gradient against central finite
// differences (in double), float against double, and bit-identical results for any thread count.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <vector>

#include "train/cpu/gpt_cpu.h"
#include "train/rng.h"

namespace trainrig::train {
namespace {

ModelConfig micro_config() {
    ModelConfig c;
    c.layers = 2;
    c.heads = 2;
    c.channels = 8;
    c.max_seq = 6;
    c.vocab = 21;
    c.padded_vocab = pad_vocab(c.vocab);
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
    cpu::GptCpu<double> model{micro_config()};
    ModelBatch batch;
    Backpropagated(uint64_t param_seed, uint64_t batch_seed) {
        randomize(model, param_seed, 0.3);
        batch = micro_batch(model.config().vocab, batch_seed);
        model.zero_grads();
        model.forward(batch.inputs.data(), batch.targets.data(), batch.B, batch.T);
        model.backward(1.0);
    }
};

TEST(TrainGradients, EveryParameterMatchesFiniteDifferences) {
    Backpropagated run(7, 11);
    cpu::GptCpu<double>& m = run.model;
    const ModelBatch& b = run.batch;
    const std::vector<double> analytic = m.grads();

    const double h = 1e-5;
    for (const TensorSlot& slot : m.layout().slots()) {
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

TEST(TrainGradients, PaddedVocabularyRowsGetNoGradient) {
    Backpropagated run(3, 5);
    const cpu::GptCpu<double>& m = run.model;
    const TensorSlot& wte = m.layout()[Param::kWte];
    const size_t C = m.config().channels;
    for (size_t i = static_cast<size_t>(m.config().vocab) * C; i < wte.size; ++i)
        ASSERT_EQ(m.grads()[wte.offset + i], 0.0) << "element " << i;
}

TEST(TrainGradients, GradientsAccumulateAcrossBackwardCalls) {
    Backpropagated run(9, 2);
    cpu::GptCpu<double>& m = run.model;
    const ModelBatch& b = run.batch;
    const std::vector<double> once = m.grads();
    m.forward(b.inputs.data(), b.targets.data(), b.B, b.T);
    m.backward(0.5);
    for (size_t i = 0; i < once.size(); ++i) ASSERT_NEAR(m.grads()[i], 1.5 * once[i], 1e-12);
}

TEST(TrainGradients, FloatAgreesWithDouble) {
    cpu::GptCpu<double> md(micro_config());
    cpu::GptCpu<float> mf(micro_config());
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

TEST(TrainGradients, ResultsDoNotDependOnTheThreadCount) {
    ModelConfig c = micro_config();
    c.channels = 32;
    c.heads = 4;
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

TEST(TrainModel, FreshWeightsPredictNearlyUniformly) {
    // GPT-2's initialisation: the first loss is close to ln(V).
    ModelConfig c = micro_config();
    c.vocab = 500;
    c.padded_vocab = pad_vocab(c.vocab);
    c.channels = 32;
    cpu::GptCpu<float> m(c);
    m.init_weights(42);
    const ModelBatch b = micro_batch(c.vocab, 1);
    const double loss = m.forward(b.inputs.data(), b.targets.data(), b.B, b.T);
    EXPECT_NEAR(loss, std::log(500.0), 0.1);
}

}  // namespace
}  // namespace trainrig::train
