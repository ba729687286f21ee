// The CUDA backend's kernels other than GEMMs and attention: embeddings, LayerNorm and RMSNorm,
// rotary embeddings, GELU and SwiGLU, bias gradients, the classifier's softmax cross-entropy,
// AdamW, the gradient norm and casts. Each launcher queues on `stream` and returns at once; the
// caller checks cudaGetLastError at phase ends. Layouts and formulas are those of the CPU
// reference (src/train/cpu/ops.h): activations row-major with N = B·T rows, bf16 storage with
// fp32 arithmetic, fp32 gradients of parameters. Every "+=" launcher accumulates into what is
// there (gradient accumulation, residual stream).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace trainrig::train::cuda {

using bf16 = __nv_bfloat16;

// out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]   (tokens: B·T device ids below Vp); no position
// term when wpe is null (rotary positions have no table).
void encoder_forward(bf16* out, const uint32_t* tokens, const bf16* wte, const bf16* wpe, int B,
                     int T, int C, cudaStream_t stream);
// dwte[tokens[b,t],:] += dout[b,t,:]; dwpe[t,:] += Σ_b dout[b,t,:] unless dwpe is null. `order`
// is the B·T row indices stably sorted by token (token_order below): each token's rows are added
// by one thread per channel in row order, as the CPU reference adds them, the same every run.
void encoder_backward(float* dwte, float* dwpe, const float* dout, const uint32_t* tokens,
                      const uint32_t* order, int B, int T, int C, cudaStream_t stream);

// Per row of C: (x - mean) · rstd · w + b with rstd = 1/sqrt(var + 1e-5), var the biased
// variance; mean and rstd (N each, fp32) are kept for backward.
void layernorm_forward(bf16* out, float* mean, float* rstd, const bf16* inp, const bf16* w,
                       const bf16* b, int N, int C, cudaStream_t stream);
// dinp += LayerNorm's input gradient (fp32 residual-stream gradient); dw += Σ_rows dout·x̂,
// db += Σ_rows dout (column sums in a fixed order, below; scratch as they need).
void layernorm_backward(float* dinp, float* dw, float* db, const bf16* dout, const bf16* inp,
                        const bf16* w, const float* mean, const float* rstd, int N, int C,
                        float* scratch, cudaStream_t stream);

// RMSNorm (Llama): per row of C, x · rstd · w with rstd = 1/sqrt(mean(x²) + eps); rstd (N, fp32)
// is kept for backward.
void rmsnorm_forward(bf16* out, float* rstd, const bf16* inp, const bf16* w, int N, int C,
                     float eps, cudaStream_t stream);
// dinp += RMSNorm's input gradient (fp32 residual-stream gradient); dw += Σ_rows dout·x·rstd.
void rmsnorm_backward(float* dinp, float* dw, const bf16* dout, const bf16* inp, const bf16* w,
                      const float* rstd, int N, int C, float* scratch, cudaStream_t stream);

// Rotary position embedding in the rotate-half layout, in place on the NH query and KVH key heads
// of qkv (B, T, (NH + 2·KVH)·hd); v is untouched. cos and sin are (T', hd/2) fp32 tables with
// T' ≥ T (src/train/rope_table.h): x[i], x[i + hd/2] of a head at position t become
//   x[i]·cos − x[i + hd/2]·sin,  x[i + hd/2]·cos + x[i]·sin.
void rope_forward(bf16* qkv, const float* cos, const float* sin, int B, int T, int NH, int KVH,
                  int hd, cudaStream_t stream);
// The transposed rotation (sin negated) on the dq and dk heads of dqkv, in place.
void rope_backward(bf16* dqkv, const float* cos, const float* sin, int B, int T, int NH, int KVH,
                   int hd, cudaStream_t stream);

// GPT-2's tanh GELU: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
void gelu_forward(bf16* out, const bf16* inp, size_t n, cudaStream_t stream);
// dinp = GELU'(inp) · dout   (written, not accumulated)
void gelu_backward(bf16* dinp, const bf16* inp, const bf16* dout, size_t n, cudaStream_t stream);

// SwiGLU over N rows: fc (N, 2F) holds [gate | up] per row; out (N, F) = silu(gate) · up with
// silu(g) = g / (1 + exp(−g)).
void swiglu_forward(bf16* out, const bf16* fc, size_t N, int F, cudaStream_t stream);
// dfc (N, 2F) = [dout · up · silu'(gate) | dout · silu(gate)]   (written, not accumulated;
// dfc must not overlap dout)
void swiglu_backward(bf16* dfc, const bf16* fc, const bf16* dout, size_t N, int F,
                     cudaStream_t stream);

// Column sums over N rows of C (or OC) columns, added in one fixed order so that the same input
// gives the same bits in every run (column_sums.cu); each needs column_sums_scratch_floats(N, C)
// floats of scratch.
size_t column_sums_scratch_floats(size_t N, int C);
// dbias[j] += Σ_rows dout[row, j]. The fp32 form takes the residual stream's gradient as it is,
// unrounded.
void bias_backward(float* dbias, const bf16* dout, int N, int OC, float* scratch,
                   cudaStream_t stream);
void bias_backward(float* dbias, const float* dout, int N, int OC, float* scratch,
                   cudaStream_t stream);
// dw[c] += Σ_rows dout·(x − mean)·rstd, db[c] += Σ_rows dout (LayerNorm's weight and bias).
void layernorm_weight_backward(float* dw, float* db, const bf16* dout, const bf16* inp,
                               const float* mean, const float* rstd, int N, int C, float* scratch,
                               cudaStream_t stream);
// dw[c] += Σ_rows dout·x·rstd (RMSNorm's weight).
void rmsnorm_weight_backward(float* dw, const bf16* dout, const bf16* inp, const float* rstd, int N,
                             int C, float* scratch, cudaStream_t stream);

// Softmax over the first V of Vp logits per row and the cross-entropy against targets:
// losses[row] = lse[row] - logit[row, target], lse[row] = log Σ_{j<V} exp(logit[row, j]).
void crossentropy_forward(float* losses, float* lse, const bf16* logits, const uint32_t* targets,
                          int N, int V, int Vp, cudaStream_t stream);
// Overwrites the logits with d(dloss · loss[row])/dlogit: (softmax - onehot(target)) · dloss for
// the first V columns, 0 for the padded ones.
void crossentropy_backward(bf16* logits, const float* lse, const uint32_t* targets, float dloss,
                           int N, int V, int Vp, cudaStream_t stream);

// AdamW on one tensor of n elements, as the CPU's AdamW::step (src/train/optimizer.cpp):
//   g = grad·clip; m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²
//   master -= lr · (m/c1 / (sqrt(v/c2) + eps) + wd · master);  params = bf16(master)
// c1 = 1-β1^t, c2 = 1-β2^t are computed by the caller.
void adamw_update(float* master, bf16* params, const float* grad, float* m, float* v, size_t n,
                  float lr, float beta1, float beta2, float c1, float c2, float eps, float wd,
                  float clip, cudaStream_t stream);

// Σ x² over n elements into partial[0 .. kSumSquaresBlocks) (a fixed grid, so the result does
// not depend on timing); the caller sums the partials in double on the host. Accumulates in
// double.
inline constexpr int kSumSquaresBlocks = 1024;
void sum_squares(double* partial, const float* x, size_t n, cudaStream_t stream);

void cast_to_bf16(bf16* out, const float* inp, size_t n, cudaStream_t stream);

}  // namespace trainrig::train::cuda
