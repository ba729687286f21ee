// How an emulated CUDA device names itself, and how every command recognises one. The emulator
// (tests/emulator, docs/testing.md "The emulated GPU") runs the GPU code on the CPU: its device
// is called "emulated <catalog name>" ("emulated A100 SXM4 80GB") in cudaGetDeviceProperties and
// so in every record, report and JSON document. Its timings measure the host, not a GPU: bench
// gives them no expectation and validate never calls such a machine READY.
#pragma once

#include <string_view>

namespace trainrig {

inline constexpr std::string_view kEmulatedGpuPrefix = "emulated ";

// Beside a measurement of an emulated device, in place of an expected value.
inline constexpr const char* kEmulatedNoExpectation =
    "emulated: no expectation (an emulated device's timings measure the host CPU, not a GPU)";

inline bool is_emulated_gpu(std::string_view device_name) {
    return device_name.starts_with(kEmulatedGpuPrefix);
}

}  // namespace trainrig
