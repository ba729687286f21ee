#include "train/rope_table.h"

#include <cmath>
#include <numbers>

namespace trainrig::train {

std::vector<double> rope_inv_freq(const ModelConfig& c) {
    const int hd = c.head_dim(), half = hd / 2;
    std::vector<double> inv(static_cast<size_t>(half));
    for (int i = 0; i < half; ++i) inv[i] = std::pow(c.rope_theta, -2.0 * i / hd);
    const plan::RopeScaling& s = c.rope_scaling;
    if (s.factor <= 0) return inv;
    // Llama 3.1 (transformers' _compute_llama3_parameters, arXiv:2407.21783 §3.4 context
    // extension): wavelengths under original/high_freq_factor are kept, over
    // original/low_freq_factor divided by factor, and those between blended linearly in
    // original/wavelength.
    const double original = static_cast<double>(s.original_max_positions);
    const double low_wavelen = original / s.low_freq_factor;
    const double high_wavelen = original / s.high_freq_factor;
    for (double& f : inv) {
        const double wavelen = 2 * std::numbers::pi / f;
        if (wavelen < high_wavelen) continue;
        if (wavelen > low_wavelen) {
            f /= s.factor;
            continue;
        }
        const double smooth =
            (original / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        f = (1 - smooth) * f / s.factor + smooth * f;
    }
    return inv;
}

template <class T>
void rope_table(const ModelConfig& c, int Tn, std::vector<T>& cos, std::vector<T>& sin) {
    const std::vector<double> inv = rope_inv_freq(c);
    const size_t half = inv.size();
    cos.resize(static_cast<size_t>(Tn) * half);
    sin.resize(cos.size());
    for (int t = 0; t < Tn; ++t)
        for (size_t i = 0; i < half; ++i) {
            const double angle = t * inv[i];
            cos[t * half + i] = static_cast<T>(std::cos(angle));
            sin[t * half + i] = static_cast<T>(std::sin(angle));
        }
}

template void rope_table<float>(const ModelConfig&, int, std::vector<float>&, std::vector<float>&);
template void rope_table<double>(const ModelConfig&, int, std::vector<double>&,
                                 std::vector<double>&);

}  // namespace trainrig::train
