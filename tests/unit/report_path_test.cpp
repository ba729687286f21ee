// Placeholders in --report and --fleet-report (validate/report_path.h): expanded by each node, so
// one command line on many nodes writes one directory per node.
#include "validate/report_path.h"

#include <gtest/gtest.h>

namespace trainrig::validate {
namespace {

// 2026-12-07 10:15:00 UTC.
constexpr std::time_t kMorning = 1796638500;

std::string expand(const std::string& pattern, const PathFacts& f = {"node07", 5, kMorning}) {
    auto r = expand_report_path(pattern, f, "--report");
    return r.ok() ? *r : "error: " + r.status().message();
}

TEST(ReportPath, EveryPlaceholder) {
    EXPECT_EQ(expand("/shared/fleet/{host}"), "/shared/fleet/node07");
    EXPECT_EQ(expand("r/{host}-{rank}-{time}"), "r/node07-5-20261207T101500Z");
    EXPECT_EQ(expand("{host}{host}"), "node07node07");
    EXPECT_EQ(expand("plain/dir"), "plain/dir");
    EXPECT_EQ(expand("lit/{{host}}"), "lit/{host}");
}

TEST(ReportPath, MistakesAreRefusedWithTheirPlace) {
    EXPECT_EQ(expand("/x/{hots}"), "error: --report /x/{hots}: unknown placeholder {hots}");
    EXPECT_EQ(expand("/x/{host"), "error: --report /x/{host: a '{' is never closed");
    EXPECT_EQ(expand("/x/host}"), "error: --report /x/host}: a '}' closes no placeholder");
    EXPECT_EQ(expand("/x/{}"), "error: --report /x/{}: unknown placeholder {}");
    EXPECT_FALSE(check_report_path("/x/{rnak}", "--fleet-report").ok());
    EXPECT_TRUE(check_report_path("/x/{host}/{rank}", "--fleet-report").ok());
}

TEST(ReportPath, AHostNameThatCannotNameADirectory) {
    for (const char* host : {"", "..", "a/b"})
        EXPECT_NE(expand("/r/{host}", {host, 0, kMorning}).find("cannot name a directory"),
                  std::string::npos)
            << host;
    // Without {host} the host name does not matter.
    EXPECT_EQ(expand("/r/{rank}", {"", 2, kMorning}), "/r/2");
}

}  // namespace
}  // namespace trainrig::validate
