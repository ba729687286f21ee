// Token shards: Megatron-LM's indexed dataset and llm.c's shards written, read back byte for
// byte, and refused when damaged; `data verify` / `data inspect` over them; StagedFile, which
// keeps unfinished output invisible. Layouts are those of the formats' own writers, cited at
// each test.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/staged_file.h"
#include "data/shards/llmc_format.h"
#include "data/shards/megatron_format.h"
#include "data/shards/shard_check.h"
#include "data/shards/shard_writer.h"
#include "data/shards/token_dtype.h"
#include "has_text.h"

namespace trainrig::data {
namespace {

namespace fs = std::filesystem;

using Ids = std::vector<uint32_t>;

template <class T>
void append_le(std::string& out, T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
}

template <class T>
void store_le(std::string& bytes, size_t at, T v) {
    std::memcpy(bytes.data() + at, &v, sizeof(T));
}

template <class T>
T load_le(const std::string& bytes, size_t at) {
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof(T));
    return v;
}

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

void write_bytes(const std::string& path, std::string_view bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class ShardTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::path(::testing::TempDir()) /
               fmt::format("trainrig-data-shards-{}-{}", ::getpid(),
                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        prefix_ = (dir_ / "ds").string();
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::vector<std::string> entries() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename());
        std::sort(out.begin(), out.end());
        return out;
    }

    // Writes the documents as a Megatron dataset at prefix_.
    void write_megatron(size_t vocab_size, const std::vector<Ids>& docs) {
        auto w = make_megatron_writer(prefix_, vocab_size);
        ASSERT_TRUE(w) << w.status().message();
        for (const auto& d : docs) ASSERT_TRUE((*w)->add_document(d).ok());
        auto paths = (*w)->commit();
        ASSERT_TRUE(paths) << paths.status().message();
    }

    // Writes the documents as llm.c shards of shard_tokens at prefix_; returns the paths.
    std::vector<std::string> write_llmc(size_t vocab_size, uint64_t shard_tokens,
                                        const std::vector<Ids>& docs) {
        auto w = make_llmc_writer(prefix_, vocab_size, shard_tokens);
        EXPECT_TRUE(w) << w.status().message();
        if (!w) return {};
        for (const auto& d : docs) EXPECT_TRUE((*w)->add_document(d).ok());
        auto paths = (*w)->commit();
        EXPECT_TRUE(paths) << paths.status().message();
        return paths ? *paths : std::vector<std::string>{};
    }

    fs::path dir_;
    std::string prefix_;
};

// ---------------------------------------------------------------------------------------------
// Megatron-LM

using DataShardsMegatron = ShardTest;

TEST(DataShardsDtype, MegatronPicksUint16BelowVocabulary65500) {
    // Megatron-LM megatron/core/datasets/indexed_dataset.py, DType.optimal_dtype:
    // numpy.uint16 if vocab_size < 65500 else numpy.int32.
    EXPECT_EQ(megatron_dtype_for_vocab(50257), TokenDtype::kU16);
    EXPECT_EQ(megatron_dtype_for_vocab(65499), TokenDtype::kU16);
    EXPECT_EQ(megatron_dtype_for_vocab(65500), TokenDtype::kI32);
    EXPECT_EQ(megatron_dtype_for_vocab(100277), TokenDtype::kI32);
}

TEST(DataShardsDtype, MegatronDtypeCodes) {
    // indexed_dataset.py DType: uint8 1, int8 2, int16 3, int32 4, int64 5, float64 6,
    // float32 7, uint16 8.
    EXPECT_EQ(megatron_dtype_from_code(8), TokenDtype::kU16);
    EXPECT_EQ(megatron_dtype_from_code(4), TokenDtype::kI32);
    EXPECT_EQ(megatron_dtype_from_code(0), std::nullopt);
    EXPECT_EQ(megatron_dtype_from_code(9), std::nullopt);
    EXPECT_EQ(megatron_dtype_from_code(100), std::nullopt);  // trainrig's uint32 is llm.c only
    EXPECT_EQ(dtype_size(TokenDtype::kU16), 2u);
    EXPECT_EQ(dtype_size(TokenDtype::kI32), 4u);
    EXPECT_EQ(dtype_name(TokenDtype::kU16), "uint16");
}

