// Kernel launches on the emulated device: the arguments are converted to the kernel's
// parameter types once, as a launch does, and every thread of the grid calls the kernel with
// its own copy of them (src/cuda/launch.h is where product code launches).
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

namespace trainrig::emu {

struct LaunchSite {
    const char* file;
    int line;
};

// Checks the configuration against the device, as a GPU does, and gives the grid to the
// stream; a wrong configuration is the call's error (cudaGetLastError), the grid not run.
void submit_kernel(const void* kernel, dim3 grid, dim3 block, size_t shared_bytes,
                   cudaStream_t stream, LaunchSite site, std::function<void()> body);

// The calling block's dynamic shared memory (the launch's shared_bytes, 128-byte aligned).
void* dynamic_shared();

// Called by atomics on floating-point values: their sums depend on the order of the threads,
// so the race check compares such a kernel's results within a tolerance (exec/race_check.h).
void note_float_atomic();

template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
            cudaStream_t stream, LaunchSite site, Args&&... args) {
    static_assert(sizeof...(Params) == sizeof...(Args), "a kernel takes all its arguments");
    auto params =
        std::make_shared<const std::tuple<std::decay_t<Params>...>>(std::forward<Args>(args)...);
    submit_kernel(reinterpret_cast<const void*>(kernel), grid, block, shared_bytes, stream, site,
                  [kernel, params] { std::apply(kernel, *params); });
}

}  // namespace trainrig::emu

// cuda_runtime.h's overload for a kernel itself, which it declares for nvcc only.
template <class... Params>
cudaError_t cudaFuncSetAttribute(void (*kernel)(Params...), cudaFuncAttribute attr, int value) {
    return ::cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), attr, value);
}
