// Delivering alerts: a log line, a command with the alert on its stdin, a webhook; and the
// bounds that keep a hung command or webhook from holding watch up.
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "temp_dir_test.h"
#include "watch/alert_actions.h"

namespace trainrig::watch {
namespace {

namespace fs = std::filesystem;

class Actions : public test::TempDirTest {
protected:
    void SetUp() override {
        TempDirTest::SetUp();
        alert_.rule = "gpu-lost";
        alert_.severity = Severity::kCritical;
        alert_.gpu = 3;
        alert_.uuid = "GPU-3";
        alert_.since = alert_.at = 1000;
        alert_.summary = "GPU 3 (GPU-3) is lost: \"quoted\"";
        alert_.remedy = "power-cycle the node";
    }
    std::string slurp(const fs::path& p) {
        std::ifstream in(p);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
    Alert alert_;
};

TEST_F(Actions, LogAppendsOneJsonLinePerAlert) {
    ActionSpec log;
    log.path = (dir_ / "alerts.jsonl").string();
    ASSERT_TRUE(deliver(log, alert_json(alert_)).ok());
    alert_.firing = false;
    ASSERT_TRUE(deliver(log, alert_json(alert_)).ok());
    std::ifstream in(log.path);
    std::string line;
    std::vector<nlohmann::json> lines;
    while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0]["state"], "firing");
    EXPECT_EQ(lines[0]["gpu"], 3);
    EXPECT_EQ(lines[0]["summary"], "GPU 3 (GPU-3) is lost: \"quoted\"");
    EXPECT_EQ(lines[1]["state"], "resolved");
}

TEST_F(Actions, LogToAFolderThatIsNotThereFailsNamingIt) {
    ActionSpec log;
    log.path = (dir_ / "no" / "alerts.jsonl").string();
    const Status s = deliver(log, "{}");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("alerts.jsonl"), std::string::npos);
}

TEST_F(Actions, CommandGetsTheAlertOnStdinWithoutAShell) {
    ActionSpec cmd;
    cmd.kind = ActionSpec::Kind::kCommand;
    const std::string out = (dir_ / "got.json").string();
    cmd.argv = {"/bin/sh", "-c", "cat > \"$0\"", out};  // the shell is the command here
    ASSERT_TRUE(deliver(cmd, alert_json(alert_)).ok());
    const auto j = nlohmann::json::parse(slurp(out));
    EXPECT_EQ(j["rule"], "gpu-lost");
    cmd.argv = {"/bin/false"};
    const Status failed = deliver(cmd, "{}");
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.message().find("/bin/false exited with 1"), std::string::npos);
    cmd.argv = {(dir_ / "absent").string()};
    EXPECT_FALSE(deliver(cmd, "{}").ok());
}

// A command that exits without reading its stdin must not take the daemon down with SIGPIPE:
// with more than a pipe's buffer to write, the write surely meets the closed pipe.
TEST_F(Actions, CommandThatDoesNotReadItsStdinIsNoSigpipe) {
    ActionSpec cmd;
    cmd.kind = ActionSpec::Kind::kCommand;
    cmd.argv = {"/bin/true"};
    EXPECT_TRUE(deliver(cmd, std::string(1 << 20, 'x')).ok());
    sigset_t pending;
    sigpending(&pending);
    EXPECT_FALSE(sigismember(&pending, SIGPIPE));
}

TEST_F(Actions, CommandThatHangsIsKilledAtItsTimeout) {
    ActionSpec cmd;
    cmd.kind = ActionSpec::Kind::kCommand;
    cmd.argv = {"/bin/sleep", "60"};
    cmd.timeout_seconds = 0.2;
    const auto start = std::chrono::steady_clock::now();
    const Status s = deliver(cmd, "{}");
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("did not finish within 0.2 s"), std::string::npos);
    EXPECT_LT(took, 5);
}

TEST_F(Actions, WebhookPostsTheAlert) {
    httplib::Server server;
    std::string body;
    server.Post("/hook", [&](const httplib::Request& req, httplib::Response& res) {
        body = req.body;
        res.status = 204;
    });
    const int port = server.bind_to_any_port("127.0.0.1");
    std::thread t([&] { server.listen_after_bind(); });
    ActionSpec hook;
    hook.kind = ActionSpec::Kind::kWebhook;
    hook.url = "http://127.0.0.1:" + std::to_string(port) + "/hook";
    const Status s = deliver(hook, alert_json(alert_));
    server.stop();
    t.join();
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(nlohmann::json::parse(body)["uuid"], "GPU-3");
    hook.url = "http://127.0.0.1:" + std::to_string(port) + "/hook";  // now nobody listens
    EXPECT_FALSE(deliver(hook, "{}").ok());
}

TEST_F(Actions, WebhookThatNeverAnswersIsBounded) {
    // A socket that accepts connections (the kernel's backlog) but never reads or answers.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(fd, 4), 0);
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
    ActionSpec hook;
    hook.kind = ActionSpec::Kind::kWebhook;
    hook.url = "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/hook";
    hook.timeout_seconds = 0.3;
    const auto start = std::chrono::steady_clock::now();
    const Status s = deliver(hook, alert_json(alert_));
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ::close(fd);
    EXPECT_FALSE(s.ok());
    EXPECT_LT(took, 3);
}

TEST_F(Actions, DispatcherDeliversInOrderOffTheCallersThread) {
    ActionSpec log;
    log.path = (dir_ / "alerts.jsonl").string();
    {
        AlertDispatcher d({log});
        for (int i = 0; i < 50; ++i) {
            alert_.count = static_cast<uint64_t>(i);
            d.send(alert_);
        }
    }  // the destructor delivers what is queued
    std::ifstream in(log.path);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) EXPECT_EQ(nlohmann::json::parse(line)["count"], n++);
    EXPECT_EQ(n, 50);
}

}  // namespace
}  // namespace trainrig::watch
