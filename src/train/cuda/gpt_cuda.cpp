// GptCuda: setup, parameter and moment copies, the forward pass and the optimizer. Backward is
// in gpt_cuda_backward.cpp. Both follow the CPU reference (src/train/cpu/gpt_cpu.cpp) for
// either family, branching where it does: the norm, RoPE, the MLP's activation, the position
// table and the classifier.
#include "train/cuda/gpt_cuda.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cuda/cuda_check.h"
#include "train/cuda/attention.h"
#include "train/cuda/gpt_cuda_impl.h"
#include "train/device_fit.h"
#include "train/rope_table.h"

namespace trainrig::train::cuda {

using trainrig::cuda::wait_stream;

namespace {

double gib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

// What the runtime reports of the current device, for the checks of device_fit.h.
Result<GpuLimits> current_gpu() {
    int device = 0;
    CUDA_TRY(cudaGetDevice(&device));
    cudaDeviceProp p{};
    CUDA_TRY(cudaGetDeviceProperties(&p, device));
    return GpuLimits{p.name, p.major, p.minor, p.sharedMemPerBlockOptin};
}

// The architectures this plugin is built for, as CMake named them (src/cuda/CMakeLists.txt
// passes them with commas for its list separator).
std::string built_for() {
    std::string s = TRAINRIG_CUDA_ARCHITECTURES;
    std::replace(s.begin(), s.end(), ',', ';');
    return s;
}

// The kernels' one-time setup on the current device, each failure named: a missing kernel image
// as such (the first kernel the plugin touches fails so, whatever the kernel), then a head size
// whose attention does not fit the GPU's shared memory per block, then any other refusal.
Status configure_kernels(const ModelConfig& c) {
    auto gpu = current_gpu();
    if (!gpu.ok()) return gpu.status();
    if (const KernelSetupError e = attention_configure(c.head_dim()); e.error != cudaSuccess) {
        trainrig::cuda::forget_failure(e.error);  // handled here: no later call reports it
        const bool no_image =
            e.error == cudaErrorNoKernelImageForDevice || e.error == cudaErrorInvalidDeviceFunction;
        if (!no_image) TRAINRIG_TRY(check_attention_fits(*gpu, c.head_dim()));
        return kernel_setup_status(
            *gpu,
            {no_image ? SetupFailure::kNoKernelImage : SetupFailure::kRefused, e.kernel,
             e.smem_bytes, cudaGetErrorString(e.error)},
            c.head_dim(), built_for());
    }
    return ok_status();
}

}  // namespace

size_t GptCuda::device_bytes(const ModelConfig& c, int B, int T) {
    return carve_buffers(c, B, T, nullptr).total_bytes;
}

Result<std::unique_ptr<GptCuda>> GptCuda::create(const ModelConfig& c, const OptimizerConfig& opt,
                                                 int B, int T) {
    TRAINRIG_TRY(validate(c));
    TRAINRIG_TRY(validate(opt));
    if (B < 1 || T < 1 || T > c.max_seq || static_cast<int64_t>(B) * T > INT_MAX)
        return Status(Errc::kInvalidInput,
                      fmt::format("a micro-batch of {} x {} tokens does not fit this model: "
                                  "batch and sequence must be positive, the sequence at most {}",
                                  B, T, c.max_seq));
    // The GEMMs' leading dimensions are multiples of C; cuBLASLt needs 16-byte rows.
    if (c.channels % 8 != 0)
        return Status(
            Errc::kInvalidInput,
            fmt::format("the CUDA backend needs dim to be a multiple of 8, not {}", c.channels),
            "choose a --dim that is a multiple of 8");
    // Llama's MLP width is the leading dimension of the down projection and half the gate | up
    // projection's rows.
    if (c.ffn_width() % 8 != 0)
        return Status(Errc::kInvalidInput,
                      fmt::format("the CUDA backend needs the MLP width to be a multiple of 8, "
                                  "not {}",
                                  c.ffn_width()),
                      "choose a model whose intermediate size is a multiple of 8");
    if (!attention_supports_head_dim(c.head_dim()))
        return Status(Errc::kUnsupported,
                      fmt::format("the CUDA attention kernels are not built for head size {} "
                                  "(dim {} / {} heads)",
                                  c.head_dim(), c.channels, c.heads),
                      "choose --dim and --heads with the head size of a preset model");

    TRAINRIG_TRY(configure_kernels(c));

    const DeviceBuffers sizes = carve_buffers(c, B, T, nullptr);
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
    // Smaller batches shrink only the activations: when the state alone does not fit, no
    // --batch or --grad-accum helps, and every rank holds a full replica.
    if (sizes.state_bytes > free_bytes)
        return Status(Errc::kInvalidInput,
                      fmt::format("{} needs {:.1f} GiB of GPU memory for its weights, gradients "
                                  "and AdamW state alone, but only {:.1f} GiB is free on the "
                                  "GPU: no batch fits",
                                  c.name, gib(sizes.state_bytes), gib(free_bytes)),
                      "choose a smaller model or a GPU with more memory (`trainrig plan "
                      "--model ID` shows what a model needs and where it fits)");
    if (sizes.total_bytes > free_bytes)
        return Status(
            Errc::kInvalidInput,
            fmt::format("this run needs {:.1f} GiB of GPU memory ({:.1f} GiB for weights, "
                        "gradients and AdamW state, {:.1f} GiB for the activations of batch "
                        "{} x {}), but only {:.1f} GiB is free on the GPU",
                        gib(sizes.total_bytes), gib(sizes.state_bytes),
                        gib(sizes.total_bytes - sizes.state_bytes), B, T, gib(free_bytes)),
            "lower --batch and raise --grad-accum to keep the tokens per step, or shorten --seq");

    auto impl = std::make_unique<Impl>(c, opt, B, T);
    auto memory = trainrig::cuda::device_alloc(sizes.total_bytes);
    if (!memory.ok()) return memory.status();
    impl->memory = std::move(memory).value();
    impl->buf = carve_buffers(c, B, T, static_cast<std::byte*>(impl->memory.get()));

    auto stream = trainrig::cuda::make_stream();
    if (!stream.ok()) return stream.status();
    impl->stream = std::move(stream).value();

    const size_t N = static_cast<size_t>(B) * T;
    auto host =
        trainrig::cuda::pinned_alloc(kSumSquaresBlocks * sizeof(double) + N * sizeof(float));
    if (!host.ok()) return host.status();
    impl->host = std::move(host).value();
    impl->host_partials = static_cast<double*>(impl->host.get());
    impl->host_losses = reinterpret_cast<float*>(impl->host_partials + kSumSquaresBlocks);

    auto gemm = LtGemm::create(impl->buf.gemm_workspace, impl->buf.gemm_workspace_bytes);
    if (!gemm.ok()) return gemm.status();
    impl->gemm.emplace(std::move(gemm).value());

    // AdamW starts from zero moments and the gradients accumulate into zeros; the rest is
    // cleared too so that no buffer (the padded vocabulary rows included) starts as garbage.
    CUDA_TRY(cudaMemsetAsync(impl->memory.get(), 0, sizes.total_bytes, impl->stream.get()));
    // RoPE's angles, computed in double on the host by the same function as the CPU reference
    // uses and stored as fp32; the vectors live until the copies are done.
    std::vector<float> rope_cos, rope_sin;
    if (c.arch == Arch::kLlama) {
        const DeviceBuffers& b = impl->buf;
        rope_table(c, b.rope_positions, rope_cos, rope_sin);
        CUDA_TRY(cudaMemcpyAsync(b.rope_cos, rope_cos.data(), rope_cos.size() * sizeof(float),
                                 cudaMemcpyHostToDevice, impl->stream.get()));
        CUDA_TRY(cudaMemcpyAsync(b.rope_sin, rope_sin.data(), rope_sin.size() * sizeof(float),
                                 cudaMemcpyHostToDevice, impl->stream.get()));
    }
    TRAINRIG_TRY(wait_stream(impl->stream.get()));
    return std::unique_ptr<GptCuda>(new GptCuda(std::move(impl)));
}

GptCuda::GptCuda(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GptCuda::~GptCuda() = default;

const ModelConfig& GptCuda::config() const { return impl_->config; }
const ParamLayout& GptCuda::layout() const { return impl_->layout; }
cudaStream_t GptCuda::stream() const { return impl_->stream.get(); }
size_t GptCuda::allocated_bytes() const { return impl_->buf.total_bytes; }
float* GptCuda::grads() { return impl_->buf.grads; }

Status GptCuda::set_params(const float* host) {
    const DeviceBuffers& b = impl_->buf;
    const cudaStream_t s = impl_->stream.get();
    const size_t n = impl_->layout.total();
    CUDA_TRY(cudaMemcpyAsync(b.master, host, n * sizeof(float), cudaMemcpyHostToDevice, s));
    cast_to_bf16(b.params, b.master, n, s);
    CUDA_TRY(cudaGetLastError());
    return wait_stream(s);
}

// A copy into pageable memory returns only when it is done, so the queued work is waited for
// first (a bounded wait) and the copy itself then finds the stream idle.
Status GptCuda::get_params(float* host) const {
    const cudaStream_t s = impl_->stream.get();
    TRAINRIG_TRY(wait_stream(s));
    CUDA_TRY(cudaMemcpyAsync(host, impl_->buf.master, impl_->layout.total() * sizeof(float),
                             cudaMemcpyDeviceToHost, s));
    return wait_stream(s);
}

Status GptCuda::get_logits(float* host, size_t rows) const {
    const Impl& model = *impl_;
    if (rows == 0 || rows != model.logits_rows)
        return Status(Errc::kInternal,
                      fmt::format("the logits of {} rows are asked for, the device holds {}", rows,
                                  model.logits_rows));
    const cudaStream_t s = model.stream.get();
    const size_t n = rows * static_cast<size_t>(model.config.padded_vocab);
    std::vector<uint16_t> raw(n);
    TRAINRIG_TRY(wait_stream(s));
    CUDA_TRY(cudaMemcpyAsync(raw.data(), model.buf.logits, n * sizeof(uint16_t),
                             cudaMemcpyDeviceToHost, s));
    TRAINRIG_TRY(wait_stream(s));
    // bf16 is the upper half of an fp32.
    for (size_t i = 0; i < n; ++i) {
        const uint32_t bits = static_cast<uint32_t>(raw[i]) << 16;
        std::memcpy(host + i, &bits, sizeof bits);
    }
    return ok_status();
}

Status GptCuda::set_moments(const float* m, const float* v) {
    const cudaStream_t s = impl_->stream.get();
    const size_t bytes = impl_->layout.total() * sizeof(float);
    CUDA_TRY(cudaMemcpyAsync(impl_->buf.m, m, bytes, cudaMemcpyHostToDevice, s));
    CUDA_TRY(cudaMemcpyAsync(impl_->buf.v, v, bytes, cudaMemcpyHostToDevice, s));
    return wait_stream(s);
}

Status GptCuda::get_moments(float* m, float* v) const {
    const cudaStream_t s = impl_->stream.get();
    const size_t bytes = impl_->layout.total() * sizeof(float);
    TRAINRIG_TRY(wait_stream(s));
    CUDA_TRY(cudaMemcpyAsync(m, impl_->buf.m, bytes, cudaMemcpyDeviceToHost, s));
    CUDA_TRY(cudaMemcpyAsync(v, impl_->buf.v, bytes, cudaMemcpyDeviceToHost, s));
    return wait_stream(s);
}

Status GptCuda::zero_grads() {
    CUDA_TRY(cudaMemsetAsync(impl_->buf.grads, 0, impl_->layout.total() * sizeof(float),
                             impl_->stream.get()));
    return ok_status();
}

Result<double> GptCuda::forward(const uint32_t* d_inputs, const uint32_t* d_order,
                                const uint32_t* d_targets, int B, int T) {
    Impl& model = *impl_;
    // Every activation buffer is sized by rows (B·T), so any micro-batch with no more rows than
    // the one of create() fits; backward checks the attention scratch for its B and T.
    if (B < 1 || T < 1 || T > model.config.max_seq ||
        static_cast<int64_t>(B) * T > static_cast<int64_t>(model.max_B) * model.max_T)
        return Status(Errc::kInternal,
                      fmt::format("a forward of {} x {} tokens exceeds the {} x {} the model was "
                                  "created for",
                                  B, T, model.max_B, model.max_T));
    model.backward_ready = false;
    model.logits_rows = 0;
    const DeviceBuffers& b = model.buf;
    const cudaStream_t s = model.stream.get();
    LtGemm& gemm = *model.gemm;
    const ModelConfig& c = model.config;
    const int N = B * T, C = c.channels, NH = c.heads, L = c.layers, Vp = c.padded_vocab;
    const int KVH = c.kv_head_count(), hd = c.head_dim(), QKV = c.qkv_width(), F = c.ffn_width();
    const bool llama = model.llama();
    const int FC = llama ? 2 * F : F;  // the MLP's first projection: gate | up for Llama
    const size_t uN = static_cast<size_t>(N), uF = static_cast<size_t>(F);

    CUDA_TRY(
        cudaMemcpyAsync(b.tokens, d_inputs, uN * sizeof(uint32_t), cudaMemcpyDeviceToDevice, s));
    CUDA_TRY(cudaMemcpyAsync(b.token_order, d_order, uN * sizeof(uint32_t),
                             cudaMemcpyDeviceToDevice, s));
    if (d_targets != nullptr)
        CUDA_TRY(cudaMemcpyAsync(b.targets, d_targets, uN * sizeof(uint32_t),
                                 cudaMemcpyDeviceToDevice, s));
    // Llama has no position table: w(kWpe) is null and the encoder adds nothing.
    encoder_forward(b.encoded, b.tokens, model.w(Param::kWte), model.w(Param::kWpe), B, T, C, s);
    const bf16* residual = b.encoded;
    for (int l = 0; l < L; ++l) {
        const LayerActs& a = b.layers[static_cast<size_t>(l)];
        model.norm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, residual, Param::kLn1W, Param::kLn1B, l,
                           N, s);
        // Biases a family lacks are null: the GEMM then has no bias epilogue.
        TRAINRIG_TRY(gemm.forward(a.qkv, a.ln1, model.w(Param::kQkvW, l), model.w(Param::kQkvB, l),
                                  nullptr, N, C, QKV, s));
        if (llama) rope_forward(a.qkv, b.rope_cos, b.rope_sin, B, T, NH, KVH, hd, s);
        attention_forward(a.atty, a.lse, a.qkv, B, T, NH, KVH, hd, s);
        // The residual add rides on the GEMM: res2 = residual + atty · Wᵀ + b.
        TRAINRIG_TRY(gemm.forward(a.res2, a.atty, model.w(Param::kAttnProjW, l),
                                  model.w(Param::kAttnProjB, l), residual, N, C, C, s));
        model.norm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.res2, Param::kLn2W, Param::kLn2B, l, N,
                           s);
        TRAINRIG_TRY(gemm.forward(a.fch, a.ln2, model.w(Param::kFcW, l), model.w(Param::kFcB, l),
                                  nullptr, N, C, FC, s));
        if (llama)
            swiglu_forward(a.fch_gelu, a.fch, uN, F, s);
        else
            gelu_forward(a.fch_gelu, a.fch, uN * uF, s);
        TRAINRIG_TRY(gemm.forward(a.res3, a.fch_gelu, model.w(Param::kFcProjW, l),
                                  model.w(Param::kFcProjB, l), a.res2, N, F, C, s));
        CUDA_TRY(cudaGetLastError());
        residual = a.res3;
    }
    model.norm_forward(b.lnf, b.lnf_mean, b.lnf_rstd, residual, Param::kLnfW, Param::kLnfB, 0, N,
                       s);
    // The classifier: the token embedding itself when tied (GPT-2), else lm_head; no bias.
    TRAINRIG_TRY(gemm.forward(b.logits, b.lnf, model.w(model.layout.classifier()), nullptr, nullptr,
                              N, C, Vp, s));
    model.logits_rows = uN;
    if (d_targets == nullptr) {
        CUDA_TRY(cudaGetLastError());
        TRAINRIG_TRY(wait_stream(s));
        return 0.0;
    }
    crossentropy_forward(b.losses, b.row_lse, b.logits, b.targets, N, c.vocab, Vp, s);
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cudaMemcpyAsync(model.host_losses, b.losses, uN * sizeof(float),
                             cudaMemcpyDeviceToHost, s));
    TRAINRIG_TRY(wait_stream(s));
    double sum = 0;  // in row order, as the CPU reference
    for (size_t n = 0; n < uN; ++n) sum += static_cast<double>(model.host_losses[n]);
    model.B = B;
    model.T = T;
    model.backward_ready = true;
    return sum / static_cast<double>(N);
}

