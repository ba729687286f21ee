// Xid catalog data; see xid_catalog.h for sources.
#include "doctor/xid_catalog.h"

#include <array>

namespace trainrig {

namespace {
using enum XidSeverity;
constexpr std::array kXids = {
    XidInfo{13, "graphics engine exception", kWarn,
            "usually the application (illegal instruction or address); rerun, then check the code "
            "with compute-sanitizer; if it repeats across jobs, run the GPU diagnostics"},
    XidInfo{31, "GPU memory page fault (MMU fault)", kWarn,
            "usually an application bug (bad address); if it repeats across applications, run the "
            "GPU diagnostics"},
    XidInfo{32, "invalid or corrupted push buffer stream (PBDMA)", kWarn,
            "driver or application problem, sometimes PCIe errors; check kmsg.pcie-aer"},
    XidInfo{43, "GPU stopped processing (channel stopped)", kWarn,
            "follows another Xid or an application fault; look at the Xid before it"},
    XidInfo{45, "preemptive cleanup after a fault", kWarn,
            "a consequence of another error or of killing the process; find the primary Xid"},
    XidInfo{48, "double-bit ECC error (DBE)", kFatal,
            "reset the GPU (nvidia-smi -r with no processes, or reboot); if it repeats, RMA"},
    XidInfo{61, "internal micro-controller breakpoint/warning (PMU)", kWarn,
            "reset the GPU if it stops responding; update the driver if it repeats"},
    XidInfo{62, "internal micro-controller halt (PMU)", kFatal,
            "reset the GPU; update the driver; if it repeats, RMA"},
    XidInfo{63, "ECC page retirement / row remap pending", kWarn,
            "reset the GPU to apply the remap at the next opportunity"},
    XidInfo{64, "ECC page retirement / row remap failure", kFatal,
            "reset the GPU; if it persists the GPU has run out of spare rows: RMA"},
    XidInfo{74, "NVLink error", kFatal,
            "reset the GPU; check NVLink state (nvidia-smi nvlink -s) and the NVSwitch/bridge; "
            "if it repeats, reseat or RMA"},
    XidInfo{79, "GPU has fallen off the bus", kFatal,
            "power-cycle the node; reseat the GPU and its power cables, check the riser/slot and "
            "PSU; check PCIe AER errors and temperatures before it happened"},
    XidInfo{92, "high single-bit ECC error rate", kWarn,
            "watch the ECC counters; plan a reset/remap; RMA if it keeps growing"},
    XidInfo{94, "contained ECC error", kWarn,
            "restart the affected application; the GPU itself keeps running"},
    XidInfo{95, "uncontained ECC error", kFatal, "reset the GPU (all applications on it are lost)"},
    XidInfo{109, "context switch timeout", kWarn,
            "application or driver problem; if it repeats across jobs, update the driver"},
    XidInfo{119, "GSP RPC timeout", kFatal,
            "reset the GPU; update the driver (>= 525.105.17 fixes a known case) or disable GSP "
            "firmware where supported"},
    XidInfo{120, "GSP error", kFatal, "reset the GPU; update the driver"},
    XidInfo{140, "unrecovered ECC error (ECC escape)", kFatal, "reset the GPU; if it repeats, RMA"},
};
}  // namespace

const XidInfo* find_xid(int code) {
    for (const auto& x : kXids)
        if (x.code == code) return &x;
    return nullptr;
}

}  // namespace trainrig
