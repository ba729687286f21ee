// Launch configuration checks with the limits of the CUDA C++ Programming Guide's "Technical
// Specifications per Compute Capability" (1024 threads a block, z ≤ 64; grid y and z ≤ 65535;
// 48 KB of dynamic shared memory unless cudaFuncSetAttribute raised it, never past the opt-in
// maximum), then the grid, on the stream, with a fault turned into the device's sticky error.
#include <fmt/format.h>

#include <cstdio>

#include "device/launch.h"
#include "exec/block_run.h"
#include "runtime/api_common.h"
#include "runtime/race_check.h"
#include "runtime/stream.h"

namespace trainrig::emu {
namespace {

constexpr size_t kDefaultDynamicShared = 48 * 1024;

bool valid_shape(dim3 grid, dim3 block) {
    const unsigned long long threads = static_cast<unsigned long long>(block.x) * block.y * block.z;
    return block.x >= 1 && block.y >= 1 && block.z >= 1 && block.x <= 1024 && block.y <= 1024 &&
           block.z <= 64 && threads <= 1024 && grid.x >= 1 && grid.y >= 1 && grid.z >= 1 &&
           grid.x <= 0x7fffffffu && grid.y <= 65535 && grid.z <= 65535;
}

}  // namespace

void submit_kernel(const void* kernel, dim3 grid, dim3 block, size_t shared_bytes,
                   cudaStream_t stream, LaunchSite site, std::function<void()> body) {
    EmulatedGpu* gpu = nullptr;
    if (enter(&gpu) != cudaSuccess) return;
    if (!valid_shape(grid, block)) {
        set_last_error(cudaErrorInvalidConfiguration);
        return;
    }
    size_t allowed = kDefaultDynamicShared;
    {
        std::lock_guard lock(gpu->mu);
        if (auto it = gpu->max_dynamic_shared.find(kernel); it != gpu->max_dynamic_shared.end())
            allowed = static_cast<size_t>(it->second);
    }
    if (shared_bytes > allowed) {
        // A GPU says only "invalid argument"; the emulator also says where and why.
        std::fprintf(stderr,
                     "trainrig emulated GPU %d: the kernel launched at %s:%d asks for %zu bytes of "
                     "dynamic shared memory, over its limit of %zu (%zu unless "
                     "cudaFuncSetAttribute raised it): invalid argument\n",
                     gpu->index, site.file, site.line, shared_bytes, allowed,
                     kDefaultDynamicShared);
        set_last_error(cudaErrorInvalidValue);
        return;
    }
    Stream* s = resolve_stream(stream);
    if (s == nullptr) return;
    auto launch = std::make_shared<GridLaunch>();
    launch->grid = grid;
    launch->block = block;
    launch->shared_bytes = shared_bytes;
    launch->body = std::move(body);
    enqueue_ordered(*s, [launch, site, gpu] {
        const std::string fault = run_grid_checked(*launch, site.file);
        if (fault.empty()) return;
        std::fprintf(stderr,
                     "trainrig emulated GPU %d: the kernel launched at %s:%d (grid %u×%u×%u, "
                     "block %u×%u×%u) faulted: %s\n",
                     gpu->index, site.file, site.line, launch->grid.x, launch->grid.y,
                     launch->grid.z, launch->block.x, launch->block.y, launch->block.z,
                     fault.c_str());
        gpu->poison(cudaErrorLaunchFailure);
    });
}

void* dynamic_shared() { return this_block().dynamic_shared(); }

}  // namespace trainrig::emu

using namespace trainrig::emu;

extern "C" cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
    TRAINRIG_EMU_ENTER(gpu);
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (value < 0 || static_cast<size_t>(value) > gpu->model->shared_per_block_optin)
            return set_last_error(cudaErrorInvalidValue);
        std::lock_guard lock(gpu->mu);
        gpu->max_dynamic_shared[func] = value;
        return cudaSuccess;
    }
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout) return cudaSuccess;
    return set_last_error(cudaErrorInvalidValue);
}
