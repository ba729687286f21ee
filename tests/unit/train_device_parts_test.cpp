// The host-side parts of the device backend that need no GPU: gradient buckets, the plugin's
// model request and error channel, the shared initialisation, and what crosses the plugin
// boundary (through the CPU stand-in, tests/fakes/fake_train_plugin.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "train/backend.h"
#include "train/cpu/gpt_cpu.h"
#include "train/device_plugin.h"
#include "train/grad_buckets.h"
#include "train/init_weights.h"
#include "train/param_layout.h"
#include "train/train_plugin_support.h"

namespace trainrig::train {
namespace {

ModelConfig shape(int layers, int heads, int channels, int vocab) {
    ModelConfig c;
    c.layers = layers;
    c.heads = heads;
    c.channels = channels;
    c.max_seq = 64;
    c.vocab = vocab;
    c.padded_vocab = pad_vocab(vocab);
    return c;
}

// Every element of the gradient buffer lies in exactly one bucket.
void expect_exact_cover(const std::vector<GradBucket>& buckets, size_t total) {
    std::vector<int> hits(total, 0);
    for (const GradBucket& b : buckets) {
        size_t sum = 0;
        for (const GradRange& r : b.ranges) {
            ASSERT_LE(r.offset + r.size, total);
            for (size_t i = r.offset; i < r.offset + r.size; ++i) ++hits[i];
            sum += r.size;
        }
        EXPECT_EQ(sum, b.elements);
    }
    for (size_t i = 0; i < total; ++i) ASSERT_EQ(hits[i], 1) << "element " << i;
}

TEST(GradBuckets, CoverEveryGradientOnceInTheOrderBackwardFinishesThem) {
    const ModelConfig c = shape(5, 2, 32, 200);
    const ParamLayout layout(c);
    for (size_t bytes : {size_t{1}, size_t{40000}, size_t{1} << 30}) {
        const auto buckets = plan_grad_buckets(layout, c.layers, bytes);
        expect_exact_cover(buckets, layout.total());
        // Layers from the last to the first, then the embeddings and the final LayerNorm.
        for (size_t i = 1; i < buckets.size(); ++i)
            EXPECT_LT(buckets[i].ready_after, buckets[i - 1].ready_after);
        EXPECT_EQ(buckets.back().ready_after, -1);
        EXPECT_EQ(buckets[buckets.size() - 2].ready_after, 0);
    }
}

TEST(GradBuckets, BucketSizeGroupsLayers) {
    const ModelConfig c = shape(6, 2, 32, 200);
    const ParamLayout layout(c);
    // One layer: 12·C² + 13·C floats; a bucket of 1 byte still holds one whole layer.
    EXPECT_EQ(plan_grad_buckets(layout, c.layers, 1).size(), 7u);
    const size_t layer_bytes = (12 * 32 * 32 + 13 * 32) * sizeof(float);
    const auto pairs = plan_grad_buckets(layout, c.layers, 2 * layer_bytes);
    ASSERT_EQ(pairs.size(), 4u);  // layers 5-4, 3-2, 1-0, then the rest
    EXPECT_EQ(pairs[0].elements, 2 * layer_bytes / sizeof(float));
    // Stacked tensors of neighbouring layers touch: one range per tensor, not per layer.
    EXPECT_EQ(pairs[0].ranges.size(), 12u);
    EXPECT_EQ(plan_grad_buckets(layout, c.layers, size_t{1} << 30).size(), 2u);
}

TEST(GradBuckets, TheLastBucketHoldsTheEmbeddingsAndTheFinalNorm) {
    const ModelConfig c = shape(2, 2, 32, 200);
    const ParamLayout layout(c);
    const auto buckets = plan_grad_buckets(layout, c.layers, kDefaultBucketBytes);
    const GradBucket& last = buckets.back();
    EXPECT_EQ(last.elements, layout[Param::kWte].size + layout[Param::kWpe].size +
                                 layout[Param::kLnfW].size + layout[Param::kLnfB].size);
}

TEST(DeviceInit, EveryBackendStartsFromTheCpuReferencesWeights) {
    const ModelConfig c = shape(2, 2, 32, 200);
    cpu::GptCpu<float> cpu_model(c);
    cpu_model.init_weights(7);
    std::vector<float> host(ParamLayout(c).total());
    init_model_weights(ParamLayout(c), c.layers, 7, std::span<float>(host));
    EXPECT_EQ(host, cpu_model.params());
    init_model_weights(ParamLayout(c), c.layers, 8, std::span<float>(host));
    EXPECT_NE(host, cpu_model.params());
}

const char* kRequest = R"({"model": {"layers": 2, "heads": 2, "channels": 32, "max_seq": 64,
    "vocab": 200, "padded_vocab": 256}, "optimizer": {"beta1": 0.9, "beta2": 0.95, "eps": 1e-8,
    "weight_decay": 0.1, "grad_clip": 1.0}, "batch": 4, "seq": 16, "bucket_bytes": 1024})";

