#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "core/staged_file.h"
#include "data/shards/little_endian.h"
#include "data/shards/llmc_format.h"
#include "data/shards/shard_writer.h"

namespace trainrig::data {
namespace {

class LlmcWriter final : public ShardWriter {
public:
    LlmcWriter(std::string prefix, TokenDtype dtype, uint64_t shard_tokens)
        : prefix_(std::move(prefix)), dtype_(dtype), shard_tokens_(shard_tokens) {}

    TokenDtype dtype() const override { return dtype_; }

    // Documents are cut at shard boundaries, as llm.c's fineweb.py does: a shard holds exactly
    // shard_tokens tokens, except the last.
    Status add_document(std::span<const uint32_t> ids) override {
        while (!ids.empty()) {
            if (shards_.empty() || in_shard_ == shard_tokens_) {
                // A full shard is finished and closed at once: open files and buffers stay at
                // one however many shards the run writes.
                if (!shards_.empty()) TRAINRIG_TRY(finish_shard(shards_.back(), shard_tokens_));
                TRAINRIG_TRY(start_shard());
            }
            const size_t take = std::min<uint64_t>(ids.size(), shard_tokens_ - in_shard_);
            packed_.clear();
            pack_tokens(ids.first(take), dtype_, packed_);
            TRAINRIG_TRY(shards_.back().write(packed_));
            in_shard_ += take;
            tokens_ += take;
            ids = ids.subspan(take);
        }
        ++documents_;
        return ok_status();
    }

    Result<std::vector<std::string>> commit(const std::atomic<bool>* cancel) override {
        if (shards_.empty()) TRAINRIG_TRY(start_shard());
        TRAINRIG_TRY(finish_shard(shards_.back(), in_shard_));
        if (cancel != nullptr && cancel->load()) return interrupted_status();
        std::vector<std::string> paths;
        for (auto& s : shards_) {
            TRAINRIG_TRY(s.publish());
            paths.push_back(s.target());
        }
        // Shards of an earlier, longer run would otherwise be read as part of this dataset.
        for (size_t i = shards_.size();; ++i) {
            const std::string stale = llmc_shard_path(prefix_, i);
            if (::unlink(stale.c_str()) != 0) break;
        }
        TRAINRIG_TRY(fsync_parent(paths.front()));
        return paths;
    }

private:
    Status start_shard() {
        auto f = StagedFile::create(llmc_shard_path(prefix_, shards_.size()));
        if (!f) return f.status();
        // Placeholder header; the real one (with the token count) is written at commit.
        TRAINRIG_TRY(f.value().write(std::string(kLlmcHeaderBytes, '\0')));
        shards_.push_back(std::move(f).value());
        in_shard_ = 0;
        return ok_status();
    }

    Status finish_shard(StagedFile& f, uint64_t n) {
        TRAINRIG_TRY(write_header(f, n));
        return f.prepare();
    }

    Status write_header(StagedFile& f, uint64_t n) {
        int32_t header[256] = {};
        const bool wide = dtype_ == TokenDtype::kU32;
        header[0] = wide ? kLlmcMagicLlama3 : kLlmcMagicGpt2;
        header[1] = wide ? 7 : 1;
        header[2] = static_cast<int32_t>(n);
        return f.write_at(0,
                          std::string_view(reinterpret_cast<const char*>(header), sizeof header));
    }

    std::string prefix_;
    TokenDtype dtype_;
    uint64_t shard_tokens_;
    std::vector<StagedFile> shards_;
    uint64_t in_shard_ = 0;
    std::string packed_;
};

}  // namespace

Result<std::unique_ptr<ShardWriter>> make_llmc_writer(const std::string& prefix, size_t vocab_size,
                                                      uint64_t shard_tokens) {
    if (shard_tokens == 0 || shard_tokens > static_cast<uint64_t>(INT32_MAX))
        return Status{Errc::kInvalidInput,
                      fmt::format("--shard-tokens {} is outside 1..{} (the header's count is an "
                                  "int32)",
                                  shard_tokens, INT32_MAX)};
    const TokenDtype dtype = vocab_size <= 65536 ? TokenDtype::kU16 : TokenDtype::kU32;
    return std::unique_ptr<ShardWriter>(std::make_unique<LlmcWriter>(prefix, dtype, shard_tokens));
}

std::string llmc_shard_path(const std::string& prefix, size_t i) {
    return fmt::format("{}_{:06d}.bin", prefix, i);
}

std::optional<size_t> llmc_shard_number(const std::string& path) {
    // "_" + six digits + ".bin": the suffix llmc_shard_path writes (llm.c's own names too).
    constexpr size_t kSuffix = 1 + 6 + 4;
    if (path.size() < kSuffix || !path.ends_with(".bin")) return std::nullopt;
    const size_t at = path.size() - kSuffix;
    if (path[at] != '_') return std::nullopt;
    size_t n = 0;
    for (size_t i = at + 1; i < at + 7; ++i) {
        if (path[i] < '0' || path[i] > '9') return std::nullopt;
        n = n * 10 + static_cast<size_t>(path[i] - '0');
    }
    return n;
}

std::vector<std::string> llmc_shard_paths(const std::string& name) {
    std::error_code ec;
    if (name.ends_with(".bin") && std::filesystem::is_regular_file(name, ec)) return {name};
    std::vector<std::string> out;
    for (size_t i = 0;; ++i) {
        std::string path = llmc_shard_path(name, i);
        if (!std::filesystem::is_regular_file(path, ec)) break;
        out.push_back(std::move(path));
    }
    return out;
}

Result<LlmcShard> LlmcShard::open(const std::string& path) {
    auto f = MappedFile::open(path);
    if (!f) return f.status();
    LlmcShard s;
    s.file_ = std::move(f).value();
    const auto bytes = s.file_.bytes();
    const auto bad = [&](std::string what) {
        return Status{Errc::kInvalidInput, fmt::format("{}: {}", path, what)};
    };
    if (bytes.size() < kLlmcHeaderBytes) return bad("shorter than llm.c's 1024-byte header");
    const auto magic = load_le<int32_t>(bytes.data());
    const auto version = load_le<int32_t>(bytes.data() + 4);
    const auto count = load_le<int32_t>(bytes.data() + 8);
    if (magic == kLlmcMagicGpt2 && version == 1) {
        s.dtype_ = TokenDtype::kU16;
    } else if (magic == kLlmcMagicLlama3 && version == 7) {
        s.dtype_ = TokenDtype::kU32;
    } else {
        return bad(fmt::format("magic {} version {} is not an llm.c token shard", magic, version));
    }
    if (count < 0) return bad(fmt::format("negative token count {}", count));
    s.tokens_ = static_cast<uint64_t>(count);
    const uint64_t expected = kLlmcHeaderBytes + s.tokens_ * dtype_size(s.dtype_);
    if (bytes.size() != expected)
        return bad(fmt::format("{} bytes, but its header says {} tokens ({} bytes)", bytes.size(),
                               count, expected));
    return s;
}

}  // namespace trainrig::data
