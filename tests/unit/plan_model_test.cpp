// Parameter counts of the built-in models against the exact numbers their authors publish,
// and the Hugging Face config.json reader against the same checkpoints' real config files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "plan/hf_config.h"
#include "plan/model_catalog.h"

namespace trainrig::plan {
namespace {

std::string read_fixture(const std::string& name) {
    std::ifstream in(std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/hf/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(PlanModels, EveryCatalogModelMatchesItsPublishedParameterCount) {
    // Published totals: Hugging Face safetensors metadata of each checkpoint (GPT-2 124M
    // 124,439,808; Llama-2-7B 6,738,415,616 ...), see model_catalog.cpp.
    for (const auto& m : model_catalog()) {
        ASSERT_GT(m.published_params, 0) << m.id;
        EXPECT_EQ(count_params(m).total, m.published_params) << m.id;
        EXPECT_TRUE(validate_model(m, m.id).ok()) << m.id;
    }
}

TEST(PlanModels, SplitsEmbeddingFromNonEmbedding) {
    const auto gpt2 = count_params(*find_model("gpt2"));
    // Kaplan et al. 2020: N excludes the token and position tables: 124,439,808 - 50257 x 768
    // - 1024 x 768 = 85,056,000.
    EXPECT_EQ(gpt2.non_embedding, 85'056'000);
    EXPECT_EQ(gpt2.output_layer, 0);  // tied
    EXPECT_EQ(gpt2.matmul, 85'056'000 + 50257LL * 768);
    const auto l7 = count_params(*find_model("llama2-7b"));
    EXPECT_EQ(l7.per_layer, 202'383'360);  // 4 x 4096² + 3 x 4096 x 11008 + 2 x 4096
    EXPECT_EQ(l7.non_embedding, 32LL * 202'383'360 + 4096);
    EXPECT_EQ(l7.output_layer, 32000LL * 4096);
}

TEST(PlanModels, UnknownIdIsNotFound) {
    EXPECT_FALSE(find_model("llama2-8b"));
    EXPECT_NE(model_ids().find("qwen2.5-72b"), std::string::npos);
}

struct ConfigCase {
    const char* file;
    const char* catalog_id;
};

TEST(PlanHfConfig, RealConfigFilesGiveTheCatalogArchitecture) {
    for (const auto& c :
         {ConfigCase{"gpt2.json", "gpt2"}, ConfigCase{"Llama-2-7b-hf.json", "llama2-7b"},
          ConfigCase{"Llama-2-13b-hf.json", "llama2-13b"},
          ConfigCase{"Meta-Llama-3.1-8B.json", "llama3.1-8b"},
          ConfigCase{"Mistral-7B-v0.1.json", "mistral-7b"},
          ConfigCase{"Qwen2.5-7B-Instruct.json", "qwen2.5-7b"}}) {
        auto m = model_from_hf_config(read_fixture(c.file), c.file);
        ASSERT_TRUE(m.ok()) << c.file << ": " << m.status().message();
        const auto want = *find_model(c.catalog_id);
        EXPECT_EQ(count_params(*m).total, want.published_params) << c.file;
        EXPECT_EQ(m->kv_heads, want.kv_heads) << c.file;
        EXPECT_EQ(m->ffn_type, want.ffn_type) << c.file;
        EXPECT_EQ(m->tied_embeddings, want.tied_embeddings) << c.file;
        EXPECT_EQ(m->dropout, want.dropout) << c.file;
    }
}

TEST(PlanHfConfig, Qwen2BiasesComeFromModelType) {
    // config.json says nothing about biases; transformers' Qwen2Attention has bias=True on
    // q/k/v and not on o_proj. 28 layers x (3584 + 2 x 512) = 129,024 parameters of them.
    auto m = model_from_hf_config(read_fixture("Qwen2.5-7B-Instruct.json"), "q.json");
    ASSERT_TRUE(m.ok());
    EXPECT_TRUE(m->qkv_bias);
    EXPECT_FALSE(m->out_bias);
    auto no_bias = *m;
    no_bias.qkv_bias = false;
    EXPECT_EQ(count_params(*m).total - count_params(no_bias).total, 28 * (3584 + 2 * 512));
}

TEST(PlanHfConfig, ExplicitHeadDimAndAbsentKvHeads) {
    auto m = model_from_hf_config(
        R"({"model_type":"llama","num_hidden_layers":2,"hidden_size":64,"num_attention_heads":4,
            "intermediate_size":128,"vocab_size":100,"head_dim":32})",
        "c.json");
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(m->head_dim, 32);
    EXPECT_EQ(m->kv_heads, 4);  // LlamaConfig: num_key_value_heads defaults to the heads
    EXPECT_FALSE(m->tied_embeddings);
}

TEST(PlanHfConfig, BadFilesGetOneSentenceNamingFileAndKey) {
    auto err = [](const char* text) {
        auto m = model_from_hf_config(text, "cfg.json");
        EXPECT_FALSE(m.ok());
        return m.status().message();
    };
    EXPECT_EQ(err("{not json"), "cfg.json: not valid JSON");
    EXPECT_EQ(err("[1]"), "cfg.json: not a JSON object");
    EXPECT_EQ(err(R"({"vocab_size": 5})"), "cfg.json: \"model_type\" is missing");
    EXPECT_EQ(err(R"({"model_type":"llama","num_hidden_layers":2})"),
              "cfg.json: \"hidden_size\" is missing");
    EXPECT_EQ(err(R"({"model_type":"llama","num_hidden_layers":"32"})"),
              "cfg.json: \"num_hidden_layers\" is \"32\", not a positive integer up to 1e9");
    EXPECT_NE(err(R"({"model_type":"mixtral","num_local_experts":8})").find("mixture-of-experts"),
              std::string::npos);
    EXPECT_NE(err(R"({"model_type":"llama","num_hidden_layers":2,"hidden_size":64,
                      "num_attention_heads":4,"num_key_value_heads":3,"intermediate_size":8,
                      "vocab_size":10})")
                  .find("must divide the 4 attention heads"),
              std::string::npos);
    EXPECT_NE(err(R"({"model_type":"llama","num_hidden_layers":2,"hidden_size":64,
                      "num_attention_heads":4,"intermediate_size":8,"vocab_size":10,
                      "hidden_act":"gelu"})")
                  .find("hidden_act \"gelu\""),
              std::string::npos);
}

}  // namespace
}  // namespace trainrig::plan
