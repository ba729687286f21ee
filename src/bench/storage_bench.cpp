#include "bench/storage_bench.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "bench/storage_io.h"
#include "core/root_fs.h"
#include "probe/parsers.h"
#include "probe/probes.h"

namespace trainrig::bench {
namespace {

constexpr uint64_t kFileBytes = uint64_t{4} << 30;
constexpr uint64_t kQuickFileBytes = uint64_t{1} << 30;

// What the directory sits on: filesystem, disk, its model and (NVMe) PCIe link, from sysfs.
nlohmann::json storage_target(const std::string& dir) {
    nlohmann::json t = {{"path", dir}};
    const RootFs fs("/");
    const auto d = probe_data_dir(fs, dir);
    if (!d.is_known()) return t;
    t["fs"] = d.value().fs_type;
    if (d.value().devices.empty()) return t;
    const auto& dev = d.value().devices.front();
    t["device"] = dev.name;
    t["kind"] = dev.kind;
    const std::string sys = "/sys/block/" + dev.name + "/device";
    if (auto m = fs.read_trimmed(sys + "/model"); m) t["model"] = *m;
    // NVMe namespaces sit under the controller; the PCI function is the controller's device.
    for (const std::string& pci : {sys + "/device", sys}) {
        auto speed = fs.read_trimmed(pci + "/current_link_speed");
        auto width = fs.read_trimmed(pci + "/current_link_width");
        if (!speed || !width) continue;
        auto gts = parse_link_speed(*speed);
        if (!gts) break;
        t["pcie_gts"] = *gts;
        t["pcie_width"] = std::atoi(width->c_str());
        if (auto max = fs.read_trimmed(pci + "/max_link_width"))
            t["pcie_max_width"] = std::atoi(max->c_str());
        break;
    }
    return t;
}

class StorageBench : public Benchmark {
public:
    const char* id() const override { return "storage"; }
    const char* description() const override {
        return "O_DIRECT sequential read bandwidth and 4 KiB random-read IOPS under --data-dir";
    }
    std::string skip_reason(const BenchContext& ctx) const override {
        if (ctx.options.data_dir.empty())
            return "needs --data-dir DIR, a directory on the disk to measure";
        return {};
    }

    Status run(const BenchContext& ctx, std::vector<BenchRecord>& records) override {
        const BenchOptions& o = ctx.options;
        auto engine = resolve_io_engine(o.io_engine);
        if (!engine) return engine.status();
        const uint64_t bytes = o.file_bytes ? o.file_bytes : o.quick ? kQuickFileBytes : kFileBytes;
        if (bytes < (uint64_t{64} << 20))
            return Status{Errc::kInvalidInput, "--file-size must be at least 64 MiB"};
        const uint64_t seed =
            static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
        auto file = ScratchFile::create(o.data_dir, bytes, seed, ctx.cancel);
        if (!file) return file.status();

        const unsigned repeats = o.repeats ? o.repeats : o.quick ? 2 : 3;
        const double seconds = o.seconds > 0 ? o.seconds : o.quick ? 2 : 5;
        const nlohmann::json target = storage_target(o.data_dir);
        for (const bool random : {false, true}) {
            IoPattern p;
            p.random = random;
            p.block_bytes = random ? kIoAlign : size_t{1} << 20;
            p.depth = random ? o.rand_depth : o.seq_depth;
            p.seconds = seconds;
            BenchRecord r;
            r.bench = "storage";
            r.name = random ? "random-read" : "seq-read";
            r.unit = random ? "IO/s" : "bytes/s";
            r.target = target;
            r.params = {{"block_bytes", p.block_bytes},      {"queue_depth", p.depth},
                        {"engine", io_engine_name(*engine)}, {"o_direct", true},
                        {"file_bytes", file->bytes()},       {"seconds", seconds}};
            IoSample total;
            for (unsigned i = 0; i < repeats; ++i) {
                p.rng_seed = seed + i;
                auto s = run_io(*file, p, *engine, ctx.cancel);
                if (!s) return s.status();
                r.samples.push_back(static_cast<double>(random ? s->ios : s->bytes) / s->seconds);
                total.ios += s->ios;
                total.bytes += s->bytes;
                total.seconds += s->seconds;
                if (s->bad_blocks && !total.bad_blocks) total.first_bad_block = s->first_bad_block;
                total.bad_blocks += s->bad_blocks;
            }
            r.counted = {{"ios", total.ios}, {"bytes", total.bytes}, {"seconds", total.seconds}};
            r.verified = total.bad_blocks == 0;
            r.verify_detail =
                total.bad_blocks == 0
                    ? fmt::format("all {} blocks of 4 KiB read held the pattern written",
                                  total.bytes / kIoAlign)
                    : fmt::format("{} blocks of 4 KiB read back wrong, first block {}",
                                  total.bad_blocks, total.first_bad_block);
            records.push_back(std::move(r));
        }
        return Status{};
    }
};

}  // namespace

std::unique_ptr<Benchmark> make_storage_bench() { return std::make_unique<StorageBench>(); }

}  // namespace trainrig::bench
