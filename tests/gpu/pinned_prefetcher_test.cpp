// On a machine with a GPU: the pinned double buffer delivers exactly the loader's batches, in
// order, while the previous copy may still be in flight. Skips without a CUDA device.
#include "data/loader/pinned_prefetcher.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "data/shards/shard_writer.h"

namespace trainrig::data {
namespace {

TEST(PinnedPrefetcher, DeviceBatchesEqualTheLoadersBatches) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
        GTEST_SKIP() << "no CUDA device";
    const std::string prefix =
        (std::filesystem::path(::testing::TempDir()) / "prefetch_data").string();
    auto w = make_megatron_writer(prefix, 50257);
    ASSERT_TRUE(w.ok());
    std::vector<uint32_t> ids(100000);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<uint32_t>((i * 7919) % 50257);
    ASSERT_TRUE((*w)->add_document(ids).ok());
    ASSERT_TRUE((*w)->commit().ok());
    auto corpus = TokenCorpus::open({prefix});
    ASSERT_TRUE(corpus.ok());
    const LoaderOptions o{16, 256, 3, true, 0, 1};
    auto reference = WindowLoader::create(*corpus, o);
    auto feeding = WindowLoader::create(*corpus, o);
    ASSERT_TRUE(reference.ok() && feeding.ok());
    WindowLoader ref = std::move(reference).value(), feed = std::move(feeding).value();
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    {
        auto p = PinnedPrefetcher::create(feed, stream);
        ASSERT_TRUE(p.ok()) << p.status().message();
        PinnedPrefetcher prefetcher = std::move(p).value();
        std::vector<uint32_t> expected, got(ref.batch_tokens());
        for (int step = 0; step < 40; ++step) {
            auto device = prefetcher.next();
            ASSERT_TRUE(device.ok()) << device.status().message();
            ref.next_batch(expected);
            ASSERT_EQ(cudaMemcpyAsync(got.data(), *device, got.size() * 4, cudaMemcpyDeviceToHost,
                                      stream),
                      cudaSuccess);
            ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
            ASSERT_EQ(got, expected) << "step " << step;
        }
    }
    cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace trainrig::data
