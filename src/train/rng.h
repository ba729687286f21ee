// A small seeded generator whose sequence is the same on every machine and standard library
// (std::normal_distribution is not: its algorithm is implementation-defined). SplitMix64
// (data::splitmix64) for the bits, Box–Muller for normals. Its whole state is one
// integer, saved in checkpoints.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

#include "data/loader/permutation.h"

namespace trainrig::train {

class Rng {
public:
    explicit Rng(uint64_t seed = 0) : state_(seed) {}

    // The SplitMix64 sequence: state advances by the golden-ratio increment, output is mixed.
    uint64_t next() {
        const uint64_t out = data::splitmix64(state_);
        state_ += 0x9e3779b97f4a7c15ull;
        return out;
    }
    // Uniform in (0, 1]: 53 random bits, never 0 (so log() below is finite).
    double uniform() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }
    double normal() {
        const double u1 = uniform(), u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    }

    uint64_t state() const { return state_; }
    void set_state(uint64_t s) { state_ = s; }

private:
    uint64_t state_;
};

}  // namespace trainrig::train