TEST_F(DataShardsMegatron, IndexIsByteExact) {
    // indexed_dataset.py _IndexWriter: "MMIDIDX\0\0", <Q version 1, <B dtype code, <Q sequence
    // count, <Q document count (+1), int32 lengths, int64 byte pointers, int64 document indices.
    write_megatron(50257, {{1, 2, 3}, {}, {50256, 7}});
    std::string idx("MMIDIDX\0\0", 9);
    append_le<uint64_t>(idx, 1);
    idx.push_back(8);  // uint16
    append_le<uint64_t>(idx, 3);
    append_le<uint64_t>(idx, 4);
    for (const int32_t len : {3, 0, 2}) append_le<int32_t>(idx, len);
    for (const int64_t ptr : {0, 6, 6}) append_le<int64_t>(idx, ptr);
    for (const int64_t doc : {0, 1, 2, 3}) append_le<int64_t>(idx, doc);
    EXPECT_EQ(read_bytes(prefix_ + ".idx"), idx);
    std::string bin;
    for (const int t : {1, 2, 3, 50256, 7}) append_le<uint16_t>(bin, static_cast<uint16_t>(t));
    EXPECT_EQ(read_bytes(prefix_ + ".bin"), bin);
}

TEST_F(DataShardsMegatron, LargeVocabularyWritesInt32) {
    write_megatron(100277, {{100276, 0}, {65536}});
    const std::string idx = read_bytes(prefix_ + ".idx");
    ASSERT_GE(idx.size(), kMegatronHeaderBytes);
    EXPECT_EQ(idx[17], 4);                                                  // int32
    EXPECT_EQ(load_le<int64_t>(idx, kMegatronHeaderBytes + 2 * 4 + 8), 8);  // second pointer
    EXPECT_EQ(fs::file_size(prefix_ + ".bin"), 3u * 4);
    auto d = MegatronDataset::open(prefix_);
    ASSERT_TRUE(d) << d.status().message();
    EXPECT_EQ(d->dtype(), TokenDtype::kI32);
    EXPECT_EQ(d->token(0), 100276);
    EXPECT_EQ(d->token(2), 65536);
}

TEST_F(DataShardsMegatron, ReaderSeesWhatTheWriterWrote) {
    write_megatron(50257, {{1, 2, 3}, {}, {50256, 7}});
    auto d = MegatronDataset::open(prefix_);
    ASSERT_TRUE(d) << d.status().message();
    EXPECT_EQ(d->dtype(), TokenDtype::kU16);
    EXPECT_EQ(d->sequences(), 3u);
    EXPECT_EQ(d->documents(), 3u);
    EXPECT_EQ(d->tokens(), 5u);
    EXPECT_EQ(d->length(0), 3u);
    EXPECT_EQ(d->length(1), 0u);
    EXPECT_EQ(d->length(2), 2u);
    EXPECT_EQ(d->first_token(2), 3u);
    EXPECT_EQ(d->token(3), 50256);
    EXPECT_EQ(d->token(4), 7);
}

TEST_F(DataShardsMegatron, NothingIsVisibleBeforeCommit) {
    {
        auto w = make_megatron_writer(prefix_, 50257);
        ASSERT_TRUE(w);
        ASSERT_TRUE((*w)->add_document(Ids{1, 2}).ok());
        EXPECT_FALSE(fs::exists(prefix_ + ".bin"));
        EXPECT_FALSE(fs::exists(prefix_ + ".idx"));
        EXPECT_EQ((*w)->documents(), 1u);
        EXPECT_EQ((*w)->tokens(), 2u);
    }
    EXPECT_EQ(entries(), std::vector<std::string>{});  // the writer's temporary files are gone
}

