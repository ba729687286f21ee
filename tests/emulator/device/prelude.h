// Included before every .cu source compiled by the host compiler for the emulated device
// (-include): CUDA C++'s keywords and built-in variables as the emulator defines them.
//   __shared__      a variable per block: blocks run whole on one host thread, so a
//                   thread_local is the block's (dynamic shared memory: src/cuda/launch.h)
//   threadIdx ...   the playing fiber's thread and block (exec/block_run.h)
//   __syncthreads   a barrier of the block's fibers
#pragma once

#define __shared__ static thread_local
#define __launch_bounds__(...)

// Every toolkit header a kernel source may include, before the built-in names below become
// macros (cuda_runtime.h has parameters named gridDim and warpSize).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <cuda_runtime_api.h>
#include <mma.h>
#include <vector_functions.h>
#include <vector_types.h>

#include <cmath>
#include <cstring>

#include "device/atomics.h"
#include "device/launch.h"
#include "device/warp.h"
#include "device/wmma.h"
#include "exec/block_run.h"

#define threadIdx (::trainrig::emu::thread_index())
#define blockIdx (::trainrig::emu::this_block().block_index())
#define blockDim (::trainrig::emu::this_block().block_dim())
#define gridDim (::trainrig::emu::this_block().grid_dim())
#define warpSize 32
#define __syncthreads() ::trainrig::emu::this_block().sync_threads(__FILE__, __LINE__)
#define __trap() ::trainrig::emu::this_block().trap("__trap()")
