#include "train/render_summary.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/quantity.h"
#include "core/version.h"

namespace trainrig::train {
namespace {

nlohmann::ordered_json optional_number(const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// The header's words for how the run ended; the JSON keeps stop_reason_name()'s enum words.
std::string stop_text(const TrainOptions& o, const TrainSummary& s) {
    switch (s.stop) {
        case StopReason::kCompleted:
            return "completed";
        case StopReason::kStoppedAt:
            return fmt::format("stopped at step {} of {} (--stop-at)", s.end_step, o.steps);
        case StopReason::kNothingToDo:
            return "nothing to do";
        case StopReason::kNonFinite:
            // The trainer stops on the loss first; a finite loss means the gradient norm was not.
            return fmt::format("stopped: the {} became non-finite",
                               std::isfinite(s.last_loss) ? "gradient norm" : "loss");
        case StopReason::kInterrupted:
            return "interrupted";
    }
    return stop_reason_name(s.stop);
}

}  // namespace

std::string summary_json(const TrainOptions& o, const TrainSummary& s, const std::string& comm) {
    const PhaseTimes& t = s.median_time;
    nlohmann::ordered_json j = {
        {"schema", "trainrig.train.summary"},
        {"schema_version", 1},
        {"trainrig_version", kTrainrigVersion},
        {"stop", stop_reason_name(s.stop)},
        {"message", s.message},
        {"backend", o.backend},
        {"device",
         o.device.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(o.device)},
        {"communicator", comm},
        {"world", s.world},
        {"model",
         {{"name", o.model.name},
          {"arch", arch_name(o.model.arch)},
          {"layers", o.model.layers},
          {"heads", o.model.heads},
          {"kv_heads", o.model.kv_head_count()},
          {"channels", o.model.channels},
          {"vocab", o.model.vocab},
          {"padded_vocab", o.model.padded_vocab},
          {"params", s.model_params},
          {"config_hash", config_hash(o.model)}}},
        {"seq", o.seq},
        {"batch", o.batch},
        {"grad_accum", o.grad_accum},
        {"steps", o.steps},
        {"start_step", s.start_step},
        {"end_step", s.end_step},
        {"resumed_from", s.resumed_from},
        {"skipped_checkpoints", s.skipped_checkpoints},
        {"first_loss", s.first_loss},
        {"last_loss", s.last_loss},
        {"first_val_loss", optional_number(s.first_val_loss)},
        {"last_val_loss", optional_number(s.last_val_loss)},
        {"tokens_per_s", s.tokens_per_s},
        {"step_s", s.step_s},
        {"median_phase_s",
         {{"data_wait", t.data_wait},
          {"forward", t.forward},
          {"backward", t.backward},
          {"comm", t.comm},
          {"optimizer", t.optimizer},
          {"checkpoint", t.checkpoint}}},
        {"phase_clock", s.phase_clock},
        {"flops_per_token", s.flops_per_token},
        {"flops_formula", "PaLM 6N + 12*L*H*Q*T (arXiv:2204.02311 App. B)"},
        {"mfu", optional_number(s.mfu)},
        {"peak_flops_per_device",
         o.peak_flops > 0 ? nlohmann::ordered_json(o.peak_flops) : nullptr},
        {"peak_source", o.peak_source},
        {"peak_memory_bytes", s.peak_memory_bytes},
        {"last_checkpoint", s.last_checkpoint},
        {"replicas_identical",
         s.replicas_identical ? nlohmann::ordered_json(*s.replicas_identical) : nullptr},
        {"wall_s", s.wall_s},
    };
    return j.dump(2) + "\n";
}

std::string summary_text(const TrainOptions& o, const TrainSummary& s, const std::string& comm) {
    std::string out = fmt::format(
        "trainrig train: {} ({} backend{}, {} rank{} over {})\n", stop_text(o, s), o.backend,
        o.device.empty() ? "" : " on " + o.device, s.world, s.world == 1 ? "" : "s", comm);
    if (!s.message.empty()) out += fmt::format("  {}\n", s.message);
    out += fmt::format("  model        {} ({:.1f}M parameters, {} layers, {} heads, {} channels)\n",
                       o.model.name, static_cast<double>(s.model_params) / 1e6, o.model.layers,
                       o.model.heads, o.model.channels);
    out += fmt::format("  steps        {} -> {} of {} (batch {} x seq {} x accum {} x {} rank{})\n",
                       s.start_step, s.end_step, o.steps, o.batch, o.seq, o.grad_accum, s.world,
                       s.world == 1 ? "" : "s");
    if (!s.resumed_from.empty()) out += fmt::format("  resumed from {}\n", s.resumed_from);
    out += fmt::format("  loss         {:.4f} -> {:.4f}\n", s.first_loss, s.last_loss);
    if (s.first_val_loss && s.last_val_loss)
        out +=
            fmt::format("  val loss     {:.4f} -> {:.4f}\n", *s.first_val_loss, *s.last_val_loss);
    // Without a step there is nothing timed or measured: zeros would read as a measurement.
    if (s.end_step == s.start_step) {
        out += "  no step ran\n";
        if (!s.last_checkpoint.empty())
            out += fmt::format("  checkpoint   {}\n", s.last_checkpoint);
        return out;
    }
    const PhaseTimes& t = s.median_time;
    out += fmt::format("  throughput   {}, {} a step (median)\n",
                       format_quantity(s.tokens_per_s, "tokens/s"), format_duration(s.step_s));
    out += fmt::format(
        "  phases       data {}, forward {}, backward {}, comm {}, optimizer {}, checkpoint {} ({} "
        "clock)\n",
        format_duration(t.data_wait), format_duration(t.forward), format_duration(t.backward),
        format_duration(t.comm), format_duration(t.optimizer), format_duration(t.checkpoint),
        s.phase_clock);
    const double flops = s.tokens_per_s * s.flops_per_token;
    if (s.mfu)
        out += fmt::format("  MFU          {:.1f}% ({} of {} peak per device, {})\n", *s.mfu * 100,
                           format_flops(flops), format_flops(o.peak_flops), o.peak_source);
    else
        out += fmt::format(
            "  compute      {} (PaLM count; no peak known for this device, so no MFU)\n",
            format_flops(flops));
    out += fmt::format("  memory       {} peak per rank\n",
                       format_bytes(static_cast<double>(s.peak_memory_bytes)));
    if (!s.last_checkpoint.empty()) out += fmt::format("  checkpoint   {}\n", s.last_checkpoint);
    return out;
}

}  // namespace trainrig::train
