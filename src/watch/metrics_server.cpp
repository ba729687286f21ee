#include "watch/metrics_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <chrono>

#include "core/text.h"
#include "watch/metrics_render.h"
#include "watch/prometheus_text.h"

namespace trainrig::watch {

Result<ListenAddress> parse_listen_address(const std::string& text) {
    ListenAddress a;
    std::string_view port;
    if (text.starts_with('[')) {
        const size_t close = text.find("]:");
        if (close == std::string::npos)
            return Status{Errc::kInvalidInput,
                          fmt::format("--listen {}: expected [IPv6]:PORT", text)};
        a.host = text.substr(1, close - 1);
        port = std::string_view(text).substr(close + 2);
    } else {
        const size_t colon = text.rfind(':');
        if (colon == std::string::npos || colon == 0)
            return Status{
                Errc::kInvalidInput,
                fmt::format("--listen {}: expected HOST:PORT, e.g. 127.0.0.1:9402", text)};
        a.host = text.substr(0, colon);
        port = std::string_view(text).substr(colon + 1);
    }
    const auto p = parse_u64(port);
    if (!p || *p > 65535)
        return Status{Errc::kInvalidInput,
                      fmt::format("--listen {}: the port must be a number from 0 to 65535", text)};
    a.port = static_cast<int>(*p);
    return a;
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const ListenAddress& address,
                                                            Render metrics, Healthy healthy) {
    std::unique_ptr<MetricsServer> m(new MetricsServer());
    m->server_ = std::make_unique<httplib::Server>();
    httplib::Server& s = *m->server_;
    s.set_read_timeout(5, 0);
    s.set_write_timeout(5, 0);
    s.set_keep_alive_timeout(5);
    s.set_keep_alive_max_count(1000);
    // Headers and body go out in separate writes: without TCP_NODELAY, Nagle and the client's
    // delayed ACK hold the body back ~40 ms.
    s.set_tcp_nodelay(true);
    s.set_payload_max_length(4096);  // scrapes carry no body
    MetricsServer* self = m.get();
    s.Get("/metrics", [metrics, self](const httplib::Request&, httplib::Response& res) {
        const auto start = std::chrono::steady_clock::now();
        std::string body = metrics();
        PrometheusText t;
        t.family("trainrig_watch_http_requests_total", "counter",
                 "HTTP requests answered, by class of status (ok, error).");
        t.sample({{"status", "ok"}}, static_cast<double>(self->requests_ - self->bad_requests_));
        t.sample({{"status", "error"}}, static_cast<double>(self->bad_requests_));
        body += t.str();
        body += render_scrape_duration(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
    });
    s.Get("/healthz", [healthy](const httplib::Request&, httplib::Response& res) {
        const bool ok = healthy();
        res.status = ok ? 200 : 503;
        res.set_content(ok ? "ok\n" : "unhealthy: the last tick is stale or NVML fails\n",
                        "text/plain; charset=utf-8");
    });
    s.Get("/", [](const httplib::Request&, httplib::Response& res) {
        res.set_content("trainrig watch: /metrics, /healthz\n", "text/plain; charset=utf-8");
    });
    s.set_logger([self](const httplib::Request&, const httplib::Response& res) {
        ++self->requests_;
        if (res.status >= 400) ++self->bad_requests_;
    });
    // cpp-httplib's default sets SO_REUSEPORT, which lets a second watch bind the same port and
    // take half the scrapes. SO_REUSEADDR alone restarts on a port in TIME_WAIT and still
    // refuses a port another process listens on.
    s.set_socket_options([](int sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    if (address.port == 0) {
        m->port_ = s.bind_to_any_port(address.host);
        if (m->port_ <= 0)
            return Status{Errc::kIo,
                          fmt::format("cannot listen on {}: no free port", address.host)};
    } else {
        if (!s.bind_to_port(address.host, address.port))
            return Status{Errc::kIo,
                          fmt::format("cannot listen on {}:{}: the address is taken or not this "
                                      "machine's",
                                      address.host, address.port),
                          "pass another --listen HOST:PORT"};
        m->port_ = address.port;
    }
    m->thread_ = std::thread([self] { self->server_->listen_after_bind(); });
    return m;
}

MetricsServer::~MetricsServer() {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
}

}  // namespace trainrig::watch
