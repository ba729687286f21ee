// The data pattern the copy benchmarks move and check: a hash of each 32-bit word's index, so a
// misplaced, stale or torn block is seen. Computed the same way on the host and in kernels.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/host_device.h"

namespace trainrig::cuda {

// splitmix64's finaliser (Steele et al. 2014), folded to 32 bits.
TRAINRIG_HOST_DEVICE inline uint32_t pattern_word(size_t index, uint32_t seed) {
    uint64_t z =
        static_cast<uint64_t>(index) + (static_cast<uint64_t>(seed) << 32) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<uint32_t>(z ^ (z >> 32));
}

// A uniform value in [-1, 1) from the same hash: random matrix inputs without a host round trip.
TRAINRIG_HOST_DEVICE inline float pattern_uniform(size_t index, uint32_t seed) {
    return static_cast<float>(pattern_word(index, seed) >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

}  // namespace trainrig::cuda
