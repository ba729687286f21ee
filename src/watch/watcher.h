// The watch loop's state: one tick reads every GPU and the new kernel-log records, and then
// publishes a fresh WatchView for the readers (the /metrics server, --textfile, --once).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/root_fs.h"
#include "watch/alert_engine.h"
#include "watch/gpu_sampler.h"
#include "watch/kernel_events.h"
#include "watch/watch_view.h"

namespace trainrig::watch {

struct WatchOptions {
    double interval = 1;       // seconds between ticks
    double call_deadline = 2;  // seconds an NVML tick may take before a GPU counts as hung
    std::string root = "/";    // --root: the kernel log is then DIR/dev/kmsg, a file
    bool kernel_log = true;
    bool nvml_xid_events = true;  // NVML's Xid events when the kernel log cannot be read
    bool instant = false;         // --once: judge the one tick as it is (AlertEngine)
};

class Watcher {
public:
    // Never fails: without NVML or the kernel log it watches what it can and says why in the
    // view (nvml_problem, kmsg_problem).
    Watcher(const WatchOptions& options, std::vector<Rule> rules);

    struct Tick {
        std::vector<KernelEvent> events;  // found in the kernel log since the last tick
        std::vector<Alert> alerts;        // fired or resolved at this tick
    };
    // One tick at wall-clock time `now`: read, judge, publish.
    Tick tick(double now);
    // New rules (SIGHUP); returns the alerts this resolves.
    std::vector<Alert> replace_rules(std::vector<Rule> rules, double now);

    std::shared_ptr<const WatchView> view() const;

    // The identities a history kept (watch --db): what NVML and the driver left blank, as for a
    // GPU lost before this start, is filled from them.
    void remember_identities(const std::vector<GpuIdentity>& known);

    // The kernel log's position, to resume after a restart within the same boot: records up to
    // `seq` are then skipped. boot_id() names the boot (the kernel's random boot id).
    void resume_kernel_log(uint64_t seq);
    std::optional<uint64_t> kernel_log_position() const;
    const std::string& boot_id() const { return boot_id_; }
    const std::optional<KmsgFollower>& kernel_log() const { return kmsg_; }

private:
    WatchOptions options_;
    std::unique_ptr<GpuSampler> sampler_;
    std::optional<KmsgFollower> kmsg_;
    AlertEngine engine_;
    std::string boot_id_;
    void publish();

    WatchView next_;  // the loop's own copy; published by value
    mutable std::mutex mutex_;
    std::shared_ptr<const WatchView> published_;
};

}  // namespace trainrig::watch
