// The HTTP endpoint Prometheus scrapes: /metrics (text format 0.0.4, built fresh from the latest
// view on every request) and /healthz. Bounded everywhere a client could hold it: read and write
// timeouts, keep-alive limits, header and body size limits.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "core/status.h"

namespace httplib {
class Server;
}

namespace trainrig::watch {

struct ListenAddress {
    std::string host;
    int port = 0;
};
// "127.0.0.1:9402", "[::1]:9402", "localhost:0" (0: any free port).
Result<ListenAddress> parse_listen_address(const std::string& text);

class MetricsServer {
public:
    using Render = std::function<std::string()>;
    using Healthy = std::function<bool()>;

    // Binds now (so a taken port is an error here, not later) and serves on its own threads.
    static Result<std::unique_ptr<MetricsServer>> start(const ListenAddress& address,
                                                        Render metrics, Healthy healthy);
    ~MetricsServer();

    int port() const { return port_; }
    // Requests answered (those with an error status are counted apart, for the metrics).
    uint64_t requests() const { return requests_; }

private:
    MetricsServer() = default;
    std::unique_ptr<httplib::Server> server_;
    std::thread thread_;
    int port_ = 0;
    std::atomic<uint64_t> requests_{0};
    std::atomic<uint64_t> bad_requests_{0};
};

}  // namespace trainrig::watch
