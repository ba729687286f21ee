// GPT-2's initialisation (Radford et al. 2019, §2.3; the released code), used for both families:
// weights N(0, 0.02) (Llama's initializer_range in transformers is the same 0.02), the two
// residual projections scaled by 1/√(2L), biases 0, norm gains 1. Drawn from a seeded Rng in
// ParamLayout order, so every backend (and every machine) starts from the same weights.
#pragma once

#include <cstdint>
#include <span>

#include "train/param_layout.h"

namespace trainrig::train {

template <class T>
void init_model_weights(const ParamLayout& layout, int layers, uint64_t seed, std::span<T> params);

extern template void init_model_weights<float>(const ParamLayout&, int, uint64_t, std::span<float>);
extern template void init_model_weights<double>(const ParamLayout&, int, uint64_t,
                                                std::span<double>);

}  // namespace trainrig::train
