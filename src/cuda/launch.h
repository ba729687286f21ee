// How product code launches a kernel and declares its dynamic shared memory, so that one source
// builds for nvcc and for the emulated device (tests/emulator, docs/testing.md):
//   launch(kernel, {grid, block, shared_bytes, stream}, args...);
//   TRAINRIG_DYNAMIC_SHARED(unsigned char, smem);
// Errors are the launch's, read with cudaGetLastError() as after <<<>>>.
#pragma once

#include <cuda_runtime_api.h>

#include <utility>

#ifdef TRAINRIG_GPU_EMULATOR
#include "device/launch.h"
#define TRAINRIG_DYNAMIC_SHARED(type, name) \
    type* const name = static_cast<type*>(::trainrig::emu::dynamic_shared())
#else
// 128-byte aligned: enough for every vector load and wmma's 256-bit rule.
#define TRAINRIG_DYNAMIC_SHARED(type, name) extern __shared__ __align__(128) type name[]
#endif

namespace trainrig::cuda {

struct LaunchConfig {
    // Sizes of any integer type or dim3, without narrowing errors in the braces; the call site
    // for the emulator's messages (default arguments are evaluated where the launch is written).
    template <class G, class B, class S = size_t>
    LaunchConfig(G g, B b, S shared = 0, cudaStream_t s = nullptr, const char* f = __builtin_FILE(),
                 int l = __builtin_LINE())
        : grid(dim(g)),
          block(dim(b)),
          shared_bytes(static_cast<size_t>(shared)),
          stream(s),
          file(f),
          line(l) {}
    dim3 grid, block;
    size_t shared_bytes;
    cudaStream_t stream;
    const char* file;
    int line;

private:
    static dim3 dim(dim3 d) { return d; }
    template <class I>
    static dim3 dim(I n) {
        return dim3(static_cast<unsigned>(n));
    }
};

template <class... Params, class... Args>
void launch(void (*kernel)(Params...), const LaunchConfig& c, Args&&... args) {
#if defined(TRAINRIG_GPU_EMULATOR)
    emu::launch(kernel, c.grid, c.block, c.shared_bytes, c.stream, {c.file, c.line},
                std::forward<Args>(args)...);
#elif defined(__CUDACC__)
    // clang-format off
    kernel<<<c.grid, c.block, c.shared_bytes, c.stream>>>(std::forward<Args>(args)...);
    // clang-format on
#else
#error "src/cuda/launch.h is for .cu sources, compiled by nvcc or for the emulated device"
#endif
}

}  // namespace trainrig::cuda
