// How bad each GPU health condition is, defined once: doctor's GPU and kernel-log rules raise
// these verdicts and watch's default alert rules take their severity from them, so that doctor
// `fail` is a watch `critical` alert (and `watch --once` exit 1), doctor `warn` a `warning`
// (docs/checks.md, docs/watch.md). Xid severities live in the Xid catalog (doctor/xid_catalog.h),
// which both read.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

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

// Temperature against the GPU's own thresholds (nvmlDeviceGetTemperatureThreshold): fail at or
// over the slowdown temperature, warn within kTemperatureMarginC of it or above the maximum
// operating temperature. No absolute limit: GPUs differ by 20 °C in where they slow down.
inline constexpr double kTemperatureMarginC = 5;
Verdict temperature_verdict(double celsius, std::optional<double> slowdown,
                            std::optional<double> max_operating);

// Power limit: the one the driver enforces (nvmlDeviceGetEnforcedPowerLimit, the lowest of every
// limiter) against the board's default (nvmlDeviceGetPowerManagementDefaultLimit). Below it the
// GPU runs its clocks down at full load ("software power cap"), so every benchmark falls short
// of what the part does; an operator or a BMC may mean it, so it warns and says by how much.
// Within kPowerLimitSlack of the default counts as the default.
inline constexpr double kPowerLimitSlack = 0.01;
inline constexpr Verdict kPowerLimitBelowDefault = Verdict::kWarn;
Verdict power_limit_verdict(double enforced_w, double default_w);

// MIG (NVIDIA Multi-Instance GPU User Guide, "Application Considerations"): CUDA sees a GPU in
// MIG mode as its instances, and no GPU-to-GPU traffic (PCIe P2P or NVLink) crosses them, so a
// data-parallel job cannot use the machine's GPUs whole. A choice an operator makes: warn, as
// does a mode that changes at the next GPU reset.
inline constexpr Verdict kMigEnabled = Verdict::kWarn;
inline constexpr Verdict kMigPending = Verdict::kWarn;

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

// A GPU's PCIe link as it trained against what it can do: fewer lanes fail (a link does not
// win lanes back without a retrain: half the host bandwidth for good); a lower speed while the
// GPU works warns; an idle GPU lowering its speed saves power and is normal. Without the
// driver's word (NVML clock event reasons), a GPU counts as idle.
Verdict pcie_link_verdict(double width, double width_max, double speed, double speed_max,
                          bool busy);

// PCIe replays (retransmissions after link errors). DCGM's health watch allows, per lane and
// minute, the replays of a 1e-12 bit error rate at each generation's transfer rate
// (Gen1..6: 2.5..64 GT/s): 0.15, 0.3, 0.48, 0.96, 1.92, 3.84 (NVIDIA/DCGM
// modules/health/DcgmHealthWatch.cpp, GetExpectedPcieReplayRate). A link's limit is that times
// its width, at the generation and width it can train to (the counter adds up over every state
// the link was in); unknown ones count as Gen4 x16.
inline constexpr int64_t kAssumedPcieGen = 4;
inline constexpr int64_t kAssumedPcieWidth = 16;
double pcie_replay_limit_per_minute(std::optional<int64_t> gen_max,
                                    std::optional<int64_t> width_max);
// "Gen4 x16", naming an unknown part as the limit assumed it.
std::string pcie_link_name(std::optional<int64_t> gen_max, std::optional<int64_t> width_max);
inline constexpr Verdict kPcieReplaysOverLimit = Verdict::kWarn;

// NVLink links up against what the SKU has (hw/nvidia_gpus.h). On an SXM/HGX board every link
// is wired and must be up (fail); a PCIe card has them only through a bridge, so some but not
// all up is a loose bridge or a failed link (warn) and none up is a card without one; a GPU the
// catalog does not know warns when some links are up and some down.
Verdict nvlink_verdict(unsigned up, unsigned down, int expected, bool on_board);

// Links train after the driver loads, and on NVSwitch systems the fabric manager registers the
// GPUs after that: in the first minutes after boot a link may be down or a GPU not yet in the
// fabric on a healthy machine (NVIDIA/NVSentinel#1701: a fatal "NVLink down" on 214 of 288
// healthy GB200 nodes, which retrain their links after every reboot). Below this uptime neither
// doctor (gpu.nvlink, stack.fabric-manager) nor watch judges NVLink or fabric state; a state
// still wrong after it is judged as always. Five minutes covers an HGX's fabric manager start.
inline constexpr double kLinkTrainingGraceSeconds = 300;
// Whether a machine up this long (none: unknown, judged) may still be training its links.
inline bool links_may_be_training(std::optional<double> uptime_seconds) {
    return uptime_seconds && *uptime_seconds < kLinkTrainingGraceSeconds;
}

// A GPU the driver reports lost (NVML_ERROR_GPU_IS_LOST, "fallen off the bus").
inline constexpr Verdict kGpuLost = Verdict::kFail;

}  // namespace trainrig::policy
