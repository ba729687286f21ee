#include "validate/stages/run_context.h"

#include <algorithm>
#include <thread>

#include "core/cancel_signals.h"
#include "core/root_fs.h"

namespace trainrig::validate {

RunContext::RunContext(const ValidateOptions& o)
    : options(o), tree(!RootFs(o.collect.root).is_live()) {}

bool RunContext::skipped_by_user(const std::string& id) const {
    return std::find(options.skip.begin(), options.skip.end(), id) != options.skip.end();
}

bool RunContext::interrupted() { return CancelSignals::received() != 0; }

std::string RunContext::after_hang() const {
    return "not run: the " + hung + " stage hung and was killed";
}

// Sizes per level. quick is an admission check: small arrays and files, few repeats, a training
// run of a few steps that must still show the loss falling; standard uses bench's defaults and a
// 2-minute burn-in; long burns in for an hour.
bench::BenchOptions RunContext::bench_options() const {
    const ValidateOptions& o = options;
    bench::BenchOptions b;
    b.gpus = o.gpus;
    b.data_dir = o.collect.data_dir.value_or("");
    b.tokenizer = o.tokenizer;
    b.inputs = o.inputs;
    b.shards = o.shards;
    b.steps = 5000;  // loader batches per repeat (quick: fewer, below)
    // The tokenizer on one thread and, past quick, on every core (`data tokenize`'s default).
    if (const unsigned cores = std::thread::hardware_concurrency();
        o.level != RunLevel::kQuick && cores > 1)
        b.tokenizer_threads = {1, cores};
    switch (o.level) {
        case RunLevel::kQuick:
            b.quick = true;
            b.repeats = 3;
            b.array_bytes = 64ull << 20;
            b.file_bytes = 256ull << 20;
            b.seconds = 2;
            b.train_seq = 64;
            b.train_batch = 2;
            b.steps = 1000;  // loader batches per repeat: about 10 ms, well above the clock's grain
            break;
        case RunLevel::kStandard:
            b.seconds = 120;  // burn; storage samples take their default
            break;
        case RunLevel::kLong:
            b.seconds = 3600;
            break;
    }
    b.train_backend = scope == Scope::kGpu ? "cuda" : "cpu";
    return b;
}

double per_level(RunLevel l, double quick, double standard, double long_) {
    return l == RunLevel::kQuick ? quick : l == RunLevel::kStandard ? standard : long_;
}

}  // namespace trainrig::validate
