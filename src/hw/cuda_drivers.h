// Which NVIDIA Linux driver a CUDA version needs. Source: CUDA Toolkit Release Notes, Table 3
// "CUDA Toolkit and Corresponding Driver Versions" (Linux x86_64, GA releases), and the CUDA
// Compatibility guide, "Minor Version Compatibility" (docs.nvidia.com/deploy/cuda-compatibility).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainrig {

struct CudaDriverRequirement {
    int cuda;                    // 12060 = CUDA 12.6 (cudaRuntimeGetVersion's encoding)
    const char* toolkit_driver;  // the driver released with that toolkit (full support)
    const char* minor_compat;    // the oldest driver that runs it through minor-version
                                 // compatibility (same major, some features missing)
};

// The requirement for a CUDA version: its own row, or for a minor release newer than the table,
// its major's minor-compatibility floor with no toolkit driver. nullopt for an unknown major.
std::optional<CudaDriverRequirement> cuda_driver_requirement(int cuda);

// Compares dotted driver versions ("535.104.05" < "535.129.03"); missing parts count as 0.
int compare_driver_versions(std::string_view a, std::string_view b);

// "12.6" from 12060.
std::string cuda_text(int64_t cuda);
// 12060 from "12.6" or "12.6.85" (torch.version.cuda, nvcc's release); 0 when not a version.
int cuda_code(std::string_view text);

}  // namespace trainrig
