#include "core/gpu_selection.h"

#include <fmt/format.h>

namespace trainrig {

Status check_gpu_selection(const std::vector<int>& selected, size_t visible) {
    for (int g : selected) {
        if (g >= 0 && static_cast<size_t>(g) < visible) continue;
        return {Errc::kInvalidInput,
                visible == 0   ? fmt::format("--gpus names GPU {}, but this machine shows no "
                                               "NVIDIA GPU",
                                             g)
                : visible == 1 ? fmt::format("--gpus names GPU {}, but this machine has one GPU "
                                             "(0)",
                                             g)
                               : fmt::format("--gpus names GPU {}, but this machine has {} GPUs "
                                             "(0-{})",
                                             g, visible, visible - 1)};
    }
    return ok_status();
}

}  // namespace trainrig
