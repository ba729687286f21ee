// `trainrig watch` running (docs/watch.md): every interval a tick of the watcher, its kernel
// events said on stderr, its alerts sent to their actions, the tick kept in the --db history and
// written as a textfile; metrics served on --listen; the rules read again on SIGHUP; until
// SIGTERM or SIGINT, or --duration.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "watch/alert_config.h"
#include "watch/history_sink.h"
#include "watch/metrics_server.h"
#include "watch/watcher.h"

namespace trainrig::watch {

struct DaemonOptions {
    double interval = 1;                  // seconds between ticks
    double duration = 0;                  // seconds to run; 0: until stopped
    std::optional<ListenAddress> listen;  // none: no metrics server
    std::string textfile_dir;             // empty: no textfile
    std::string rules_path;               // read again on SIGHUP; empty: the defaults stay
    bool kernel_log = true;               // whether the kernel log was asked for
    bool verbose = false;                 // a line on stderr per tick
    std::string root = "/";               // where the maintenance window's file is read
};

// Runs until stopped. Fails only when it cannot start (the metrics address taken); everything
// that goes wrong later is said on stderr and watching goes on.
Status run_daemon(Watcher& watcher, const AlertConfig& config, std::unique_ptr<HistorySink> history,
                  const DaemonOptions& options);

}  // namespace trainrig::watch
