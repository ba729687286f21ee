// The planner's formulas against the numbers their sources publish. Each test names its source.
#include <gtest/gtest.h>

#include <cmath>

#include "plan/comm_model.h"
#include "plan/flops.h"
#include "plan/memory_model.h"
#include "plan/model_catalog.h"

namespace trainrig::plan {
namespace {

// GPT-3 175B as Korthikanti et al. and Narayanan et al. configure it: 96 layers, h 12288,
// 96 heads, s 2048, V 51200 (padded), GELU MLP of 4h, dropout.
ModelSpec gpt3_175b() {
    ModelSpec m = *find_model("gpt2");
    m.id = "gpt3-175b";
    m.layers = 96;
    m.hidden = 12288;
    m.heads = m.kv_heads = 96;
    m.head_dim = 128;
    m.ffn = 4 * 12288;
    m.vocab = 51200;
    m.max_positions = 2048;
    return m;
}

JobSpec korthikanti_job(int tp, bool sp, Recompute r) {
    JobSpec j;
    j.seq = 2048;
    j.micro_batch = 1;
    j.tp = tp;
    j.sequence_parallel = sp;
    j.recompute = r;
    j.flash_attention = false;
    return j;
}

TEST(PlanActivations, KorthikantiTable2ForGpt3) {
    // Korthikanti et al. 2022 (arXiv:2205.05198) Table 2, bytes per layer, 16-bit, b = 1:
    //   no parallelism      sbh(34 + 5as/h)
    //   TP t                sbh(10 + 24/t + 5as/(ht))
    //   TP t + SP           sbh(34 + 5as/h)/t
    //   TP t + SP selective sbh·34/t
    //   full recompute      2sbh
    const auto m = gpt3_175b();
    const double sbh = 2048.0 * 12288, as_h = 5.0 * 96 * 2048 / 12288;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, korthikanti_job(1, false, Recompute::kNone)),
                     sbh * (34 + as_h));
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, korthikanti_job(8, false, Recompute::kNone)),
                     sbh * (10 + 24.0 / 8 + as_h / 8));
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, korthikanti_job(8, true, Recompute::kNone)),
                     sbh * (34 + as_h) / 8);
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, korthikanti_job(8, true, Recompute::kSelective)),
                     sbh * 34 / 8);
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, korthikanti_job(1, false, Recompute::kFull)),
                     2 * sbh);
    // 2.87 GB per layer without any parallelism: what makes 175B untrainable without them.
    EXPECT_NEAR(layer_activation_bytes(m, korthikanti_job(1, false, Recompute::kNone)), 2.869e9,
                1e6);
}

TEST(PlanActivations, FlashAttentionDropsTheQuadraticTerm) {
    // FlashAttention keeps no s x s matrix, only the fp32 softmax statistics (4·a·s·b bytes).
    const auto m = gpt3_175b();
    auto j = korthikanti_job(1, false, Recompute::kNone);
    j.flash_attention = true;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, j), 2048.0 * 12288 * 34 + 4.0 * 96 * 2048);
}

TEST(PlanActivations, SwigluAndGqaCountTheirOwnShapes) {
    // Llama-2-70B, s 4096, b 1, no dropout, flash on: norms 2·2sbh, QKV and MLP inputs 2sbh
    // each, Q + K + V = 2sb(8192 + 2 x 1024), o_proj input 2sb·8192, SwiGLU gate + up +
    // product 3 x 2sb·28672, softmax statistics 4·64·s.
    const auto m = *find_model("llama2-70b");
    JobSpec j;
    j.seq = 4096;
    const double s = 4096, h = 8192;
    const double want = 4 * s * h + 2 * s * h + 2 * s * h + 2 * s * (8192 + 2048) + 2 * s * 8192 +
                        6 * s * 28672 + 4 * 64 * s;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, j), want);
}