TEST_F(DataShardsMegatron, CommitLeavesOnlyTheTwoFiles) {
    auto w = make_megatron_writer(prefix_, 50257);
    ASSERT_TRUE(w);
    ASSERT_TRUE((*w)->add_document(Ids{1}).ok());
    auto paths = (*w)->commit();
    ASSERT_TRUE(paths) << paths.status().message();
    EXPECT_EQ(*paths, (std::vector<std::string>{prefix_ + ".bin", prefix_ + ".idx"}));
    EXPECT_EQ(entries(), (std::vector<std::string>{"ds.bin", "ds.idx"}));
}

TEST_F(DataShardsMegatron, EmptyDatasetIsValid) {
    write_megatron(50257, {});
    auto d = MegatronDataset::open(prefix_);
    ASSERT_TRUE(d) << d.status().message();
    EXPECT_EQ(d->documents(), 0u);
    EXPECT_EQ(d->tokens(), 0u);
}

// Offsets in the index of three documents of lengths 3, 0, 2 (header 34 bytes).
constexpr size_t kVersionAt = 9, kDtypeAt = 17, kPointersAt = 34 + 3 * 4,
                 kDocIndexAt = kPointersAt + 3 * 8;

class DataShardsMegatronDamage : public ShardTest {
protected:
    void SetUp() override {
        ShardTest::SetUp();
        write_megatron(50257, {{1, 2, 3}, {}, {4, 5}});
        idx_ = read_bytes(prefix_ + ".idx");
        ASSERT_EQ(idx_.size(), kDocIndexAt + 4 * 8);
    }
    // The message of opening the dataset with the index replaced by idx_.
    std::string open_error() {
        write_bytes(prefix_ + ".idx", idx_);
        auto d = MegatronDataset::open(prefix_);
        EXPECT_FALSE(d);
        return d ? std::string() : d.status().message();
    }
    std::string idx_path() const { return prefix_ + ".idx: "; }
    std::string idx_;
};

TEST_F(DataShardsMegatronDamage, WrongMagic) {
    idx_[0] = 'X';
    const auto m = open_error();
    EXPECT_TRUE(has(m, idx_path() + "not a Megatron index")) << m;
}

TEST_F(DataShardsMegatronDamage, Version2) {
    store_le<uint64_t>(idx_, kVersionAt, 2);
    const auto m = open_error();
    EXPECT_TRUE(has(m, idx_path() + "index version 2")) << m;
}

TEST_F(DataShardsMegatronDamage, UnknownDtypeCode) {
    idx_[kDtypeAt] = 9;
    const auto m = open_error();
    EXPECT_TRUE(has(m, idx_path() + "unknown dtype code 9")) << m;
}

TEST_F(DataShardsMegatronDamage, TruncatedIndex) {
    idx_.resize(idx_.size() - 8);
    const auto m = open_error();
    EXPECT_TRUE(has(m, idx_path() + "94 bytes, but its header (3 sequences, 4 document indices) "
                                    "needs 102 bytes"))
        << m;
}

TEST_F(DataShardsMegatronDamage, IndexShorterThanItsHeader) {
    idx_.resize(20);
    const auto m = open_error();
    EXPECT_TRUE(has(m, idx_path())) << m;
}

TEST_F(DataShardsMegatronDamage, BinSizeMismatch) {
    write_bytes(prefix_ + ".bin", read_bytes(prefix_ + ".bin") + "xx");
    const auto m = open_error();
    EXPECT_TRUE(has(m, prefix_ + ".bin is 12 bytes, but the index describes 10 (5 tokens of "
                                 "uint16)"))
        << m;
}

TEST_F(DataShardsMegatronDamage, PointerThatDoesNotFollowTheLengths) {
    store_le<int64_t>(idx_, kPointersAt + 8, 8);  // sequence 1 should start at byte 6
    const auto m = open_error();
    EXPECT_TRUE(has(m, idx_path() + "sequence 1 starts at byte 8 of the .bin, but the lengths "
                                    "before it end at byte 6"))
        << m;
}

