// The planner end to end on the article's case, its validation, the catalog file, the typed
// quantities, and the machine search.
#include <gtest/gtest.h>

#include <cmath>

#include "core/quantity.h"
#include "plan/model_catalog.h"
#include "plan/plan_inputs.h"
#include "plan/planner.h"
#include "plan/quantities.h"
#include "plan/search.h"

namespace trainrig::plan {
namespace {

Machine machine(const std::string& gpu, int gpus) {
    MachineRequest r;
    r.gpu = gpu;
    r.gpus = gpus;
    auto m = make_machine(builtin_hardware(), r);
    EXPECT_TRUE(m.ok()) << m.status().message();
    return *m;
}

JobSpec article_job(const Machine& m) {
    JobSpec j;
    j.seq = 4096;
    EXPECT_TRUE(fit_global_batch(j, m, 128).ok());
    return j;
}

TEST(PlanPlanner, ArticleCaseNeedsZero3OnFourA100s) {
    // Llama-2-13B full fine-tune, 4x A100 80GB, seq 4096, global batch 128: 16 B/param is
    // 208 GB of model states — the article's "78 GB" fits nowhere without sharding.
    const auto model = *find_model("llama2-13b");
    const auto m = machine("a100-80g-sxm", 4);
    auto plan = make_plan(model, article_job(m), m, std::nullopt);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_NEAR(plan->zero_stages[0].model_states(), 16.0 * 13'015'864'320, 1);
    EXPECT_FALSE(plan->zero_stages[0].fits());
    EXPECT_FALSE(plan->zero_stages[1].fits());
    EXPECT_FALSE(plan->zero_stages[2].fits());
    // ZeRO-3 leaves 3.5 GiB of 80: under the 5 % margin plans keep, tight, not fitting.
    EXPECT_FALSE(plan->zero_stages[3].fits());
    EXPECT_TRUE(plan->zero_stages[3].tight());
    EXPECT_EQ(plan->job.zero, 3);
    EXPECT_TRUE(plan->zero_chosen);
    EXPECT_NE(plan->warnings.back().find("less than the 5 % margin"), std::string::npos);
    // Recomputing activations makes room: ZeRO-3 fits with the margin kept.
    JobSpec full = article_job(m);
    full.recompute = Recompute::kFull;
    auto roomy = make_plan(model, full, m, std::nullopt);
    ASSERT_TRUE(roomy.ok());
    EXPECT_TRUE(roomy->memory.fits());
    EXPECT_GE(roomy->memory.headroom(), MemoryBreakdown::kMemoryMargin * roomy->memory.capacity);
    EXPECT_EQ(plan->job.grad_accum, 32);
    // 6N + attention per token: 128 x 4096 tokens a step.
    EXPECT_DOUBLE_EQ(plan->flops_per_step, plan->flops.model() * 128 * 4096);
    // 32 micro-steps of forward and backward, DP traffic hidden, plus the optimizer step.
    const auto& t = plan->time;
    EXPECT_DOUBLE_EQ(plan->comm.dp_exposed, 0);
    EXPECT_DOUBLE_EQ(t.step, 32 * (t.forward_per_micro + t.backward_per_micro) + t.optimizer);
    EXPECT_NEAR(t.forward_per_micro, plan->flops.forward * 4096 / (312e12 * 0.45), 1e-12);
    EXPECT_DOUBLE_EQ(t.tokens_per_second, 128 * 4096 / t.step);
    EXPECT_NEAR(t.tokens_per_second, 6438, 1);  // the article's "80 tokens/s" is far off
    EXPECT_FALSE(plan->derivation.steps().empty());
}

TEST(PlanPlanner, AskedStageIsKeptEvenWhenItDoesNotFit) {
    const auto model = *find_model("llama2-13b");
    const auto m = machine("a100-80g-sxm", 4);
    auto plan = make_plan(model, article_job(m), m, 0);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->job.zero, 0);
    EXPECT_FALSE(plan->zero_chosen);
    EXPECT_FALSE(plan->memory.fits());
    ASSERT_FALSE(plan->warnings.empty());
}

TEST(PlanPlanner, DdpTrafficHidesUnderBackwardOnNvlinkNotOnPcie) {
    const auto model = *find_model("gpt2-xl");
    JobSpec j;
    j.seq = 1024;  // one sequence per micro-step: 47 ms of backward on an A100
    auto nvlink = make_plan(model, j, machine("a100-80g-sxm", 8), 0);
    auto pcie = make_plan(model, j, machine("rtx4090", 8), 0);
    ASSERT_TRUE(nvlink.ok() && pcie.ok());
    EXPECT_DOUBLE_EQ(nvlink->comm.dp_exposed, 0);
    EXPECT_GT(pcie->comm.dp_exposed, 0);
    // 2(n-1)/n x 2 bytes x Ψ for a bf16 all-reduce.
    EXPECT_NEAR(nvlink->comm.dp_bytes_per_step, 1.75 * 2 * 1'557'611'200, 1);
}

// The exposed DP time can be checked by hand: its substitution has every term, the all-gather
// ZeRO-1/2 run after the step among them; and no step of the derivation restates its formula.
TEST(PlanPlanner, ExposedTrafficIsWrittenWithEveryTerm) {
    const auto model = *find_model("llama2-7b");
    JobSpec j;
    j.seq = 4096;
    j.recompute = Recompute::kFull;
    for (int zero : {0, 1, 2, 3}) {
        auto p = make_plan(model, j, machine("l40s", 3), zero);
        ASSERT_TRUE(p.ok()) << zero;
        const auto& c = p->comm;
        EXPECT_EQ(c.dp_after_step > 0, zero == 1 || zero == 2) << zero;
        EXPECT_LE(c.dp_after_step, c.dp_exposed + 1e-12) << zero;
        const Step* exposed = nullptr;
        for (const auto& s : p->derivation.steps()) {
            EXPECT_NE(s.formula, s.substituted) << s.id;
            if (s.id == "comm.dp_exposed") exposed = &s;
        }
        ASSERT_NE(exposed, nullptr);
        EXPECT_NE(exposed->substituted.find("max(0, "), std::string::npos) << exposed->substituted;
        if (c.dp_after_step > 0) {
            EXPECT_NE(exposed->substituted.find(" + " + format_duration(c.dp_after_step)),
                      std::string::npos)
                << exposed->substituted;
            EXPECT_NE(exposed->formula.find("all_gather after the step"), std::string::npos);
        }
    }
}

TEST(PlanPlanner, ImpossibleLayoutsAreOneSentence) {
    const auto model = *find_model("llama2-13b");
    auto err = [&](JobSpec j, Machine m) {
        auto p = make_plan(model, j, m, std::nullopt);
        EXPECT_FALSE(p.ok());
        return p.status().message();
    };
    JobSpec j;
    auto m = machine("a100-80g-sxm", 6);
    j.tp = 3;
    EXPECT_EQ(err(j, m), "TP 3 does not divide the 40 attention heads of llama2-13b");
    j.tp = 4;
    EXPECT_EQ(
        err(j, m),
        "6 GPUs do not split into model replicas of TP 4 x PP 1 = 4 GPUs; --gpu-count must be "
        "a multiple of TP x PP");
    j = {};
    m.gpus = 0;
    EXPECT_EQ(err(j, m), "--gpu-count is 0; at least 1 GPU is needed");
    m = machine("a100-80g-sxm", 8);
    j.precision = Precision::kFp8;
    EXPECT_EQ(err(j, m), "A100 SXM4 80GB has no fp8 tensor-core throughput in the catalog");
    j = {};
    j.pp = 41;
    m = machine("a100-80g-sxm", 41);
    EXPECT_EQ(err(j, m), "PP 41 is more pipeline stages than the 40 layers of llama2-13b");
    j = {};
    j.seq = -5;
    EXPECT_EQ(err(j, machine("a100-80g-sxm", 1)), "--seq is -5; it must be at least 1");
    j = {};
    j.mfu = 1.5;
    EXPECT_EQ(err(j, machine("a100-80g-sxm", 1)), "--mfu 1.5 is not a fraction in (0, 1]");
}

TEST(PlanPlanner, OneGpuPlansZero0WhenNothingFits) {
    // ZeRO shards over data-parallel ranks; with one GPU there is nothing to shard over.
    auto plan =
        make_plan(*find_model("llama2-13b"), JobSpec{}, machine("a100-80g-sxm", 1), std::nullopt);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->job.zero, 0);
    EXPECT_FALSE(plan->memory.fits());
}

TEST(PlanPlanner, LoraMovesOnlyTheAdaptersBelowZero3) {
    const auto model = *find_model("llama2-70b");
    JobSpec j;
    j.mode = Mode::kLora;
    auto plan = make_plan(model, j, machine("a100-80g-sxm", 8), 1);
    ASSERT_TRUE(plan.ok());
    const double adapters = static_cast<double>(plan->trainable);
    // reduce_scatter of the adapter gradients and all_gather of the adapters: (n-1)/n x 2 x 2 B.
    EXPECT_NEAR(plan->comm.dp_bytes_per_step, 0.875 * (adapters * 2 + adapters * 2), 1);
}

TEST(PlanPlanner, Fp32GathersFourByteWeightsAndStreamsTheWeightTwice) {
    const auto model = *find_model("gpt2-xl");
    JobSpec j;
    j.precision = Precision::kFp32;
    j.seq = 1024;
    auto plan = make_plan(model, j, machine("a100-80g-sxm", 8), 3);
    ASSERT_TRUE(plan.ok());
    const double psi = 1'557'611'200;
    // ZeRO-3: 2 all_gathers of weights + a reduce_scatter of gradients, all 4 bytes.
    EXPECT_NEAR(plan->comm.dp_bytes_per_step, 0.875 * (2 * 4 * psi + 4 * psi), 1);
    // Optimizer: read 4 B gradient, read+write 8 B of m and v, read+write the 4 B weight.
    EXPECT_NEAR(plan->time.optimizer, psi / 8 * 28 / (2.039e12 * 0.8), 1e-9);
}

TEST(PlanPlanner, PipelineAcrossNodesUsesTheNicsAndTheSlowestStage) {
    const auto model = *find_model("llama2-70b");
    JobSpec j;
    j.tp = 4;
    j.pp = 4;
    j.seq = 4096;
    j.grad_accum = 8;
    auto plan = make_plan(model, j, machine("h100-sxm", 16), std::nullopt);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_EQ(plan->comm.pp_over, "ib-ndr");
    EXPECT_DOUBLE_EQ(plan->comm.pp_bandwidth, 8 * 50e9 * 0.91 / 8);
    // The last stage: 20 of 80 layers plus the output layer (2·V·h forward).
    const double head = 2.0 * 32000 * 8192;
    const double stage_fwd = (plan->flops.forward - head) * 20 / 80 + head;
    EXPECT_NEAR(plan->time.forward_per_micro, stage_fwd * 4096 / 4 / (989.4e12 * 0.45), 1e-12);
}

TEST(PlanPlanner, GlobalBatchMustSplitEvenly) {
    JobSpec j;
    const auto m = machine("h100-sxm", 6);
    auto s = fit_global_batch(j, m, 128);
    EXPECT_EQ(s.message(), "global batch 128 is not a multiple of micro-batch 1 x DP 6 = 6");
    EXPECT_TRUE(fit_global_batch(j, m, 120).ok());
    EXPECT_EQ(j.grad_accum, 20);
    j.tp = 0;  // never a division by zero
    EXPECT_FALSE(fit_global_batch(j, m, 120).ok());
}

TEST(PlanPlanner, TimeToTrainEnergyAndCost) {
    const auto model = *find_model("llama3-8b");
    auto m = machine("h100-sxm", 8);
    JobSpec j = article_job(m);
    j.tokens = 1e9;
    auto plan = make_plan(model, j, m, std::nullopt);
    ASSERT_TRUE(plan.ok());
    const auto& t = plan->time;
    EXPECT_DOUBLE_EQ(t.steps, std::ceil(1e9 / (128.0 * 4096)));
    EXPECT_DOUBLE_EQ(t.seconds, t.steps * t.step);
    EXPECT_DOUBLE_EQ(t.gpu_hours, 8 * t.seconds / 3600);
    EXPECT_DOUBLE_EQ(t.energy_kwh, t.gpu_hours * 700 / 1000);
    EXPECT_DOUBLE_EQ(t.cost_usd, t.gpu_hours * m.gpu.usd_per_gpu_hour);
}

TEST(PlanCatalogFile, AddsAndOverridesAndRejectsTypos) {
    auto c = builtin_hardware();
    const char* good = R"(
[gpu.h100-sxm]
usd_per_gpu_hour = 2.10

[gpu.mi300x]
name = "MI300X"
bf16_tflops = 1307.4
memory_mib = 196592
hbm_tbps = 5.3
tdp_watts = 750
intra_link = "xgmi"
inter_link = "ib-ndr"

[link.xgmi]
name = "Infinity Fabric"
kind = "intra"
gbytes_per_s = 448
efficiency = 0.7
)";
    ASSERT_TRUE(merge_hardware_toml(c, good, "hw.toml").ok());
    EXPECT_DOUBLE_EQ(c.gpu("h100-sxm")->usd_per_gpu_hour, 2.10);
    EXPECT_EQ(c.gpu("h100-sxm")->price_source, "hw.toml");
    EXPECT_DOUBLE_EQ(c.gpu("h100-sxm")->tflops_bf16, 989.4);  // the rest is kept
    ASSERT_NE(c.gpu("mi300x"), nullptr);
    EXPECT_DOUBLE_EQ(c.gpu("mi300x")->tflops_fp16, 1307.4);
    EXPECT_EQ(c.link("xgmi")->kind, LinkKind::kIntraNode);