void GptCuda::Impl::norm_forward(bf16* out, float* mean, float* rstd, const bf16* inp, Param wp,
                                 Param bp, int l, int N, cudaStream_t s) const {
    const int C = config.channels;
    if (llama())
        rmsnorm_forward(out, rstd, inp, w(wp, l), N, C, static_cast<float>(config.norm_eps), s);
    else
        layernorm_forward(out, mean, rstd, inp, w(wp, l), w(bp, l), N, C, s);
}

Result<double> GptCuda::grad_sum_squares() {
    Impl& model = *impl_;
    const cudaStream_t s = model.stream.get();
    sum_squares(model.buf.partials, model.buf.grads, model.layout.total(), s);
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cudaMemcpyAsync(model.host_partials, model.buf.partials,
                             kSumSquaresBlocks * sizeof(double), cudaMemcpyDeviceToHost, s));
    TRAINRIG_TRY(wait_stream(s));
    double total = 0;
    for (int i = 0; i < kSumSquaresBlocks; ++i) total += model.host_partials[i];
    return total;
}

Status GptCuda::update(double lr, int64_t t, double norm) {
    Impl& model = *impl_;
    if (t < 1) return Status(Errc::kInternal, fmt::format("AdamW steps count from 1, not {}", t));
    // The same scalars and float arithmetic as AdamW::step (src/train/optimizer.cpp).
    const AdamWStep a = adamw_step(model.opt, lr, t, norm);
    const DeviceBuffers& b = model.buf;
    const cudaStream_t s = model.stream.get();
    for (const TensorSlot& slot : model.layout.slots()) {
        const size_t at = slot.offset;
        adamw_update(b.master + at, b.params + at, b.grads + at, b.m + at, b.v + at, slot.size,
                     a.lr, a.beta1, a.beta2, a.c1, a.c2, a.eps, slot.matrix ? a.decay : 0.0f,
                     a.clip, s);
    }
    CUDA_TRY(cudaGetLastError());
    return ok_status();
}

}  // namespace trainrig::train::cuda