TEST_F(DataShardsMegatronDamage, DocumentIndexThatFalls) {
    store_le<int64_t>(idx_, kDocIndexAt + 2 * 8, 0);  // 0, 1, 0, 3
    const auto m = open_error();
    EXPECT_TRUE(has(m, idx_path() + "document index 2 is 0")) << m;
}

TEST_F(DataShardsMegatronDamage, DocumentIndexThatStopsShort) {
    store_le<int64_t>(idx_, kDocIndexAt + 3 * 8, 2);  // 0, 1, 2, 2
    const auto m = open_error();
    EXPECT_TRUE(has(m, idx_path() + "the last document index is 2, not the sequence count 3")) << m;
}

TEST_F(DataShardsMegatronDamage, MissingBin) {
    fs::remove(prefix_ + ".bin");
    const auto m = open_error();
    EXPECT_TRUE(has(m, prefix_ + ".bin")) << m;
}

TEST_F(DataShardsMegatronDamage, NegativeLength) {
    store_le<int32_t>(idx_, 34 + 4, -1);
    const auto m = open_error();
    EXPECT_TRUE(has(m, idx_path() + "sequence 1 has a negative length -1")) << m;
}

// ---------------------------------------------------------------------------------------------
// llm.c

using DataShardsLlmc = ShardTest;

TEST_F(DataShardsLlmc, Gpt2HeaderAndUint16Tokens) {
    // karpathy/llm.c dev/data/data_common.py write_datafile: 256 x int32 header (magic
    // 20240520, version 1, token count, zeros), then uint16 tokens for GPT-2.
    const auto paths = write_llmc(50257, 100, {{1, 2, 3}, {50256}});
    ASSERT_EQ(paths, std::vector<std::string>{prefix_ + "_000000.bin"});
    const std::string bytes = read_bytes(paths[0]);
    ASSERT_EQ(bytes.size(), 1024u + 4 * 2);
    EXPECT_EQ(load_le<int32_t>(bytes, 0), 20240520);
    EXPECT_EQ(load_le<int32_t>(bytes, 4), 1);
    EXPECT_EQ(load_le<int32_t>(bytes, 8), 4);
    EXPECT_EQ(bytes.substr(12, 1024 - 12), std::string(1024 - 12, '\0'));
    EXPECT_EQ(load_le<uint16_t>(bytes, 1024), 1);
    EXPECT_EQ(load_le<uint16_t>(bytes, 1024 + 6), 50256);
}

TEST_F(DataShardsLlmc, ShardsOfAnEarlierLongerRunAreRemovedAtCommit) {
    // Readers take PREFIX_000000.bin, PREFIX_000001.bin, ... up to the first gap; shards a
    // longer earlier run left behind would silently join this dataset.
    ASSERT_EQ(write_llmc(50257, 2, {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}).size(), 5u);
    const auto paths = write_llmc(50257, 2, {{1, 2, 3}});
    ASSERT_EQ(paths.size(), 2u);
    EXPECT_TRUE(fs::exists(prefix_ + "_000001.bin"));
    for (const char* gone : {"_000002.bin", "_000003.bin", "_000004.bin"})
        EXPECT_FALSE(fs::exists(prefix_ + gone)) << gone;
}

TEST_F(DataShardsLlmc, VocabularyAbove65536WritesUint32WithTheLlama3Header) {
    // data_common.py: "llama-3": magic 20240801, version 7, uint32 tokens.
    const auto paths = write_llmc(128256, 100, {{128000, 70000, 5}});
    ASSERT_EQ(paths.size(), 1u);
    const std::string bytes = read_bytes(paths[0]);
    ASSERT_EQ(bytes.size(), 1024u + 3 * 4);
    EXPECT_EQ(load_le<int32_t>(bytes, 0), 20240801);
    EXPECT_EQ(load_le<int32_t>(bytes, 4), 7);
    EXPECT_EQ(load_le<int32_t>(bytes, 8), 3);
    EXPECT_EQ(load_le<uint32_t>(bytes, 1024 + 4), 70000u);
}

