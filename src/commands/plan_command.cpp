// `trainrig plan`: size a training job and the machine for it — parameters, FLOPs, memory per
// GPU per ZeRO stage, communication, step time, time to train, energy and cost; or compare
// machines, or find the fewest GPUs that do it. Every number has an --explain line.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "core/quantity.h"
#include "plan/model_catalog.h"
#include "plan/model_overview.h"
#include "plan/plan_inputs.h"
#include "plan/render_plan.h"

namespace trainrig {

namespace {

using namespace trainrig::plan;

// `verbose`: where each model's architecture and each GPU's and link's figures come from.
std::string catalogs_text(bool verbose) {
    std::string out = "Models (--model):\n";
    for (const auto& m : model_catalog()) {
        const auto p = count_params(m);
        out +=
            fmt::format("  {:<14} {:<18} {:>15} params  L{} h{} heads {}/{} ffn {} {} vocab {}\n",
                        m.id, m.name, format_count(static_cast<double>(p.total)), m.layers,
                        m.hidden, m.heads, m.kv_heads, m.ffn, ffn_type_name(m.ffn_type), m.vocab);
        if (verbose) out += fmt::format("  {:<14} source: {}\n", "", m.source);
    }
    const auto hw = builtin_hardware();
    out += "\nGPUs (--gpu; dense TFLOP/s):\n";
    for (const auto& g : hw.gpus) {
        out += fmt::format(
            "  {:<14} {:<20} bf16 {:>6.1f}  fp8 {:>6.1f}  {:>5.1f} GiB  {:>4.2f} TB/s  "
            "{:>4.0f} W  {:<16} {}\n",
            g.id, g.name, g.tflops_bf16, g.tflops_fp8, g.memory_bytes / (1024.0 * 1024 * 1024),
            g.hbm_bytes_per_s / 1e12, g.tdp_watts, g.intra_link,
            g.usd_per_gpu_hour > 0 ? fmt::format("${:.2f}/h", g.usd_per_gpu_hour) : "no price");
        if (verbose) out += fmt::format("  {:<14} source: {}\n", "", g.source);
    }
    out += "\nLinks (--intra, --inter):\n";
    for (const auto& l : hw.links) {
        out += fmt::format("  {:<16} {:<48} {:>5.1f} GB/s x {:.2f}\n", l.id, l.name,
                           l.bytes_per_s / 1e9, l.efficiency);
        if (verbose) out += fmt::format("  {:<16} source: {}\n", "", l.source);
    }
    return out;
}

nlohmann::json catalogs_json() {
    nlohmann::json models = nlohmann::json::array(), gpus = nlohmann::json::array(),
                   links = nlohmann::json::array();
    for (const auto& m : model_catalog())
        models.push_back({{"id", m.id},
                          {"name", m.name},
                          {"params", count_params(m).total},
                          {"layers", m.layers},
                          {"hidden", m.hidden},
                          {"heads", m.heads},
                          {"kv_heads", m.kv_heads},
                          {"ffn", m.ffn},
                          {"ffn_type", ffn_type_name(m.ffn_type)},
                          {"vocab", m.vocab},
                          {"source", m.source}});
    const auto hw = builtin_hardware();
    for (const auto& g : hw.gpus)
        gpus.push_back(
            {{"id", g.id},
             {"name", g.name},
             {"bf16_tflops", g.tflops_bf16},
             {"fp8_tflops", g.tflops_fp8},
             {"memory_bytes", g.memory_bytes},
             {"hbm_bytes_per_s", g.hbm_bytes_per_s},
             {"tdp_watts", g.tdp_watts},
             {"intra_link", g.intra_link},
             {"inter_link", g.inter_link},
             {"usd_per_gpu_hour", g.usd_per_gpu_hour > 0 ? nlohmann::json(g.usd_per_gpu_hour)
                                                         : nlohmann::json(nullptr)},
             {"source", g.source}});
    for (const auto& l : hw.links)
        links.push_back({{"id", l.id},
                         {"name", l.name},
                         {"bytes_per_s", l.bytes_per_s},
                         {"efficiency", l.efficiency},
                         {"source", l.source}});
    return {{"schema", "trainrig.plan.catalog"},
            {"schema_version", 1},
            {"models", models},
            {"gpus", gpus},
            {"links", links}};
}

class PlanCommand : public Command {
public:
    const char* name() const override { return "plan"; }
    const char* summary() const override {
        return "Size a training job: memory per GPU, FLOPs, communication, time and cost";
    }
    void declare(CLI::App& app) override {
        auto& o = o_;
        app.add_option("--model", o.model, "Built-in model id (see --list)")->type_name("ID");
        app.add_option("--model-config", o.model_config, "A Hugging Face config.json")
            ->check(existing_input())
            ->type_name("PATH");
        app.add_option("--layers", o.layers, "Transformer layers")->type_name("N");
        app.add_option("--hidden,--dim", o.hidden, "Hidden size (train's --dim)")->type_name("N");
        app.add_option("--heads", o.heads, "Attention heads")->type_name("N");
        app.add_option("--kv-heads", o.kv_heads, "Key/value heads (grouped-query attention)")
            ->type_name("N");
        app.add_option("--ffn", o.ffn, "MLP intermediate size")->type_name("N");
        app.add_option("--ffn-type", o.ffn_type, "gelu or swiglu")->type_name("TYPE");
        app.add_option("--vocab", o.vocab, "Vocabulary size")->type_name("N");
        app.add_option("--max-positions", o.max_positions, "Context the model was trained with")
            ->type_name("N");
        app.add_option("--tied", o.tied, "Tied input/output embeddings (true/false)")
            ->type_name("BOOL");

        app.add_option("--gpu", o.gpu, "GPU id (several, comma-separated, with --compare)")
            ->delimiter(',')
            ->type_name("ID");
        app.add_option("--gpu-count", o.gpu_count,
                       "How many GPUs (several, comma-separated, with --compare)")
            ->delimiter(',')
            ->type_name("N");
        declare_renamed_option(app, "--gpus", "--gpu-count",
                               "--gpus selects GPUs on every command; plan takes a count");
        app.add_option("--gpus-per-node", o.gpus_per_node,
                       "GPUs per node (default: the GPU's usual server)")
            ->type_name("N");
        app.add_option("--nics-per-node", o.nics_per_node, "Inter-node NICs per node")
            ->type_name("N");
        app.add_option("--intra", o.intra, "Link between GPUs of a node (see --list)")
            ->type_name("LINK");
        app.add_option("--inter", o.inter, "Link between nodes, per NIC (see --list)")
            ->type_name("LINK");
        app.add_option("--price", o.price, "USD per GPU-hour, instead of the catalog's")
            ->type_name("USD");
        app.add_option("--catalog", o.catalogs, "TOML file adding or overriding GPUs and links")
            ->check(existing_input())
            ->type_name("FILE");

        app.add_option("--mode", o.mode, "pretrain, full, lora or qlora")->default_str("full");
        app.add_option("--lora-rank", o.lora_rank, "LoRA rank")->default_str("16");
        app.add_option("--lora-targets", o.lora_targets,
                       "Projections with adapters: q,k,v,o,gate,up,down or all")
            ->default_str("q,v");
        app.add_option("--precision", o.precision, "fp32, tf32, bf16, fp16 or fp8")
            ->default_str("bf16");
        app.add_option("--optimizer", o.optimizer, "adamw, adam8bit or sgd (with momentum)")
            ->default_str("adamw");
        app.add_option("--zero", o.zero,
                       "ZeRO stage 0-3 (FSDP FULL_SHARD = 3); default: the lowest that fits")
            ->type_name("STAGE");
        app.add_option("--convention", o.convention,
                       "Count model states as the ZeRO paper (zero), Megatron-LM (fp32 grads) or "
                       "DeepSpeed's estimators")
            ->default_str("zero");
        app.add_option("--recompute", o.recompute,
                       "Activation recomputation: none, selective or full")
            ->default_str("none");
        app.add_option("--flash-attention", o.flash_attention, "on or off")->default_str("on");
        app.add_option("--sequence-parallel", o.sequence_parallel,
                       "on or off (default on when TP > 1)");
        app.add_option("--tp", o.tp, "Tensor-parallel degree")->default_str("1");
        app.add_option("--pp", o.pp, "Pipeline-parallel degree")->default_str("1");
        app.add_option("--micro-batch,--batch", o.micro_batch,
                       "Sequences per GPU per micro-step (train's --batch)")
            ->default_str("1");
        app.add_option("--global-batch", o.global_batch, "Sequences per optimizer step")
            ->type_name("N");
        app.add_option("--grad-accum", o.grad_accum, "Micro-steps per optimizer step")
            ->type_name("N");
        app.add_option("--seq", o.seq, "Sequence length (default: the model's, at most 4096)")
            ->type_name("N");
        app.add_option("--tokens", o.tokens, "Tokens to train (2e9, 2B, 300M)")->type_name("COUNT");
        app.add_option("--dataset-tokens", o.dataset_tokens,
                       "Dataset size in tokens, with --epochs")
            ->type_name("COUNT");
        app.add_option("--epochs", o.epochs, "Passes over --dataset-tokens")->type_name("N");
        app.add_option("--target-tokens-per-s", o.target_tokens_per_s,
                       "Throughput the job must reach")
            ->type_name("RATE");
        app.add_option("--deadline", o.deadline, "Time the training must finish in (72h, 3d)")
            ->type_name("TIME");
        app.add_option("--mfu", o.mfu,
                       "Fraction of peak the math runs at (default 0.45; docs/plan.md)")
            ->type_name("RATIO");

        app.add_flag("--compare", o.compare,
                     "Rank machines (--gpu and --gpu-count lists, default all GPUs x 1-64)");
        app.add_option("--rank", o.rank, "Rank --compare by cost (per token) or time (throughput)")
            ->default_str("cost");
        app.add_flag("--minimum", o.minimum,
                     "Find the fewest GPUs of --gpu that fit and meet the target");
        app.add_option("--max-gpus", o.max_gpus, "Largest count --minimum tries")
            ->default_str("4096");
        declare_json_option(app, json_,
                            "trainrig.plan; trainrig.plan.compare with --compare, "
                            "trainrig.plan.catalog with --list");
        app.add_flag("-v,--verbose,--explain", explain_,
                     "More detail: every formula with its numbers and source");
        app.add_flag("--list", list_, "List the built-in models, GPUs and links");
        declare_output_options(app, output_);
        declare_help_footer(
            app,
            {"trainrig plan --model llama2-13b --gpu a100-80g-sxm --gpu-count 4 --seq 4096 "
             "--global-batch 128",
             "trainrig plan --model llama3-8b --compare --gpu-count 4,8,16 --tokens 10B",
             "trainrig plan --model llama2-70b --gpu h100-sxm --minimum --explain",
             "trainrig plan --model llama2-7b   # its figures, and the GPUs it fits on",
             "trainrig plan --list --json"},
            "Exit status: 0 the job fits (and meets the target), 1 it does not, 2 bad input.\n"
            "Formulas, sources and the catalog file format: docs/plan.md.");
    }

