// `trainrig topo` output: the matrix as nvidia-smi topo -m lays it out, or as JSON
// ("trainrig.topo", docs/formats.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "topo/gpu_matrix.h"

namespace trainrig {

inline constexpr const char* kTopoSchema = "trainrig.topo";
inline constexpr int kTopoSchemaVersion = 1;

std::string render_topo_table(const GpuMatrix& m);
nlohmann::json render_topo_json(const GpuMatrix& m);

}  // namespace trainrig
