// The window loader: permutation, window contents, epoch coverage across ranks, exact resume.
#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>
#include <set>

#include "data/loader/permutation.h"
#include "data/loader/window_loader.h"
#include "data/shards/shard_writer.h"

namespace trainrig::data {
namespace {

namespace fs = std::filesystem;

// A Megatron dataset whose token at stream position i is (base + i) % 50000, written in
// documents of `doc` tokens.
std::string write_dataset(const std::string& name, uint64_t tokens, uint32_t base = 0,
                          uint64_t doc = 100) {
    const std::string prefix = (fs::path(::testing::TempDir()) / name).string();
    auto w = make_megatron_writer(prefix, 50257);
    EXPECT_TRUE(w.ok());
    std::vector<uint32_t> ids;
    for (uint64_t i = 0; i < tokens; ++i) {
        ids.push_back(static_cast<uint32_t>((base + i) % 50000));
        if (ids.size() == doc || i + 1 == tokens) {
            EXPECT_TRUE((*w)->add_document(ids).ok());
            ids.clear();
        }
    }
    EXPECT_TRUE((*w)->commit().ok());
    return prefix;
}

WindowLoader make_loader(const std::vector<std::string>& paths, LoaderOptions o) {
    auto corpus = TokenCorpus::open(paths);
    EXPECT_TRUE(corpus.ok()) << corpus.status().message();
    auto l = WindowLoader::create(*corpus, o);
    EXPECT_TRUE(l.ok()) << l.status().message();
    return std::move(l).value();
}

TEST(DataLoaderPermutation, IsABijectionForAnySizeAndSeed) {
    for (const uint64_t n : {1ull, 2ull, 3ull, 17ull, 1000ull, 4097ull}) {
        for (const uint64_t seed : {0ull, 1ull, 0xDEADBEEFull}) {
            Permutation p(n, seed);
            std::set<uint64_t> seen;
            for (uint64_t i = 0; i < n; ++i) {
                const uint64_t v = p(i);
                ASSERT_LT(v, n);
                seen.insert(v);
            }
            EXPECT_EQ(seen.size(), n) << "n=" << n << " seed=" << seed;
        }
    }
}

TEST(DataLoaderPermutation, SeedsChangeTheOrderAndTheSameSeedRepeatsIt) {
    Permutation a(1000, 1), b(1000, 2), c(1000, 1);
    int same_ab = 0, same_ac = 0, fixed = 0;
    for (uint64_t i = 0; i < 1000; ++i) {
        same_ab += a(i) == b(i);
        same_ac += a(i) == c(i);
        fixed += a(i) == i;
    }
    EXPECT_EQ(same_ac, 1000);
    EXPECT_LT(same_ab, 20);  // about 1 expected by chance
    EXPECT_LT(fixed, 20);
}

TEST(DataLoader, WindowKHoldsTokensKTimesTToKTimesTPlusT) {
    const auto prefix = write_dataset("loader_windows", 1001);
    auto l = make_loader({prefix}, LoaderOptions{1, 10, 0, false, 0, 1});
    EXPECT_EQ(l.samples_per_epoch(), 100u);  // floor((1001 - 1) / 10)
    std::vector<uint32_t> batch;
    for (uint32_t k = 0; k < 3; ++k) {
        l.next_batch(batch);
        ASSERT_EQ(batch.size(), 11u);
        for (uint32_t i = 0; i < 11; ++i) EXPECT_EQ(batch[i], k * 10 + i);
    }
}

TEST(DataLoader, RanksSplitAnEpochWithoutOverlapAndCoverIt) {
    const auto prefix = write_dataset("loader_ranks", 64 * 8 + 1);
    std::multiset<uint64_t> taken;
    for (int rank = 0; rank < 2; ++rank) {
        auto l = make_loader({prefix}, LoaderOptions{4, 8, 7, true, rank, 2});
        ASSERT_EQ(l.steps_per_epoch(), 8u);  // 64 windows / (2 ranks x 4)
        std::vector<uint32_t> batch;
        for (uint64_t s = 0; s < l.steps_per_epoch(); ++s) {
            for (uint64_t row = 0; row < 4; ++row) taken.insert(l.next_sample(row));
            l.next_batch(batch);
            // Row r starts at the window's first token: a multiple of 8.
            for (uint64_t row = 0; row < 4; ++row) EXPECT_EQ(batch[row * 9] % 8, 0u);
        }
    }
    ASSERT_EQ(taken.size(), 64u);
    EXPECT_EQ(std::set<uint64_t>(taken.begin(), taken.end()).size(), 64u);
}

TEST(DataLoader, ANewEpochStartsAfterTheLastFullStepWithANewOrder) {
    const auto prefix = write_dataset("loader_epochs", 10 * 4 + 1 + 3);
    auto l = make_loader({prefix}, LoaderOptions{3, 4, 5, true, 0, 1});
    ASSERT_EQ(l.samples_per_epoch(), 10u);
    std::vector<uint32_t> batch;
    std::vector<uint64_t> first;
    for (int s = 0; s < 3; ++s) {
        for (uint64_t r = 0; r < 3; ++r) first.push_back(l.next_sample(r));
        l.next_batch(batch);
    }
    EXPECT_EQ(l.state().epoch, 0u);
    l.next_batch(batch);  // 9 + 3 > 10: the remainder is dropped
    EXPECT_EQ(l.state().epoch, 1u);
    EXPECT_EQ(l.state().position, 3u);
}

TEST(DataLoader, ResumeFromASavedStateContinuesExactly) {
    const auto prefix = write_dataset("loader_resume", 5000);
    const LoaderOptions o{4, 16, 42, true, 1, 2};
    auto straight = make_loader({prefix}, o);
    std::vector<uint32_t> batch;
    for (int s = 0; s < 7; ++s) straight.next_batch(batch);
    const std::string saved = straight.state().to_json();
    std::vector<std::vector<uint32_t>> expected(60);
    for (auto& b : expected) straight.next_batch(b);  // crosses an epoch boundary (78 steps)

    auto resumed = make_loader({prefix}, o);
    auto state = LoaderState::from_json(saved);
    ASSERT_TRUE(state.ok());
    ASSERT_TRUE(resumed.restore(*state).ok());
    for (size_t s = 0; s < expected.size(); ++s) {
        resumed.next_batch(batch);
        ASSERT_EQ(batch, expected[s]) << "step " << s << " after resume";
    }
}

TEST(DataLoader, RestoreRefusesAStateFromAnotherWindowOrSeed) {
    const auto prefix = write_dataset("loader_refuse", 2000);
    auto l = make_loader({prefix}, LoaderOptions{2, 16, 1, true, 0, 1});
    LoaderState s = l.state();
    s.window = 32;
    auto st = l.restore(s);
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("sequence length changed"), std::string::npos) << st.message();
    s = l.state();
    s.seed = 2;
    EXPECT_FALSE(l.restore(s).ok());
    EXPECT_FALSE(LoaderState::from_json("{\"seed\": 1}").ok());
}

TEST(DataLoader, TooLittleDataForOneStepIsAClearError) {
    const auto prefix = write_dataset("loader_small", 50);
    auto corpus = TokenCorpus::open({prefix});
    ASSERT_TRUE(corpus.ok());
    auto l = WindowLoader::create(*corpus, LoaderOptions{8, 16, 0, true, 0, 1});
    ASSERT_FALSE(l.ok());
    EXPECT_NE(l.status().message().find("3 windows"), std::string::npos) << l.status().message();
}

TEST(DataLoader, WindowsNeverCrossFromOnePartIntoTheNext) {
    const auto a = write_dataset("loader_part_a", 25, 0);
    const std::string b = (fs::path(::testing::TempDir()) / "loader_part_b").string();
    auto w = make_llmc_writer(b, 50257, 1000);
    ASSERT_TRUE(w.ok());
    std::vector<uint32_t> ids(31);
    std::iota(ids.begin(), ids.end(), 1000u);
    ASSERT_TRUE((*w)->add_document(ids).ok());
    ASSERT_TRUE((*w)->commit().ok());
    auto l = make_loader({a, b}, LoaderOptions{1, 10, 0, false, 0, 1});
    EXPECT_EQ(l.samples_per_epoch(), 2u + 3u);  // (25-1)/10 + (31-1)/10
    std::vector<uint32_t> batch;
    std::vector<uint32_t> firsts;
    for (int s = 0; s < 5; ++s) {
        l.next_batch(batch);
        firsts.push_back(batch.front());
        EXPECT_EQ(batch.back() - batch.front(), 10u) << "window " << s << " is contiguous";
    }
    EXPECT_EQ(firsts, (std::vector<uint32_t>{0, 10, 1000, 1010, 1020}));
}

}  // namespace
}  // namespace trainrig::data

namespace trainrig::data {
namespace {

TEST(DataLoader, NextSampleAtAnEpochBoundaryNamesWhatNextBatchReads) {
    const auto prefix = write_dataset("loader_boundary", 10 * 4 + 1);
    auto l = make_loader({prefix}, LoaderOptions{3, 4, 9, true, 0, 1});
    std::vector<uint32_t> batch;
    for (int s = 0; s < 5; ++s) {
        std::vector<uint64_t> named;
        for (uint64_t r = 0; r < 3; ++r) named.push_back(l.next_sample(r));
        l.next_batch(batch);
        for (uint64_t r = 0; r < 3; ++r)
            EXPECT_EQ(batch[r * 5], named[r] * 4) << "step " << s << " row " << r;
    }
}

}  // namespace
}  // namespace trainrig::data