    int check(const GlobalOptions&) override {
        if (list_) return 0;
        auto in = resolve_plan_options(o_);
        if (!in) return print_error(name(), in.status());
        inputs_ = std::move(in).value();
        if (o_.compare || o_.minimum || o_.gpu.empty()) return 0;
        // One machine: its layout and batch are the user's, and checked as given.
        const SearchRequest& r = inputs_->search;
        auto machine = make_machine(inputs_->catalog, r.machine);
        if (!machine) return print_error(name(), machine.status());
        JobSpec job = inputs_->job;
        if (auto s = validate_job(inputs_->model, job, *machine); !s.ok())
            return print_error(name(), s);
        if (r.global_batch)
            if (auto s = fit_global_batch(job, *machine, *r.global_batch); !s.ok())
                return print_error(name(), s);
        machine_ = std::move(machine).value();
        job_ = job;
        return 0;
    }

    int run(const GlobalOptions& global) override {
        if (list_)
            return emit(
                json_ ? json_result(catalogs_json(), "plan --list", 0) : catalogs_text(explain_),
                0);
        const std::optional<PlanInputs>& in = inputs_;
        SearchRequest r = in->search;
        // --minimum changes what the user left open, and keeps what they fixed.
        r.vary_tp = !global.typed("--tp");
        r.vary_pp = !global.typed("--pp");
        r.vary_recompute = !global.typed("--recompute");
        if (!o_.compare && o_.gpu.empty()) {
            const auto overview = model_overview(in->model, in->job, in->catalog, r);
            const int code = overview.any_fits() ? 0 : 1;
            return emit(json_ ? json_result(model_overview_json(overview), name(), code)
                              : render_model_overview(overview),
                        code);
        }
        if (o_.compare) {
            const auto rows = compare_machines(in->model, in->job, in->catalog, r);
            const bool any = !rows.empty() && rows.front().plan && rows.front().why_not.empty();
            if (json_)
                return emit(
                    json_result(compare_to_json(rows, r.rank, r.target), name(), any ? 0 : 1),
                    any ? 0 : 1);
            return emit(render_compare_table(rows, r.rank), any ? 0 : 1);
        }
        Result<Plan> plan = Status{};
        if (o_.minimum) {
            std::string why_not;
            auto found = minimum_gpus(in->model, in->job, in->catalog, r, why_not);
            if (!found) {
                if (json_)
                    return emit(json_result({{"schema", "trainrig.plan"},
                                             {"schema_version", 1},
                                             {"minimum", nullptr},
                                             {"why_not", why_not}},
                                            name(), 1),
                                1);
                return emit(fmt::format("No machine: {}.\n", why_not), 1);
            }
            plan = std::move(*found);
        } else {
            plan = make_plan(in->model, *job_, *machine_, r.zero);
        }
        if (!plan) return print_error(name(), plan.status());
        const int code = meets_target(*plan, r.target) ? 0 : 1;
        if (json_) {
            auto doc = plan_to_json(*plan, r.target);
            if (o_.minimum) doc["minimum"] = plan->machine.gpus;
            return emit(json_result(std::move(doc), name(), code), code);
        }
        std::string text = explain_ ? render_plan_explain(*plan) : std::string();
        if (o_.minimum)
            text +=
                fmt::format("Fewest GPUs: {} x {}\n\n", plan->machine.gpus, plan->machine.gpu.name);
        text += render_plan_table(*plan, r.target, explain_);
        return emit(text, code);
    }

private:
    int emit(const std::string& text, int code) { return emit_result(name(), output_, text, code); }

    PlanOptions o_;
    std::optional<PlanInputs> inputs_;  // o_ resolved by check()
    std::optional<Machine> machine_;    // and, for one machine, its machine and job
    std::optional<JobSpec> job_;
    OutputOptions output_;
    bool json_ = false, explain_ = false, list_ = false;
};

}  // namespace

std::unique_ptr<Command> make_plan_command() { return std::make_unique<PlanCommand>(); }

}  // namespace trainrig
