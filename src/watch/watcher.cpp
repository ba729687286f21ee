#include "watch/watcher.h"

#include <fmt/format.h>

#include <chrono>

#include "probe/parsers.h"
#include "watch/known_identity.h"

namespace trainrig::watch {

Watcher::Watcher(const WatchOptions& options, std::vector<Rule> rules)
    : options_(options), engine_(std::move(rules)) {
    engine_.judge_instantly(options.instant);
    next_.interval = options.interval;
    next_.start_time =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    auto sampler = GpuSampler::open(nvml::choose_library(), options.call_deadline);
    if (sampler) {
        sampler_ = std::move(sampler).value();
        next_.gpus = sampler_->gpus();
        next_.driver_version = sampler_->driver_version();
    } else {
        next_.nvml_problem = sampler.status().message();
        next_.nvml_absent = sampler.status().code() == Errc::kNotFound;
    }
    const RootFs fs(options.root);
    // A GPU lost before watch started has no identity from NVML; the driver still lists it.
    fill_from_driver(next_.gpus, driver_identities(fs));
    if (auto id = fs.read_trimmed("/proc/sys/kernel/random/boot_id")) boot_id_ = *id;
    if (options.kernel_log) {
        auto follower = fs.is_live() ? KmsgFollower::open_live()
                                     : KmsgFollower::open_file((fs.root() / "dev/kmsg").string());
        if (follower) {
            kmsg_.emplace(std::move(follower).value());
            next_.kmsg_followed = true;
        } else {
            next_.kmsg_problem = follower.status().message();
            if (!follower.status().next_step().empty())
                next_.kmsg_problem += "; " + follower.status().next_step();
        }
    }
    // NVML's Xid events stand in for the kernel log only when it cannot be read: with both,
    // every Xid would be counted twice.
    if (next_.kmsg_followed) {
        next_.xid_source = "kernel_log";
    } else if (sampler_ && options.nvml_xid_events) {
        std::string why;
        if (sampler_->start_xid_events(why))
            next_.xid_source = "nvml_events";
        else
            next_.kmsg_problem += (next_.kmsg_problem.empty() ? "" : "; ") +
                                  std::string("NVML Xid events unavailable too: ") + why;
    }
    published_ = std::make_shared<const WatchView>(next_);
}

Watcher::Tick Watcher::tick(double now) {
    Tick out;
    std::vector<KernelEvent>& events = out.events;
    if (sampler_) {
        next_.last = sampler_->sample(now);
        if (next_.last->seconds > options_.interval) ++next_.slow_ticks;
    } else {
        next_.last = NodeSample{};
        next_.last->time = now;
    }
    if (auto up = RootFs(options_.root).read_trimmed("/proc/uptime"); up.ok())
        if (auto seconds = parse_uptime(*up); seconds.ok()) next_.last->uptime_seconds = *seconds;
    if (sampler_) events = sampler_->take_xid_events();
    if (kmsg_) {
        if (Status s = kmsg_->poll(events); !s.ok())
            next_.kmsg_problem = s.message();
        else
            next_.kmsg_problem.clear();
        next_.kmsg_records = kmsg_->records();
        next_.kmsg_lost = kmsg_->lost();
        next_.kmsg_malformed = kmsg_->malformed();
    }
    for (const auto& e : events) next_.events.add(e);
    ++next_.ticks;
    out.alerts = engine_.evaluate(*next_.last, next_.gpus, events);
    publish();
    return out;
}

std::vector<Alert> Watcher::replace_rules(std::vector<Rule> rules, double now) {
    auto resolved = engine_.replace_rules(std::move(rules), now);
    publish();
    return resolved;
}

void Watcher::publish() {
    next_.alerts = engine_.firing();
    auto fresh = std::make_shared<const WatchView>(next_);
    std::lock_guard lock(mutex_);
    published_ = std::move(fresh);
}

void Watcher::remember_identities(const std::vector<GpuIdentity>& known) {
    fill_identities(next_.gpus, known);
    publish();
}

void Watcher::resume_kernel_log(uint64_t seq) {
    if (kmsg_) kmsg_->resume_after(seq);
}

std::optional<uint64_t> Watcher::kernel_log_position() const {
    if (!kmsg_ || !kmsg_->have_seq()) return std::nullopt;
    return kmsg_->last_seq();
}

std::shared_ptr<const WatchView> Watcher::view() const {
    std::lock_guard lock(mutex_);
    return published_;
}

}  // namespace trainrig::watch
