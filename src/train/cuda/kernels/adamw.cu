// AdamW on one tensor: fp32 master weights and moments updated in place, the bf16 compute copy
// rewritten from the new master weights.
#include "cuda/launch.h"
#include "train/cuda/kernels/grid_stride.cuh"
#include "train/cuda/train_kernels.h"

namespace trainrig::train::cuda {
namespace {

constexpr int kThreads = 256;
// Enough blocks to fill an H100/H200 several times over; the loop strides past it.
constexpr size_t kMaxBlocks = 4096;

// Operation order as AdamW::step (src/train/optimizer.cpp). The clipped gradient is not written
// back: nothing reads it after the update.
__global__ void __launch_bounds__(kThreads)
    adamw_kernel(float* master, bf16* params, const float* grad, float* m, float* v, size_t n,
                 float lr, float beta1, float beta2, float c1, float c2, float eps, float wd,
                 float clip) {
    for (size_t i = grid_thread(); i < n; i += grid_threads()) {
        const float g = grad[i] * clip;
        const float mi = beta1 * m[i] + (1.0f - beta1) * g;
        const float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        const float mhat = mi / c1, vhat = vi / c2;
        float p = master[i];
        p -= lr * (mhat / (sqrtf(vhat) + eps) + wd * p);
        master[i] = p;
        params[i] = __float2bfloat16(p);
    }
}

}  // namespace

void adamw_update(float* master, bf16* params, const float* grad, float* m, float* v, size_t n,
                  float lr, float beta1, float beta2, float c1, float c2, float eps, float wd,
                  float clip, cudaStream_t stream) {
    if (n == 0) return;
    const size_t needed = (n + kThreads - 1) / kThreads;
    const unsigned blocks = static_cast<unsigned>(needed < kMaxBlocks ? needed : kMaxBlocks);
    trainrig::cuda::launch(adamw_kernel, {blocks, kThreads, 0, stream}, master, params, grad, m, v,
                           n, lr, beta1, beta2, c1, c2, eps, wd, clip);
}

}  // namespace trainrig::train::cuda
