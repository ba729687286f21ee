// The rules watch starts with. Each encodes a known failure of a training machine; the source is
// in the comment. A rules file can change or switch off any of them by name (docs/watch.md).
// Where doctor judges the same condition, the severity comes from the shared health policy
// (policy/gpu_health.h): doctor fail is critical, warn is a warning.
#include <tuple>

#include "watch/alert_rule.h"

namespace trainrig::watch {
namespace {

using policy::Verdict;

Rule judge(const char* name, RuleKind kind, Severity sev, Field f, double limit,
           const char* remedy) {
    Rule r;
    r.name = name;
    r.kind = kind;
    r.severity = sev;
    r.field = f;
    r.limit = limit;
    r.remedy = remedy;
    return r;
}

Rule threshold(const char* name, Severity sev, Field f, double limit, double for_s,
               const char* remedy) {
    Rule r = judge(name, RuleKind::kThreshold, sev, f, limit, remedy);
    r.for_seconds = for_s;
    return r;
}

// `window` for rate and stability rules, `for` for skew; `busy` judges only under load.
Rule over_time(const char* name, RuleKind kind, Severity sev, Field f, double limit, double seconds,
               std::optional<double> busy, const char* remedy) {
    Rule r = judge(name, kind, sev, f, limit, remedy);
    (kind == RuleKind::kSkew ? r.for_seconds : r.window_seconds) = seconds;
    r.busy_above = busy;
    return r;
}

Rule event(const char* name, Severity sev, EventKind e, const char* xids, double hold_s,
           const char* remedy) {
    Rule r = judge(name, RuleKind::kEvent, sev, Field::kTemperature, 0, remedy);
    r.event = e;
    r.xids = xids;
    r.hold_seconds = hold_s;
    return r;
}

// A rule that judges a condition doctor judges too (the same verdict, policy/gpu_health.h).
Rule twin(Rule r, const char* doctor_rule) {
    r.doctor_rule = doctor_rule;
    return r;
}

}  // namespace

std::vector<Rule> default_rules() {
    std::vector<Rule> rules;
    // The source article (§5.2) mailed above a fixed 80 °C and caught a failed air conditioner
    // two hours before the GPUs throttled. A fixed limit is 20 °C off for some GPUs, so the
    // verdict is doctor's: near (within 5 °C of) the GPU's own slowdown temperature or above
    // its maximum operating temperature for 30 s (riding out brief peaks), and at slowdown.
    rules.push_back(twin(
        threshold(
            "gpu-temperature", severity_of(Verdict::kWarn), Field::kTemperatureVerdict, 0.5, 30,
            "check the cooling now: fans, inlet air temperature, the room's air conditioning; "
            "`trainrig doctor --only gpu.temperature` shows how far each GPU is from slowdown"),
        "gpu.temperature"));
    // At slowdown for 10 s: one odd sample of a sensor pages nobody (the rule's samples too).
    rules.push_back(
        twin(threshold("gpu-temperature-slowdown", severity_of(Verdict::kFail),
                       Field::kTemperatureVerdict, 1.5, 10,
                       "the GPU is at its slowdown temperature: fix the cooling before trusting "
                       "any throughput number from this machine"),
             "gpu.temperature"));
    // nvmlClocksEventReasons: SW/HW thermal slowdown cut clocks to protect the GPU (NVML API
    // Reference); DCGM's health watch treats thermal violations as failures.
    rules.push_back(
        twin(threshold("gpu-thermal-slowdown", severity_of(Verdict::kFail), Field::kThermalSlowdown,
                       0.5, 10,
                       "the GPU is cutting its clocks to cool down: fix the cooling before "
                       "trusting any throughput number from this machine"),
             "gpu.clock-events"));
    // HW slowdown (0x8) and power brake (0x80): an external signal or the PSU pulled clocks down.
    rules.push_back(
        twin(threshold("gpu-hw-slowdown", severity_of(Verdict::kFail), Field::kHwSlowdown, 0.5, 10,
                       "check the power supplies and their cabling (power brake) and the "
                       "chassis' thermal sensors (HW slowdown)"),
             "gpu.clock-events"));
    // Lost and hung GPUs: the article's "GPU has fallen off the bus" (§3.1), found only in the
    // kernel log by people who did not watch.
    rules.push_back(
        twin(event("gpu-lost", severity_of(policy::kGpuLost), EventKind::kGpuLost, "any", 0,
                   "the GPU fell off the bus: drain the node; power-cycle it, reseat the "
                   "GPU and its power cables, check the riser and the PSU; look for PCIe "
                   "AER errors and temperatures just before"),
             "gpu.count"));
    rules.push_back(event("gpu-hung", Severity::kCritical, EventKind::kGpuHung, "any", 0,
                          "an NVML call on this GPU does not return: the driver is stuck; look "
                          "for an Xid in the kernel log, then reset the GPU or reboot"));
    // Xid catalog (docs.nvidia.com/deploy/xid-errors) and DCGM's always-fatal set; the action
    // comes from the catalog entry of each code. Doctor's kmsg.xid reads the same catalog, and
    // like it these count the driver's plain "GPU has fallen off the bus" line as its Xid 79:
    // one event, one alert.
    rules.push_back(
        twin(event("xid-fatal", severity_of(Verdict::kFail), EventKind::kXid, "fatal", 3600, ""),
             "kmsg.xid"));
    rules.push_back(
        twin(event("xid", severity_of(Verdict::kWarn), EventKind::kXid, "nonfatal", 600, ""),
             "kmsg.xid"));
    // PCIe AER, by the severity the kernel reports (Documentation/PCI/pcieaer-howto.rst).
    const char* aer_remedy =
        "reseat the card and riser, check the slot's link (`trainrig doctor --only "
        "pci.gpu-link`); if it repeats, move the card to find whether slot or card is at fault";
    for (auto [name, verdict, kind, hold] :
         {std::tuple{"pcie-aer-fatal", policy::kAerFatal, EventKind::kAerFatal, 3600.0},
          std::tuple{"pcie-aer-nonfatal", policy::kAerNonFatal, EventKind::kAerNonFatal, 3600.0},
          std::tuple{"pcie-aer-corrected", policy::kAerCorrected, EventKind::kAerCorrected,
                     600.0}}) {
        auto aer = event(name, severity_of(verdict), kind, "any", hold, aer_remedy);
        aer.doctor_rule = "kmsg.pcie-aer";
        rules.push_back(aer);
    }
    // DCGM health watch: replays allowed per lane and minute at a 1e-12 bit error rate, times
    // the lanes, at the generation and width of each GPU's own link (policy/gpu_health.h).
    Rule replays = over_time(
        "pcie-replays", RuleKind::kRate, severity_of(policy::kPcieReplaysOverLimit),
        Field::kPcieReplays, 0, 60, {},
        "the link retransmits more than a sound link should: reseat the card and riser, check "
        "the slot's link width and generation (`trainrig doctor --only gpu.pcie-link`)");
    replays.limit_per_link = true;
    rules.push_back(twin(replays, "gpu.pcie-replay"));
    // NVLink as the part should have it (doctor's gpu.nvlink): a board-wired (SXM) link down
    // sends that GPU's collectives over PCIe; a bridge link down on a PCIe card is a warning.
    const char* nvlink_remedy =
        "the GPU's collectives fall back to PCIe: check `nvidia-smi nvlink -s` and `-e`, reseat "
        "the GPU/baseboard or the bridge; on NVSwitch systems check the fabric manager";
    // Links retrain after every driver load and a link can drop for a moment while it does
    // (NVIDIA/NVSentinel#1701: "NVLink down" on 214 of 288 healthy GB200 nodes after a reboot),
    // so a link counts as down once it has been for 30 s.
    rules.push_back(twin(threshold("nvlink-degraded", severity_of(Verdict::kWarn),
                                   Field::kNvlinkVerdict, 0.5, 30, nvlink_remedy),
                         "gpu.nvlink"));
    rules.push_back(twin(threshold("nvlink-down", severity_of(Verdict::kFail),
                                   Field::kNvlinkVerdict, 1.5, 30, nvlink_remedy),
                         "gpu.nvlink"));
    // DCGM: a volatile double-bit (uncorrectable) ECC error means isolate the GPU.
    rules.push_back(twin(
        over_time("ecc-uncorrected", RuleKind::kRate, severity_of(policy::kEccUncorrectedSinceLoad),
                  Field::kEccUncorrected, 0, 3600, {},
                  "uncorrectable memory errors: stop jobs on this GPU, reset it to remap "
                  "the rows; if they come back, RMA"),
        "gpu.ecc"));
    // Row remapping (Ampere and later): pending = needs a reset (Xid 63), failed = no spare row
    // left (Xid 64).
    rules.push_back(
        twin(threshold("row-remap-pending", severity_of(policy::kRemapPending),
                       Field::kRemapPending, 0.5, 0,
                       "drain the GPU and reset it to apply the row remap; its memory is "
                       "not sound until then"),
             "gpu.remapped-rows"));
    rules.push_back(
        twin(threshold("row-remap-failed", severity_of(policy::kRemapFailed), Field::kRemapFailed,
                       0.5, 0, "the GPU has run out of spare memory rows: RMA"),
             "gpu.remapped-rows"));
    rules.push_back(twin(
        threshold("rows-remapped-uncorrectable", severity_of(policy::kRowsRemappedUncorrectable),
                  Field::kRemappedRowsUncorrectable, 0.5, 0,
                  "rows were remapped after uncorrectable errors: watch this GPU's "
                  "count; a growing one ends in an RMA"),
        "gpu.remapped-rows"));
    // The article's out-of-step utilisation curves (§4.2): one GPU lagging the others while the
    // job runs, which was lost NUMA binding there; also a slow rank's data loading or throttling.
    rules.push_back(over_time("utilization-skew", RuleKind::kSkew, Severity::kWarning,
                              Field::kUtilization, 0.20, 60, 0.5,
                              "one GPU is out of step with the others: check its rank's CPU/NUMA "
                              "binding (`trainrig launch`), its data loading, and its clocks "
                              "(thermal or power limits)"));
    // Thermal stability: the article (§5.2) judged cooling by the temperature's spread over 72 h
    // (±0.8 °C on a good machine). Under steady load a spread above 3 °C within 10 minutes means
    // the cooling is hunting or failing; the threshold is ours.
    rules.push_back(over_time("temperature-stability", RuleKind::kStability, Severity::kWarning,
                              Field::kTemperature, 3, 600, 0.5,
                              "the temperature swings under steady load: check fan control, "
                              "airflow and the room's cooling cycle"));
    return rules;
}

}  // namespace trainrig::watch
