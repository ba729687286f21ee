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

// out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]
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

// out (N, OC) = inp (N, C) · wᵀ, w (OC, C), plus bias (OC) unless null.
template <class T>
void matmul_forward(T* out, const T* inp, const T* w, const T* bias, size_t N, int C, int OC);
template <class T>
void matmul_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, size_t N,
                     int C, int OC);

// Causal multi-head attention on qkv (B, T, 3C) laid out [q | k | v], heads contiguous within
// each. out (B, T, C); lse (B, NH, T) keeps each row's log-sum-exp so backward recomputes the
// probabilities instead of storing B·NH·T² of them (the flash-attention trade).
template <class T>
void attention_forward(T* out, T* lse, const T* qkv, int B, int Tn, int C, int NH);
template <class T>
void attention_backward(T* dqkv, const T* dout, const T* qkv, const T* out, const T* lse, int B,
                        int Tn, int C, int NH);

// GPT-2's tanh approximation of GELU.
template <class T>
void gelu_forward(T* out, const T* inp, size_t n);
template <class T>
void gelu_backward(T* dinp, const T* inp, const T* dout, size_t n);

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