TEST(PlanModelStates, ZeroPaperTable1SevenPointFiveB) {
    // Rajbhandari et al. 2019 (arXiv:1910.02054) Fig. 1 / §5: Ψ = 7.5B, K = 12, N_d = 64:
    // baseline 120 GB, P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.88 GB.
    EXPECT_DOUBLE_EQ(zero_paper_model_states(7.5e9, 0, 64), 120e9);
    EXPECT_NEAR(zero_paper_model_states(7.5e9, 1, 64), 31.4e9, 0.05e9);
    EXPECT_NEAR(zero_paper_model_states(7.5e9, 2, 64), 16.6e9, 0.05e9);
    EXPECT_NEAR(zero_paper_model_states(7.5e9, 3, 64), 1.88e9, 0.01e9);
}

TEST(PlanModelStates, PlannerShardsLikeThePaper) {
    const auto m = *find_model("llama2-7b");
    const auto p = count_params(m);
    Machine machine;
    machine.gpu.memory_bytes = 80e9;
    machine.gpus = 64;
    for (int stage = 0; stage <= 3; ++stage) {
        JobSpec j;
        auto mem = memory_per_gpu(m, p, j, machine, stage, nullptr);
        EXPECT_DOUBLE_EQ(mem.model_states(),
                         zero_paper_model_states(static_cast<double>(p.total), stage, 64))
            << "ZeRO-" << stage;
    }
}

TEST(PlanModelStates, MegatronCountsEighteenBytes) {
    // Narayanan et al. 2021 / Megatron-LM: fp32 main gradients, 18 B/param; the distributed
    // optimizer (ZeRO-1 equivalent) 6 + 12/DP.
    JobSpec j;
    j.convention = Convention::kMegatron;
    const auto b = state_bytes(j);
    EXPECT_DOUBLE_EQ(b.weight + b.gradient + b.optimizer, 18);
    const auto m = *find_model("llama2-7b");
    const auto p = count_params(m);
    Machine machine;
    machine.gpus = 8;
    const auto mem = memory_per_gpu(m, p, j, machine, 1, nullptr);
    EXPECT_DOUBLE_EQ(mem.model_states(), static_cast<double>(p.total) * (6 + 12.0 / 8));
}

TEST(PlanModelStates, DeepSpeedEstimatorsWhenAskedForThatConvention) {
    // DeepSpeed stage_1_and_2.py (after PR #5099): gpu = 2Ψ + int(18Ψ / N);
    // stage3.py: gpu = 4 x largest_layer + int(18Ψ / N). No offload.
    EXPECT_DOUBLE_EQ(deepspeed_zero2_gpu_bytes(7e9, 8), 14e9 + 15.75e9);
    EXPECT_DOUBLE_EQ(deepspeed_zero3_gpu_bytes(7e9, 1e8, 8), 4e8 + 15.75e9);
    const auto m = *find_model("llama2-7b");
    const auto p = count_params(m);
    const double psi = static_cast<double>(p.total);
    Machine machine;
    machine.gpus = 8;
    JobSpec j;
    j.convention = Convention::kDeepSpeed;
    EXPECT_DOUBLE_EQ(memory_per_gpu(m, p, j, machine, 2, nullptr).model_states(),
                     deepspeed_zero2_gpu_bytes(psi, 8));
    const auto z3 = memory_per_gpu(m, p, j, machine, 3, nullptr);
    // The largest single module of Llama-2-7B is the 32000 x 4096 embedding.
    EXPECT_DOUBLE_EQ(z3.model_states() + z3.zero3_buffers,
                     deepspeed_zero3_gpu_bytes(psi, 32000.0 * 4096, 8));
}

TEST(PlanModelStates, OptimizerAndPrecisionBytes) {
    // FACTS §1: AdamW 12 B/param of states (fp32 master + m + v), 8-bit Adam about 6, SGD with
    // momentum 8; pure fp32 has no master copy.
    JobSpec j;
    EXPECT_DOUBLE_EQ(state_bytes(j).optimizer, 12);
    j.optimizer = Optimizer::kAdam8bit;
    EXPECT_DOUBLE_EQ(state_bytes(j).optimizer, 6);
    j.optimizer = Optimizer::kSgdMomentum;
    EXPECT_DOUBLE_EQ(state_bytes(j).optimizer, 8);
    j.optimizer = Optimizer::kAdamW;
    j.precision = Precision::kFp32;
    const auto b = state_bytes(j);
    EXPECT_DOUBLE_EQ(b.weight + b.gradient + b.optimizer, 16);  // 4 + 4 + 8
}

