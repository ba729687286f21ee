#include "bench/cpu_mem_bench.h"

#include <fmt/format.h>

#include <algorithm>

#include "bench/stream_run.h"

namespace trainrig::bench {
namespace {

constexpr size_t kFloorElements = size_t{32} << 20;      // 256 MiB per array
constexpr size_t kQuickFloorElements = size_t{8} << 20;  // 64 MiB per array

// `count` cores spread evenly over `cores` (all of them when count is 0 or too large).
std::vector<unsigned> pick_pus(const std::vector<HostCore>& cores, unsigned count) {
    std::vector<unsigned> pus;
    const size_t n = count == 0 ? cores.size() : std::min<size_t>(count, cores.size());
    for (size_t i = 0; i < n; ++i) pus.push_back(cores[i * cores.size() / n].pu);
    return pus;
}

class CpuMemBench : public Benchmark {
public:
    const char* id() const override { return "cpu-mem"; }
    const char* description() const override {
        return "STREAM copy and triad bandwidth, all cores and per NUMA node (pinned threads)";
    }
    std::string skip_reason(const BenchContext&) const override { return {}; }

    Status run(const BenchContext& ctx, std::vector<BenchRecord>& records) override {
        auto topo = HostTopology::load();
        if (!topo) return topo.status();
        const auto cores = topo->cores();
        if (cores.empty()) return Status{Errc::kIo, "hwloc found no cores on this machine"};
        if (ctx.options.array_bytes > 0 && ctx.options.array_bytes < (uint64_t{1} << 20))
            return Status{Errc::kInvalidInput, "--array-bytes must be at least 1 MiB"};
        const bool quick = ctx.options.quick;
        const size_t floor = quick ? kQuickFloorElements : kFloorElements;
        size_t elements = stream_elements(topo->last_level_cache_bytes(), floor);
        const size_t avail = available_memory_bytes();
        const auto too_big = [&](size_t n) {
            return Status{Errc::kUnsupported,
                          fmt::format("cpu-mem needs {} MiB for its three arrays but only {} MiB "
                                      "of memory is available",
                                      3 * n * sizeof(double) >> 20, avail >> 20),
                          "pass a smaller --array-bytes"};
        };
        if (ctx.options.array_bytes > 0) {
            elements = ctx.options.array_bytes / sizeof(double);
            if (avail > 0 && 3 * ctx.options.array_bytes > avail / 2) return too_big(elements);
        } else {
            // Virtual machines can report caches far larger than any real one (hundreds of MB
            // of L3 per vCPU): the arrays then take at most an eighth of the memory. From the
            // total, not what is free now, so that runs of the same machine measure the same
            // size and a --baseline matches.
            const size_t cap = total_memory_bytes() / 8 / (3 * sizeof(double));
            if (cap > 0) elements = std::min(elements, std::max(cap, floor));
            if (avail > 0 && 3 * elements * sizeof(double) > avail / 2) return too_big(elements);
        }
        StreamConfig config;
        config.elements = elements;
        config.repeats = ctx.options.repeats ? ctx.options.repeats : quick ? 5 : 10;

        config.pus = pick_pus(cores, ctx.options.threads);
        TRAINRIG_TRY(measure(*topo, config, ctx, {{"cpus", "all"}, {"threads", config.pus.size()}},
                             records));
        const auto nodes = topo->numa_nodes();
        for (const int node : nodes.size() > 1 ? nodes : std::vector<int>{}) {
            std::vector<HostCore> local;
            for (const auto& c : cores)
                if (c.numa_node == node) local.push_back(c);
            if (local.empty()) continue;  // a memory-only node (CXL, HBM): no cores to run on
            config.pus = pick_pus(local, 0);
            config.numa_node = node;
            TRAINRIG_TRY(measure(*topo, config, ctx,
                                 {{"numa_node", node}, {"threads", config.pus.size()}}, records));
        }
        return Status{};
    }

private:
    static Status measure(const HostTopology& topo, const StreamConfig& config,
                          const BenchContext& ctx, const nlohmann::json& target,
                          std::vector<BenchRecord>& out) {
        auto times = run_stream(topo, config, ctx.cancel);
        if (!times) return times.status();
        const size_t elements = config.elements / 8 * 8;
        const double n = static_cast<double>(elements);
        const nlohmann::json params = {
            {"array_bytes", elements * sizeof(double)},
            {"elements", elements},
            {"repeats", config.repeats},
            {"placement", config.numa_node >= 0 ? "bound" : "first-touch"}};
        const auto record = [&](const char* name, const std::vector<double>& seconds,
                                double bytes_per_element) {
            BenchRecord r;
            r.bench = "cpu-mem";
            r.name = name;
            r.params = params;
            r.target = target;
            r.unit = "bytes/s";
            for (const double s : seconds) r.samples.push_back(n * bytes_per_element / s);
            r.counted = {{"bytes", static_cast<uint64_t>(n * bytes_per_element)}};
            r.verified = times->verified;
            r.verify_detail = times->detail;
            out.push_back(std::move(r));
        };
        record("copy", times->copy_seconds, kCopyBytesPerElement);
        record("triad", times->triad_seconds, kTriadBytesPerElement);
        return Status{};
    }
};

}  // namespace

size_t stream_elements(size_t llc_bytes, size_t floor_elements) {
    return std::max(4 * llc_bytes / sizeof(double), floor_elements);
}

std::unique_ptr<Benchmark> make_cpu_mem_bench() { return std::make_unique<CpuMemBench>(); }

}  // namespace trainrig::bench
