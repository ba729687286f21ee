#include "train/batch_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <optional>

#include "core/cancel_signals.h"
#include "core/child_process.h"
#include "train/host_memory.h"

namespace trainrig::train {

namespace {

bool on_cpu(const ProbeOptions& o) { return o.backend == "cpu"; }

}  // namespace

std::chrono::milliseconds probe_trial_timeout(const ProbeOptions& o) {
    if (o.trial_timeout.count() > 0 || on_cpu(o)) return o.trial_timeout;
    return kDeviceTrialTimeout;
}

Status validate_probe(const ProbeOptions& o) {
    TRAINRIG_TRY(validate(o.trial.model));
    TRAINRIG_TRY(validate(o.trial.opt));
    if (o.trial.seq < 1 || o.trial.seq > o.trial.model.max_seq)
        return invalid_input(fmt::format("--seq {} is outside 1..{} (the model's context)",
                                         o.trial.seq, o.trial.model.max_seq));
    if (!(o.headroom >= 0 && o.headroom <= 0.9))
        return invalid_input(fmt::format("--headroom {:g} % is outside 0..90 %", 100 * o.headroom));
    if (o.max_batch < 1) return invalid_input("--max-batch must be at least 1");
    if (o.trial.steps < 1 || o.trial.steps > 100)
        return invalid_input(fmt::format("--probe-steps {} is outside 1..100", o.trial.steps));
    if (o.trial_timeout.count() < 0) return invalid_input("--trial-timeout must not be negative");
    return ok_status();
}

Result<ProbeReport> run_batch_probe(const ProbeOptions& o) {
    TRAINRIG_TRY(validate_probe(o));
    if (!on_cpu(o) && !o.make_backend && !o.trial_override)
        return Status(Errc::kInternal, "the device probe was given no way to make its backend");
    ProbeReport r;
    r.backend = o.backend;
    r.device = o.device;
    r.model = o.trial.model;
    r.seq = o.trial.seq;
    r.steps = o.trial.steps;
    r.seed = o.trial.seed;
    r.trial_timeout = probe_trial_timeout(o);
    r.headroom = o.headroom;
    // B·T tokens index int arrays in both backends.
    r.max_batch = std::min(o.max_batch, INT_MAX / o.trial.seq);
    r.basis = estimate_basis(o.backend);

    if (on_cpu(o)) {
        const std::optional<uint64_t> avail =
            o.mem_available ? std::optional<uint64_t>(o.mem_available) : available_memory();
        if (o.mem_limit) {
            r.capacity = o.mem_limit;
            r.capacity_source = "--mem-limit";
            if (avail && *avail < o.mem_limit)
                r.notes.push_back(fmt::format(
                    "--mem-limit {} is more than the {} available: a size between the two may "
                    "be ended by the kernel's out-of-memory killer (counted as out of memory)",
                    gib(o.mem_limit), gib(*avail)));
        } else if (avail) {
            r.capacity = *avail;
            r.capacity_source = "MemAvailable";
        } else {
            return invalid_input("/proc/meminfo has no MemAvailable to take as the limit",
                                 "give --mem-limit");
        }
    } else {
        r.capacity = o.device_free_bytes;
        r.capacity_source = "free device memory";
        if (o.mem_limit && (r.capacity == 0 || o.mem_limit < r.capacity)) {
            r.capacity = o.mem_limit;
            r.capacity_source = "--mem-limit";
        }
        if (r.capacity == 0)
            return invalid_input(fmt::format("the device {} reports no free memory",
                                             o.device.empty() ? "backend" : o.device),
                                 "give --mem-limit");
    }

    const MemoryEstimate at_one = estimate_memory(o.trial.model, o.trial.seq, 1, r.basis);
    r.parameters = at_one.parameters;
    r.fixed_bytes = at_one.fixed_bytes;
    SearchInput in;
    in.capacity = r.capacity;
    in.headroom = o.headroom;
    in.max_batch = r.max_batch;
    in.estimate = [&o, &r](int b) {
        return estimate_memory(o.trial.model, o.trial.seq, b, r.basis).model_bytes;
    };
    in.start =
        start_from_estimate(in.estimate, headroom_line(in.capacity, in.headroom), in.max_batch);
    r.start = in.start;

    r.notes.push_back(fmt::format(
        "each size runs {} training step{} (forward, backward, AdamW) on synthetic tokens "
        "(uniform over the vocabulary, seed {}){}",
        o.trial.steps, o.trial.steps == 1 ? "" : "s", o.trial.seed,
        o.trial.steps > 1 ? "; the first is warm-up and not timed" : ""));
    if (on_cpu(o))
        r.notes.push_back(
            "measured: the trial process's peak resident memory (VmHWM) above its resident "
            "memory before the model was built; each size runs in its own process under "
            "RLIMIT_DATA");
    else
        r.notes.push_back(fmt::format(
            "measured: the bytes the device backend allocated (peak_memory_bytes); the CUDA "
            "context is outside it and outside the free memory the search divides (plan "
            "counts {} for context and NCCL); each size runs in its own process, which opens "
            "the device afresh",
            gib(r.fixed_bytes)));
    if (r.trial_timeout.count() > 0)
        r.notes.push_back(fmt::format(
            "a size whose trial makes no progress for {} (building the model, one step, freeing "
            "it) is killed and counted as \"did not finish\"; the search stops there",
            format_seconds(r.trial_timeout)));

    // Ctrl-C or SIGTERM ends the size in progress (the trial's child is killed) and the
    // search: the report keeps the sizes measured so far.
    const CancelSignals signals;
    in.on_tried = o.on_size;
    r.search = find_batch(in, [&](int b) -> TrialResult {
        r.backend_bytes.push_back(on_cpu(o) ? cpu_training_bytes(o.trial.model, b, o.trial.seq)
                                            : 0);
        if (CancelSignals::received() != 0)
            return {TrialOutcome::kError, 0, 0, "interrupted before this size"};
        TrialResult t;
        if (o.trial_override)
            t = o.trial_override(b);
        else if (on_cpu(o))
            t = run_cpu_trial(o.trial, b, r.capacity, r.trial_timeout);
        else
            t = run_device_trial(o.trial, b, o.make_backend, r.trial_timeout);
        if (CancelSignals::received() != 0) return {TrialOutcome::kError, 0, 0, "interrupted"};
        return t;
    });
    r.interrupted = CancelSignals::received() != 0;
    return r;
}

int probe_exit_code(const ProbeReport& r) {
    switch (r.search.answer) {
        case SearchAnswer::kFound:
            return 0;
        case SearchAnswer::kNothingFits:
            return 1;
        case SearchAnswer::kError:
            break;
    }
    return 2;
}

}  // namespace trainrig::train
