// `trainrig topo` as users run it on the fixture machines: a VM whose only device is a virtio
// NIC, and a server with a lost GPU.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_binary.h"

// Named, so that the helpers do not meet other tests' in a unity build.
namespace trainrig::test::topo_cli {
namespace {

std::string nvml_fixture(const std::string& name) {
    return std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/nvml/" + name;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

// The line that starts with `start`, or "" when there is none.
std::string line_starting(const std::string& text, const std::string& start) {
    for (const auto& line : lines_of(text))
        if (line.starts_with(start)) return line;
    return "";
}

const char* const kUnknownLegend = "  ?    = not known";

TEST(TopoCli, VirtioNicOfAVmHasItsInterfaceCpusAndNuma) {
    auto r = run_trainrig("topo --root " + fixture("cpu-only"));
    ASSERT_EQ(r.rc, 0) << r.err;
    // Its interface is below virtio0/, not in the function's own net/.
    EXPECT_NE(r.out.find("  NIC0: 0000:00:03.0 ens3\n"), std::string::npos) << r.out;
    // The NIC row carries its CPUs and (unknown, -1) NUMA node, as a GPU row does.
    const std::string row = line_starting(r.out, "NIC0 ");
    EXPECT_NE(row.find("X"), std::string::npos) << r.out;
    EXPECT_NE(row.find("0-15"), std::string::npos) << r.out;
    EXPECT_TRUE(row.ends_with("N/A")) << row;
    // No GPU: said, not left blank; no cell is unknown, so no `?` legend.
    EXPECT_NE(r.out.find("information without the driver):\n  none\n"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(kUnknownLegend), std::string::npos) << r.out;

    auto j = run_trainrig("topo --json --root " + fixture("cpu-only"));
    ASSERT_EQ(j.rc, 0) << j.err;
    const auto doc = nlohmann::json::parse(j.out);
    ASSERT_EQ(doc["nics"].size(), 1u);
    EXPECT_EQ(doc["nics"][0]["model"], "ens3");
    EXPECT_EQ(doc["nics"][0]["cpus"], "0-15");
    EXPECT_EQ(doc["nics"][0]["numa"], "N/A");
}

TEST(TopoCli, LostGpuCellsAreExplainedInTheLegend) {
    auto r = run_trainrig("topo --root " + fixture("article-box"),
                          "TRAINRIG_FAKE_NVML=" + nvml_fixture("article-box.json"));
    ASSERT_EQ(r.rc, 0) << r.err;
    // GPU 1 is lost: NVML gives no bus id, so its paths are `?`, and the legend says why.
    const std::string row = line_starting(r.out, "GPU1 ");
    EXPECT_NE(row.find("?"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(kUnknownLegend), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("lost GPU"), std::string::npos) << r.out;
}

TEST(TopoCli, LostGpuFaultFixtureOnAVmShowsTheLegendToo) {
    auto r = run_trainrig("topo --root " + fixture("cpu-only"),
                          "TRAINRIG_FAKE_NVML=" + nvml_fixture("faults/lost-gpu.json"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find(kUnknownLegend), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("  none\n"), std::string::npos) << r.out;  // NVML lists two GPUs
}

}  // namespace
}  // namespace trainrig::test::topo_cli
