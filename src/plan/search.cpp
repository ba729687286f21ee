#include "plan/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace trainrig::plan {

Result<Machine> make_machine(const HardwareCatalog& catalog, const MachineRequest& r) {
    const GpuSpec* gpu = catalog.gpu(r.gpu);
    if (!gpu)
        return Status{Errc::kInvalidInput,
                      fmt::format("unknown GPU \"{}\" (known: {})", r.gpu, catalog.gpu_ids()),
                      "add it with --catalog FILE"};
    Machine m;
    m.gpu = *gpu;
    if (r.usd_per_gpu_hour) {
        m.gpu.usd_per_gpu_hour = *r.usd_per_gpu_hour;
        m.gpu.price_source = "--price";
    }
    m.gpus = r.gpus;
    // Fewer GPUs than a full server: they are one node.
    m.gpus_per_node = r.gpus_per_node.value_or(std::min(gpu->gpus_per_node, std::max(1, r.gpus)));
    m.nics_per_node = r.nics_per_node.value_or(gpu->nics_per_node);
    for (auto [id, want, out] :
         {std::tuple{r.intra.value_or(gpu->intra_link), LinkKind::kIntraNode, &m.intra},
          std::tuple{r.inter.value_or(gpu->inter_link), LinkKind::kInterNode, &m.inter}}) {
        const LinkSpec* link = catalog.link(id);
        if (!link || link->kind != want)
            return Status{Errc::kInvalidInput,
                          fmt::format("unknown {} link \"{}\" (known: {})",
                                      want == LinkKind::kIntraNode ? "intra-node" : "inter-node",
                                      id, catalog.link_ids())};
        *out = *link;
    }
    if (m.gpus_per_node < 1 || m.nics_per_node < 1)
        return Status{Errc::kInvalidInput, "GPUs and NICs per node must be at least 1"};
    return m;
}

Status fit_global_batch(JobSpec& job, const Machine& machine, int64_t global) {
    if (job.tp < 1 || job.pp < 1 || job.micro_batch < 1 || machine.gpus < 1)
        return {Errc::kInvalidInput, "TP, PP, micro-batch and GPUs must be at least 1"};
    const int64_t dp = machine.gpus / (job.tp * job.pp);
    const int64_t per_step = job.micro_batch * std::max<int64_t>(dp, 1);
    if (global < 1 || global % per_step != 0)
        return {Errc::kInvalidInput,
                fmt::format("global batch {} is not a multiple of micro-batch {} x DP {} = {}",
                            global, job.micro_batch, dp, per_step)};
    job.grad_accum = global / per_step;
    return ok_status();
}

bool meets_target(const Plan& p, const Target& t) {
    if (!p.memory.fits()) return false;
    if (t.tokens_per_second > 0 && p.time.tokens_per_second < t.tokens_per_second) return false;
    if (t.deadline_seconds > 0 && (p.time.seconds <= 0 || p.time.seconds > t.deadline_seconds))
        return false;
    return true;
}

double usd_per_million_tokens(const Plan& p) {
    if (p.machine.gpu.usd_per_gpu_hour <= 0 || p.time.tokens_per_second <= 0) return 0;
    return p.machine.gpus * p.machine.gpu.usd_per_gpu_hour / 3600 / p.time.tokens_per_second * 1e6;
}

namespace {

Candidate try_machine(const ModelSpec& m, JobSpec job, const HardwareCatalog& catalog,
                      const SearchRequest& r, const std::string& gpu, int gpus) {
    Candidate c{gpu, gpus, std::nullopt, ""};
    MachineRequest mr = r.machine;
    mr.gpu = gpu;
    mr.gpus = gpus;
    auto machine = make_machine(catalog, mr);
    if (!machine) {
        c.why_not = machine.status().message();
        return c;
    }
    if (auto s = validate_job(m, job, *machine); !s.ok()) {
        c.why_not = s.message();
        return c;
    }
    if (r.global_batch) {
        if (auto s = fit_global_batch(job, *machine, *r.global_batch); !s.ok()) {
            c.why_not = s.message();
            return c;
        }
    }
    auto plan = make_plan(m, job, *machine, r.zero);
    if (!plan) {
        c.why_not = plan.status().message();
        return c;
    }
    if (!plan->memory.fits())
        c.why_not = fmt::format("needs {} per GPU, has {}", gib(plan->memory.total()),
                                gib(plan->memory.capacity));
    else if (!meets_target(*plan, r.target))
        c.why_not = "misses the target";
    c.plan = std::move(plan).value();
    return c;
}

}  // namespace

