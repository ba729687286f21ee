// Exactness: trainrig's token ids against the reference implementations (native tiktoken-rs,
// tiktoken, llama3-tokenizer-js, spm_encode) on the whole real corpus, for every loader.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/text.h"
#include "data/tokenizer/loaders.h"
#include "data/tokenizer/open_tokenizer.h"
#include "data/tokenizer/presets.h"
#include "reference_data.h"

namespace trainrig::data {
namespace {

using testing::cache_dir;
using testing::corpus_names;
using testing::read_binary;
using testing::read_ids;

std::shared_ptr<const Tokenizer> must_open(const Result<std::shared_ptr<const Tokenizer>>& r) {
    if (!r) ADD_FAILURE() << r.status().message() << "; " << r.status().next_step();
    return r ? *r : nullptr;
}

// The first difference, shown as the decoded pieces on both sides.
std::string mismatch_report(const Tokenizer& t, const std::vector<uint32_t>& ours,
                            const std::vector<uint32_t>& ref) {
    size_t i = 0;
    while (i < ours.size() && i < ref.size() && ours[i] == ref[i]) ++i;
    if (i == ours.size() && i == ref.size()) return {};
    const auto piece = [&](const std::vector<uint32_t>& v) {
        std::string s;
        for (size_t k = i; k < std::min(v.size(), i + 4); ++k) {
            auto d = t.decode(std::span<const uint32_t>(&v[k], 1));
            s += fmt::format("{}={:?} ", v[k], d ? *d : std::string("?"));
        }
        return s;
    };
    auto before =
        t.decode(std::span<const uint32_t>(ref.data() + (i > 8 ? i - 8 : 0), i > 8 ? 8 : i));
    return fmt::format(
        "first difference at token {} of {} (ours {}), after {:?}: ours [{}] "
        "reference [{}]",
        i, ref.size(), ours.size(), before ? *before : "", piece(ours), piece(ref));
}

void expect_corpus_matches(const Tokenizer& t, const std::string& reference_name) {
    for (const auto& name : corpus_names()) {
        const std::string text = read_binary(fmt::format("{}/corpus/{}.txt", cache_dir(), name));
        ASSERT_FALSE(text.empty()) << name;
        const auto ref =
            read_ids(fmt::format("{}/reference/{}/{}.ids", cache_dir(), reference_name, name));
        ASSERT_FALSE(ref.empty()) << name;
        auto ours = t.encode(text);
        ASSERT_TRUE(ours) << ours.status().message();
        EXPECT_EQ(mismatch_report(t, *ours, ref), "")
            << t.description() << " on corpus/" << name << ".txt";
        auto back = t.decode(*ours);
        ASSERT_TRUE(back);
        EXPECT_TRUE(*back == text) << "decode(encode(x)) != x for corpus/" << name;
    }
}

struct Case {
    const char* label;
    const char* path;       // relative to the cache's tokenizers/
    const char* reference;  // folder under reference/
};

class ReferenceCorpus : public ::testing::TestWithParam<Case> {};

TEST_P(ReferenceCorpus, TokenIdsEqualTheReferenceOnTheWholeCorpus) {
    const Case& c = GetParam();
    auto t = must_open(open_tokenizer(fmt::format("{}/tokenizers/{}", cache_dir(), c.path)));
    ASSERT_NE(t, nullptr);
    expect_corpus_matches(*t, c.reference);
}

INSTANTIATE_TEST_SUITE_P(Loaders, ReferenceCorpus,
                         ::testing::Values(Case{"gpt2_files", "gpt2", "gpt2"},
                                           Case{"r50k_tiktoken", "r50k_base.tiktoken", "gpt2"},
                                           Case{"hf_gpt2_json", "hf-gpt2/tokenizer.json", "gpt2"},
                                           Case{"cl100k", "cl100k_base.tiktoken", "cl100k_base"},
                                           Case{"o200k", "o200k_base.tiktoken", "o200k_base"},
                                           Case{"llama3_tiktoken", "llama3.tiktoken", "llama3"},
                                           Case{"hf_llama3_json", "hf-llama3/tokenizer.json",
                                                "llama3"}),
                         [](const auto& test) { return std::string(test.param.label); });

TEST(ReferencePresets, NamesFindTheirFilesThroughTheTokenizerFolder) {
    ::setenv("TRAINRIG_TOKENIZERS", fmt::format("{}/tokenizers", cache_dir()).c_str(), 1);
    for (const char* name : {"gpt2", "cl100k", "o200k", "llama3"}) {
        auto t = must_open(open_tokenizer(name));
        ASSERT_NE(t, nullptr) << name;
        EXPECT_EQ(t->kind(), name);
    }
    ::setenv("TRAINRIG_TOKENIZERS", "/nonexistent/tokenizers", 1);
    auto missing = open_tokenizer("cl100k");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.status().message().find("/nonexistent/tokenizers"), std::string::npos);
    ::unsetenv("TRAINRIG_TOKENIZERS");
}

// Invalid UTF-8 is encoded as the reference encodes the same bytes decoded by Node (maximal
// invalid subparts -> U+FFFD); special-token strings inside text are ordinary text.
TEST(ReferenceExtra, InvalidUtf8AndSpecialStringsMatchTheReference) {
    for (const auto& [path, ref] :
         std::vector<std::pair<std::string, std::string>>{{"gpt2", "gpt2"},
                                                          {"cl100k_base.tiktoken", "cl100k_base"},
                                                          {"o200k_base.tiktoken", "o200k_base"}}) {
        auto t = must_open(open_tokenizer(fmt::format("{}/tokenizers/{}", cache_dir(), path)));
        ASSERT_NE(t, nullptr);
        for (const char* extra : {"invalid.bin", "specials.txt"}) {
            const std::string text =
                read_binary(fmt::format("{}/corpus-extra/{}", cache_dir(), extra));
            const std::string stem = std::string(extra).substr(0, std::string(extra).find('.'));
            const auto expected =
                read_ids(fmt::format("{}/reference/{}/{}.ids", cache_dir(), ref, stem));
            ASSERT_FALSE(expected.empty()) << ref << " " << stem;
            auto ours = t->encode(text);
            ASSERT_TRUE(ours);
            EXPECT_EQ(mismatch_report(*t, *ours, expected), "") << path << " on " << extra;
        }
    }
}

TEST(ReferenceExtra, AllowSpecialMatchesTheReferenceWithSpecialTokensRecognised) {
    for (const auto& [path, ref] :
         std::vector<std::pair<std::string, std::string>>{{"gpt2", "gpt2"},
                                                          {"cl100k_base.tiktoken", "cl100k_base"},
                                                          {"o200k_base.tiktoken", "o200k_base"},
                                                          {"llama3.tiktoken", "llama3"}}) {
        auto t = must_open(open_tokenizer(fmt::format("{}/tokenizers/{}", cache_dir(), path)));
        ASSERT_NE(t, nullptr);
        const std::string text =
            read_binary(fmt::format("{}/corpus-extra/specials.txt", cache_dir()));
        const auto expected =
            read_ids(fmt::format("{}/reference/{}/specials.allowed.ids", cache_dir(), ref));
        ASSERT_FALSE(expected.empty()) << ref;
        auto ours = t->encode(text, true);
        ASSERT_TRUE(ours);
        EXPECT_EQ(mismatch_report(*t, *ours, expected), "") << path << " with specials allowed";
        auto ordinary = t->encode(text, false);
        ASSERT_TRUE(ordinary);
        EXPECT_NE(*ordinary, *ours) << "the file holds special-token strings";
    }
}

TEST(ReferenceSentencePiece, IdsEqualSpmEncodeLineByLine) {
    auto t = must_open(open_tokenizer(fmt::format("{}/spm/test.model", cache_dir())));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->kind(), "sentencepiece");
    auto enc = t->encoder(false);
    for (const auto& name : corpus_names()) {
        const std::string text = read_binary(fmt::format("{}/corpus/{}.txt", cache_dir(), name));
        const std::string ref =
            read_binary(fmt::format("{}/reference/spm/{}.ids.txt", cache_dir(), name));
        const auto lines = split(text, '\n');
        const auto ref_lines = split(ref, '\n');
        ASSERT_GE(ref_lines.size(), 1u);
        size_t compared = 0;
        for (size_t i = 0; i < lines.size() && i < ref_lines.size(); ++i) {
            if (i + 1 == lines.size() && lines[i].empty()) break;
            std::vector<uint32_t> ids;
            ASSERT_TRUE(enc->encode(lines[i], ids).ok());
            std::string ours;
            for (size_t k = 0; k < ids.size(); ++k) ours += (k ? " " : "") + std::to_string(ids[k]);
            ASSERT_EQ(ours, ref_lines[i]) << name << " line " << i + 1;
            ++compared;
        }
        EXPECT_GT(compared, 10u) << name;
    }
}

}  // namespace
}  // namespace trainrig::data
