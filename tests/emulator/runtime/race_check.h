// The race check (TRAINRIG_EMULATED_RACE_CHECK=1, or =TEXT,TEXT... for the launches from source
// files whose path contains one TEXT, e.g. =attention): each launch runs twice from the same device
// memory, threads, warps and blocks in opposite orders between barriers (each warp running as far
// ahead of the others as a GPU allows, Schedule::warp_ahead), and the two results must be
// the same bytes. A kernel that needs a __syncthreads it lacks reads another thread's data
// before or after it is written depending on the order, and fails. A kernel that adds floats
// with atomics is order-dependent by design: it is compared as fp32 words within
// kFloatAtomicTolerance of the larger of the two values and the allocation's RMS (a sum near zero
// by cancellation differs by the size of its terms, not of itself), and the message says so.
#pragma once

#include <string>

#include "exec/grid_run.h"

namespace trainrig::emu {

constexpr double kFloatAtomicTolerance = 1e-5;

// The check is on for some launches: every copy and product then holds RaceCheckWorld.
bool race_check_enabled();

// Held while a launch is checked, and by every copy, fill and product while the check is on:
// the before-and-after copies of device memory must see no other stream's writes. (NCCL's
// collectives do not take it: they wait for one another across streams.)
class RaceCheckWorld {
public:
    RaceCheckWorld();
    ~RaceCheckWorld();
    RaceCheckWorld(const RaceCheckWorld&) = delete;
    RaceCheckWorld& operator=(const RaceCheckWorld&) = delete;

private:
    bool held_;
};

// Empty when the launch ran and, where the check applies to `site_file` (the launch's source
// file), both orders agree; else why not, in one sentence.
std::string run_grid_checked(const GridLaunch& launch, const char* site_file);

}  // namespace trainrig::emu