    auto err = [](const char* text) {
        auto fresh = builtin_hardware();
        auto s = merge_hardware_toml(fresh, text, "hw.toml");
        EXPECT_FALSE(s.ok());
        EXPECT_EQ(fresh.gpus.size(), builtin_hardware().gpus.size());  // nothing merged
        EXPECT_DOUBLE_EQ(fresh.gpu("h100-sxm")->tdp_watts, 700);
        return s.message();
    };
    EXPECT_EQ(err("[gpu.h100-sxm]\nusd_per_hour = 2\n"),
              "hw.toml [gpu.h100-sxm] line 2: unknown key \"usd_per_hour\"");
    EXPECT_EQ(err("[gpu.h100-sxm]\ntdp_watts = \"700\"\n"),
              "hw.toml [gpu.h100-sxm] line 2: \"tdp_watts\" must be a number above zero");
    EXPECT_EQ(err("[link.nvlink4]\nefficiency = 0\n"),
              "hw.toml [link.nvlink4] line 2: \"efficiency\" must be a number above zero");
    EXPECT_EQ(err("[gpu.h100-sxm]\nmemory_mib = 0\n"),
              "hw.toml [gpu.h100-sxm] line 2: \"memory_mib\" must be a number above zero");
    EXPECT_EQ(err("[gpu.x]\nname = \"X\"\n"), "hw.toml [gpu.x]: a new GPU needs \"bf16_tflops\"");
    EXPECT_EQ(err("[gpus.x]\n"),
              "hw.toml line 1: unknown section \"gpus\" (expected [gpu.ID] or [link.ID])");
    EXPECT_NE(err("[gpu.h100-sxm]\nintra_link = \"nvlink9\"\n").find("link \"nvlink9\""),
              std::string::npos);
    EXPECT_NE(err("[gpu.h100-sxm\n").find("hw.toml line 1"), std::string::npos);
}

TEST(PlanQuantities, CountsAndDurations) {
    EXPECT_EQ(parse_count("2B"), 2e9);
    EXPECT_EQ(parse_count("300m"), 300e6);
    EXPECT_EQ(parse_count("1.5e12"), 1.5e12);
    EXPECT_EQ(parse_count("4k"), 4000);
    EXPECT_FALSE(parse_count("-1"));
    EXPECT_FALSE(parse_count("2X"));
    EXPECT_FALSE(parse_count(""));
    EXPECT_EQ(parse_duration("72h"), 72 * 3600.0);
    EXPECT_EQ(parse_duration("3d"), 3 * 86400.0);
    EXPECT_EQ(parse_duration("90m"), 5400.0);
    EXPECT_EQ(parse_duration("12"), 12 * 3600.0);
    EXPECT_FALSE(parse_duration("soon"));
}

TEST(PlanInputs, ModelFlagsOverrideAndCustomModels) {
    PlanOptions o;
    o.layers = 12;
    o.hidden = 768;
    o.heads = 12;
    o.vocab = 50257;
    auto m = resolve_model(o);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(m->kv_heads, 12);
    EXPECT_EQ(m->ffn, 3072);
    o = {};
    o.model = "llama2-7b";
    o.layers = 16;
    m = resolve_model(o);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m->layers, 16);
    EXPECT_EQ(m->published_params, 0);
    o = {};
    o.model = "llama-7b";
    EXPECT_NE(resolve_model(o).status().message().find("unknown model \"llama-7b\" (known: gpt2,"),
              std::string::npos);
    o = {};
    EXPECT_NE(resolve_model(o).status().message().find("no model"), std::string::npos);
}

