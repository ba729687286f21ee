// How bad each GPU health condition is, defined once: doctor's GPU and kernel-log rules raise
// these verdicts and watch's default alert rules take their severity from them, so that doctor
// `fail` is a watch `critical` alert (and `watch --once` exit 1), doctor `warn` a `warning`
// (docs/checks.md, docs/watch.md). Xid severities live in the Xid catalog (doctor/xid_catalog.h),
// which both read.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace trainrig::policy {

enum class Verdict { kPass, kWarn, kFail };

// nvmlClocksEventReasons bits (NVML API Reference, nvmlDeviceGetCurrentClocksEventReasons).
// Thermal and hardware slowdowns protect the GPU or answer an external signal: DCGM's health
// watch treats them as failures. A software power cap is the GPU running at its power limit,
// which is how a GPU at full load normally looks: reported, not flagged.
struct ClockReason {
    uint64_t bit;
    const char* name;
    Verdict verdict;
};
std::span<const ClockReason> clock_reasons();
// The bits with this verdict, OR-ed.
uint64_t clock_reason_bits(Verdict v);

// Temperature against the GPU's own thresholds (nvmlDeviceGetTemperatureThreshold): fail at or
// over the slowdown temperature, warn within kTemperatureMarginC of it or above the maximum
// operating temperature. No absolute limit: GPUs differ by 20 °C in where they slow down.
inline constexpr double kTemperatureMarginC = 5;
Verdict temperature_verdict(double celsius, std::optional<double> slowdown,
                            std::optional<double> max_operating);

// GPU memory (NVML row remapping and ECC counters; NVIDIA "GPU Memory Error Management"):
// a pending remap needs a reset before the memory is sound again (Xid 63/64), a failed one has
// no spare row left; rows already remapped after uncorrectable errors are history to watch;
// an uncorrectable error since the driver loaded means the GPU's data may be corrupt.
inline constexpr Verdict kRemapPending = Verdict::kFail;
inline constexpr Verdict kRemapFailed = Verdict::kFail;
inline constexpr Verdict kRowsRemappedUncorrectable = Verdict::kWarn;
inline constexpr Verdict kEccUncorrectedSinceLoad = Verdict::kFail;

// PCIe Advanced Error Reporting (Documentation/PCI/pcieaer-howto.rst): fatal errors reset the
// link; non-fatal ones lose a transaction but the link stays up; corrected ones cost retries.
inline constexpr Verdict kAerFatal = Verdict::kFail;
inline constexpr Verdict kAerNonFatal = Verdict::kWarn;
inline constexpr Verdict kAerCorrected = Verdict::kWarn;

// A GPU the driver reports lost (NVML_ERROR_GPU_IS_LOST, "fallen off the bus").
inline constexpr Verdict kGpuLost = Verdict::kFail;

}  // namespace trainrig::policy