TEST_F(DataShardsLlmc, Vocabulary65536StillFitsUint16) {
    // Ids 0..65535 all fit in uint16.
    auto w = make_llmc_writer(prefix_, 65536, 10);
    ASSERT_TRUE(w);
    EXPECT_EQ((*w)->dtype(), TokenDtype::kU16);
    auto wide = make_llmc_writer(prefix_ + "w", 65537, 10);
    ASSERT_TRUE(wide);
    EXPECT_EQ((*wide)->dtype(), TokenDtype::kU32);
}

TEST_F(DataShardsLlmc, ShardsHoldExactlyShardTokensAndCutDocuments) {
    // llm.c fineweb.py fills each shard to shard_size and carries the rest of a document over.
    const auto paths = write_llmc(50257, 4, {{1, 2, 3}, {4, 5, 6, 7, 8}, {9}});
    ASSERT_EQ(paths.size(), 3u);
    EXPECT_EQ(paths[2], prefix_ + "_000002.bin");
    const std::vector<Ids> want = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9}};
    for (size_t i = 0; i < 3; ++i) {
        auto s = LlmcShard::open(paths[i]);
        ASSERT_TRUE(s) << s.status().message();
        Ids got;
        for (uint64_t k = 0; k < s->tokens(); ++k)
            got.push_back(static_cast<uint32_t>(s->token(k)));
        EXPECT_EQ(got, want[i]) << paths[i];
    }
}

TEST_F(DataShardsLlmc, ExactMultipleMakesNoEmptyLastShard) {
    const auto paths = write_llmc(50257, 4, {{1, 2, 3}, {4, 5}, {6, 7, 8}});
    EXPECT_EQ(paths.size(), 2u);
    EXPECT_EQ(entries(), (std::vector<std::string>{"ds_000000.bin", "ds_000001.bin"}));
}

TEST_F(DataShardsLlmc, NoDocumentsStillWritesOneEmptyShard) {
    const auto paths = write_llmc(50257, 4, {});
    ASSERT_EQ(paths.size(), 1u);
    auto s = LlmcShard::open(paths[0]);
    ASSERT_TRUE(s) << s.status().message();
    EXPECT_EQ(s->tokens(), 0u);
}

TEST_F(DataShardsLlmc, ShardTokensOutsideTheInt32CountAreRefused) {
    auto zero = make_llmc_writer(prefix_, 50257, 0);
    ASSERT_FALSE(zero);
    EXPECT_TRUE(has(zero.status().message(), "--shard-tokens 0 is outside 1..2147483647"))
        << zero.status().message();
    EXPECT_FALSE(make_llmc_writer(prefix_, 50257, uint64_t{1} << 31));
}

TEST_F(DataShardsLlmc, NothingIsVisibleBeforeCommit) {
    {
        auto w = make_llmc_writer(prefix_, 50257, 2);
        ASSERT_TRUE(w);
        ASSERT_TRUE((*w)->add_document(Ids{1, 2, 3, 4, 5}).ok());
        EXPECT_FALSE(fs::exists(prefix_ + "_000000.bin"));
    }
    EXPECT_EQ(entries(), std::vector<std::string>{});
}

TEST_F(DataShardsLlmc, OpenRejectsABadMagic) {
    const auto paths = write_llmc(50257, 100, {{1, 2}});
    std::string bytes = read_bytes(paths[0]);
    store_le<int32_t>(bytes, 0, 123);
    write_bytes(paths[0], bytes);
    auto s = LlmcShard::open(paths[0]);
    ASSERT_FALSE(s);
    EXPECT_TRUE(
        has(s.status().message(), paths[0] + ": magic 123 version 1 is not an llm.c token shard"))
        << s.status().message();
}

TEST_F(DataShardsLlmc, OpenRejectsAMagicWithTheOtherVersion) {
    const auto paths = write_llmc(50257, 100, {{1, 2}});
    std::string bytes = read_bytes(paths[0]);
    store_le<int32_t>(bytes, 4, 7);  // GPT-2's magic with Llama 3's version
    write_bytes(paths[0], bytes);
    EXPECT_FALSE(LlmcShard::open(paths[0]));
}

