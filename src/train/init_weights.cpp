#include "train/init_weights.h"

#include <algorithm>
#include <cmath>

#include "train/rng.h"

namespace trainrig::train {

template <class T>
void init_model_weights(const ParamLayout& layout, int layers, uint64_t seed, std::span<T> params) {
    Rng rng(seed);
    const double residual_std = 0.02 / std::sqrt(2.0 * layers);
    for (int i = 0; i < kParamCount; ++i) {
        const auto which = static_cast<Param>(i);
        const TensorSlot& s = layout[which];
        T* data = params.data() + s.offset;
        if (s.matrix) {
            const bool residual = which == Param::kAttnProjW || which == Param::kFcProjW;
            const double std = residual ? residual_std : 0.02;
            for (size_t k = 0; k < s.size; ++k) data[k] = static_cast<T>(rng.normal() * std);
        } else {
            const bool gain =
                which == Param::kLn1W || which == Param::kLn2W || which == Param::kLnfW;
            std::fill(data, data + s.size, gain ? T(1) : T(0));
        }
    }
}

template void init_model_weights<float>(const ParamLayout&, int, uint64_t, std::span<float>);
template void init_model_weights<double>(const ParamLayout&, int, uint64_t, std::span<double>);

}  // namespace trainrig::train
