#include "data/loader/token_corpus.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>

#include "data/shards/llmc_format.h"
#include "data/shards/megatron_format.h"

namespace trainrig::data {
namespace fs = std::filesystem;

Result<std::shared_ptr<const TokenCorpus>> TokenCorpus::open(
    const std::vector<std::string>& paths) {
    auto corpus = std::make_shared<TokenCorpus>();
    std::error_code ec;
    for (const auto& path : paths) {
        if (fs::exists(path + ".idx", ec)) {
            auto d = MegatronDataset::open(path);
            if (!d) return d.status();
            auto owned = std::make_shared<MegatronDataset>(std::move(d).value());
            corpus->parts_.push_back(
                {owned, owned->bin().bytes().data(), owned->dtype(), owned->tokens()});
            continue;
        }
        const std::vector<std::string> shards = llmc_shard_paths(path);
        if (shards.empty())
            return Status{Errc::kNotFound,
                          fmt::format("found no token data at {} (neither {}.idx nor llm.c "
                                      "shards)",
                                      path, path)};
        for (const auto& shard : shards) {
            auto s = LlmcShard::open(shard);
            if (!s) return s.status();
            auto owned = std::make_shared<LlmcShard>(std::move(s).value());
            corpus->parts_.push_back(
                {owned, owned->token_bytes(), owned->dtype(), owned->tokens()});
        }
    }
    if (corpus->parts_.empty())
        return Status{Errc::kInvalidInput, "the loader was given no token data"};
    return std::shared_ptr<const TokenCorpus>(std::move(corpus));
}

uint64_t TokenCorpus::tokens() const {
    uint64_t n = 0;
    for (const auto& p : parts_) n += p.tokens;
    return n;
}

void TokenCorpus::copy(size_t p, uint64_t first, size_t n, uint32_t* out) const {
    const Part& part = parts_[p];
    const unsigned char* src = part.base + first * dtype_size(part.dtype);
    if (part.dtype == TokenDtype::kU16) {
        for (size_t i = 0; i < n; ++i) {
            uint16_t v;
            std::memcpy(&v, src + 2 * i, 2);
            out[i] = v;
        }
    } else if (part.dtype == TokenDtype::kI32 || part.dtype == TokenDtype::kU32) {
        std::memcpy(out, src, n * 4);
    } else {
        for (size_t i = 0; i < n; ++i)
            out[i] = static_cast<uint32_t>(load_token(part.base, first + i, part.dtype));
    }
}

}  // namespace trainrig::data