TEST(PlanInputs, LoraTargets) {
    auto t = parse_lora_targets("q_proj,k,v,o");
    ASSERT_TRUE(t.ok());
    EXPECT_TRUE(t->q && t->k && t->v && t->o && !t->gate);
    EXPECT_EQ(lora_targets_text(*parse_lora_targets("all")), "q,k,v,o,gate,up,down");
    EXPECT_EQ(parse_lora_targets("qkv").status().message(),
              "--lora-targets: \"qkv\" is not a projection (q, k, v, o, gate, up, down or all)");
}

TEST(PlanSearch, CompareRanksFittingMachinesFirst) {
    const auto model = *find_model("llama2-13b");
    JobSpec j;
    j.seq = 4096;
    SearchRequest r;
    r.gpu_ids = {"rtx4090", "a100-80g-sxm", "h100-sxm"};
    r.counts = {4, 8};
    r.global_batch = 128;
    r.rank = Rank::kTime;
    const auto rows = compare_machines(model, j, builtin_hardware(), r);
    ASSERT_EQ(rows.size(), 6u);
    // As asked (no recompute), 8 GPUs fit; 4 leave less than the margin; 24 GB cards none.
    EXPECT_EQ(rows[0].gpu, "h100-sxm");
    EXPECT_EQ(rows[0].gpus, 8);
    EXPECT_EQ(rows[1].gpu, "a100-80g-sxm");
    EXPECT_EQ(rows[1].gpus, 8);
    EXPECT_GE(rows[0].plan->time.tokens_per_second, rows[1].plan->time.tokens_per_second);
    for (size_t i = 2; i < rows.size(); ++i) EXPECT_FALSE(rows[i].why_not.empty()) << i;
    // Left open, the layout is searched as --minimum searches it: 4 A100s fit with full
    // recompute, and the 24 GB cards' reason names the leanest layout tried.
    r.vary_tp = r.vary_pp = r.vary_recompute = true;
    const auto open = compare_machines(model, j, builtin_hardware(), r);
    std::string why_4090;
    bool four_a100 = false;
    for (const auto& c : open) {
        if (c.gpu == "a100-80g-sxm" && c.gpus == 4) {
            four_a100 = c.why_not.empty();
            EXPECT_TRUE(c.plan && c.plan->memory.fits());
        }
        if (c.gpu == "rtx4090" && c.gpus == 4) why_4090 = c.why_not;
    }
    EXPECT_TRUE(four_a100);
    EXPECT_NE(why_4090.find("even at its leanest layout (TP 4 x PP 1, full recompute"),
              std::string::npos)
        << why_4090;
}

