// The fleet report: what judge_fleet exposes for it (the heat map's cells, each measurement's
// spread, the node pairs), the pairs file, the HTML and Markdown renderers (a 1,000-node fleet
// stays small and aggregated) and the directory it is written to.
#include "fleet/fleet_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "fleet/fleet_judge.h"
#include "fleet/fleet_render.h"
#include "fleet/node_input.h"
#include "fleet/pair_input.h"
#include "fleet_builder.h"
#include "has_text.h"
#include "temp_dir_test.h"
#include "validate/report_dir.h"

namespace trainrig::fleet {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

size_t occurrences(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A fleet of n nodes with three faults: GPU 3 of the middle node 6 % slow, node 1 on another
// NCCL, node 2 unreadable.
std::vector<NodeInput> faulty_fleet(size_t n) {
    auto nodes = healthy_fleet(n, n);
    for (auto& m : nodes[n / 2].measurements)
        if (m.label == "gemm bf16" && m.device == "GPU 3") m.value *= 0.94;
    nodes[1].versions["nccl"] = "2.18.3";
    nodes[2].problem = "not a JSON document (truncated?)";
    nodes[2].verdict = "UNKNOWN";
    return nodes;
}

const NodeVerdict& node_named(const FleetResult& r, const std::string& name) {
    return *std::find_if(r.nodes.begin(), r.nodes.end(),
                         [&](const NodeVerdict& n) { return n.name == name; });
}

CheckCell cell_of(const FleetResult& r, const std::string& node, const std::string& check) {
    const auto c = std::find(r.checks.begin(), r.checks.end(), check);
    EXPECT_NE(c, r.checks.end()) << check;
    return node_named(r, node).cells[static_cast<size_t>(c - r.checks.begin())];
}

TEST(FleetReportModel, CellsSayHowEachNodeFaredOnEachCheckThatDiffers) {
    const auto r = judge_fleet(faulty_fleet(16));
    EXPECT_EQ(r.checks, (std::vector<std::string>{"verdict", "drift.nccl", "outlier.gemm.bf16"}));
    for (const auto& n : r.nodes) EXPECT_EQ(n.cells.size(), r.checks.size()) << n.name;
    EXPECT_EQ(cell_of(r, "node001", "drift.nccl").state, CheckState::kDrifted);
    EXPECT_EQ(cell_of(r, "node001", "drift.nccl").text, "2.18.3");
    EXPECT_EQ(cell_of(r, "node000", "drift.nccl").state, CheckState::kOk);
    EXPECT_EQ(cell_of(r, "node002", "verdict").state, CheckState::kUnknown);
    EXPECT_EQ(cell_of(r, "node002", "outlier.gemm.bf16").state, CheckState::kUnknown);
    const auto slow = cell_of(r, "node008", "outlier.gemm.bf16");
    EXPECT_EQ(slow.state, CheckState::kDrain);
    EXPECT_TRUE(std::regex_match(slow.text, std::regex(R"(-[56]\.\d % GPU 3)"))) << slow.text;
}

TEST(FleetReportModel, EachMeasurementKeepsItsValuesMedianAndOutliers) {
    const auto r = judge_fleet(faulty_fleet(16));
    ASSERT_EQ(r.measurements.size(), 4u);  // gemm, hbm, nccl, train: the unreadable node left out
    const auto gemm = std::find_if(r.measurements.begin(), r.measurements.end(),
                                   [](const auto& m) { return m.label == "gemm bf16"; });
    ASSERT_NE(gemm, r.measurements.end());
    EXPECT_TRUE(gemm->judged);
    EXPECT_EQ(gemm->nodes, 15u);
    EXPECT_EQ(gemm->values.size(), 15u * 8);
    EXPECT_NEAR(gemm->median, 7.0e14, 0.01 * 7.0e14);
    EXPECT_NEAR(gemm->allowed, 0.03 * gemm->median, 1e-6 * gemm->median);  // the 3 % floor
    ASSERT_EQ(gemm->flagged.size(), 1u);
    EXPECT_EQ(gemm->flagged[0].node, "node008");
    EXPECT_EQ(gemm->flagged[0].device, "GPU 3");
}

TEST(FleetReportModel, IdenticalRowsShareOneRowAndReadyNodesAreOne) {
    auto nodes = faulty_fleet(1000);
    for (size_t i : {100, 200, 300}) nodes[i].versions["nccl"] = "2.18.3";
    const auto r = judge_fleet(nodes);
    const auto rows = heat_rows(r);
    ASSERT_EQ(rows.size(), 4u);  // the slow GPU; the unreadable node; 4 drifted; 994 READY
    EXPECT_EQ(rows[0].state, NodeState::kDrain);
    EXPECT_EQ(rows[1].state, NodeState::kUnknown);
    EXPECT_EQ(rows[2].state, NodeState::kDrifted);
    EXPECT_EQ(rows[2].nodes.size(), 4u);
    EXPECT_EQ(rows[3].state, NodeState::kReady);
    EXPECT_EQ(rows[3].nodes.size(), 994u);
    EXPECT_EQ(row_cell(r, rows[2], 1).text, "2.18.3");  // the four share their value
}

// Pairs among `n` nodes, each value 40 GB/s within +-1 %, less the pairs of `bad` (at 10 GB/s).
std::vector<bench::PairResult> measured_pairs(const std::vector<bench::Round>& rounds, int bad) {
    std::vector<bench::PairResult> out;
    uint64_t seed = 11;
    for (const auto& round : rounds)
        for (const auto& p : round)
            out.push_back({p, (p.first == bad || p.second == bad ? 1e10 : 4e10) *
                                  (1 + 0.01 * noise(seed++))});
    return out;
}

TEST(FleetReportPairs, ANodeSlowWithEveryPartnerIsDrainedWithItsPairId) {
    const auto nodes = healthy_fleet(8, 5);
    FleetPairs pairs;
    pairs.label = "nccl all-reduce busbw";
    pairs.results = measured_pairs(bench::all_pairs_rounds(8), 5);
    const auto r = judge_fleet(nodes, {}, pairs);
    ASSERT_TRUE(r.pairs && r.pairs->judged);
    EXPECT_EQ(r.pairs->bad, std::vector<int>{5});
    EXPECT_TRUE(r.pairs->unresolved.empty());
    const auto& v = node_named(r, "node005");
    EXPECT_EQ(v.state, NodeState::kDrain);
    ASSERT_FALSE(v.reasons.empty());
    EXPECT_EQ(v.reasons[0], "pair.nccl.all-reduce.busbw slow with all 7 partners, 7 known good");
    EXPECT_EQ(scheduler_reason(v),
              "trainrig:pair.nccl.all-reduce.busbw slow with all 7 partners, 7 known good");
    EXPECT_EQ(r.count(NodeState::kDrain), 1u);
    EXPECT_EQ(cell_of(r, "node005", "pair.nccl.all-reduce.busbw").state, CheckState::kDrain);
    const auto doc = fleet_json(r);
    EXPECT_EQ(doc["pairs"]["bad"], json::array({"node005"}));
    EXPECT_EQ(doc["pairs"]["slow"].size(), 7u);
}

TEST(FleetReportPairs, ASlowPairOfTwoSuspectsIsUnknownUntilARetestSaysWhich) {
    const auto nodes = healthy_fleet(8, 6);
    FleetPairs pairs;
    // Four disjoint pairs and a chain: 0-1 slow and measured only with each other.
    pairs.results = {
        {{0, 1}, 1e10}, {{2, 3}, 4e10}, {{4, 5}, 4.02e10}, {{6, 7}, 3.98e10}, {{3, 4}, 4.01e10}};
    auto r = judge_fleet(nodes, {}, pairs);
    EXPECT_EQ(r.pairs->unresolved, (std::vector<int>{0, 1}));
    EXPECT_EQ(node_named(r, "node000").state, NodeState::kUnknown);
    EXPECT_EQ(r.exit_code(), 2);
    // Re-tested against good nodes: 0 is slow again, 1 runs at full speed.
    pairs.retests = {{{0, 2}, 1.1e10}, {{1, 3}, 4e10}};
    r = judge_fleet(nodes, {}, pairs);
    EXPECT_EQ(r.pairs->bad, std::vector<int>{0});
    EXPECT_TRUE(r.pairs->unresolved.empty());
    EXPECT_EQ(node_named(r, "node000").state, NodeState::kDrain);
    EXPECT_EQ(node_named(r, "node001").state, NodeState::kReady);
}

TEST(FleetReportPairs, WithoutPairsNothingChanges) {
    const auto nodes = faulty_fleet(16);
    const auto a = fleet_json(judge_fleet(nodes));
    EXPECT_FALSE(a.contains("pairs"));
    FleetPairs none;
    const auto b = fleet_json(judge_fleet(nodes, {}, none));
    EXPECT_EQ(a["nodes"], b["nodes"]);
    EXPECT_EQ(a["drain"], b["drain"]);
}

class FleetPairsFile : public test::TempDirTest {};

TEST_F(FleetPairsFile, NamesBecomeIndicesAndBadEntriesAreNamed) {
    const auto nodes = healthy_fleet(3, 7);
    json doc = {{"schema", "trainrig.fleet.pairs"},
                {"schema_version", 1},
                {"measurement", "nccl all-reduce busbw"},
                {"pairs", {{{"nodes", {"node002", "node000"}}, {"value", 4e10}}}}};
    const auto path = dir_ / "pairs.json";
    std::ofstream(path) << doc.dump();
    auto p = load_pairs(path.string(), nodes);
    ASSERT_TRUE(p.ok()) << p.status().message();
    ASSERT_EQ(p->results.size(), 1u);
    EXPECT_EQ(p->results[0].pair, (bench::NodePair{0, 2}));
    EXPECT_EQ(p->label, "nccl all-reduce busbw");
    EXPECT_EQ(p->unit, "bytes/s");
    auto refused = [&](json d, const char* words) {
        auto q = pairs_from_json(d, nodes, "p.json");
        ASSERT_FALSE(q.ok()) << d.dump();
        EXPECT_TRUE(has(q.status().message(), words)) << q.status().message();
    };
    json d = doc;
    d["pairs"][0]["nodes"][1] = "node099";
    refused(d, "pairs[0] names node099, which is not among the nodes judged");
    d = doc;
    d["pairs"][0]["nodes"][1] = "node002";
    refused(d, "pairs[0] names one node twice");
    d = doc;
    d["pairs"][0]["value"] = 0;
    refused(d, "pairs[0] has no positive \"value\"");
    d = doc;
    d["schema"] = "trainrig.fleet";
    refused(d, "neither a trainrig.fleet.pairs document nor `bench run nccl-pairs --json`");
    d = doc;
    d["schema_version"] = 2;
    refused(d, "schema_version");
    d = doc;
    d.erase("pairs");
    refused(d, "no \"pairs\"");
    std::ofstream(path) << "{\"schema\": ";
    EXPECT_TRUE(has(load_pairs(path.string(), nodes).status().message(), "not a JSON document"));
}

TEST(FleetPairsBench, NcclPairsRecordsArePairsAndRetests) {
    const auto nodes = healthy_fleet(3, 9);
    auto record = [](const char* a, const char* b, double v, bool retest, bool failed) {
        return json{{"bench", "nccl-pairs"},
                    {"name", "all_reduce"},
                    {"unit", "bytes/s"},
                    {"samples", {v, v}},
                    {"params", {{"nodes", {a, b}}, {"retest", retest}}},
                    {"counted", {{"slow", false}, {"failed", failed}}}};
    };
    const json doc = {
        {"schema", "trainrig.bench"},
        {"results",
         {record("node000", "node001", 4e10, false, false),
          record("node001", "node002", 1e10, false, false),
          record("node000", "node002", 0.5, false, true),  // failed: not a measurement
          record("node002", "node000", 1.1e10, true, false),
          {{"bench", "nccl-pairs"}, {"name", "bad_nodes"}, {"unit", "nodes"}, {"samples", {1}}}}}};
    auto p = pairs_from_json(doc, nodes, "pairs.json");
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->label, "nccl-pairs all_reduce busbw");
    ASSERT_EQ(p->results.size(), 2u);
    EXPECT_EQ(p->results[1].pair, (bench::NodePair{1, 2}));
    EXPECT_DOUBLE_EQ(p->results[1].value, 1e10);
    ASSERT_EQ(p->retests.size(), 1u);
    EXPECT_EQ(p->retests[0].pair, (bench::NodePair{0, 2}));
}

TEST(FleetReportHtml, AThousandNodesStayOnASmallSelfContainedPage) {
    auto nodes = faulty_fleet(1000);
    const auto r = judge_fleet(nodes);
    const std::string html = render_fleet_html(r);
    EXPECT_LT(html.size(), 400u * 1024) << "the page grows with the fleet";
    EXPECT_TRUE(has(html, "Content-Security-Policy"));
    EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)\s*=\s*"?(https?:)?//)")));
    EXPECT_TRUE(has(html, "FLEET: 997 READY, 1 to drain, 1 drifted, 1 unknown (1000 nodes)"));
    // The heat map: three nodes to act on, one row for the 997 READY.
    const auto heat = html.substr(html.find("<table class=\"heat\">"));
    EXPECT_EQ(occurrences(heat.substr(0, heat.find("</table>")), "<tr class=\"f\">"), 4u);
    EXPECT_TRUE(has(heat, "<summary>997 nodes</summary>"));
    // The drain list names the node and the reason a scheduler gets.
    EXPECT_TRUE(has(html,
                    "<td><code>node500</code></td><td><code>trainrig:outlier.gemm.bf16 GPU "
                    "3</code></td>"));
    // A plot per measurement, its outlier marked; READY nodes folded; the filter box.
    EXPECT_EQ(occurrences(html, "<div class=\"plot f\""), 4u);
    EXPECT_EQ(occurrences(html, "<circle class=\"flagged\""), 1u);
    EXPECT_TRUE(has(html, "<details class=\"fold\"><summary>997 READY nodes</summary>"));
    EXPECT_TRUE(has(html, "<input id=\"filter\" hidden"));
    EXPECT_EQ(occurrences(html, "<tr class=\"f node\">"), 1000u);  // every node, for the search
}

