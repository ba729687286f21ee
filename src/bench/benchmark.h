// One benchmark of `trainrig bench`, in nvbandwidth's shape: an id, a description, whether it
// applies on this machine (and if not, why), and run(), which measures, checks its own data and
// returns records. Expectations and verdicts are added afterwards (expectations.h, verdict.h),
// so a benchmark only says what it measured and on what.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/bench_record.h"

namespace trainrig::bench {

// Every option of `bench run`; each benchmark reads the ones it needs.
struct BenchOptions {
    bool quick = false;
    unsigned repeats = 0;  // 0: the benchmark's default
    // cpu-mem
    unsigned threads = 0;      // 0: one per core
    uint64_t array_bytes = 0;  // per array; 0: 4x the last-level cache, at least 256 MiB
    // storage
    std::string data_dir;
    uint64_t file_bytes = 0;  // 0: the default (docs/METHODOLOGY.md)
    std::string io_engine = "auto";
    unsigned seq_depth = 8;
    unsigned rand_depth = 32;
    double seconds = 0;  // per sample (storage), or the whole run (burn); 0: the default
    // GPU
    std::vector<int> gpus;
    // tokenizer and loader
    std::string tokenizer;
    std::vector<std::string> inputs;
    std::vector<unsigned> tokenizer_threads = {1};
    std::vector<std::string> shards;
    uint64_t batch = 8, window = 1024, steps = 200;
    // train
    std::string train_backend = "cpu";
    std::string train_model = "tiny";
    int train_seq = 256, train_batch = 4;
};

struct BenchContext {
    BenchOptions options;
    const std::atomic<bool>* cancel = nullptr;  // set by SIGINT/SIGTERM

    bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
};

class Benchmark {
public:
    virtual ~Benchmark() = default;
    virtual const char* id() const = 0;
    virtual const char* description() const = 0;
    // Empty when the benchmark can run here; otherwise one sentence saying why not.
    virtual std::string skip_reason(const BenchContext& ctx) const = 0;
    // Appends its records to `out` as they are measured, so a failure part way (or an
    // interruption) keeps what was measured before it.
    virtual Status run(const BenchContext& ctx, std::vector<BenchRecord>& out) = 0;
    // After run(): false when this process is a rank of a multi-process benchmark that another
    // rank reports (nccl and nccl-pairs under a launcher: rank 0 does).
    virtual bool reports_here() const { return true; }
};

// Every benchmark, in the order `bench list` shows them. To add one, write a class in its own
// file and append it here.
std::vector<std::unique_ptr<Benchmark>> make_benchmarks();

// The error a benchmark returns when SIGINT/SIGTERM stopped it.
Status interrupted_status();

}  // namespace trainrig::bench
