// The Xid catalog: what each NVIDIA Xid code means, how serious it is, and what to do.
// Sources: NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors), DCGM's health watches
// (modules/health/DcgmHealthWatch.cpp: the always-fatal set); NVIDIA Xid catalog.
#pragma once

#include <string>

namespace trainrig {

enum class XidSeverity { kWarn, kFatal };

struct XidInfo {
    int code;
    const char* meaning;
    XidSeverity severity;
    const char* action;
};

// Xid 79, "GPU has fallen off the bus". The driver also logs a plain "GPU has fallen off the
// bus" line for the same event: doctor and watch count the two as one Xid 79.
inline constexpr int kXidFallenOffBus = 79;

// The catalog entry, or nullptr for codes the catalog does not know.
const XidInfo* find_xid(int code);

}  // namespace trainrig
