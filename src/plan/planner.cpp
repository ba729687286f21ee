#include "plan/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/quantity.h"
#include "plan/comm_model.h"

namespace trainrig::plan {

namespace {

constexpr const char* kNcclTests = "NVIDIA/nccl-tests doc/PERFORMANCE.md (busbw factors)";
constexpr const char* kMegatron =
    "Narayanan et al. 2021 (arXiv:2104.04473) §2.2 (1F1B bubble "
    "(p-1)/m), §3 (TP: 2 all-reduces per layer each way)";
// Achieved fraction of HBM bandwidth in a STREAM-like copy: A100 1.61/2.04, H100 2.90/3.35,
// H200 4.01/4.8 TB/s (Azure AI-benchmarking-guide) — 0.79 to 0.87.
constexpr double kHbmEfficiency = 0.8;

bool is_lora(const JobSpec& j) { return j.mode == Mode::kLora || j.mode == Mode::kQlora; }

}  // namespace

Status validate_job(const ModelSpec& m, const JobSpec& j, const Machine& machine) {
    if (machine.gpus < 1)
        return invalid_input(
            fmt::format("--gpu-count is {}; at least 1 GPU is needed", machine.gpus));
    if (machine.gpus_per_node < 1)
        return invalid_input(
            fmt::format("--gpus-per-node is {}; it must be at least 1", machine.gpus_per_node));
    if (j.tp < 1 || j.pp < 1)
        return invalid_input(
            fmt::format("TP {} x PP {}: parallel degrees must be at least 1", j.tp, j.pp));
    if (machine.gpus % (j.tp * j.pp) != 0)
        return invalid_input(
            fmt::format("{} GPUs do not split into model replicas of TP {} x PP {} = "
                        "{} GPUs; --gpu-count must be a multiple of TP x PP",
                        machine.gpus, j.tp, j.pp, j.tp * j.pp));
    if (m.heads % j.tp != 0)
        return invalid_input(
            fmt::format("TP {} does not divide the {} attention heads of {}", j.tp, m.heads, m.id));
    if (m.kv_heads % j.tp != 0)
        return invalid_input(
            fmt::format("TP {} does not divide the {} key/value heads of {} "
                        "(Megatron-LM requires it)",
                        j.tp, m.kv_heads, m.id));
    if (j.pp > m.layers)
        return invalid_input(fmt::format("PP {} is more pipeline stages than the {} layers of {}",
                                         j.pp, m.layers, m.id));
    if (j.zero < 0 || j.zero > 3)
        return invalid_input(fmt::format("--zero {} is not a stage 0-3", j.zero));
    if (j.micro_batch < 1)
        return invalid_input(
            fmt::format("--micro-batch is {}; it must be at least 1", j.micro_batch));
    if (j.grad_accum < 1)
        return invalid_input(
            fmt::format("gradient accumulation is {}; it must be at least 1", j.grad_accum));
    if (j.seq < 1) return invalid_input(fmt::format("--seq is {}; it must be at least 1", j.seq));
    if (static_cast<double>(j.micro_batch) * static_cast<double>(j.grad_accum) *
            dp_degree(j, machine) * static_cast<double>(j.seq) >
        1e15)
        return invalid_input(
            "the global batch is beyond 1e15 tokens a step; check --micro-batch, "
            "--grad-accum and --seq");
    if (!(j.mfu > 0 && j.mfu <= 1))
        return invalid_input(fmt::format("--mfu {} is not a fraction in (0, 1]", j.mfu));
    if (j.tokens < 0) return invalid_input("--tokens cannot be negative");
    if (peak_flops(machine.gpu, j.precision) <= 0)
        return invalid_input(fmt::format("{} has no {} tensor-core throughput in the catalog",
                                         machine.gpu.name, precision_name(j.precision)));
    if (is_lora(j)) {
        if (j.lora_rank < 1)
            return invalid_input(fmt::format("--lora-rank {} must be at least 1", j.lora_rank));
        if (j.lora_targets.gate && m.ffn_type != FfnType::kSwiglu)
            return invalid_input(
                fmt::format("LoRA target gate: {} has a GELU MLP without a gate "
                            "projection",
                            m.id));
        if (lora_params(m, j.lora_rank, j.lora_targets) == 0)
            return invalid_input("--lora-targets names no projection");
    }
    if (j.convention == Convention::kDeepSpeed && (j.tp > 1 || j.pp > 1))
        return invalid_input(
            "DeepSpeed's estimators assume pure data parallelism; use --tp 1 --pp 1 "
            "with --convention deepspeed");
    return ok_status();
}

namespace {

// The ZeRO stages whose memory fits the job on this machine, lowest first.
std::vector<int> fitting_zero_stages(const ModelSpec& m, const JobSpec& job,
                                     const Machine& machine) {
    const ParamCounts params = count_params(m);
    std::vector<int> fitting;
    for (int stage = 0; stage <= 3; ++stage)
        if (memory_per_gpu(m, params, job, machine, stage, nullptr).fits())
            fitting.push_back(stage);
    return fitting;
}

// Plans each of the `fitting` stages and keeps the fastest, or among those within 1 % of it the
// one with the most memory to spare.
Result<Plan> plan_fastest_stage(const ModelSpec& m, const JobSpec& job, const Machine& machine,
                                const std::vector<int>& fitting) {
    std::vector<Plan> plans;
    for (int stage : fitting) {
        auto p = make_plan(m, job, machine, stage);
        if (!p) return p.status();
        plans.push_back(std::move(p).value());
    }
    double fastest = plans.front().time.step;
    for (const auto& p : plans) fastest = std::min(fastest, p.time.step);
    const Plan* best = nullptr;
    for (const auto& p : plans)
        if (p.time.step <= 1.01 * fastest &&
            (!best || p.memory.headroom() > best->memory.headroom()))
            best = &p;
    Plan out = *best;
    out.zero_chosen = true;
    return out;
}

// Tokens of one micro-batch on one model replica: sequence length x micro-batch.
double tokens_per_micro(const JobSpec& j) {
    return static_cast<double>(j.seq) * static_cast<double>(j.micro_batch);
}

// Bytes of one activation element sent between GPUs: 4 in fp32 and TF32, else 2.
double sent_elem_bytes(const JobSpec& j) {
    return (j.precision == Precision::kFp32 || j.precision == Precision::kTf32) ? 4 : 2;
}

// The total parameters and, under LoRA, the trainable adapters.
void derive_params(Plan& plan) {
    const ModelSpec& m = plan.model;
    const JobSpec& j = plan.job;
    const ParamCounts& p = plan.params;
    Derivation& d = plan.derivation;
    d.add("params.total", "parameters",
          "L x layer + token embedding + positions + output layer + final norm",
          fmt::format(
              "{} x {} + {} + {} + {} + {}", m.layers, num(static_cast<double>(p.per_layer)),
              num(static_cast<double>(p.token_embedding)),
              num(static_cast<double>(p.position_embedding)),
              num(static_cast<double>(p.output_layer)), num(static_cast<double>(p.final_norm))),
          static_cast<double>(p.total), "params", m.source);
    plan.trainable = is_lora(j) ? lora_params(m, j.lora_rank, j.lora_targets) : p.total;
    if (is_lora(j))
        d.add("params.trainable", "trainable parameters (LoRA adapters)",
              "L x rank x Σ(in + out) over the targeted projections",
              fmt::format("{} x {} x ... ({})", m.layers, j.lora_rank,
                          lora_targets_text(j.lora_targets)),
              static_cast<double>(plan.trainable), "params", "Hu et al. 2021 (arXiv:2106.09685)");
}

// The FLOPs per token and per step.
void derive_flops(Plan& plan) {
    const JobSpec& j = plan.job;
    const Machine& machine = plan.machine;
    Derivation& d = plan.derivation;
    plan.flops = token_flops(plan.model, plan.params, j, d);
    plan.tokens_per_step =
        static_cast<double>(global_batch(j, machine)) * static_cast<double>(j.seq);
    plan.flops_per_step =
        d.add("flops.per_step", "model FLOPs per step", "FLOPs per token x global batch x seq",
              fmt::format("{} x {} x {}", num(plan.flops.model()), global_batch(j, machine), j.seq),
              plan.flops.model() * plan.tokens_per_step, "FLOP", "PaLM App. B");
}

// Memory: every stage for the verdicts, then the chosen one with its derivation. Returns the
// chosen stage.
int choose_zero_stage(Plan& plan, std::optional<int> zero) {
    const JobSpec& j = plan.job;
    for (int stage = 0; stage <= 3; ++stage)
        plan.zero_stages.push_back(
            memory_per_gpu(plan.model, plan.params, j, plan.machine, stage, nullptr));
    // Nothing fits: plan the stage that needs least (ZeRO shards nothing without DP).
    int chosen = zero.value_or(plan.dp > 1 ? 3 : 0);
    if (!zero) {
        plan.zero_chosen = true;
        for (int stage = 0; stage <= 3; ++stage)
            if (plan.zero_stages[stage].fits()) {
                chosen = stage;
                break;
            }
    }
    plan.job.zero = chosen;
    plan.memory =
        memory_per_gpu(plan.model, plan.params, j, plan.machine, chosen, &plan.derivation);
    return chosen;
}

// Compute time per micro-step on one GPU.
void derive_compute_time(Plan& plan) {
    const ModelSpec& m = plan.model;
    const JobSpec& j = plan.job;
    const Machine& machine = plan.machine;
    Derivation& d = plan.derivation;
    const double peak = peak_flops(machine.gpu, j.precision);
    const double tokens_micro = tokens_per_micro(j);
    const double per_gpu = tokens_micro / j.tp / (peak * j.mfu);
    // The slowest pipeline stage sets the pace: ceil(L/PP) layers, plus the output layer on
    // the last stage (2·V·h forward, 4·V·h backward, 2·V·h under LoRA).
    const double head = 2.0 * static_cast<double>(m.vocab) * m.hidden;
    const double head_bwd = is_lora(j) ? head : 2 * head;
    const double share =
        j.pp > 1 ? std::ceil(static_cast<double>(m.layers) / j.pp) / m.layers : 1.0;
    const double stage_fwd = (plan.flops.forward - head) * share + head;
    const double stage_bwd =
        (plan.flops.backward - head_bwd + plan.flops.recompute) * share + head_bwd;
    const std::string stage = j.pp > 1 ? " of the slowest stage" : "";
    TimePlan& t = plan.time;
    t.forward_per_micro = d.add("time.forward_per_micro", "forward time per micro-batch per GPU",
                                "forward FLOPs/token" + stage + " x s x b / TP / (peak x MFU)",
                                fmt::format("{} x {} / {} / ({:.4g} TFLOP/s x {})", num(stage_fwd),
                                            num(tokens_micro), j.tp, peak / 1e12, j.mfu),
                                stage_fwd * per_gpu, "s", machine.gpu.source);
    t.backward_per_micro =
        d.add("time.backward_per_micro", "backward (+ recompute) time per micro-batch per GPU",
              "(backward + recompute) FLOPs/token" + stage + " x s x b / TP / (peak x MFU)",
              fmt::format("{} x {} / {} / ({:.4g} TFLOP/s x {})", num(stage_bwd), num(tokens_micro),
                          j.tp, peak / 1e12, j.mfu),
              stage_bwd * per_gpu, "s", machine.gpu.source);
}

// The tensor-parallel all-reduces of a step; returns their seconds per micro-step (0 without
// TP).
double derive_tp_traffic(Plan& plan) {
    const ModelSpec& m = plan.model;
    const JobSpec& j = plan.job;
    const Machine& machine = plan.machine;
    Derivation& d = plan.derivation;
    CommPlan& c = plan.comm;
    if (j.tp <= 1) return 0;
    const double e = sent_elem_bytes(j);
    const double tokens_micro = tokens_per_micro(j);
    const double layers_per_stage = std::ceil(static_cast<double>(m.layers) / j.pp);
    const int64_t micro_steps = j.grad_accum;
    const GroupLink link = group_link(machine, j.tp, std::min(j.tp, machine.gpus_per_node));
    c.tp_busbw = link.busbw;
    c.tp_over = link.over;
    const double per_layer = j.recompute == Recompute::kFull ? 6 : 4;
    const double bytes = e * tokens_micro * m.hidden;
    const double tp_micro = per_layer * layers_per_stage *
                            collective_seconds(Collective::kAllReduce, bytes, j.tp, link.busbw);
    c.tp_bytes_per_step = per_layer * layers_per_stage * bytes *
                          busbw_factor(Collective::kAllReduce, j.tp) *
                          static_cast<double>(micro_steps);
    c.tp_seconds =
        d.add("comm.tp_seconds", "tensor-parallel all-reduces per step",
              "micro-steps x (4, or 6 with full recompute) x L/PP x 2(t-1)/t x e·s·b·h / busbw",
              fmt::format("{} x {} x {} x {:.3g} x {} / {}", micro_steps, per_layer,
                          num(layers_per_stage), busbw_factor(Collective::kAllReduce, j.tp),
                          gb(bytes), format_rate(link.busbw)),
              tp_micro * static_cast<double>(micro_steps), "s", kMegatron);
    return tp_micro;
}

// The pipeline sends of a step; returns their seconds per micro-step (0 without PP).
double derive_pp_traffic(Plan& plan) {
    const ModelSpec& m = plan.model;
    const JobSpec& j = plan.job;
    const Machine& machine = plan.machine;
    Derivation& d = plan.derivation;
    CommPlan& c = plan.comm;
    if (j.pp <= 1) return 0;
    const double e = sent_elem_bytes(j);
    const double tokens_micro = tokens_per_micro(j);
    const int64_t micro_steps = j.grad_accum;
    // PP is the outermost dimension; once the job spans nodes some stage boundary crosses
    // one, and the slowest boundary sets the pace of the pipeline.
    const bool across = machine.gpus > machine.gpus_per_node;
    const double r = (j.sequence_parallel && j.tp > 1) ? j.tp : 1;
    const double bytes = e * tokens_micro * m.hidden / r;
    c.pp_bandwidth = across ? machine.nics_per_node * machine.inter.bytes_per_s *
                                  machine.inter.efficiency / machine.gpus_per_node
                            : machine.intra.bytes_per_s * machine.intra.efficiency;
    c.pp_over = across ? machine.inter.id : machine.intra.id;
    const double pp_micro = 2 * bytes / c.pp_bandwidth;
    c.pp_bytes_per_step = 2 * bytes * static_cast<double>(micro_steps);
    c.pp_seconds =
        d.add("comm.pp_seconds", "pipeline sends per step (activations forward, gradients back)",
              "micro-steps x 2 x e·s·b·h/SP / bandwidth",
              fmt::format("{} x 2 x {} / {}", micro_steps, gb(bytes), format_rate(c.pp_bandwidth)),
              pp_micro * static_cast<double>(micro_steps), "s", kMegatron);
    return pp_micro;
}

// All micro-steps of a step: their compute, the TP and PP traffic on their critical path, and
// the pipeline bubble.
void derive_pipeline_time(Plan& plan) {
    const JobSpec& j = plan.job;
    TimePlan& t = plan.time;
    // Tensor and pipeline parallel traffic: on the critical path.
    const double tp_micro = derive_tp_traffic(plan);
    const double pp_micro = derive_pp_traffic(plan);
    const int64_t micro_steps = j.grad_accum;
    const double micro = t.forward_per_micro + t.backward_per_micro + tp_micro + pp_micro;
    t.bubble = (j.pp - 1) * micro;
    t.pipeline = plan.derivation.add(
        "time.pipeline", "forward and backward of all micro-steps, bubble included",
        "(micro-steps + PP - 1) x (forward + backward + TP + PP traffic)",
        fmt::format("({} + {} - 1) x {}", micro_steps, j.pp, format_duration(micro)),
        (static_cast<double>(micro_steps) + j.pp - 1) * micro, "s", kMegatron);
}

// One step's data-parallel traffic before a ZeRO stage schedules it.
struct DpTraffic {
    int dp = 1;
    int64_t micro_steps = 1;
    double grads = 0, weights = 0;  // bytes each rank reduces and gathers
    double fwd = 0, bwd = 0;        // one micro-step's forward and backward on one GPU, s
    GroupLink link;
};

// The data-parallel formulas of a step, in words and with the numbers put in.
struct DpFormulas {
    std::string formula, subst, exposed_formula, exposed_subst;
};

// How ZeRO stage `chosen` runs a step's data-parallel collectives: their time, the compute they
// hide under and what does not hide, into `c`.
DpFormulas schedule_dp_traffic(const DpTraffic& x, int chosen, CommPlan& c) {
    const int dp = x.dp;
    const int64_t micro_steps = x.micro_steps;
    const double grads = x.grads, weights = x.weights;
    const GroupLink& link = x.link;
    auto ar = [&](double bytes) {
        return collective_seconds(Collective::kAllReduce, bytes, dp, link.busbw);
    };
    auto ag = [&](double bytes) {
        return collective_seconds(Collective::kAllGather, bytes, dp, link.busbw);
    };
    auto rs = [&](double bytes) {
        return collective_seconds(Collective::kReduceScatter, bytes, dp, link.busbw);
    };
    const double m_steps = static_cast<double>(micro_steps);
    const double fwd = x.fwd, bwd = x.bwd;
    std::string formula, subst, exposed_formula, exposed_subst;
    switch (chosen) {
        case 0:
            c.dp_seconds = ar(grads);
            c.dp_overlap_window = bwd;
            c.dp_window_what = "the last micro-step's backward";
            c.dp_exposed = std::max(0.0, c.dp_seconds - bwd);
            exposed_formula = "max(0, all_reduce - last backward)";
            exposed_subst =
                fmt::format("max(0, {} - {})", format_duration(ar(grads)), format_duration(bwd));
            c.dp_bytes_per_step = grads * busbw_factor(Collective::kAllReduce, dp);
            formula = "all_reduce(gradients) once per step, under the last micro-step's backward";
            subst = fmt::format("2({0}-1)/{0} x {1} / {2}", dp, gb(grads), format_rate(link.busbw));
            break;
        case 1:
            c.dp_seconds = rs(grads) + ag(weights);
            c.dp_overlap_window = bwd;
            c.dp_window_what = "the last micro-step's backward";
            c.dp_after_step = ag(weights);
            c.dp_exposed = std::max(0.0, rs(grads) - bwd) + ag(weights);
            exposed_formula = "max(0, reduce_scatter - last backward) + all_gather after the step";
            exposed_subst = fmt::format("max(0, {} - {}) + {}", format_duration(rs(grads)),
                                        format_duration(bwd), format_duration(ag(weights)));
            c.dp_bytes_per_step = (grads + weights) * busbw_factor(Collective::kAllGather, dp);
            formula =
                "reduce_scatter(gradients) under the last backward + all_gather(weights) after "
                "the step";
            subst = fmt::format("({0}-1)/{0} x ({1} + {2}) / {3}", dp, gb(grads), gb(weights),
                                format_rate(link.busbw));
            break;
        case 2:
            c.dp_seconds = m_steps * rs(grads) + ag(weights);
            c.dp_overlap_window = m_steps * bwd;
            c.dp_window_what = "each micro-step's backward";
            c.dp_after_step = ag(weights);
            c.dp_exposed = m_steps * std::max(0.0, rs(grads) - bwd) + ag(weights);
            exposed_formula =
                "micro-steps x max(0, reduce_scatter - backward) + all_gather after the step";
            exposed_subst =
                fmt::format("{} x max(0, {} - {}) + {}", micro_steps, format_duration(rs(grads)),
                            format_duration(bwd), format_duration(ag(weights)));
            c.dp_bytes_per_step =
                (m_steps * grads + weights) * busbw_factor(Collective::kAllGather, dp);
            formula =
                "reduce_scatter(gradients) every micro-step under its backward + "
                "all_gather(weights) after the step";
            subst = fmt::format("({0}-1)/{0} x ({1} x {2} + {3}) / {4}", dp, micro_steps, gb(grads),
                                gb(weights), format_rate(link.busbw));
            break;
        default:
            c.dp_seconds = m_steps * (2 * ag(weights) + rs(grads));
            c.dp_overlap_window = m_steps * (fwd + bwd);
            c.dp_window_what = "each micro-step's forward and backward";
            c.dp_exposed = m_steps * (std::max(0.0, ag(weights) - fwd) +
                                      std::max(0.0, ag(weights) + rs(grads) - bwd));
            exposed_formula =
                "micro-steps x (max(0, all_gather - forward) + max(0, all_gather + "
                "reduce_scatter - backward))";
            exposed_subst = fmt::format("{} x (max(0, {} - {}) + max(0, {} + {} - {}))",
                                        micro_steps, format_duration(ag(weights)),
                                        format_duration(fwd), format_duration(ag(weights)),
                                        format_duration(rs(grads)), format_duration(bwd));
            c.dp_bytes_per_step =
                m_steps * (2 * weights + grads) * busbw_factor(Collective::kAllGather, dp);
            formula =
                "every micro-step: all_gather(weights) under forward, all_gather(weights) + "
                "reduce_scatter(gradients) under backward";
            subst = fmt::format("{0} x ({1}-1)/{1} x (2 x {2} + {3}) / {4}", micro_steps, dp,
                                gb(weights), gb(grads), format_rate(link.busbw));
    }
    return {formula, subst, exposed_formula, exposed_subst};
}

// Data-parallel traffic, and the compute it hides under.
void derive_dp_traffic(Plan& plan, int chosen) {
    const ModelSpec& m = plan.model;
    const JobSpec& j = plan.job;
    const Machine& machine = plan.machine;
    Derivation& d = plan.derivation;
    CommPlan& c = plan.comm;
    const int dp = plan.dp;
    if (dp <= 1) return;
    const GroupLink link =
        group_link(machine, dp, std::max(1, std::min(dp, machine.gpus_per_node / j.tp)));
    c.dp_busbw = link.busbw;
    c.dp_over = link.over;
    const double part = params_per_gpu(m, plan.params, j);
    const double trainable =
        is_lora(j) ? static_cast<double>(plan.trainable) / (j.tp * j.pp) : part;
    const StateBytes sb = state_bytes(j);
    const double grads = trainable * sb.gradient;
    // Weights are gathered in their 16-bit form (FP8 training gathers the bf16 copy);
    // under LoRA only the adapters change, except that ZeRO-3 gathers the frozen base too.
    const double gathered = sb.weight == 3 ? 2 : sb.weight;
    const double weights = !is_lora(j)   ? part * gathered
                           : chosen >= 3 ? plan.memory.weights * dp
                                         : trainable * gathered;
    const DpFormulas f =
        schedule_dp_traffic({dp, j.grad_accum, grads, weights, plan.time.forward_per_micro,
                             plan.time.backward_per_micro, link},
                            chosen, c);
    d.add("comm.dp_seconds",
          fmt::format("data-parallel traffic per step (ZeRO-{}, {} ranks over {})", chosen, dp,
                      link.over),
          f.formula, f.subst, c.dp_seconds, "s",
          std::string(kNcclTests) + "; ZeRO paper §7 (2Ψ, 3Ψ for stage 3)");
    d.add("comm.dp_exposed",
          fmt::format("data-parallel time that does not hide under {}", c.dp_window_what),
          f.exposed_formula, f.exposed_subst, c.dp_exposed, "s",
          "PyTorch DDP / FSDP overlap communication with backward (and forward for prefetch)");
}

// Optimizer step: streams the local optimizer shard through HBM once.
void derive_optimizer_time(Plan& plan, int chosen) {
    const JobSpec& j = plan.job;
    const StateBytes sb = state_bytes(j);
    const double local =
        static_cast<double>(plan.trainable) / (j.tp * j.pp) / (chosen >= 1 ? plan.dp : 1);
    // Read the gradient, read and write the states (the fp32 master among them in mixed
    // precision), then write the 16-bit weight; in fp32 the weight itself is read and written.
    const bool mixed = sb.weight < 4;
    const double per_param =
        sb.gradient + 2 * sb.optimizer + (mixed ? std::min(sb.weight, 2.0) : 2 * sb.weight);
    const double bw = plan.machine.gpu.hbm_bytes_per_s * kHbmEfficiency;
    plan.time.optimizer = plan.derivation.add(
        "time.optimizer", "optimizer step (memory-bound)",
        "local params x (read gradient + read/write states + write weight) / (HBM x 0.8)",
        fmt::format("{} x {} B / {}", num(local), num(per_param), format_rate(bw)),
        local * per_param / bw, "s",
        "HBM efficiency 0.79-0.87 in STREAM-like copies (Azure AI-benchmarking-guide)");
}

// The step time and what follows from it: throughput, MFU, and for a token budget the time,
// GPU-hours, energy and cost of the run.
void derive_step_totals(Plan& plan) {
    const JobSpec& j = plan.job;
    const Machine& machine = plan.machine;
    Derivation& d = plan.derivation;
    const CommPlan& c = plan.comm;
    TimePlan& t = plan.time;
    const double peak = peak_flops(machine.gpu, j.precision);
    t.step = d.add("time.step", "step time",
                   "micro-steps (forward, backward, TP/PP traffic, bubble) + exposed DP traffic + "
                   "optimizer",
                   fmt::format("{} + {} + {}", format_duration(t.pipeline),
                               format_duration(c.dp_exposed), format_duration(t.optimizer)),
                   t.pipeline + c.dp_exposed + t.optimizer, "s", "sum of the above");
    t.tokens_per_second =
        d.add("time.tokens_per_second", "training throughput", "global batch x seq / step",
              fmt::format("{} / {}", num(plan.tokens_per_step), format_duration(t.step)),
              plan.tokens_per_step / t.step, "tokens/s", "definition");
    t.mfu = d.add("time.mfu", "end-to-end MFU", "model FLOPs per step / (step x GPUs x peak)",
                  fmt::format("{} / ({} x {} x {:.4g} TFLOP/s)", num(plan.flops_per_step),
                              format_duration(t.step), machine.gpus, peak / 1e12),
                  plan.flops_per_step / (t.step * machine.gpus * peak), "ratio",
                  "PaLM App. B (MFU excludes recomputation)");
    if (j.tokens > 0) {
        t.steps = std::ceil(j.tokens / plan.tokens_per_step);
        t.seconds =
            d.add("time.train_seconds", "time to train", "ceil(tokens / tokens per step) x step",
                  fmt::format("{} x {}", num(t.steps), format_duration(t.step)), t.steps * t.step,
                  "s", "definition");
        t.gpu_hours = d.add("time.gpu_hours", "GPU-hours", "GPUs x time",
                            fmt::format("{} x {}", machine.gpus, format_duration(t.seconds)),
                            machine.gpus * t.seconds / 3600, "GPU-h", "definition");
        t.energy_kwh =
            d.add("time.energy_kwh", "GPU energy (board power at TDP)", "GPU-hours x TDP",
                  fmt::format("{} x {} W", num(t.gpu_hours), machine.gpu.tdp_watts),
                  t.gpu_hours * machine.gpu.tdp_watts / 1000, "kWh", machine.gpu.source);
        if (machine.gpu.usd_per_gpu_hour > 0)
            t.cost_usd =
                d.add("time.cost_usd", "cost", "GPU-hours x price",
                      fmt::format("{} x ${:.2f}", num(t.gpu_hours), machine.gpu.usd_per_gpu_hour),
                      t.gpu_hours * machine.gpu.usd_per_gpu_hour, "USD", machine.gpu.price_source);
    }
}

// What the numbers rest on, when it is shaky.
void add_plan_warnings(Plan& plan, int chosen) {
    const ModelSpec& m = plan.model;
    const JobSpec& j = plan.job;
    const Machine& machine = plan.machine;
    const CommPlan& c = plan.comm;
    const TimePlan& t = plan.time;
    if (m.max_positions > 0 && j.seq > m.max_positions)
        plan.warnings.push_back(
            fmt::format("sequence length {} exceeds the {} positions {} was trained with", j.seq,
                        m.max_positions, m.id));
    if (j.tp > machine.gpus_per_node)
        plan.warnings.push_back(
            fmt::format("TP {} spans nodes ({} GPUs per node): tensor parallelism "
                        "belongs inside a node",
                        j.tp, machine.gpus_per_node));
    if (!plan.memory.fits() && !plan.memory.tight())
        plan.warnings.push_back(fmt::format("ZeRO-{} needs {} per GPU; the {} has {}", chosen,
                                            gib(plan.memory.total()), machine.gpu.name,
                                            gib(plan.memory.capacity)));
    if (!plan.memory.fits() && !plan.memory.tight() &&
        plan.memory.activations > 0.25 * plan.memory.total())
        plan.warnings.push_back(fmt::format(
            "activations take {} of it; --recompute selective or full, --tp with sequence "
            "parallelism, or a smaller --micro-batch or --seq shrink them",
            gib(plan.memory.activations)));
    else if (plan.memory.tight())
        plan.warnings.push_back(fmt::format(
            "only {} free, less than the {:.0f} % margin plans keep: allocator fragmentation "
            "often takes that much; --recompute full, a smaller --micro-batch or more GPUs "
            "make room",
            gib(plan.memory.headroom()), 100 * MemoryBreakdown::kMemoryMargin));
    if (c.dp_exposed > 0.05 * t.step)
        plan.warnings.push_back(fmt::format(
            "{} of data-parallel traffic per step is exposed{}", format_duration(c.dp_exposed),
            c.dp_after_step > 0
                ? fmt::format(" ({} of it the all-gather of the weights after the step)",
                              format_duration(c.dp_after_step))
                : ""));
    if (t.bubble > 0.1 * t.step)
        plan.warnings.push_back(
            fmt::format("the pipeline bubble is {:.0f}% of the step; more micro-steps shrink it",
                        100 * t.bubble / t.step));
}

}  // namespace

Result<Plan> make_plan(const ModelSpec& m, const JobSpec& job, const Machine& machine,
                       std::optional<int> zero) {
    TRAINRIG_TRY(validate_job(m, job, machine));
    // Several stages fit: the fastest, and among those within 1 % of it the one with the most
    // memory to spare, which costs nothing (ZeRO-1 and -2 move what DDP's all-reduce moves).
    if (!zero) {
        const std::vector<int> fitting = fitting_zero_stages(m, job, machine);
        if (fitting.size() > 1) return plan_fastest_stage(m, job, machine, fitting);
    }
    Plan plan;
    plan.model = m;
    plan.job = job;
    plan.machine = machine;
    plan.params = count_params(m);
    plan.dp = dp_degree(plan.job, machine);

    derive_params(plan);
    derive_flops(plan);
    const int chosen = choose_zero_stage(plan, zero);
    derive_compute_time(plan);
    derive_pipeline_time(plan);
    derive_dp_traffic(plan, chosen);
    derive_optimizer_time(plan, chosen);
    derive_step_totals(plan);
    add_plan_warnings(plan, chosen);
    return plan;
}

}  // namespace trainrig::plan
