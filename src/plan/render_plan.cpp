#include "plan/render_plan.h"

#include <fmt/format.h>

#include <cmath>

#include "core/quantity.h"

namespace trainrig::plan {

namespace {

using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string g(double bytes) { return bytes > 0 ? fmt::format("{:.1f}", bytes / kGiB) : "-"; }

std::string money(double usd) {
    if (usd <= 0) return "-";
    if (usd >= 1000) return fmt::format("${:.0f}", usd);
    if (usd < 1) return fmt::format("${:.2g}", usd);  // cents and below keep two digits
    return fmt::format("${:.2f}", usd);
}

std::string job_line(const Plan& p) {
    const JobSpec& j = p.job;
    const char* mode = j.mode == Mode::kPretrain ? "pretraining"
                       : j.mode == Mode::kFull   ? "full fine-tune"
                       : j.mode == Mode::kLora   ? "LoRA"
                                                 : "QLoRA";
    std::string lora;
    if (j.mode == Mode::kLora || j.mode == Mode::kQlora)
        lora = fmt::format(" (rank {} on {})", j.lora_rank, lora_targets_text(j.lora_targets));
    return fmt::format("{}{}, {}, {}, recompute {}, flash attention {}", mode, lora,
                       precision_name(j.precision), optimizer_name(j.optimizer),
                       recompute_name(j.recompute), j.flash_attention ? "on" : "off");
}

std::string machine_line(const Plan& p) {
    const Machine& m = p.machine;
    std::string links = m.intra.id;
    if (m.nodes() > 1) links += fmt::format(", {} x {} per node", m.nics_per_node, m.inter.id);
    return fmt::format("{} x {} ({} node{}, {})", m.gpus, m.gpu.name, m.nodes(),
                       m.nodes() == 1 ? "" : "s", links);
}

json memory_json(const MemoryBreakdown& mem) {
    return {{"zero", mem.zero},
            {"weights_bytes", mem.weights},
            {"gradients_bytes", mem.gradients},
            {"optimizer_bytes", mem.optimizer},
            {"zero3_buffers_bytes", mem.zero3_buffers},
            {"activations_bytes", mem.activations},
            {"logits_bytes", mem.logits},
            {"cuda_context_bytes", mem.cuda_context},
            {"nccl_bytes", mem.nccl},
            {"model_states_bytes", mem.model_states()},
            {"total_bytes", mem.total()},
            {"capacity_bytes", mem.capacity},
            {"headroom_bytes", mem.headroom()},
            {"usable_bytes", mem.usable()},
            {"fits", mem.fits()},
            {"tight", mem.tight()}};
}

}  // namespace

std::string render_plan_table(const Plan& p, const Target& target, bool explained) {
    const JobSpec& j = p.job;
    std::string out = fmt::format("{} on {}\n\n", p.model.name, machine_line(p));
    out += fmt::format("  job          {}\n", job_line(p));
    out += fmt::format(
        "  layout       TP {} x PP {} x DP {}; micro-batch {} x {} micro-steps x DP "
        "= global batch {} sequences of {} tokens\n",
        j.tp, j.pp, p.dp, j.micro_batch, j.grad_accum, global_batch(j, p.machine), j.seq);
    out += fmt::format("  parameters   {} total, {} non-embedding, {} trainable\n",
                       billions(static_cast<double>(p.params.total)),
                       billions(static_cast<double>(p.params.non_embedding)),
                       billions(static_cast<double>(p.trainable)));
    out += fmt::format(
        "  compute      {}/token (PaLM 6N + attention; Megatron-LM counts {}), {}/step\n\n",
        si(p.flops.model(), "FLOP"), si(p.flops.megatron, "FLOP"), si(p.flops_per_step, "FLOP"));

    out +=
        "  memory per GPU (GiB)  weights  grads  optim  gather  activ  logits  ctx+nccl   total"
        "  of    verdict\n";
    for (const auto& mem : p.zero_stages) {
        // "(chosen)" marks the stage the plan runs at only when it fits; else the closest.
        const bool chosen = mem.zero == j.zero;
        const std::string verdict =
            mem.fits()    ? fmt::format("fits, {} free", g(mem.headroom()))
            : mem.tight() ? fmt::format("tight, {} free (< {:.0f} % kept)", g(mem.headroom()),
                                        100 * MemoryBreakdown::kMemoryMargin)
                          : fmt::format("short by {}", g(-mem.headroom()));
        out += fmt::format(
            "  {:<20}  {:>7}  {:>5}  {:>5}  {:>6}  {:>5}  {:>6}  {:>8}  {:>6}  {:>4}  {}\n",
            fmt::format("ZeRO-{}{}", mem.zero,
                        !chosen         ? ""
                        : !mem.fits()   ? (p.zero_chosen ? " (closest)" : " (asked)")
                        : p.zero_chosen ? " (chosen)"
                                        : " (asked)"),
            g(mem.weights), g(mem.gradients), g(mem.optimizer), g(mem.zero3_buffers),
            g(mem.activations), g(mem.logits), g(mem.cuda_context + mem.nccl), g(mem.total()),
            g(mem.capacity), verdict);
    }
    out += "\n";
    const CommPlan& c = p.comm;
    if (p.dp > 1) {
        // The part that can overlap (under which compute, and whether it hides), then the part
        // that runs after the step (ZeRO-1/2's all-gather of the weights), then their sum.
        const double overlapping = c.dp_seconds - c.dp_after_step;
        const double unhidden = c.dp_exposed - c.dp_after_step;
        std::string how =
            fmt::format("{} under {} ({}): {}", format_duration(overlapping), c.dp_window_what,
                        format_duration(c.dp_overlap_window),
                        unhidden > 0 ? format_duration(unhidden) + " not hidden" : "hidden");
        if (c.dp_after_step > 0)
            how += fmt::format("; {} after the step", format_duration(c.dp_after_step));
        out += fmt::format(
            "  DP traffic   ZeRO-{}, {} ranks over {} ({} bus): {} per step; {} -> {} "
            "exposed\n",
            j.zero, p.dp, c.dp_over, format_rate(c.dp_busbw), format_duration(c.dp_seconds), how,
            format_duration(c.dp_exposed));
    }
    if (j.tp > 1)
        out += fmt::format("  TP traffic   {} ranks over {} ({} bus): {} per step\n", j.tp,
                           c.tp_over, format_rate(c.tp_busbw), format_duration(c.tp_seconds));
    if (j.pp > 1)
        out += fmt::format("  PP traffic   over {} ({}): {} per step; bubble {}\n", c.pp_over,
                           format_rate(c.pp_bandwidth), format_duration(c.pp_seconds),
                           format_duration(p.time.bubble));
    const TimePlan& t = p.time;
    out += fmt::format("  step         {} = micro-steps {} + exposed DP {} + optimizer {}\n",
                       format_duration(t.step), format_duration(t.pipeline),
                       format_duration(c.dp_exposed), format_duration(t.optimizer));
    out += fmt::format(
        "  throughput   {:.0f} tokens/s ({:.0f} per GPU), end-to-end MFU {:.1f}% "
        "(math assumed at {:.0f}% of {:.0f} TFLOP/s {})\n",
        t.tokens_per_second, t.tokens_per_second / p.machine.gpus, 100 * t.mfu, 100 * j.mfu,
        peak_flops(p.machine.gpu, j.precision) / 1e12, precision_name(j.precision));
    const double per_m = usd_per_million_tokens(p);
    if (per_m > 0)
        out += fmt::format("  price        {} per million tokens at {}/GPU-hour\n", money(per_m),
                           money(p.machine.gpu.usd_per_gpu_hour));
    if (j.tokens > 0)
        out += fmt::format("  training     {} tokens: {} steps, {}, {} GPU-hours, {}, {}\n",
                           format_scaled(j.tokens), format_count(t.steps),
                           format_duration(t.seconds), format_count(t.gpu_hours),
                           format_energy(t.energy_kwh * 3.6e6), money(t.cost_usd));
    if (target.any())
        out += fmt::format("  target       {}\n", meets_target(p, target) ? "met" : "NOT met");
    for (const auto& w : p.warnings) out += fmt::format("  warning      {}\n", w);
    if (!explained) out += "\n  --explain shows every formula with its numbers and source.\n";
    return out;
}

std::string render_plan_explain(const Plan& p) {
    std::string out =
        fmt::format("How the numbers for {} on {} are derived:\n\n", p.model.name, machine_line(p));
    for (const auto& s : p.derivation.steps()) {
        std::string value;
        if (s.unit == "bytes")
            value = fmt::format("{} ({})", gb(s.value), gib(s.value));
        else if (s.unit == "s")
            value = format_duration(s.value);
        else if (s.unit == "params")
            value = format_count(s.value) + " params";
        else if (s.unit == "ratio")
            value = fmt::format("{:.1f}%", 100 * s.value);
        else
            value = fmt::format("{} {}", num(s.value), s.unit);
        out += fmt::format("{}  ({})\n    = {}\n    = {}\n    = {}\n    source: {}\n\n", s.what,
                           s.id, s.formula, s.substituted, value, s.source);
    }
    return out;
}

json plan_to_json(const Plan& p, const Target& target) {
    const JobSpec& j = p.job;
    const ModelSpec& m = p.model;
    json doc;
    doc["schema"] = "trainrig.plan";
    doc["schema_version"] = 1;
    doc["model"] = {{"id", m.id},
                    {"name", m.name},
                    {"source", m.source},
                    {"layers", m.layers},
                    {"hidden", m.hidden},
                    {"heads", m.heads},
                    {"kv_heads", m.kv_heads},
                    {"head_dim", m.head_dim},
                    {"ffn", m.ffn},
                    {"ffn_type", ffn_type_name(m.ffn_type)},
                    {"vocab", m.vocab},
                    {"tied_embeddings", m.tied_embeddings},
                    {"max_positions", m.max_positions}};
    doc["parameters"] = {{"total", p.params.total},
                         {"non_embedding", p.params.non_embedding},
                         {"trainable", p.trainable},
                         {"embedding", p.params.token_embedding + p.params.position_embedding},
                         {"per_layer", p.params.per_layer}};
    const Machine& mc = p.machine;
    doc["machine"] = {
        {"gpu", mc.gpu.id},
        {"gpu_name", mc.gpu.name},
        {"gpus", mc.gpus},
        {"gpus_per_node", mc.gpus_per_node},
        {"nodes", mc.nodes()},
        {"nics_per_node", mc.nics_per_node},
        {"intra_link", mc.intra.id},
        {"inter_link", mc.inter.id},
        {"peak_flops", peak_flops(mc.gpu, j.precision)},
        {"memory_bytes", mc.gpu.memory_bytes},
        {"usd_per_gpu_hour", mc.gpu.usd_per_gpu_hour > 0 ? json(mc.gpu.usd_per_gpu_hour) : json()}};
    doc["job"] = {{"mode", mode_name(j.mode)},
                  {"precision", precision_name(j.precision)},
                  {"optimizer", optimizer_name(j.optimizer)},
                  {"convention", convention_name(j.convention)},
                  {"zero", j.zero},
                  {"zero_chosen_by_plan", p.zero_chosen},
                  {"recompute", recompute_name(j.recompute)},
                  {"flash_attention", j.flash_attention},
                  {"sequence_parallel", j.sequence_parallel && j.tp > 1},
                  {"tp", j.tp},
                  {"pp", j.pp},
                  {"dp", p.dp},
                  {"micro_batch", j.micro_batch},
                  {"grad_accum", j.grad_accum},
                  {"global_batch", global_batch(j, mc)},
                  {"seq", j.seq},
                  {"tokens_per_step", p.tokens_per_step},
                  {"mfu_assumed", j.mfu}};
    if (j.mode == Mode::kLora || j.mode == Mode::kQlora) {
        doc["job"]["lora_rank"] = j.lora_rank;
        doc["job"]["lora_targets"] = lora_targets_text(j.lora_targets);
    }
    doc["flops"] = {{"per_token", p.flops.model()},
                    {"forward_per_token", p.flops.forward},
                    {"backward_per_token", p.flops.backward},
                    {"recompute_per_token", p.flops.recompute},
                    {"megatron_per_token", p.flops.megatron},
                    {"per_step", p.flops_per_step},
                    {"executed_per_step", p.flops.executed() * p.tokens_per_step}};
    json stages = json::array();
    for (const auto& mem : p.zero_stages) stages.push_back(memory_json(mem));
    doc["memory"] = {{"per_gpu", memory_json(p.memory)}, {"zero_stages", stages}};
    const CommPlan& c = p.comm;
    doc["communication"] = {{"dp_bytes_per_step", c.dp_bytes_per_step},
                            {"dp_busbw", c.dp_busbw},
                            {"dp_over", c.dp_over},
                            {"dp_seconds", c.dp_seconds},
                            {"dp_overlap_window_seconds", c.dp_overlap_window},
                            {"dp_exposed_seconds", c.dp_exposed},
                            {"dp_hidden", c.dp_exposed <= 0},
                            {"tp_bytes_per_step", c.tp_bytes_per_step},
                            {"tp_busbw", c.tp_busbw},
                            {"tp_seconds", c.tp_seconds},
                            {"pp_bytes_per_step", c.pp_bytes_per_step},
                            {"pp_bandwidth", c.pp_bandwidth},
                            {"pp_seconds", c.pp_seconds}};
    const TimePlan& t = p.time;
    doc["time"] = {{"forward_per_micro_seconds", t.forward_per_micro},
                   {"backward_per_micro_seconds", t.backward_per_micro},
                   {"pipeline_seconds", t.pipeline},
                   {"bubble_seconds", t.bubble},
                   {"optimizer_seconds", t.optimizer},
                   {"step_seconds", t.step},
                   {"tokens_per_second", t.tokens_per_second},
                   {"mfu", t.mfu},
                   {"usd_per_million_tokens",
                    usd_per_million_tokens(p) > 0 ? json(usd_per_million_tokens(p)) : json()}};
    if (j.tokens > 0)
        doc["training"] = {
            {"tokens", j.tokens},         {"steps", t.steps},
            {"seconds", t.seconds},       {"gpu_hours", t.gpu_hours},
            {"energy_kwh", t.energy_kwh}, {"cost_usd", t.cost_usd > 0 ? json(t.cost_usd) : json()}};
    else
        doc["training"] = nullptr;
    if (target.any())
        doc["target"] = {{"tokens_per_second",
                          target.tokens_per_second > 0 ? json(target.tokens_per_second) : json()},
                         {"deadline_seconds",
                          target.deadline_seconds > 0 ? json(target.deadline_seconds) : json()},
                         {"met", meets_target(p, target)}};
    else
        doc["target"] = nullptr;
    doc["fits"] = p.memory.fits();
    doc["warnings"] = p.warnings;
    json steps = json::array();
    for (const auto& s : p.derivation.steps())
        steps.push_back({{"id", s.id},
                         {"what", s.what},
                         {"formula", s.formula},
                         {"substituted", s.substituted},
                         {"value", s.value},
                         {"unit", s.unit},
                         {"source", s.source}});
    doc["derivation"] = steps;
    return doc;
}

std::string render_compare_table(const std::vector<Candidate>& cands, Rank rank) {
    std::string out = fmt::format("Machines that fit, best {} first:\n\n",
                                  rank == Rank::kCost ? "price per token" : "throughput");
    out +=
        "  GPU              count  layout           ZeRO  GiB/GPU  step      tokens/s   MFU   $/M "
        "tokens  time       cost\n";
    bool rest = false;
    for (const auto& c : cands) {
        if (!c.plan || !c.why_not.empty()) {
            if (!rest) out += "\n  Not these:\n";
            rest = true;
            out += fmt::format("  {:<16} {:>5}  {}\n", c.gpu, c.gpus, c.why_not);
            continue;
        }
        const Plan& p = *c.plan;
        // The layout the row was planned at: the job's own, or the one --compare found when the
        // job's own did not fit (TP x PP and recompute).
        const std::string layout =
            fmt::format("TP{} PP{}{}", p.job.tp, p.job.pp,
                        p.job.recompute == Recompute::kNone
                            ? ""
                            : std::string(" ") + recompute_name(p.job.recompute));
        out += fmt::format(
            "  {:<16} {:>5}  {:<15}  {:>4}  {:>7}  {:<8}  {:>9.0f}  {:>3.0f}%  {:>10}  {:<9}  {}\n",
            c.gpu, c.gpus, layout, p.job.zero, g(p.memory.total()), format_duration(p.time.step),
            p.time.tokens_per_second, 100 * p.time.mfu, money(usd_per_million_tokens(p)),
            p.time.seconds > 0 ? format_duration(p.time.seconds) : "-", money(p.time.cost_usd));
    }
    return out;
}

json compare_to_json(const std::vector<Candidate>& cands, Rank rank, const Target& target) {
    json rows = json::array();
    for (const auto& c : cands) {
        json row = {{"gpu", c.gpu}, {"gpus", c.gpus}, {"ok", c.plan && c.why_not.empty()}};
        row["why_not"] = c.why_not.empty() ? json() : json(c.why_not);
        if (c.plan) {
            const Plan& p = *c.plan;
            row["zero"] = p.job.zero;
            row["tp"] = p.job.tp;
            row["pp"] = p.job.pp;
            row["recompute"] = recompute_name(p.job.recompute);
            row["memory_per_gpu_bytes"] = p.memory.total();
            row["fits"] = p.memory.fits();
            row["step_seconds"] = p.time.step;
            row["tokens_per_second"] = p.time.tokens_per_second;
            row["mfu"] = p.time.mfu;
            const double usd = usd_per_million_tokens(p);
            row["usd_per_million_tokens"] = usd > 0 ? json(usd) : json();
            row["train_seconds"] = p.time.seconds > 0 ? json(p.time.seconds) : json();
            row["cost_usd"] = p.time.cost_usd > 0 ? json(p.time.cost_usd) : json();
        }
        rows.push_back(row);
    }
    return {{"schema", "trainrig.plan.compare"},
            {"schema_version", 1},
            {"rank", rank == Rank::kCost ? "cost" : "time"},
            {"target", target.any() ? json{{"tokens_per_second", target.tokens_per_second},
                                           {"deadline_seconds", target.deadline_seconds}}
                                    : json()},
            {"machines", rows}};
}

}  // namespace trainrig::plan
