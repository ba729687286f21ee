// A seeded bijection on [0, n) that needs no memory: a 4-round Feistel network on the smallest
// even number of bits covering n, with cycle-walking back into range. The order of an epoch of
// any size is computed per index, so resuming at position k costs nothing, and the result is
// the same on every machine and compiler (std::shuffle's algorithm is not specified).
#pragma once

#include <cstdint>

namespace trainrig::data {

class Permutation {
public:
    Permutation(uint64_t n, uint64_t seed);
    uint64_t size() const { return n_; }
    uint64_t operator()(uint64_t i) const;

private:
    uint64_t round(uint64_t half, int r) const;
    uint64_t n_;
    int half_bits_ = 1;
    uint64_t mask_ = 1;
    uint64_t keys_[4] = {};
};

// splitmix64 (Steele, Lea, Flood 2014): a well-mixed 64-bit step for seeds and keys.
uint64_t splitmix64(uint64_t x);

}  // namespace trainrig::data