TEST_F(DataShardsLlmc, OpenRejectsASizeMismatch) {
    const auto paths = write_llmc(50257, 100, {{1, 2, 3, 4}});
    write_bytes(paths[0], read_bytes(paths[0]) + "xx");
    auto s = LlmcShard::open(paths[0]);
    ASSERT_FALSE(s);
    EXPECT_TRUE(has(s.status().message(),
                    paths[0] + ": 1034 bytes, but its header says 4 tokens (1032 bytes)"))
        << s.status().message();
}

TEST_F(DataShardsLlmc, OpenRejectsAFileShorterThanTheHeader) {
    const std::string path = prefix_ + ".bin";
    write_bytes(path, std::string(100, '\0'));
    auto s = LlmcShard::open(path);
    ASSERT_FALSE(s);
    EXPECT_TRUE(has(s.status().message(), path + ": shorter than llm.c's 1024-byte header"))
        << s.status().message();
}

// ---------------------------------------------------------------------------------------------
// data verify / data inspect

using DataShardCheck = ShardTest;

TEST_F(DataShardCheck, VerifyFindsATokenOutsideTheVocabulary) {
    write_megatron(50257, {{1, 2}, {3, 4, 50300, 5}});
    auto r = verify_shards(prefix_, 50257);
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(r->format, "megatron");
    EXPECT_EQ(r->documents, 2u);
    EXPECT_EQ(r->tokens, 6u);
    EXPECT_EQ(r->max_token, 50300);
    EXPECT_EQ(r->problems, std::vector<std::string>{
                               "token 2 of document 1 is 50300, not below the vocabulary size "
                               "50257"});
    auto unchecked = verify_shards(prefix_, std::nullopt);
    ASSERT_TRUE(unchecked);
    EXPECT_TRUE(unchecked->problems.empty());
    EXPECT_EQ(unchecked->max_token, 50300);
}

TEST_F(DataShardCheck, VerifySoundDatasetHasNoProblems) {
    write_megatron(50257, {{1, 2}, {50256}});
    auto r = verify_shards(prefix_, 50257);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->problems.empty());
    EXPECT_EQ(r->max_token, 50256);
}

TEST_F(DataShardCheck, VerifyNamesTheLlmcShardAndPosition) {
    const auto paths = write_llmc(50257, 3, {{1, 2, 3, 4, 60000, 6}});
    ASSERT_EQ(paths.size(), 2u);
    auto r = verify_shards(prefix_, 50257);
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(r->format, "llmc");
    EXPECT_EQ(r->tokens, 6u);
    EXPECT_EQ(r->problems,
              std::vector<std::string>{paths[1] + " token 1 is 60000, not below the vocabulary "
                                                  "size 50257"});
}

TEST_F(DataShardCheck, VerifyReportsADamagedDatasetAsAProblem) {
    // shard_check.h: verify never fails for a bad dataset; what is wrong goes into problems.
    write_megatron(50257, {{1, 2}});
    write_bytes(prefix_ + ".bin", "x");
    auto r = verify_shards(prefix_, 50257);
    ASSERT_TRUE(r) << r.status().message();
    ASSERT_EQ(r->problems.size(), 1u);
    EXPECT_TRUE(has(r->problems[0], prefix_ + ".bin is 1 bytes")) << r->problems[0];
}

TEST_F(DataShardCheck, VerifyOfNothingIsNotFound) {
    auto r = verify_shards(prefix_, 50257);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().code(), Errc::kNotFound);
    EXPECT_TRUE(has(r.status().message(), "found no dataset at " + prefix_))
        << r.status().message();
}