// --compare and --minimum agree: Llama 2 70B fits on 16 to 64 H100s once the layout is
// searched (the bug report: --compare said 64 do not fit), and --minimum finds the same 16.
TEST(PlanSearch, CompareSearchesLayoutsAsMinimumDoes) {
    const auto model = *find_model("llama2-70b");
    JobSpec j;
    j.seq = 4096;
    SearchRequest r;
    r.gpu_ids = {"h100-sxm"};
    r.counts = {16, 32, 64};
    r.vary_tp = r.vary_pp = r.vary_recompute = true;
    const auto rows = compare_machines(model, j, builtin_hardware(), r);
    for (const auto& c : rows) {
        EXPECT_TRUE(c.why_not.empty()) << c.gpus << ": " << c.why_not;
        ASSERT_TRUE(c.plan);
        EXPECT_TRUE(c.plan->memory.fits());
    }
    r.machine.gpu = "h100-sxm";
    std::string why;
    auto fewest = minimum_gpus(model, j, builtin_hardware(), r, why);
    ASSERT_TRUE(fewest) << why;
    EXPECT_EQ(fewest->machine.gpus, 16);
}

TEST(PlanSearch, MinimumTriesRecomputeTpAndPpBeforeGivingUp) {
    // Llama 2 70B on H100 SXM (docs/plan.md, README): no count fits with the asked layout
    // (TP 1, no recompute), but TP within a node and recompute make it fit.
    const auto model = *find_model("llama2-70b");
    JobSpec j;
    j.seq = 4096;
    SearchRequest r;
    r.machine.gpu = "h100-sxm";
    r.target.tokens_per_second = 20000;
    std::string why;
    EXPECT_FALSE(minimum_gpus(model, j, builtin_hardware(), r, why));
    EXPECT_NE(why.find("memory binds"), std::string::npos) << why;
    r.vary_tp = r.vary_pp = r.vary_recompute = true;
    auto fit = minimum_gpus(model, j, builtin_hardware(), r, why);
    ASSERT_TRUE(fit) << why;
    EXPECT_TRUE(fit->memory.fits());
    EXPECT_GE(fit->time.tokens_per_second, 20000);
    EXPECT_GT(fit->job.tp * fit->job.pp, 1);
    // One fewer GPU does not work with any layout.
    r.max_gpus = fit->machine.gpus > 8 ? fit->machine.gpus - 8 : fit->machine.gpus - 1;
    EXPECT_FALSE(minimum_gpus(model, j, builtin_hardware(), r, why));
    // A target no count reaches: the target binds, not memory.
    r.max_gpus = 64;
    r.target.tokens_per_second = 1e9;
    EXPECT_FALSE(minimum_gpus(model, j, builtin_hardware(), r, why));
    EXPECT_NE(why.find("the target binds"), std::string::npos) << why;
}