TEST(PlanLora, TrainableParamsMatchPeft) {
    // PEFT prints "trainable params: 4,194,304" for Llama-2-7B with r=8 on q_proj, v_proj;
    // rank 16 doubles it.
    const auto m = *find_model("llama2-7b");
    LoraTargets qv;
    EXPECT_EQ(lora_params(m, 8, qv), 4'194'304);
    EXPECT_EQ(lora_params(m, 16, qv), 8'388'608);
}

TEST(PlanLora, QloraStoresTheBaseInNf4) {
    // Dettmers et al. 2023 (arXiv:2305.14314) §3: NF4 + double quantization = 4.127 bits.
    const auto m = *find_model("llama2-7b");
    const auto p = count_params(m);
    JobSpec j;
    j.mode = Mode::kQlora;
    Machine machine;
    const auto mem = memory_per_gpu(m, p, j, machine, 0, nullptr);
    const double adapters = static_cast<double>(lora_params(m, 16, j.lora_targets));
    EXPECT_DOUBLE_EQ(mem.weights, static_cast<double>(p.total) * 4.127 / 8 + adapters * 2);
    EXPECT_DOUBLE_EQ(mem.optimizer, adapters * 12);
}

TEST(PlanPipeline, FirstStageHoldsOneMicroBatchPerStage) {
    // Narayanan et al. 2021 §2.2 / Korthikanti §4.2.3: with 1F1B the first stage keeps the
    // activations of PP micro-batches in flight, for its L/PP layers.
    const auto m = *find_model("llama2-70b");
    const auto p = count_params(m);
    JobSpec j;
    j.seq = 4096;
    j.tp = 8;
    j.pp = 4;
    j.grad_accum = 16;
    Machine machine;
    machine.gpus = 32;
    const auto mem = memory_per_gpu(m, p, j, machine, 1, nullptr);
    EXPECT_DOUBLE_EQ(mem.activations, 20 * layer_activation_bytes(m, j) * 4);
    EXPECT_DOUBLE_EQ(mem.logits, 0);  // on the last stage, which holds less
}

TEST(PlanFlops, PalmIsMegatronWithoutRecompute) {
    // For GPT-3's shape (N = 12·l·h² + V·h), PaLM's 6N + 12·l·h·s per token is exactly
    // Narayanan et al.'s 72·B·s·l·h²(1 + s/6h + V/12lh) per iteration.
    const double l = 96, h = 12288, V = 51200, s = 2048, B = 1536;
    const double N = 12 * l * h * h + V * h;
    EXPECT_NEAR(palm_flops_per_token(N, 96, 96, 128, 2048) * B * s,
                megatron_paper_flops_per_iteration(B, s, l, h, V, false), 1e-9 * 1e24);
}

TEST(PlanFlops, MegatronPaperThirtyFourDaysForGpt3) {
    // Narayanan et al. 2021 §5.1: GPT-3 175B on 300B tokens with 1024 A100s at 140 TFLOP/s
    // per GPU takes "about 34 days" (their eq. 3, full recompute).
    const double per_token =
        megatron_paper_flops_per_iteration(1536, 2048, 96, 12288, 51200, true) / (1536.0 * 2048);
    const double days = 300e9 * per_token / (1024 * 140e12) / 86400;
    EXPECT_NEAR(days, 34.7, 0.1);
}

TEST(PlanFlops, PlannerFullRecomputeMatchesMegatronNinetySix) {
    // Full recompute re-runs the layers' forward (8N instead of 6N), not the output layer:
    // the planner's executed FLOPs equal eq. 3's 96 form up to GPT-3's biases and norms.
    const auto m = gpt3_175b();
    auto j = korthikanti_job(1, false, Recompute::kFull);
    Derivation d;
    const auto f = token_flops(m, count_params(m), j, d);
    const double paper = megatron_paper_flops_per_iteration(1, 2048, 96, 12288, 51200, true) / 2048;
    EXPECT_NEAR(f.executed() / paper, 1.0, 1e-3);
}