TEST(PluginRequest, ParsesWhatTheHostSends) {
    auto r = parse_model_request(kRequest);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->model, shape(2, 2, 32, 200));
    EXPECT_EQ(r->batch, 4);
    EXPECT_EQ(r->seq, 16);
    EXPECT_EQ(r->bucket_bytes, 1024u);
    EXPECT_DOUBLE_EQ(r->opt.beta2, 0.95);
}

TEST(PluginRequest, NamesWhatIsMissingOrWrong) {
    std::string no_seq = kRequest;
    no_seq.replace(no_seq.find("\"seq\""), 5, "\"sequence\"");
    auto r = parse_model_request(no_seq);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("seq"), std::string::npos) << r.status().message();
    std::string long_seq = kRequest;
    long_seq.replace(long_seq.find("\"seq\": 16"), 9, "\"seq\": 65");
    EXPECT_FALSE(parse_model_request(long_seq).ok());
    EXPECT_FALSE(parse_model_request("[1, 2]").ok());
    std::string odd = kRequest;
    odd.replace(odd.find("\"heads\": 2"), 10, "\"heads\": 3");
    EXPECT_FALSE(parse_model_request(odd).ok());
}

TEST(PluginRequest, ErrorsCrossAsCodeSentenceAndNextStep) {
    EXPECT_EQ(plugin_error(ok_status()), nullptr);
    char* e = plugin_error(Status(Errc::kInvalidInput, "too big", "lower --batch"));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(std::string(e),
              std::string(errc_name(Errc::kInvalidInput)) + "\ttoo big\tlower --batch");
    std::free(e);
    char* thrown = plugin_call([]() -> Status { throw std::runtime_error("boom"); });
    ASSERT_NE(thrown, nullptr);
    EXPECT_NE(std::string(thrown).find("boom"), std::string::npos);
    std::free(thrown);
}

// The logits the CUDA test compares with the CPU reference's come back through the plugin
// row for row: the stand-in computes with the CPU backend, so they must be equal.
TEST(DevicePlugin, LogitsCrossTheBoundaryRowForRow) {
    // The plugin is loaded once per process; no other test of this binary loads another.
    ::setenv("TRAINRIG_TRAIN_PLUGIN", TRAINRIG_FAKE_TRAIN_LIB, 1);
    LocalCommunicator local;
    auto world = open_device_world(local);
    ASSERT_TRUE(world.ok()) << world.status().message();
    const ModelConfig c = shape(1, 2, 32, 300);
    const OptimizerConfig opt;
    auto dev = make_device_backend(*world, c, opt, 2, 16);
    ASSERT_TRUE(dev.ok()) << dev.status().message();
    auto cpu = make_cpu_backend(c, opt);
    std::vector<uint32_t> in(2 * 16), tg(2 * 16);
    for (size_t i = 0; i < in.size(); ++i) {
        in[i] = static_cast<uint32_t>(i * 37 % 300);
        tg[i] = static_cast<uint32_t>(i * 11 % 300);
    }
    std::vector<float> zd, zc;
    for (Backend* b : {dev->get(), cpu.get()}) {
        ASSERT_TRUE(b->init_weights(7).ok());
        ASSERT_TRUE(b->forward(in.data(), tg.data(), 2, 16).ok());
    }
    ASSERT_TRUE((*dev)->copy_logits(zd).ok());
    ASSERT_TRUE(cpu->copy_logits(zc).ok());
    ASSERT_EQ(zd.size(), in.size() * static_cast<size_t>(c.padded_vocab));
    ASSERT_GE(zc.size(), zd.size());
    for (size_t i = 0; i < zd.size(); ++i) ASSERT_EQ(zd[i], zc[i]) << "logit " << i;
}

}  // namespace
}  // namespace trainrig::train
