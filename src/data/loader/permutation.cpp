#include "data/loader/permutation.h"

namespace trainrig::data {

uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

Permutation::Permutation(uint64_t n, uint64_t seed) : n_(n) {
    while ((uint64_t{1} << (2 * half_bits_)) < n && half_bits_ < 31) ++half_bits_;
    mask_ = (uint64_t{1} << half_bits_) - 1;
    uint64_t k = seed;
    for (auto& key : keys_) key = k = splitmix64(k);
}

uint64_t Permutation::round(uint64_t half, int r) const {
    return splitmix64(half ^ keys_[r]) & mask_;
}

uint64_t Permutation::operator()(uint64_t i) const {
    if (n_ <= 1) return 0;
    uint64_t x = i;
    do {
        uint64_t left = x >> half_bits_, right = x & mask_;
        for (int r = 0; r < 4; ++r) {
            const uint64_t next = left ^ round(right, r);
            left = right;
            right = next;
        }
        x = (left << half_bits_) | right;
    } while (x >= n_);
    return x;
}

}  // namespace trainrig::data
