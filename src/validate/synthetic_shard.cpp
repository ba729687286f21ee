#include "validate/synthetic_shard.h"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <vector>

#include "data/loader/permutation.h"
#include "data/shards/shard_writer.h"

namespace trainrig::validate {

namespace fs = std::filesystem;

namespace {

constexpr uint32_t kGpt2Vocab = 50257;            // GPT-2's vocabulary (docs/FACTS.md)
constexpr uint64_t kDocumentTokens = 1ull << 16;  // written a document at a time

}  // namespace

Result<SyntheticShard> SyntheticShard::write(const std::string& parent, uint64_t tokens,
                                             const std::atomic<bool>* cancel) {
    std::string tmpl = (fs::path(parent) / "trainrig-data-path-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return errno_status(errno, "create a folder in", parent);
    SyntheticShard shard(tmpl, "", tokens);  // removes the folder on any early return
    auto writer = data::make_llmc_writer(tmpl + "/tokens", kGpt2Vocab, tokens);
    if (!writer.ok()) return writer.status();
    std::vector<uint32_t> ids;
    uint64_t counter = 0, written = 0;
    while (written < tokens) {
        if (cancel && cancel->load()) return data::interrupted_status();
        ids.resize(std::min(kDocumentTokens, tokens - written));
        for (uint32_t& id : ids)
            id = static_cast<uint32_t>(data::splitmix64(counter++) % kGpt2Vocab);
        TRAINRIG_TRY((*writer)->add_document(ids));
        written += ids.size();
    }
    auto files = (*writer)->commit(cancel);
    if (!files.ok()) return files.status();
    if (files->empty()) return Status{Errc::kIo, "the token shard writer wrote no file"};
    shard.path_ = files->front();
    return shard;
}

SyntheticShard::SyntheticShard(SyntheticShard&& other) noexcept
    : folder_(std::move(other.folder_)), path_(std::move(other.path_)), tokens_(other.tokens_) {
    other.folder_.clear();
}

SyntheticShard::~SyntheticShard() {
    std::error_code ec;
    if (!folder_.empty()) fs::remove_all(folder_, ec);
}

}  // namespace trainrig::validate
