// Megatron-LM's indexed dataset (megatron/core/datasets/indexed_dataset.py): PREFIX.bin holds
// the tokens back to back; PREFIX.idx = "MMIDIDX\0\0", u64 version 1, u8 dtype code,
// u64 sequence count, u64 document count (documents + 1), i32 lengths[sequences],
// i64 byte pointers[sequences], i64 document indices[documents + 1]. Little-endian.
#include <fmt/format.h>

#include <cstring>
#include <fstream>

#include "core/staged_file.h"
#include "data/shards/little_endian.h"
#include "data/shards/megatron_format.h"
#include "data/shards/shard_writer.h"

namespace trainrig::data {
namespace {

class MegatronWriter final : public ShardWriter {
public:
    MegatronWriter(std::string prefix, TokenDtype dtype, StagedFile bin, StagedFile lengths)
        : prefix_(std::move(prefix)),
          dtype_(dtype),
          bin_(std::move(bin)),
          lengths_(std::move(lengths)) {}

    TokenDtype dtype() const override { return dtype_; }

    Status add_document(std::span<const uint32_t> ids) override {
        if (ids.size() > static_cast<size_t>(INT32_MAX))
            return {Errc::kInvalidInput,
                    fmt::format("a document of {} tokens exceeds the int32 length field of the "
                                "Megatron index",
                                ids.size())};
        packed_.clear();
        pack_tokens(ids, dtype_, packed_);
        TRAINRIG_TRY(bin_.write(packed_));
        std::string len;
        append_le<int32_t>(len, static_cast<int32_t>(ids.size()));
        TRAINRIG_TRY(lengths_.write(len));
        ++documents_;
        tokens_ += ids.size();
        return ok_status();
    }

    Result<std::vector<std::string>> commit(const std::atomic<bool>* cancel) override {
        auto created = StagedFile::create(prefix_ + ".idx");
        if (!created) return created.status();
        StagedFile idx_file = std::move(created).value();
        StagedFile* idx = &idx_file;
        std::string header(kMegatronMagic.data(), kMegatronMagic.size());
        append_le<uint64_t>(header, 1);
        header.push_back(static_cast<char>(dtype_));
        append_le<uint64_t>(header, documents_);
        append_le<uint64_t>(header, documents_ + 1);
        TRAINRIG_TRY(idx->write(header));
        TRAINRIG_TRY(lengths_.flush());
        // Lengths, then pointers computed from them, read back from the side file in chunks so
        // memory stays bounded however many documents there are.
        for (int pass = 0; pass < 2; ++pass) {
            std::ifstream in(lengths_.temp_path(), std::ios::binary);
            if (!in.is_open())
                return Status{Errc::kIo, fmt::format("cannot reopen {}", lengths_.temp_path())};
            std::vector<char> chunk(1 << 20);
            int64_t pointer = 0;
            uint64_t read_back = 0;
            std::string out;
            while (in) {
                in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
                const auto got = static_cast<size_t>(in.gcount());
                if (got == 0) break;
                read_back += got;
                if (pass == 0) {
                    TRAINRIG_TRY(idx->write(std::string_view(chunk.data(), got)));
                    continue;
                }
                out.clear();
                for (size_t k = 0; k + 4 <= got; k += 4) {
                    int32_t len;
                    std::memcpy(&len, chunk.data() + k, 4);
                    append_le<int64_t>(out, pointer);
                    pointer += static_cast<int64_t>(len) * static_cast<int64_t>(dtype_size(dtype_));
                }
                TRAINRIG_TRY(idx->write(out));
            }
            if (in.bad() || read_back != 4 * documents_)
                return Status{Errc::kIo,
                              fmt::format("reading back {} gave {} of {} bytes",
                                          lengths_.temp_path(), read_back, 4 * documents_)};
        }
        std::string docs;
        for (uint64_t d = 0; d <= documents_; ++d) {
            append_le<int64_t>(docs, static_cast<int64_t>(d));
            if (docs.size() >= (1 << 20)) {
                TRAINRIG_TRY(idx->write(docs));
                docs.clear();
            }
        }
        TRAINRIG_TRY(idx->write(docs));
        // Both files durable first; then the .bin renamed before the .idx, so a reader that
        // finds the new .idx also finds the .bin it describes.
        TRAINRIG_TRY(bin_.prepare());
        TRAINRIG_TRY(idx->prepare());
        if (cancel != nullptr && cancel->load()) return interrupted_status();
        TRAINRIG_TRY(bin_.publish());
        TRAINRIG_TRY(idx->publish());
        lengths_.abandon();
        TRAINRIG_TRY(fsync_parent(prefix_ + ".idx"));
        return std::vector<std::string>{prefix_ + ".bin", prefix_ + ".idx"};
    }

private:
    std::string prefix_;
    TokenDtype dtype_;
    StagedFile bin_;
    StagedFile lengths_;
    std::string packed_;
};

}  // namespace

void pack_tokens(std::span<const uint32_t> ids, TokenDtype dtype, std::string& out) {
    const size_t size = dtype_size(dtype);
    const size_t at = out.size();
    out.resize(at + ids.size() * size);
    char* p = out.data() + at;
    for (const uint32_t id : ids) {
        if (size == 2) {
            const auto v = static_cast<uint16_t>(id);
            std::memcpy(p, &v, 2);
        } else {
            std::memcpy(p, &id, 4);
        }
        p += size;
    }
}

Result<std::unique_ptr<ShardWriter>> make_megatron_writer(const std::string& prefix,
                                                          size_t vocab_size) {
    auto bin = StagedFile::create(prefix + ".bin");
    if (!bin) return bin.status();
    auto lengths = StagedFile::create(prefix + ".lengths");
    if (!lengths) return lengths.status();
    return std::unique_ptr<ShardWriter>(
        std::make_unique<MegatronWriter>(prefix, megatron_dtype_for_vocab(vocab_size),
                                         std::move(bin).value(), std::move(lengths).value()));
}

}  // namespace trainrig::data
