#include "watch/history_sink.h"

#include <cstdio>

namespace trainrig::watch {

void HistorySink::resume(Watcher& w) {
    if (auto seq = h_.kmsg_position(w.boot_id())) w.resume_kernel_log(*seq);
    if (auto known = h_.gpus(); known.ok()) w.remember_identities(*known);
}

void HistorySink::write(const Watcher& w, const Watcher::Tick& tick) {
    const auto view = w.view();
    Status s = h_.record(*view->last, view->gpus);
    for (const auto& a : tick.alerts)
        if (s.ok()) s = h_.record_alert(a);
    if (auto seq = w.kernel_log_position(); s.ok() && seq && seq != saved_seq_) {
        s = h_.save_kmsg_position(w.boot_id(), *seq);
        if (s.ok()) saved_seq_ = seq;
    }
    if (s.ok() && view->last->time - last_prune_ >= 60) {
        s = h_.prune(view->last->time);
        last_prune_ = view->last->time;
    }
    if (!s.ok()) {
        ++failed_;
        if (!failing_)
            std::fprintf(stderr, "trainrig watch: history not written: %s%s%s\n",
                         s.message().c_str(), s.next_step().empty() ? "" : "; ",
                         s.next_step().c_str());
        failing_ = true;
    } else {
        ++ok_;
        if (failing_) std::fprintf(stderr, "trainrig watch: history written again\n");
        failing_ = false;
    }
}

}  // namespace trainrig::watch
