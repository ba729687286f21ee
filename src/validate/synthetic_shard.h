// The data-path stage's tokens when --shards names none: uniformly random GPT-2 token ids
// (vocabulary 50,257) in one llm.c shard, written in a folder of its own under the data
// directory, so the loader's first pass reads from the disk training reads from, or under the
// temp directory. The folder is removed when the object goes; a loader still mapping the file
// keeps reading it (the kernel frees it at the last unmap).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace trainrig::validate {

class SyntheticShard {
public:
    static Result<SyntheticShard> write(const std::string& parent, uint64_t tokens,
                                        const std::atomic<bool>* cancel);
    SyntheticShard(SyntheticShard&& other) noexcept;
    SyntheticShard& operator=(SyntheticShard&&) = delete;
    SyntheticShard(const SyntheticShard&) = delete;
    ~SyntheticShard();

    const std::string& path() const { return path_; }  // the shard file
    uint64_t tokens() const { return tokens_; }

private:
    SyntheticShard(std::string folder, std::string path, uint64_t tokens)
        : folder_(std::move(folder)), path_(std::move(path)), tokens_(tokens) {}
    std::string folder_;
    std::string path_;
    uint64_t tokens_ = 0;
};

}  // namespace trainrig::validate
