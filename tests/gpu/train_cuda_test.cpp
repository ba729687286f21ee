// The CUDA training backend against the CPU reference on small models, through the plugin as
// `trainrig train --backend cuda` loads it: the same weights in, the loss, every parameter
// tensor's gradient and a few AdamW steps out. bf16 compute against fp32, so the tolerances are
// those of bf16 (8 significant bits, ≈ 0.4 % per value), stated per check. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "train/backend.h"
#include "train/device_plugin.h"
#include "train/param_layout.h"
#include "train/rng.h"

namespace trainrig::train {
namespace {

struct Shape {
    int layers, heads, channels, vocab, B, T;
};

ModelConfig config_of(const Shape& s) {
    ModelConfig c;
    c.layers = s.layers;
    c.heads = s.heads;
    c.channels = s.channels;
    c.max_seq = s.T;
    c.vocab = s.vocab;
    c.padded_vocab = pad_vocab(s.vocab);
    return c;
}

double rel_l2(const float* a, const float* b, size_t n) {
    double d = 0, r = 0;
    for (size_t i = 0; i < n; ++i) {
        d += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        r += double(b[i]) * b[i];
    }
    return r > 0 ? std::sqrt(d / r) : std::sqrt(d);
}

class TrainCuda : public ::testing::TestWithParam<Shape> {
protected:
    void SetUp() override {
        // The build's plugin unless the environment names another (a bundle on a GPU machine).
        ::setenv("TRAINRIG_TRAIN_PLUGIN", TRAINRIG_TRAIN_CUDA_PLUGIN, 0);
        auto w = open_device_world(local_);
        if (!w.ok()) GTEST_SKIP() << w.status().message();
        world_ = std::move(w).value();
    }
    LocalCommunicator local_;
    std::shared_ptr<DeviceWorld> world_;
};

TEST_P(TrainCuda, MatchesTheCpuReference) {
    const Shape s = GetParam();
    const ModelConfig c = config_of(s);
    OptimizerConfig opt;
    opt.lr = 1e-3;
    auto dev = make_device_backend(world_, c, opt, s.B, s.T);
    ASSERT_TRUE(dev.ok()) << dev.status().message();
    auto cpu = make_cpu_backend(c, opt);
    for (Backend* b : {dev->get(), cpu.get()}) ASSERT_TRUE(b->init_weights(3).ok());

    Rng rng(5);
    const size_t n = static_cast<size_t>(s.B) * s.T;
    std::vector<uint32_t> in(n), tg(n);
    for (size_t i = 0; i < n; ++i) {
        in[i] = static_cast<uint32_t>(rng.next() % s.vocab);
        tg[i] = static_cast<uint32_t>(rng.next() % s.vocab);
    }
    const ParamLayout layout(c);
    LocalCommunicator none;
    for (int step = 1; step <= 4; ++step) {
        ASSERT_TRUE((*dev)->zero_grads().ok());
        ASSERT_TRUE(cpu->zero_grads().ok());
        auto ld = (*dev)->forward(in.data(), tg.data(), s.B, s.T);
        auto lc = cpu->forward(in.data(), tg.data(), s.B, s.T);
        ASSERT_TRUE(ld.ok()) << ld.status().message();
        // Loss: within 1 % (the logits pass through bf16 GEMMs and a bf16 store).
        EXPECT_NEAR(*ld, *lc, 0.01 * *lc) << "step " << step;
        if (step == 1) {
            // Logits over the real vocabulary within 2 % in relative L2 norm: the bf16 store
            // alone is 0.4 % per value, on top of bf16 inputs to every GEMM before it.
            std::vector<float> zd, zc;
            ASSERT_TRUE((*dev)->copy_logits(zd).ok());
            ASSERT_TRUE(cpu->copy_logits(zc).ok());
            ASSERT_GE(zc.size(), zd.size());
            const size_t Vp = static_cast<size_t>(c.padded_vocab);
            std::vector<float> rd, rc;
            for (size_t row = 0; row < n; ++row)
                for (size_t v = 0; v < static_cast<size_t>(s.vocab); ++v) {
                    rd.push_back(zd[row * Vp + v]);
                    rc.push_back(zc[row * Vp + v]);
                }
            EXPECT_LT(rel_l2(rd.data(), rc.data(), rd.size()), 0.02);
        }
        ASSERT_TRUE((*dev)->backward(1.0f, true).ok());
        ASSERT_TRUE(cpu->backward(1.0f, true).ok());
        ASSERT_TRUE((*dev)->all_reduce_grads(none).ok());
        if (step == 1) {
            // Every tensor's gradient within 5 % in relative L2 norm: bf16 activations and
            // inputs to every GEMM, fp32 accumulation.
            std::vector<float> gd, gc;
            ASSERT_TRUE((*dev)->copy_grads(gd).ok());
            ASSERT_TRUE(cpu->copy_grads(gc).ok());
            for (const TensorSlot& t : layout.slots())
                EXPECT_LT(rel_l2(gd.data() + t.offset, gc.data() + t.offset, t.size), 0.05)
                    << t.name;
        }
        auto nd = (*dev)->grad_norm();
        auto nc = cpu->grad_norm();
        ASSERT_TRUE(nd.ok());
        EXPECT_NEAR(*nd, *nc, 0.05 * *nc) << "step " << step;
        ASSERT_TRUE((*dev)->update(1e-3, step, *nd).ok());
        ASSERT_TRUE(cpu->update(1e-3, step, *nc).ok());
    }
    // After 4 AdamW steps the fp32 master weights still agree to 1 % in relative L2 norm.
    CheckpointState sd, sc;
    ASSERT_TRUE((*dev)->save_state(sd).ok());
    ASSERT_TRUE(cpu->save_state(sc).ok());
    for (const TensorSlot& t : layout.slots())
        EXPECT_LT(rel_l2(sd.params.data() + t.offset, sc.params.data() + t.offset, t.size), 0.01)
            << t.name;
}

// Head sizes 16 (the tiny preset) and 64 (every GPT-2 size); T not a multiple of a tile.
INSTANTIATE_TEST_SUITE_P(Shapes, TrainCuda,
                         ::testing::Values(Shape{2, 4, 64, 500, 4, 64},
                                           Shape{2, 2, 128, 1000, 2, 100}),
                         [](const ::testing::TestParamInfo<Shape>& p) {
                             return "hs" + std::to_string(p.param.channels / p.param.heads) + "_T" +
                                    std::to_string(p.param.T);
                         });

}  // namespace
}  // namespace trainrig::train
