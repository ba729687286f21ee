// validate's micro-batch stage without a child or a GPU: how each ending of the child reads,
// the measurements a find_batch document becomes, and what the stage and verdict make of them.
#include "validate/stages/batch_probe_stage.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "has_text.h"

namespace trainrig::validate {
namespace {

using nlohmann::json;

json probe_doc(const std::string& answer) {
    json sizes = json::array();
    sizes.push_back({{"batch", 64},
                     {"verdict", "fits"},
                     {"peak_bytes", 40e9},
                     {"estimate_bytes", 38e9},
                     {"peak_over_estimate", 40.0 / 38},
                     {"tokens_per_s", 350000.0}});
    sizes.push_back({{"batch", 128},
                     {"verdict", "oom"},
                     {"peak_bytes", nullptr},
                     {"estimate_bytes", 75e9},
                     {"peak_over_estimate", nullptr},
                     {"tokens_per_s", nullptr},
                     {"why", "cudaMalloc(&p, bytes): out of memory (device_memory.h:71)"}});
    return {{"schema", "trainrig.train.find_batch"},
            {"answer", answer},
            {"micro_batch", answer == "found" ? json(64) : json(nullptr)},
            {"bound_reached", false},
            {"error", answer == "error" ? json("batch 64: the GPU fell off the bus") : json()},
            {"model", {{"name", "gpt2"}}},
            {"seq", 1024},
            {"capacity_bytes", 80e9},
            {"headroom", 0.1},
            {"estimate", {{"source", "plan's memory model: bf16 (fp32 gradients)"}}},
            {"sizes", sizes}};
}

SupervisedRun finished(const json& doc, int rc) {
    SupervisedRun r;
    r.output.exit_code = rc;
    r.output.out = doc.dump();
    return r;
}

TEST(BatchProbeStage, RunsTheReferenceShapeOnTheDeviceBackend) {
    const auto a = batch_probe_args();
    const std::string line = [&] {
        std::string s;
        for (const auto& w : a) s += w + " ";
        return s;
    }();
    EXPECT_TRUE(has(line, "train --find-batch --backend cuda --model gpt2 --seq 1024 --json"))
        << line;
}

TEST(BatchProbeStage, EachEndingOfTheChildReads) {
    EXPECT_EQ(read_batch_probe_child(finished(probe_doc("found"), 0)).end, StageEnd::kFinished);
    // Nothing fits (exit 1) and an error (exit 2) still came with the document.
    EXPECT_EQ(read_batch_probe_child(finished(probe_doc("nothing_fits"), 1)).end,
              StageEnd::kFinished);
    SupervisedRun crashed;
    crashed.output.signal = SIGSEGV;
    crashed.output.err = "something\nlast words here\n";
    const auto c = read_batch_probe_child(crashed);
    EXPECT_EQ(c.end, StageEnd::kCrashed);
    EXPECT_TRUE(has(c.detail, "SIGSEGV")) << c.detail;
    EXPECT_TRUE(has(c.detail, "last words here")) << c.detail;
    SupervisedRun refused;
    refused.output.exit_code = 2;
    refused.output.err = "trainrig train: the cuda backend is not available.\n";
    const auto f = read_batch_probe_child(refused);
    EXPECT_EQ(f.end, StageEnd::kFailed);
    EXPECT_TRUE(has(f.detail, "exited 2 without a result: trainrig train: the cuda backend"));
    SupervisedRun slow = finished(probe_doc("interrupted"), 143);
    slow.timed_out = true;
    slow.output.signal = 0;
    EXPECT_EQ(read_batch_probe_child(slow).end, StageEnd::kTimedOut);
    SupervisedRun hung;
    hung.killed = true;
    EXPECT_EQ(read_batch_probe_child(hung).end, StageEnd::kHung);
    EXPECT_EQ(read_batch_probe_child(Status(Errc::kNotFound, "no trainrig")).end,
              StageEnd::kFailed);
}

TEST(BatchProbeStage, EverySizeThatRanIsTwoMeasurementsAndTheAnswerOneMore) {
    const auto records = batch_probe_records(probe_doc("found"), 0);
    ASSERT_EQ(records.size(), 3u);  // 64: peak and tokens/s; 128 did not run; the answer
    EXPECT_EQ(records[0].bench, "batch-probe");
    EXPECT_EQ(records[0].name, "peak-memory");
    EXPECT_EQ(records[0].unit, "bytes");
    EXPECT_EQ(records[0].samples, std::vector<double>{40e9});
    EXPECT_EQ(records[0].params["estimate_bytes"], 38e9);
    EXPECT_EQ(records[0].params["batch"], 64);
    EXPECT_EQ(records[0].target["gpu"], 0);
    EXPECT_FALSE(records[0].expected);  // a measurement, not judged
    EXPECT_TRUE(has(records[0].no_expectation, "plan's memory model"));
    EXPECT_EQ(records[1].name, "tokens-per-s");
    EXPECT_EQ(records[1].samples, std::vector<double>{350000.0});
    EXPECT_EQ(records[2].name, "micro-batch");
    EXPECT_EQ(records[2].samples, std::vector<double>{64});
    EXPECT_TRUE(batch_probe_records(json(), 0).empty());
}

TEST(BatchProbeStage, TheStageStateAndItemsFollowTheAnswer) {
    const StageLimits limits{240, 30};
    auto apply = [&](const BatchProbeOutcome& b, std::vector<Item>& items, bench::BenchRun& run,
                     std::string& hung) {
        StageRecord s{"batch-probe", "the largest micro-batch", 60, 0, StageState::kSkipped, "", false};
        apply_batch_probe(s, b, limits, run, items, hung);
        return s;
    };
    {
        std::vector<Item> items;
        bench::BenchRun run;
        std::string hung;
        const StageRecord s = apply({StageEnd::kFinished, probe_doc("found"), ""}, items, run, hung);
        EXPECT_EQ(s.state, StageState::kRan);
        EXPECT_TRUE(items.empty());
        EXPECT_EQ(run.records.size(), 3u);
    }
    {
        std::vector<Item> items;
        bench::BenchRun run;
        std::string hung;
        const StageRecord s =
            apply({StageEnd::kFinished, probe_doc("nothing_fits"), ""}, items, run, hung);
        EXPECT_EQ(s.state, StageState::kRan);
        ASSERT_EQ(items.size(), 1u);
        EXPECT_EQ(items[0].level, Level::kWarn);
        EXPECT_EQ(items[0].id, "bench.batch-probe.micro-batch");
    }
    {
        std::vector<Item> items;
        bench::BenchRun run;
        std::string hung;
        const StageRecord s = apply({StageEnd::kFinished, probe_doc("error"), ""}, items, run, hung);
        EXPECT_EQ(s.state, StageState::kCouldNotRun);
        EXPECT_TRUE(has(s.reason, "fell off the bus")) << s.reason;
        ASSERT_EQ(items.size(), 1u);
        EXPECT_EQ(items[0].level, Level::kUnknown);
        EXPECT_EQ(items[0].id, "stage.batch-probe");
    }
    {
        // A size whose trial the probe killed for making no progress: the GPU may be hung.
        json doc = probe_doc("error");
        doc["error"] =
            "batch 128: did not finish: no return from step 1 of 3 within 300 s; its processes "
            "were killed";
        doc["sizes"][1]["verdict"] = "did_not_finish";
        std::vector<Item> items;
        bench::BenchRun run;
        std::string hung;
        const StageRecord s = apply({StageEnd::kFinished, doc, ""}, items, run, hung);
        EXPECT_EQ(s.state, StageState::kCouldNotRun);
        EXPECT_TRUE(has(s.reason, "batch 128: did not finish")) << s.reason;
        EXPECT_TRUE(hung.empty());  // the probe itself stopped; its trial's processes are gone
        ASSERT_EQ(items.size(), 1u);
        EXPECT_TRUE(has(items[0].action, "kmsg.xid")) << items[0].action;
        EXPECT_EQ(run.records.size(), 2u);  // the size that ran is still measured
        // An error of another kind points at the re-run alone.
        items.clear();
        apply({StageEnd::kFinished, probe_doc("error"), ""}, items, run, hung);
        ASSERT_EQ(items.size(), 1u);
        EXPECT_FALSE(has(items[0].action, "kmsg.xid")) << items[0].action;
    }
    {
        std::vector<Item> items;
        bench::BenchRun run;
        std::string hung;
        const StageRecord s = apply({StageEnd::kHung, json(), ""}, items, run, hung);
        EXPECT_EQ(s.state, StageState::kCouldNotRun);
        EXPECT_EQ(hung, "batch-probe");
        EXPECT_TRUE(has(s.reason, "hung")) << s.reason;
        ASSERT_EQ(items.size(), 1u);
        EXPECT_TRUE(has(items[0].action, "kmsg.xid"));
    }
}

}  // namespace
}  // namespace trainrig::validate