TEST(FleetReportHtml, PairsDrawTheirMatrix) {
    const auto nodes = healthy_fleet(8, 8);
    FleetPairs pairs;
    pairs.source = "pairs.json";
    pairs.results = measured_pairs(bench::all_pairs_rounds(8), 2);
    const std::string html = render_fleet_html(judge_fleet(nodes, {}, pairs));
    EXPECT_TRUE(has(html, "<h2 id=\"pairs\">Node pairs: pair busbw</h2>"));
    EXPECT_EQ(occurrences(html, "<rect class=\"slow\""), 2u * 7);  // both halves of the matrix
    EXPECT_EQ(occurrences(html, "<rect class=\"fast\""), 2u * 21);
    EXPECT_TRUE(has(html, "<title>node002 - node003: ")) << "a slow pair's value";
}

TEST(FleetReportMarkdown, TheSameContentWithoutPlots) {
    auto nodes = faulty_fleet(8);
    const std::string md = render_fleet_markdown(judge_fleet(nodes));
    EXPECT_FALSE(has(md, "<svg"));
    EXPECT_TRUE(md.starts_with("# FLEET: 5 READY, 1 to drain, 1 drifted, 1 unknown (8 nodes)\n"))
        << md;
    for (const char* section : {"## Drain list", "## Nodes × checks", "## Findings",
                                "## Measurements across the fleet", "## Every node"})
        EXPECT_TRUE(has(md, section)) << section;
    EXPECT_TRUE(
        has(md, "| `node004` | `trainrig:outlier.gemm.bf16 GPU 3` | outlier.gemm.bf16 GPU 3 |"))
        << md;
    EXPECT_TRUE(has(md, "| node001 | DRIFTED | · | ~ 2.18.3 | · |")) << md;
    EXPECT_TRUE(
        has(md, "| 5 nodes: node000, node003, node005, node006, node007 | READY | · | · | · |"))
        << md;
    EXPECT_TRUE(has(md, "READY (5): node000, node003, node005, node006, node007\n")) << md;
}