TEST(PlanSearch, MinimumFindsTheFewestThatFitAndMeetTheTarget) {
    const auto model = *find_model("llama2-13b");
    JobSpec j;
    j.seq = 4096;
    SearchRequest r;
    r.machine.gpu = "a100-80g-sxm";
    r.global_batch = 128;
    std::string why;
    auto fit = minimum_gpus(model, j, builtin_hardware(), r, why);
    ASSERT_TRUE(fit) << why;
    // 2 GPUs: 104 GB of model states each even at ZeRO-3; 4 leave 3.5 GiB, under the margin.
    EXPECT_EQ(fit->machine.gpus, 8);
    EXPECT_TRUE(fit->memory.fits());
    r.vary_recompute = true;  // left open: 4 fit with full recompute
    fit = minimum_gpus(model, j, builtin_hardware(), r, why);
    ASSERT_TRUE(fit) << why;
    EXPECT_EQ(fit->machine.gpus, 4);
    EXPECT_EQ(fit->job.recompute, Recompute::kFull);
    r.vary_recompute = false;
    r.target.tokens_per_second = 20000;
    fit = minimum_gpus(model, j, builtin_hardware(), r, why);
    ASSERT_TRUE(fit) << why;
    EXPECT_GE(fit->time.tokens_per_second, 20000);
    EXPECT_EQ(fit->machine.gpus % 8, 0);  // beyond a node, whole nodes
    r.max_gpus = 2;
    EXPECT_FALSE(minimum_gpus(model, j, builtin_hardware(), r, why));
    EXPECT_NE(why.find("no count up to 2 GPUs"), std::string::npos);
    // The constraint that binds, at the largest count, with the leanest layout tried.
    EXPECT_NE(why.find("memory binds (at 2 GPUs the leanest layout"), std::string::npos) << why;
    j.tp = 0;  // never an endless loop
    r.max_gpus = 64;
    EXPECT_FALSE(minimum_gpus(model, j, builtin_hardware(), r, why));
}

}  // namespace
}  // namespace trainrig::plan