TEST_F(DataShardCheck, InspectBucketsLengthsByPowersOfTwo) {
    // Lengths 0, 1, 2, 3, 5, 8, 100: buckets {0}, [1,2), [2,4), [4,8), [8,16), [64,128);
    // sorted, the middle (4th of 7) is 3.
    std::vector<Ids> docs;
    for (const uint32_t n : {5u, 0u, 100u, 2u, 8u, 1u, 3u}) docs.push_back(Ids(n, 42));
    docs[3] = {10, 11};
    write_megatron(50257, docs);
    auto s = inspect_shards(prefix_, 4, 100, nullptr);
    ASSERT_TRUE(s) << s.status().message();
    EXPECT_EQ(s->format, "megatron");
    EXPECT_EQ(s->dtype, "uint16");
    EXPECT_EQ(s->documents, 7u);
    EXPECT_EQ(s->tokens, 119u);
    EXPECT_EQ(s->lengths.min, 0u);
    EXPECT_EQ(s->lengths.max, 100u);
    EXPECT_EQ(s->lengths.median, 3u);
    EXPECT_DOUBLE_EQ(s->lengths.mean, 119.0 / 7);
    using Buckets = std::vector<std::pair<uint64_t, uint64_t>>;
    EXPECT_EQ(s->lengths.histogram, (Buckets{{0, 1}, {1, 1}, {2, 2}, {4, 1}, {8, 1}, {64, 1}}));
    ASSERT_EQ(s->previews.size(), 4u);
    EXPECT_EQ(s->previews[1].tokens, 0u);
    EXPECT_EQ(s->previews[3].first_ids, (Ids{10, 11}));
    EXPECT_FALSE(s->previews[3].text);  // no tokenizer, no text
}

TEST_F(DataShardCheck, InspectCountsLlmcTokensAcrossShards) {
    write_llmc(50257, 4, {{1, 2, 3, 4, 5, 6}});
    auto s = inspect_shards(prefix_, 5, 100, nullptr);
    ASSERT_TRUE(s) << s.status().message();
    EXPECT_EQ(s->format, "llmc");
    EXPECT_EQ(s->tokens, 6u);
    EXPECT_EQ(s->files.size(), 2u);
    ASSERT_EQ(s->previews.size(), 2u);
    EXPECT_EQ(s->previews[1].first_ids, (Ids{5, 6}));
}

TEST(DataShardNames, ShardNumberAndDatasetPrefixComeFromTheName) {
    EXPECT_EQ(llmc_shard_number("data/train_000001.bin"), 1u);
    EXPECT_EQ(llmc_shard_number("data/train_000000.bin"), 0u);
    EXPECT_EQ(llmc_shard_number("data/train.bin"), std::nullopt);
    EXPECT_EQ(llmc_shard_number("data/train_00001.bin"), std::nullopt);  // five digits
    EXPECT_EQ(llmc_shard_number("data/train_00000x.bin"), std::nullopt);
    EXPECT_EQ(dataset_prefix("data/train_000001.bin"), "data/train");
    EXPECT_EQ(dataset_prefix("data/train.bin"), "data/train");
    EXPECT_EQ(dataset_prefix("data/train"), "data/train");
}

TEST_F(DataShardCheck, VerifyOfAnUnreadableShardHasNoLargestId) {
    const auto paths = write_llmc(50257, 3, {{1, 2}});
    write_bytes(paths[0], "short");
    auto r = verify_shards(paths[0], 50257);
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(r->problems.size(), 1u);
    EXPECT_EQ(r->max_token, std::nullopt);
    const std::string text = render_verify_text(*r);
    EXPECT_FALSE(has(text, "largest id")) << text;
    EXPECT_FALSE(has(text, "documents")) << text;
    EXPECT_TRUE(verify_json(*r)["max_token"].is_null());
}

// ---------------------------------------------------------------------------------------------
// StagedFile

using DataStagedFile = ShardTest;

TEST_F(DataStagedFile, CommitPublishesAndRemovesTheTemporary) {
    const std::string target = (dir_ / "out.bin").string();
    auto f = StagedFile::create(target);
    ASSERT_TRUE(f) << f.status().message();
    StagedFile file = std::move(f).value();
    ASSERT_TRUE(file.write("hello").ok());
    EXPECT_EQ(file.size(), 5u);
    EXPECT_FALSE(fs::exists(target));
    EXPECT_TRUE(fs::exists(file.temp_path()));
    const std::string temp = file.temp_path();
    ASSERT_TRUE(file.commit().ok());
    EXPECT_EQ(read_bytes(target), "hello");
    EXPECT_FALSE(fs::exists(temp));
    EXPECT_EQ(entries(), std::vector<std::string>{"out.bin"});
}

