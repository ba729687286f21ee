#include "data/tokenizer/bpe_model.h"

#include <fmt/format.h>

#include <queue>

namespace trainrig::data {
namespace {

// Pieces up to this many bytes use the quadratic scan (no allocation, cache friendly); longer
// ones a heap, so a 100 MB run of letters stays O(n log n) rather than O(n^2).
constexpr size_t kSmallPiece = 48;

}  // namespace

BpeModel::BpeModel(std::vector<std::string> tokens, bool whole_piece_first)
    : tokens_(std::move(tokens)), whole_piece_first_(whole_piece_first) {}

Status BpeModel::index(std::string_view what) {
    vocab_.reserve(tokens_.size());
    for (size_t id = 0; id < tokens_.size(); ++id) {
        if (tokens_[id].empty()) continue;
        if (vocab_.find(tokens_[id]) != kNoToken)
            return {Errc::kInvalidInput,
                    fmt::format("{} lists the token {:?} twice", what, tokens_[id])};
        vocab_.put(tokens_[id], static_cast<uint32_t>(id));
    }
    for (unsigned b = 0; b < 256; ++b) {
        const std::string one(1, static_cast<char>(b));
        byte_id_[b] = vocab_.find(one);
        if (byte_id_[b] == kNoToken)
            return {Errc::kInvalidInput,
                    fmt::format("{} has no token for the byte 0x{:02x}; only byte-level BPE "
                                "vocabularies (all 256 bytes) are supported",
                                what, b)};
    }
    return ok_status();
}

Result<BpeModel> BpeModel::from_ranks(std::vector<std::string> tokens, std::string_view what) {
    BpeModel m(std::move(tokens), true);
    TRAINRIG_TRY(m.index(what));
    size_t pairs = 0;
    for (const auto& t : m.tokens_) pairs += t.size() > 1 ? t.size() - 1 : 0;
    m.merges_.reserve(pairs);
    for (uint32_t id = 0; id < m.tokens_.size(); ++id) {
        const std::string_view t = m.tokens_[id];
        for (size_t k = 1; k < t.size(); ++k) {
            const uint32_t left = m.vocab_.find(t.substr(0, k));
            if (left == kNoToken) continue;
            const uint32_t right = m.vocab_.find(t.substr(k));
            if (right == kNoToken) continue;
            m.merges_.put(left, right, Merge{id, id});
        }
    }
    return m;
}

Result<BpeModel> BpeModel::from_merges(
    std::vector<std::string> tokens, const std::vector<std::pair<std::string, std::string>>& merges,
    bool whole_piece_first, std::string_view what) {
    BpeModel m(std::move(tokens), whole_piece_first);
    TRAINRIG_TRY(m.index(what));
    m.merges_.reserve(merges.size());
    for (size_t rank = 0; rank < merges.size(); ++rank) {
        const auto& [a, b] = merges[rank];
        const uint32_t left = m.vocab_.find(a);
        const uint32_t right = m.vocab_.find(b);
        const uint32_t joined = m.vocab_.find(a + b);
        if (left == kNoToken || right == kNoToken || joined == kNoToken)
            return Status{Errc::kInvalidInput,
                          fmt::format("{}: merge {} ({:?} + {:?}) names a token that is not in the "
                                      "vocabulary",
                                      what, rank + 1, a, b)};
        m.merges_.put(left, right, Merge{static_cast<uint32_t>(rank), joined});
    }
    return m;
}

void BpeModel::encode_piece(std::string_view piece, std::vector<uint32_t>& out) const {
    if (piece.size() == 1) {
        out.push_back(byte_id_[static_cast<unsigned char>(piece[0])]);
        return;
    }
    if (whole_piece_first_) {
        if (const uint32_t id = vocab_.find(piece); id != kNoToken) {
            out.push_back(id);
            return;
        }
    }
    if (piece.size() <= kSmallPiece)
        merge_small(piece, out);
    else
        merge_large(piece, out);
}

void BpeModel::merge_small(std::string_view piece, std::vector<uint32_t>& out) const {
    uint32_t ids[kSmallPiece];
    Merge pair[kSmallPiece];
    size_t n = piece.size();
    for (size_t i = 0; i < n; ++i) ids[i] = byte_id_[static_cast<unsigned char>(piece[i])];
    for (size_t i = 0; i + 1 < n; ++i) pair[i] = merges_.find(ids[i], ids[i + 1]);
    while (n > 1) {
        size_t best = n;
        uint32_t best_rank = kNoToken;
        for (size_t i = 0; i + 1 < n; ++i) {
            if (pair[i].rank < best_rank) {
                best_rank = pair[i].rank;
                best = i;
            }
        }
        if (best == n) break;
        ids[best] = pair[best].id;
        for (size_t i = best + 1; i + 1 < n; ++i) {
            ids[i] = ids[i + 1];
            pair[i] = pair[i + 1];
        }
        --n;
        if (best > 0) pair[best - 1] = merges_.find(ids[best - 1], ids[best]);
        if (best + 1 < n) pair[best] = merges_.find(ids[best], ids[best + 1]);
    }
    out.insert(out.end(), ids, ids + n);
}

void BpeModel::merge_large(std::string_view piece, std::vector<uint32_t>& out) const {
    // Parts form a linked list indexed by their first byte; the heap holds candidate merges,
    // ordered by (rank, position) so the leftmost of equal ranks goes first. An entry is stale
    // when either side has changed since it was pushed.
    const size_t n = piece.size();
    constexpr uint32_t kEnd = 0xFFFFFFFFu;
    std::vector<uint32_t> id(n), next(n), prev(n);
    std::vector<bool> alive(n, true);
    for (size_t i = 0; i < n; ++i) {
        id[i] = byte_id_[static_cast<unsigned char>(piece[i])];
        next[i] = i + 1 < n ? static_cast<uint32_t>(i + 1) : kEnd;
        prev[i] = i > 0 ? static_cast<uint32_t>(i - 1) : kEnd;
    }
    struct Candidate {
        uint32_t rank, pos, left, right, joined;
        bool operator>(const Candidate& o) const {
            return rank != o.rank ? rank > o.rank : pos > o.pos;
        }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    const auto push = [&](uint32_t pos) {
        if (pos == kEnd || next[pos] == kEnd) return;
        const Merge m = merges_.find(id[pos], id[next[pos]]);
        if (m.rank != kNoToken) heap.push({m.rank, pos, id[pos], id[next[pos]], m.id});
    };
    for (uint32_t i = 0; i + 1 < n; ++i) push(i);
    while (!heap.empty()) {
        const Candidate c = heap.top();
        heap.pop();
        if (!alive[c.pos] || id[c.pos] != c.left) continue;
        const uint32_t r = next[c.pos];
        if (r == kEnd || id[r] != c.right) continue;
        id[c.pos] = c.joined;
        alive[r] = false;
        next[c.pos] = next[r];
        if (next[r] != kEnd) prev[next[r]] = c.pos;
        push(prev[c.pos]);
        push(c.pos);
    }
    for (uint32_t i = 0; i != kEnd; i = next[i]) out.push_back(id[i]);
}

}  // namespace trainrig::data
