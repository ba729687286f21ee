// Flat open-addressing tables for the encoder's hot path: byte string -> id (vocabulary, piece
// cache) and token pair -> merge (BPE). std::unordered_map allocates one node per entry and
// reaches std::string keys through a pointer; the encoder looks up once or more per pre-token,
// and these tables (one slot array, keys packed in one arena, linear probing) are what lets
// `bench tokenizer` beat the reference tokenizers.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace trainrig::data {

inline constexpr uint32_t kNoToken = 0xFFFFFFFFu;

// A 64-bit hash for short byte strings (8 bytes per multiply).
inline uint64_t hash_bytes(const char* p, size_t n) {
    constexpr uint64_t k = 0x9E3779B97F4A7C15ull;
    uint64_t h = k ^ (n * 0xC2B2AE3D27D4EB4Full);
    while (n >= 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        h = (h ^ v) * k;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    if (n > 0) {
        uint64_t v = 0;
        std::memcpy(&v, p, n);
        h = (h ^ v ^ (uint64_t{n} << 59)) * k;
    }
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ull;
    h ^= h >> 32;
    return h;
}

// Byte string -> uint32 value. Values are any uint32 but kNoToken (which means "absent").
class ByteStringMap {
public:
    ByteStringMap() { rehash(64); }

    size_t size() const { return size_; }
    void reserve(size_t n) {
        size_t cap = 64;
        while (cap < n * 2) cap <<= 1;
        if (cap > slots_.size()) rehash(cap);
    }
    void clear() {
        arena_.clear();
        size_ = 0;
        std::fill(slots_.begin(), slots_.end(), Slot{});
    }

    // Inserts or overwrites.
    void put(std::string_view key, uint32_t value) {
        if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
        const uint64_t h = hash_bytes(key.data(), key.size());
        size_t i = h & (slots_.size() - 1);
        while (slots_[i].value != kNoToken) {
            if (matches(slots_[i], h, key)) {
                slots_[i].value = value;
                return;
            }
            i = (i + 1) & (slots_.size() - 1);
        }
        slots_[i] =
            Slot{h, static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(key.size()), value};
        arena_.append(key);
        ++size_;
    }

    uint32_t find(std::string_view key) const {
        const uint64_t h = hash_bytes(key.data(), key.size());
        size_t i = h & (slots_.size() - 1);
        while (slots_[i].value != kNoToken) {
            if (matches(slots_[i], h, key)) return slots_[i].value;
            i = (i + 1) & (slots_.size() - 1);
        }
        return kNoToken;
    }

private:
    struct Slot {
        uint64_t hash = 0;
        uint32_t offset = 0;
        uint32_t length = 0;
        uint32_t value = kNoToken;
    };

    bool matches(const Slot& s, uint64_t h, std::string_view key) const {
        return s.hash == h && s.length == key.size() &&
               std::memcmp(arena_.data() + s.offset, key.data(), key.size()) == 0;
    }

    void rehash(size_t cap) {
        std::vector<Slot> old(cap);
        old.swap(slots_);
        for (const Slot& s : old) {
            if (s.value == kNoToken) continue;
            size_t i = s.hash & (cap - 1);
            while (slots_[i].value != kNoToken) i = (i + 1) & (cap - 1);
            slots_[i] = s;
        }
    }

    std::vector<Slot> slots_;
    std::string arena_;
    size_t size_ = 0;
};

// (left id, right id) -> the merge that joins them: its priority (lower merges first) and the
// id of the joined token.
struct Merge {
    uint32_t rank = kNoToken;
    uint32_t id = kNoToken;
};

class PairMap {
public:
    PairMap() { rehash(64); }

    size_t size() const { return size_; }
    void reserve(size_t n) {
        size_t cap = 64;
        while (cap < n * 2) cap <<= 1;
        if (cap > slots_.size()) rehash(cap);
    }

    // Keeps the existing entry if the pair is already there with a lower rank.
    void put(uint32_t left, uint32_t right, Merge m) {
        if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
        const uint64_t key = pack(left, right);
        size_t i = slot_of(key);
        while (slots_[i].merge.rank != kNoToken) {
            if (slots_[i].key == key) {
                if (m.rank < slots_[i].merge.rank) slots_[i].merge = m;
                return;
            }
            i = (i + 1) & (slots_.size() - 1);
        }
        slots_[i] = Slot{key, m};
        ++size_;
    }

    Merge find(uint32_t left, uint32_t right) const {
        const uint64_t key = pack(left, right);
        size_t i = slot_of(key);
        while (slots_[i].merge.rank != kNoToken) {
            if (slots_[i].key == key) return slots_[i].merge;
            i = (i + 1) & (slots_.size() - 1);
        }
        return {};
    }

private:
    struct Slot {
        uint64_t key = 0;
        Merge merge;
    };
    static uint64_t pack(uint32_t a, uint32_t b) { return (uint64_t{a} << 32) | b; }
    size_t slot_of(uint64_t key) const {
        uint64_t h = key * 0x9E3779B97F4A7C15ull;
        h ^= h >> 31;
        return h & (slots_.size() - 1);
    }
    void rehash(size_t cap) {
        std::vector<Slot> old(cap);
        old.swap(slots_);
        for (const Slot& s : old) {
            if (s.merge.rank == kNoToken) continue;
            size_t i = slot_of(s.key);
            while (slots_[i].merge.rank != kNoToken) i = (i + 1) & (cap - 1);
            slots_[i] = s;
        }
    }

    std::vector<Slot> slots_;
    size_t size_ = 0;
};

}  // namespace trainrig::data