namespace {

std::vector<int> powers_of_two_up_to(int64_t limit) {
    std::vector<int> out;
    for (int v = 1; v <= limit; v *= 2) out.push_back(v);
    return out;
}

std::string layout_text(const Plan& p) {
    return fmt::format("TP {} x PP {}, {} recompute, ZeRO-{}", p.job.tp, p.job.pp,
                       recompute_name(p.job.recompute), p.job.zero);
}

// What every layout of `n` GPUs of `gpu` gives: the fastest that fits and meets the target, and
// what binds when none does (the leanest layout's memory, the fastest fitting one's speed).
struct LayoutSearch {
    std::optional<Plan> best, leanest, fastest_fitting;
    std::string other;  // the last reason a layout could not be planned at all
};

// The layouts the user left open (`vary_*`: TP up to the GPUs of a node, PP up to the layers,
// each recompute), or only the job's own. --compare and --minimum search the same way.
LayoutSearch search_layouts(const ModelSpec& m, const JobSpec& job, const HardwareCatalog& catalog,
                            const SearchRequest& r, const std::string& gpu, int64_t n,
                            int64_t per_node) {
    const auto tps = r.vary_tp ? powers_of_two_up_to(per_node) : std::vector<int>{job.tp};
    const auto pps = r.vary_pp ? powers_of_two_up_to(m.layers) : std::vector<int>{job.pp};
    const auto recomputes =
        r.vary_recompute
            ? std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull}
            : std::vector<Recompute>{job.recompute};
    LayoutSearch out;
    for (int tp : tps)
        for (int pp : pps) {
            if (n % (int64_t{tp} * pp) != 0 || tp > per_node) continue;
            for (Recompute rc : recomputes) {
                JobSpec layout = job;
                layout.tp = tp;
                layout.pp = pp;
                layout.recompute = rc;
                Candidate c = try_machine(m, layout, catalog, r, gpu, static_cast<int>(n));
                if (!c.plan) {
                    out.other = fmt::format("{} GPUs: {}", n, c.why_not);
                    continue;
                }
                const Plan& p = *c.plan;
                const double use = p.memory.total() / p.memory.capacity;
                if (!out.leanest ||
                    use < out.leanest->memory.total() / out.leanest->memory.capacity)
                    out.leanest = p;
                if (!p.memory.fits()) continue;
                if (!out.fastest_fitting ||
                    p.time.tokens_per_second > out.fastest_fitting->time.tokens_per_second)
                    out.fastest_fitting = p;
                if (c.why_not.empty() &&
                    (!out.best || p.time.tokens_per_second > out.best->time.tokens_per_second))
                    out.best = p;
            }
        }
    return out;
}

int64_t gpus_per_node(const HardwareCatalog& catalog, const SearchRequest& r,
                      const std::string& gpu) {
    const GpuSpec* spec = catalog.gpu(gpu);
    return r.machine.gpus_per_node.value_or(spec ? spec->gpus_per_node : 8);
}

}  // namespace