class FleetReportDir : public test::TempDirTest {
protected:
    FleetResult result_ = judge_fleet(faulty_fleet(8));
};

TEST_F(FleetReportDir, ANewDirectoryIsWrittenWholeWithItsChecksums) {
    const auto out = dir_ / "fleet";
    ASSERT_TRUE(write_fleet_report(result_, out).ok());
    for (const char* f : {"fleet-report.json", "fleet-report.md", "fleet-report.html"})
        EXPECT_TRUE(fs::is_regular_file(out / f)) << f;
    const auto verified = validate::verify_report_dir(out);
    ASSERT_TRUE(verified.ok());
    EXPECT_TRUE(verified->intact());
    const json doc = json::parse(read_text(out / "fleet-report.json"));
    EXPECT_EQ(doc["schema"], "trainrig.fleet");
    EXPECT_EQ(doc["command"], "fleet judge");
    EXPECT_EQ(doc["exit_code"], 2);  // node002 could not be read: that wins over draining
    EXPECT_EQ(doc["drain"][0]["scheduler_reason"], "trainrig:outlier.gemm.bf16 GPU 3");
    // Beside it, nothing but the directory itself.
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(FleetReportDir, AnExistingDirectoryKeepsItsOtherFiles) {
    std::ofstream(dir_ / "notes.txt") << "keep me";
    std::ofstream(dir_ / "fleet-report.md") << "an older report";
    ASSERT_TRUE(write_fleet_report(result_, dir_, "validate").ok());
    EXPECT_EQ(read_text(dir_ / "notes.txt"), "keep me");
    EXPECT_TRUE(read_text(dir_ / "fleet-report.md").starts_with("# FLEET:"));
    EXPECT_EQ(json::parse(read_text(dir_ / "fleet-report.json"))["command"], "validate");
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"fleet-report.html", "fleet-report.json",
                                               "fleet-report.md", "notes.txt"}));
    // And a fleet judged from this folder does not count its report as a node.
    EXPECT_TRUE(load_nodes({dir_.string()}).empty());
}

TEST_F(FleetReportDir, AFailureLeavesTheOldReportAsItWas) {
    std::ofstream(dir_ / "fleet-report.json") << "old";
    fs::create_directories(dir_ / "fleet-report.html" / "inside");
    const auto s = write_fleet_report(result_, dir_);
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(has(s.message(), "no report was written")) << s.message();
    EXPECT_EQ(read_text(dir_ / "fleet-report.json"), "old");
    EXPECT_FALSE(fs::exists(dir_ / "fleet-report.md"));
    std::ofstream(dir_ / "plain") << "a file";
    EXPECT_FALSE(write_fleet_report(result_, dir_ / "plain").ok());
    EXPECT_EQ(read_text(dir_ / "plain"), "a file");
}

}  // namespace
}  // namespace trainrig::fleet