TEST(PlanFlops, LlmcGpt2PerToken) {
    // llm.c train_gpt2.cu gpt2_estimate_mfu: 6N + 6·L·C·T with N = 124,475,904 (vocab padded
    // to 50304): 803,478,528 FLOP per token at T = 1024.
    auto m = *find_model("gpt2");
    m.vocab = 50304;
    const auto n = count_params(m).total;
    EXPECT_EQ(n, 124'475'904);
    EXPECT_DOUBLE_EQ(llmc_flops_per_token(static_cast<double>(n), 12, 768, 1024), 803'478'528);
}

TEST(PlanFlops, MegatronCodeHalvesCausalAttentionAndCountsGqaAndSwiglu) {
    // megatron/training/training.py: per token 6·(h(q + 2kv) + q·h)·L + 6·q·s·L +
    // 6·h·3f·L (SwiGLU) + 6·h·V.
    const auto m = *find_model("llama3-8b");
    const double L = 32, h = 4096, q = 4096, kv = 1024, f = 14336, V = 128256, s = 8192;
    const double want =
        6 * (h * (q + 2 * kv) + q * h) * L + 6 * q * s * L + 6 * h * 3 * f * L + 6 * h * V;
    EXPECT_NEAR(megatron_code_flops_per_token(m, 8192), want, want * 1e-12);
}

TEST(PlanFlops, LoraSkipsFrozenWeightGradients) {
    const auto m = *find_model("llama2-7b");
    const auto p = count_params(m);
    JobSpec full, lora;
    lora.mode = Mode::kLora;
    Derivation d;
    const auto ff = token_flops(m, p, full, d), fl = token_flops(m, p, lora, d);
    const double N = static_cast<double>(p.matmul);
    EXPECT_NEAR(ff.backward - fl.backward,
                2 * N - 4 * static_cast<double>(lora_params(m, 16, lora.lora_targets)), 1);
    EXPECT_DOUBLE_EQ(ff.model(), palm_flops_per_token(N, 32, 32, 128, 2048));
}

TEST(PlanComm, NcclTestsBusBandwidthFactors) {
    // NVIDIA/nccl-tests doc/PERFORMANCE.md: all_reduce 2(n-1)/n; all_gather, reduce_scatter,
    // alltoall (n-1)/n; broadcast, reduce 1.
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, 8), 1.75);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllGather, 8), 0.875);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduceScatter, 4), 0.75);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllToAll, 2), 0.5);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kBroadcast, 8), 1);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduce, 8), 1);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, 1), 0);
}

TEST(PlanComm, TheArticlesAllReduceIsFourTimesTooFast) {
    // The article: 13B fp16 gradients (26 GB) over NVLink 3 "in 43 ms" (26 GB / 600 GB/s).
    // A ring moves 2(n-1)/n of the buffer at the bus bandwidth NCCL reaches (230 GB/s on
    // 8x A100, nccl-tests#149): 26 GB x 1.5 / 230 GB/s = 170 ms on 4 GPUs.
    EXPECT_NEAR(collective_seconds(Collective::kAllReduce, 26e9, 4, 230e9), 0.1696, 1e-3);
}

TEST(PlanComm, GroupsAcrossNodesShareTheNodesNics) {
    Machine m;
    m.gpus = 16;
    m.gpus_per_node = 8;
    m.nics_per_node = 8;
    m.intra = {"nvlink4", "", LinkKind::kIntraNode, 450e9, 0.822, ""};
    m.inter = {"ib-ndr", "", LinkKind::kInterNode, 50e9, 0.91, ""};
    EXPECT_DOUBLE_EQ(group_link(m, 8, 8).busbw, 450e9 * 0.822);     // one node: NVLink
    EXPECT_DOUBLE_EQ(group_link(m, 16, 8).busbw, 8 * 50e9 * 0.91);  // all 8 NICs
    EXPECT_DOUBLE_EQ(group_link(m, 2, 1).busbw, 50e9 * 0.91);       // TP 8: one NIC per DP group
}

}  // namespace
}  // namespace trainrig::plan
