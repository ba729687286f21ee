// The race check (TRAINRIG_EMULATED_RACE_CHECK=1): each launch runs twice from the same device
// memory, threads and blocks in opposite orders between barriers, and the two results must be
// the same bytes. A kernel that needs a __syncthreads it lacks reads another thread's data
// before or after it is written depending on the order, and fails. A kernel that adds floats
// with atomics is order-dependent by design: it is compared as floats within kFloatAtomicTolerance
// instead, and the message says so.
#pragma once

#include <string>

#include "exec/grid_run.h"

namespace trainrig::emu {

constexpr double kFloatAtomicTolerance = 1e-5;  // relative, per fp32 word

bool race_check_enabled();

// Empty when the launch ran and both orders agree; else why not, in one sentence.
std::string run_grid_checked(const GridLaunch& launch);

}  // namespace trainrig::emu
