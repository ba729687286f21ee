// The layers of the CPU backend, forward and backward, for T = float (training) and double (the
// gradient check). Activations are row-major with N = B·T rows. Every backward accumulates (+=)
// into its gradient outputs, so gradient accumulation and the residual stream need no copies.
//
// Determinism: work is split so that each output element is computed by exactly one thread, in
// a fixed order. Results are therefore bit-identical for any --threads, which is what makes
// exact resume and rank-count comparisons testable.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainrig::train::cpu {

inline constexpr double kLayerNormEps = 1e-5;

// Below about this many multiply-adds a parallel region costs more than it saves (and with more
// threads than free cores, far more). Which thread computes an element never changes a result,
// so this only moves time.
inline bool parallel_worth(size_t work) { return work >= (size_t{1} << 16); }

// out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]; no position term when wpe (dwpe) is null.
template <class T>
void encoder_forward(T* out, const uint32_t* tokens, const T* wte, const T* wpe, int B, int Tn,
                     int C);
template <class T>
void encoder_backward(T* dwte, T* dwpe, const T* dout, const uint32_t* tokens, int B, int Tn,
                      int C);

// Per row: (x - mean) / sqrt(var + eps) * w + b; mean and 1/std are kept for backward.
template <class T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* w, const T* b, size_t N,
                       int C);
template <class T>
void layernorm_backward(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w,
                        const T* mean, const T* rstd, size_t N, int C);

// Per row: x / sqrt(mean(x²) + eps) * w (Zhang & Sennrich 2019); 1/rms is kept for backward.
template <class T>
void rmsnorm_forward(T* out, T* rstd, const T* inp, const T* w, size_t N, int C, double eps);
template <class T>
void rmsnorm_backward(T* dinp, T* dw, const T* dout, const T* inp, const T* w, const T* rstd,
                      size_t N, int C);

// Rotary position embedding (Su et al. 2021) on the q and k heads of qkv (B, T, QKV), in place,
// in the rotate-half layout of Hugging Face's Llama (channel i pairs with i + hd/2): x₁' = x₁·cos
// − x₂·sin, x₂' = x₂·cos + x₁·sin, with cos/sin (T, hd/2) from rope_table(). Backward applies
// the transposed rotation to dq and dk, in place.
template <class T>
void rope_forward(T* qkv, const T* cos, const T* sin, int B, int Tn, int NH, int KVH, int hd);
template <class T>
void rope_backward(T* dqkv, const T* cos, const T* sin, int B, int Tn, int NH, int KVH, int hd);

// out (N, OC) = inp (N, C) · wᵀ, w (OC, C), plus bias (OC) unless null.
template <class T>
void matmul_forward(T* out, const T* inp, const T* w, const T* bias, size_t N, int C, int OC);
template <class T>
void matmul_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, size_t N,
                     int C, int OC);

// Causal attention on qkv (B, T, (NH + 2·KVH)·hd) laid out [q | k | v], heads contiguous within
// each; query head h reads key/value head h / (NH/KVH) (grouped-query attention; KVH = NH is
// multi-head attention). out (B, T, NH·hd); lse (B, NH, T) keeps each row's log-sum-exp so
// backward recomputes the probabilities instead of storing B·NH·T² of them (the
// flash-attention trade).
template <class T>
void attention_forward(T* out, T* lse, const T* qkv, int B, int Tn, int NH, int KVH, int hd);
template <class T>
void attention_backward(T* dqkv, const T* dout, const T* qkv, const T* out, const T* lse, int B,
                        int Tn, int NH, int KVH, int hd);

// GPT-2's tanh approximation of GELU.
template <class T>
void gelu_forward(T* out, const T* inp, size_t n);
template <class T>
void gelu_backward(T* dinp, const T* inp, const T* dout, size_t n);

// SwiGLU (Shazeer 2020): fc (N, 2F) holds [gate | up] per row; out (N, F) = silu(gate) ∘ up.
template <class T>
void swiglu_forward(T* out, const T* fc, size_t N, int F);
template <class T>
void swiglu_backward(T* dfc, const T* fc, const T* dout, size_t N, int F);

template <class T>
void residual_forward(T* out, const T* a, const T* b, size_t n);

// Softmax over the first V of Vp logits per row and the cross-entropy against targets; losses
// (N) and each row's log-sum-exp (N). Backward overwrites the logits with their gradient for a
// loss scaled by dloss per row; the padded columns get 0.
template <class T>
void crossentropy_forward(T* losses, T* lse, const T* logits, const uint32_t* targets, size_t N,
                          int V, int Vp);
template <class T>
void crossentropy_backward(T* logits, const T* lse, const uint32_t* targets, T dloss, size_t N,
                           int V, int Vp);

}  // namespace trainrig::train::cpu
