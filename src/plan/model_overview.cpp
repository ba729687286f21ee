// The model's own figures and the GPUs it fits on; see model_overview.h.
#include "plan/model_overview.h"

#include <fmt/format.h>

#include "plan/derivation.h"
#include "plan/memory_model.h"

namespace trainrig::plan {

bool ModelOverview::any_fits() const {
    for (const auto& f : fits)
        if (f.plan) return true;
    return false;
}

ModelOverview model_overview(const ModelSpec& m, const JobSpec& job, const HardwareCatalog& catalog,
                             const SearchRequest& r) {
    ModelOverview o{m, job, count_params(m), {}, {}, {}};
    Derivation unused;
    o.flops = token_flops(m, o.params, job, unused);
    for (const auto& gpu : catalog.gpus) {
        SearchRequest one = r;
        one.machine.gpu = gpu.id;
        GpuFit fit{gpu.id, std::nullopt, {}};
        fit.plan = minimum_gpus(m, job, catalog, one, fit.why_not);
        o.fits.push_back(std::move(fit));
    }
    // The model states do not depend on the GPU: one GPU of the first kind, no ZeRO.
    if (!catalog.gpus.empty()) {
        MachineRequest single;
        single.gpu = catalog.gpus.front().id;
        if (auto machine = make_machine(catalog, single); machine.ok()) {
            JobSpec alone = job;
            alone.tp = alone.pp = 1;
            o.states = memory_per_gpu(m, o.params, alone, *machine, 0, nullptr);
        }
    }
    return o;
}

namespace {

std::string layout(const Plan& p) {
    return fmt::format("ZeRO-{} TP{} PP{} recompute {}", p.memory.zero, p.job.tp, p.job.pp,
                       recompute_name(p.job.recompute));
}

}  // namespace

std::string render_model_overview(const ModelOverview& o) {
    std::string out = fmt::format(
        "{} ({}): {} parameters, {} without embeddings; {} training, seq {}\n", o.model.name,
        o.model.id, billions(static_cast<double>(o.params.total)),
        billions(static_cast<double>(o.params.non_embedding)), mode_name(o.job.mode), o.job.seq);
    out += fmt::format("compute      {} per token (forward and backward; Megatron-LM counts {})\n",
                       si(o.flops.model(), "FLOP"), si(o.flops.megatron, "FLOP"));
    out += fmt::format(
        "model states {} weights + {} gradients + {} optimizer = {} on one GPU; ZeRO-1 divides "
        "the optimizer by the data-parallel degree, ZeRO-2 the gradients too, ZeRO-3 the "
        "weights too\n\n",
        gib(o.states.weights), gib(o.states.gradients), gib(o.states.optimizer),
        gib(o.states.model_states()));
    out += "Fewest GPUs of each kind it fits on (`--gpu ID --minimum --explain` for one):\n";
    for (const auto& f : o.fits) {
        if (f.plan)
            out += fmt::format("  {:<14} {:>5}  {:<34} {} of {} per GPU\n", f.gpu,
                               f.plan->machine.gpus, layout(*f.plan), gib(f.plan->memory.total()),
                               gib(f.plan->memory.capacity));
        else
            out += fmt::format("  {:<14} {:>5}  {}\n", f.gpu, "-", f.why_not);
    }
    return out;
}

nlohmann::json model_overview_json(const ModelOverview& o) {
    nlohmann::json fits = nlohmann::json::array();
    for (const auto& f : o.fits) {
        nlohmann::json j = {{"gpu", f.gpu}};
        if (f.plan) {
            j["gpus"] = f.plan->machine.gpus;
            j["zero"] = f.plan->memory.zero;
            j["tp"] = f.plan->job.tp;
            j["pp"] = f.plan->job.pp;
            j["recompute"] = recompute_name(f.plan->job.recompute);
            j["memory_bytes"] = f.plan->memory.total();
            j["capacity_bytes"] = f.plan->memory.capacity;
        } else {
            j["gpus"] = nullptr;
            j["why_not"] = f.why_not;
        }
        fits.push_back(std::move(j));
    }
    return {{"schema", "trainrig.plan.model"},
            {"schema_version", 1},
            {"model",
             {{"id", o.model.id},
              {"name", o.model.name},
              {"params", o.params.total},
              {"non_embedding_params", o.params.non_embedding}}},
            {"mode", mode_name(o.job.mode)},
            {"seq", o.job.seq},
            {"flops_per_token", {{"model", o.flops.model()}, {"megatron", o.flops.megatron}}},
            {"model_states_bytes",
             {{"weights", o.states.weights},
              {"gradients", o.states.gradients},
              {"optimizer", o.states.optimizer}}},
            {"fits", std::move(fits)}};
}

}  // namespace trainrig::plan