TEST_F(DataStagedFile, CommitReplacesAnExistingTarget) {
    const std::string target = (dir_ / "out.bin").string();
    write_bytes(target, "old content");
    auto f = StagedFile::create(target);
    ASSERT_TRUE(f);
    StagedFile file = std::move(f).value();
    ASSERT_TRUE(file.write("new").ok());
    EXPECT_EQ(read_bytes(target), "old content");
    ASSERT_TRUE(file.commit().ok());
    EXPECT_EQ(read_bytes(target), "new");
}

TEST_F(DataStagedFile, AbandonAndDestructionRemoveTheTemporary) {
    const std::string target = (dir_ / "out.bin").string();
    {
        auto f = StagedFile::create(target);
        ASSERT_TRUE(f);
        StagedFile file = std::move(f).value();
        ASSERT_TRUE(file.write("x").ok());
        ASSERT_TRUE(file.flush().ok());
        file.abandon();
        EXPECT_EQ(entries(), std::vector<std::string>{});
    }
    {
        auto f = StagedFile::create(target);
        ASSERT_TRUE(f);
        StagedFile file = std::move(f).value();
        ASSERT_TRUE(file.write("x").ok());
        ASSERT_TRUE(file.flush().ok());
        EXPECT_EQ(entries().size(), 1u);
    }
    EXPECT_EQ(entries(), std::vector<std::string>{});
}

TEST_F(DataStagedFile, WriteAtPatchesBytesAlreadyWritten) {
    const std::string target = (dir_ / "out.bin").string();
    auto f = StagedFile::create(target);
    ASSERT_TRUE(f);
    StagedFile file = std::move(f).value();
    ASSERT_TRUE(file.write("hello world").ok());  // still buffered: write_at flushes first
    ASSERT_TRUE(file.write_at(0, "J").ok());
    ASSERT_TRUE(file.write_at(6, "W").ok());
    ASSERT_TRUE(file.write("!").ok());
    ASSERT_TRUE(file.commit().ok());
    EXPECT_EQ(read_bytes(target), "Jello World!");
}

TEST_F(DataStagedFile, LargeWritesKeepTheirOrder) {
    // Writes past the 1 MiB buffer go straight to the file, after what was buffered.
    const std::string target = (dir_ / "out.bin").string();
    auto f = StagedFile::create(target);
    ASSERT_TRUE(f);
    StagedFile file = std::move(f).value();
    const std::string big(3u << 20, 'b');
    ASSERT_TRUE(file.write("a").ok());
    ASSERT_TRUE(file.write(big).ok());
    ASSERT_TRUE(file.write("c").ok());
    EXPECT_EQ(file.size(), big.size() + 2);
    ASSERT_TRUE(file.commit().ok());
    EXPECT_EQ(read_bytes(target), "a" + big + "c");
}

TEST_F(DataStagedFile, MovedFromFileOwnsNothing) {
    const std::string target = (dir_ / "out.bin").string();
    auto f = StagedFile::create(target);
    ASSERT_TRUE(f);
    StagedFile a = std::move(f).value();
    ASSERT_TRUE(a.write("data").ok());
    StagedFile b = std::move(a);
    a.abandon();  // must not remove b's temporary
    ASSERT_TRUE(b.commit().ok());
    EXPECT_EQ(read_bytes(target), "data");
}

TEST_F(DataStagedFile, CreateInAMissingFolderNamesTheTarget) {
    const std::string target = (dir_ / "no" / "such" / "out.bin").string();
    auto f = StagedFile::create(target);
    ASSERT_FALSE(f);
    EXPECT_TRUE(has(f.status().message(), target)) << f.status().message();
}

}  // namespace
}  // namespace trainrig::data
