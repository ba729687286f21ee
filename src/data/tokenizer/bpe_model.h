// The byte-pair-encoding model shared by every byte-level tokenizer trainrig reads: token bytes
// by id, the merges, and the merge loop. Two rule sets exist and map onto one table:
//  - merge lists (GPT-2 vocab.bpe, Hugging Face "merges"): the pair listed first merges first;
//  - rank files (tiktoken): the pair whose joined bytes have the lowest rank merges first.
// For a rank file every split of every token into two tokens becomes a pair entry whose priority
// is the joined token's rank, which is exactly tiktoken's rule. Ties go to the leftmost pair in
// both, as in tiktoken's _byte_pair_merge and tokenizers' BPE word merge.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "data/tokenizer/flat_tables.h"

namespace trainrig::data {

class BpeModel {
public:
    // `tokens[id]` are the raw bytes of token id (empty for ids with no ordinary token).
    // `whole_piece_first`: a pre-token that is itself a token is emitted as is (tiktoken does
    // this; tokenizers does it with "ignore_merges").
    BpeModel(std::vector<std::string> tokens, bool whole_piece_first);

    // From a rank file: every token's rank is its id.
    static Result<BpeModel> from_ranks(std::vector<std::string> tokens, std::string_view what);
    // From a merge list: pairs of token strings (raw bytes), highest priority first.
    static Result<BpeModel> from_merges(
        std::vector<std::string> tokens,
        const std::vector<std::pair<std::string, std::string>>& merges, bool whole_piece_first,
        std::string_view what);

    size_t token_count() const { return tokens_.size(); }
    const std::string& token_bytes(uint32_t id) const { return tokens_[id]; }
    uint32_t find(std::string_view bytes) const { return vocab_.find(bytes); }
    bool whole_piece_first() const { return whole_piece_first_; }

    // Appends the ids of one pre-token (non-empty) to `out`.
    void encode_piece(std::string_view piece, std::vector<uint32_t>& out) const;

private:
    Status index(std::string_view what);
    void merge_small(std::string_view piece, std::vector<uint32_t>& out) const;
    void merge_large(std::string_view piece, std::vector<uint32_t>& out) const;

    std::vector<std::string> tokens_;
    ByteStringMap vocab_;
    PairMap merges_;
    std::array<uint32_t, 256> byte_id_{};
    bool whole_piece_first_;
};

}  // namespace trainrig::data
