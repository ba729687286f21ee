// Rotary position embedding's angles (Su et al. 2021, arXiv:2104.09864 §3.4): channel pair i of
// a head of size hd turns by position · θ^(−2i/hd). Llama 3.1's rope_scaling "llama3" then
// stretches the long wavelengths (plan::RopeScaling). Computed once per shape, in double, and
// shared by the CPU and CUDA backends, so both rotate by the same angles.
#pragma once

#include <vector>

#include "train/model_config.h"

namespace trainrig::train {

// The hd/2 inverse frequencies of the shape, scaling applied.
std::vector<double> rope_inv_freq(const ModelConfig& c);

// cos and sin of position · inv_freq for positions 0..Tn−1: (Tn, hd/2) each.
template <class T>
void rope_table(const ModelConfig& c, int Tn, std::vector<T>& cos, std::vector<T>& sin);

extern template void rope_table<float>(const ModelConfig&, int, std::vector<float>&,
                                       std::vector<float>&);
extern template void rope_table<double>(const ModelConfig&, int, std::vector<double>&,
                                        std::vector<double>&);

}  // namespace trainrig::train
