// Which NVIDIA Linux driver a CUDA version needs. The rows are the stack data's [[cuda]] table
// (src/stack/stack_data.toml: CUDA Toolkit Release Notes, Table 3, and the CUDA Compatibility
// guide, "Minor Version Compatibility"), so doctor, `stack` and `stack check` read one table.
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
// The strings live in the process's stack data (stack::stack_data()).
std::optional<CudaDriverRequirement> cuda_driver_requirement(int cuda);

// Compares dotted driver versions ("535.104.05" < "535.129.03"); missing parts count as 0.
int compare_driver_versions(std::string_view a, std::string_view b);

// "12.6" from 12060.
std::string cuda_text(int64_t cuda);
// 12060 from "12.6" or "12.6.85" (torch.version.cuda, nvcc's release); 0 when not a version.
int cuda_code(std::string_view text);

}  // namespace trainrig