std::vector<Candidate> compare_machines(const ModelSpec& m, const JobSpec& job,
                                        const HardwareCatalog& catalog, const SearchRequest& r) {
    std::vector<std::string> ids = r.gpu_ids;
    if (ids.empty())
        for (const auto& g : catalog.gpus) ids.push_back(g.id);
    std::vector<Candidate> out;
    const bool search = r.vary_tp || r.vary_pp || r.vary_recompute;
    for (const auto& id : ids)
        for (int n : r.counts) {
            Candidate c = try_machine(m, job, catalog, r, id, n);
            // The job as given does not fit here: the layouts the user left open might, as
            // --minimum finds; the reason then names the leanest layout tried.
            if (search && c.plan && !c.why_not.empty()) {
                const auto found =
                    search_layouts(m, job, catalog, r, id, n, gpus_per_node(catalog, r, id));
                if (found.best) {
                    c.plan = found.best;
                    c.why_not.clear();
                } else if (found.fastest_fitting) {
                    c.plan = found.fastest_fitting;
                    c.why_not = "misses the target";
                } else if (found.leanest) {
                    c.plan = found.leanest;
                    c.why_not = fmt::format(
                        "needs {} per GPU even at its leanest layout ({}), has {} ({:.0f} % kept "
                        "free)",
                        gib(found.leanest->memory.total()), layout_text(*found.leanest),
                        gib(found.leanest->memory.capacity), 100 * MemoryBreakdown::kMemoryMargin);
                }
            }
            out.push_back(std::move(c));
        }
    auto good = [](const Candidate& c) { return c.plan && c.why_not.empty(); };
    auto key = [&](const Candidate& c) {
        if (r.rank == Rank::kTime) return -c.plan->time.tokens_per_second;
        const double usd = usd_per_million_tokens(*c.plan);
        return usd > 0 ? usd : 1e300;  // unknown prices last
    };
    std::stable_sort(out.begin(), out.end(), [&](const Candidate& a, const Candidate& b) {
        if (good(a) != good(b)) return good(a);
        if (!good(a)) return false;
        return key(a) < key(b);
    });
    return out;
}

std::optional<Plan> minimum_gpus(const ModelSpec& m, const JobSpec& job,
                                 const HardwareCatalog& catalog, const SearchRequest& r,
                                 std::string& why_not) {
    const int64_t per_node = gpus_per_node(catalog, r, r.machine.gpu);
    if (job.tp < 1 || job.pp < 1 || per_node < 1 || r.max_gpus < 1) {
        why_not = "TP, PP, GPUs per node and --max-gpus must be at least 1";
        return std::nullopt;
    }
    std::vector<int64_t> counts;
    for (int64_t n = 1; n <= std::min<int64_t>(per_node, r.max_gpus); ++n) counts.push_back(n);
    for (int64_t n = 2 * per_node; n <= r.max_gpus; n += per_node) counts.push_back(n);

    // What binds when nothing works: the leanest layout's memory (of the most GPUs tried), or
    // the fastest fitting one's speed.
    std::optional<Plan> leanest, fastest_fitting;
    std::string other;
    for (int64_t n : counts) {
        auto found = search_layouts(m, job, catalog, r, r.machine.gpu, n, per_node);
        if (found.best) return found.best;
        if (found.leanest) leanest = found.leanest;
        if (found.fastest_fitting) fastest_fitting = found.fastest_fitting;
        if (!found.other.empty()) other = found.other;
    }
    const std::string upto =
        fmt::format("no count up to {} GPUs of {} fits{}", r.max_gpus, r.machine.gpu,
                    r.target.any() ? " and meets the target" : "");
    if (fastest_fitting)
        why_not = fmt::format(
            "{}: the target binds (at {} GPUs the fastest layout that fits, {}, trains {:.0f} "
            "tokens/s)",
            upto, fastest_fitting->machine.gpus, layout_text(*fastest_fitting),
            fastest_fitting->time.tokens_per_second);
    else if (leanest)
        why_not = fmt::format(
            "{}: memory binds (at {} GPUs the leanest layout, {}, needs {} per GPU, has {})", upto,
            leanest->machine.gpus, layout_text(*leanest), gib(leanest->memory.total()),
            gib(leanest->memory.capacity));
    else
        why_not = upto + (other.empty() ? "" : " (" + other + ")");
    return std::nullopt;
}

}  // namespace trainrig::plan
