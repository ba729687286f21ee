// Runs every block of a launch: blocks are taken in turn by the calling thread and the host
// threads of a shared pool (TRAINRIG_EMULATED_HOST_THREADS, default the machine's cores), each
// block whole on one host thread (exec/block_run.h).
#pragma once

#include <vector_types.h>

#include <functional>
#include <string>

#include "exec/block_run.h"

namespace trainrig::emu {

struct GridLaunch {
    dim3 grid{1, 1, 1};
    dim3 block{1, 1, 1};
    size_t shared_bytes = 0;
    std::function<void()> body;  // what every thread runs: the kernel with its arguments
};

// Empty when every block ended, else the first fault with the block it happened in. With
// `alone` (the race check) only the calling thread runs blocks, in the schedule's order.
std::string run_grid(const GridLaunch& launch, const Schedule& schedule, bool alone);

}  // namespace trainrig::emu
