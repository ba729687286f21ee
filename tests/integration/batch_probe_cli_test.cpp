// `trainrig train --find-batch` as a user runs it: the CPU probe under two memory limits (the
// answer grows with the limit), a limit too small for anything (exit 1, an answer, no crash),
// the device probe through the stand-in plugin (each size in a process of its own: an
// out-of-memory left behind, a kernel fault, a hung trial), the training command line taken as
// it is, and bad values refused.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "run_binary.h"

namespace trainrig::test {
namespace {

using json = nlohmann::json;

const std::string kProbe =
    "train --find-batch --model tiny --seq 32 --max-batch 64 --probe-steps 2 --threads 1 ";

json parse(const RunResult& r) {
    json doc = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out.substr(0, 400) << "\n" << r.err;
    return doc;
}

TEST(BatchProbeCli, TheAnswerGrowsWithTheLimitAndEverySizeIsRecorded) {
    const RunResult small = run_trainrig(kProbe + "--mem-limit 96M --json");
    ASSERT_EQ(small.rc, 0) << small.err;
    const RunResult large = run_trainrig(kProbe + "--mem-limit 160M --json");
    ASSERT_EQ(large.rc, 0) << large.err;
    const json a = parse(small), b = parse(large);
    EXPECT_EQ(a["schema"], "trainrig.train.find_batch");
    EXPECT_EQ(a["command"], "train");
    EXPECT_EQ(a["exit_code"], 0);
    EXPECT_EQ(a["answer"], "found");
    EXPECT_EQ(a["capacity_bytes"], 96u << 20);
    EXPECT_EQ(a["capacity_source"], "--mem-limit");
    ASSERT_TRUE(a["micro_batch"].is_number_integer());
    ASSERT_TRUE(b["micro_batch"].is_number_integer());
    EXPECT_GT(b["micro_batch"].get<int>(), a["micro_batch"].get<int>());
    for (const json* doc : {&a, &b}) {
        bool chosen_fits = false;
        for (const auto& s : (*doc)["sizes"]) {
            EXPECT_TRUE(s["estimate_bytes"].is_number()) << s;
            if (s["verdict"] == "fits" || s["verdict"] == "over_headroom") {
                EXPECT_GT(s["peak_bytes"].get<double>(), 0) << s;
                EXPECT_GT(s["tokens_per_s"].get<double>(), 0) << s;
                EXPECT_TRUE(s["peak_over_estimate"].is_number()) << s;
            }
            if (s["batch"] == (*doc)["micro_batch"]) chosen_fits = s["verdict"] == "fits";
        }
        EXPECT_TRUE(chosen_fits) << *doc;
    }
}

TEST(BatchProbeCli, ALimitTooSmallForAnythingIsAnAnswerNotACrash) {
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer's own allocator maps its memory outside malloc and aborts when a data
    // limit refuses it, so an out-of-memory cannot be an answer in a sanitized build.
    GTEST_SKIP() << "an RLIMIT_DATA out-of-memory aborts AddressSanitizer's allocator";
#endif
    const RunResult r = run_trainrig(kProbe + "--mem-limit 16M --json");
    ASSERT_EQ(r.rc, 1) << r.err;
    const json doc = parse(r);
    EXPECT_EQ(doc["answer"], "nothing_fits");
    EXPECT_TRUE(doc["micro_batch"].is_null());
    EXPECT_EQ(doc["exit_code"], 1);
    ASSERT_FALSE(doc["sizes"].empty());
    EXPECT_EQ(doc["sizes"].back()["batch"], 1);
    EXPECT_EQ(doc["sizes"].back()["verdict"], "oom");
    // The table says it in words.
    const RunResult text = run_trainrig(kProbe + "--mem-limit 16M");
    EXPECT_EQ(text.rc, 1);
    EXPECT_NE(text.out.find("nothing fits: even one sequence of 32 tokens"), std::string::npos)
        << text.out;
}

// The stand-in device: sizes above 3 run out of memory, 8 GiB free. The search then tries 64,
// 32, 16, 8 and 4 (out of memory), 2 and 3 (fit).
const std::string kFakeDevice = std::string("TRAINRIG_TRAIN_PLUGIN=") + TRAINRIG_FAKE_TRAIN_LIB +
                                " FAKE_TRAIN_OOM_ABOVE_BATCH=3 FAKE_TRAIN_FREE_BYTES=8589934592";

TEST(BatchProbeCli, TheDeviceProbeRunsThroughThePlugin) {
    const std::string env = kFakeDevice;
    const RunResult r = run_trainrig(kProbe + "--backend cuda --json", env);
    ASSERT_EQ(r.rc, 0) << r.err;
    const json doc = parse(r);
    EXPECT_EQ(doc["micro_batch"], 3);
    EXPECT_EQ(doc["device"], "trainrig fake device");
    EXPECT_EQ(doc["capacity_source"], "free device memory");
    EXPECT_EQ(doc["estimate"]["precision"], "bf16");
    EXPECT_EQ(doc["sizes"][0]["verdict"], "oom");
}

// The stand-in leaves each out-of-memory's error for the next forward of the same process, as a
// runtime whose last error was not cleared would: in one process 2 and 3 would read as out of
// memory too. Each size runs in a process of its own, so they fit.
TEST(BatchProbeCli, EachDeviceSizeRunsInAProcessOfItsOwn) {
    const RunResult r =
        run_trainrig(kProbe + "--backend cuda --json", kFakeDevice + " FAKE_TRAIN_STALE_OOM=1");
    ASSERT_EQ(r.rc, 0) << r.err;
    const json doc = parse(r);
    EXPECT_EQ(doc["micro_batch"], 3);
    for (const auto& s : doc["sizes"])
        EXPECT_EQ(s["verdict"], s["batch"].get<int>() <= 3 ? "fits" : "oom") << s;
}

// A kernel fault is an error for its size, not out of memory: the search stops there.
TEST(BatchProbeCli, AKernelFaultIsAnErrorNotOutOfMemory) {
    const RunResult r = run_trainrig(kProbe + "--backend cuda --json",
                                     kFakeDevice + " FAKE_TRAIN_FAULT_AT_BATCH=2");
    ASSERT_EQ(r.rc, 2) << r.err;
    const json doc = parse(r);
    EXPECT_EQ(doc["answer"], "error");
    const json& last = doc["sizes"].back();
    EXPECT_EQ(last["batch"], 2);
    EXPECT_EQ(last["verdict"], "error");
    EXPECT_NE(last["why"].get<std::string>().find("an illegal memory access"), std::string::npos)
        << last;
}

// Whether a process is gone: absent, or a zombie once killed (only a wait remains).
bool process_gone(int pid) {
    if (::kill(pid, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const size_t paren = line.rfind(')');
    return paren == std::string::npos || line.compare(paren, 3, ") Z") == 0;
}

// A size whose trial hangs (the stand-in's forward never returns, and it has started a second
// process) is killed with its process group at --trial-timeout, counted as "did not finish"
// (not as out of memory, not as fitting), and the search stops there with exit 2.
TEST(BatchProbeCli, AHungDeviceTrialIsKilledAndDidNotFinish) {
    const std::string pids = ::testing::TempDir() + "find_batch_hang_pids";
    std::remove(pids.c_str());
    const auto start = std::chrono::steady_clock::now();
    const RunResult r =
        run_trainrig(kProbe + "--backend cuda --trial-timeout 3 --json",
                     kFakeDevice + " FAKE_TRAIN_HANG_AT_BATCH=2 FAKE_TRAIN_HANG_PIDS=" + pids);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
    ASSERT_EQ(r.rc, 2) << r.err;
    const json doc = parse(r);
    EXPECT_EQ(doc["answer"], "error");
    EXPECT_TRUE(doc["micro_batch"].is_null());
    const json& last = doc["sizes"].back();
    EXPECT_EQ(last["batch"], 2);
    EXPECT_EQ(last["verdict"], "did_not_finish");
    EXPECT_TRUE(last["peak_bytes"].is_null());
    // 3 s: the child opens the device and builds the model first, in time even when sanitized.
    const std::string why = "no return from step 1 of 2 within 3 s; its processes were killed";
    EXPECT_EQ(last["why"], why);
    EXPECT_EQ(doc["error"], "batch 2: did not finish: " + why);
    EXPECT_NE(r.err.find("the micro-batch search stopped at batch 2: did not finish"),
              std::string::npos)
        << r.err;
    std::ifstream in(pids);
    int trial = 0, grandchild = 0;
    ASSERT_TRUE(in >> trial >> grandchild) << pids;
    for (int i = 0; i < 200 && !(process_gone(trial) && process_gone(grandchild)); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(process_gone(trial));
    EXPECT_TRUE(process_gone(grandchild));
    std::remove(pids.c_str());
    // The table says it in words.
    const RunResult text = run_trainrig(kProbe + "--backend cuda --trial-timeout 3",
                                        kFakeDevice + " FAKE_TRAIN_HANG_AT_BATCH=2");
    EXPECT_EQ(text.rc, 2);
    EXPECT_NE(text.out.find("did not finish"), std::string::npos) << text.out;
}

TEST(BatchProbeCli, SigtermStopsTheSizeInProgressAndTheJsonSaysSo) {
    // A size of many steps, stopped once its trial runs (a child of the probe, started after the
    // probe handles SIGTERM): the trial's child is killed, the search ends, and the document
    // says so with the status the process ends with.
    const std::string cmd =
        std::string("(") + TRAINRIG_BINARY +
        " train --find-batch --model tiny --seq 512 --mem-limit 2G --probe-steps 50 --json "
        "--threads 1 & pid=$!; for i in $(seq 300); do pgrep -P $pid >/dev/null && break; "
        "sleep 0.1; done; sleep 0.5; kill -TERM $pid; wait $pid)";
    const RunResult r = run_sh(cmd);
    EXPECT_EQ(r.rc, 143) << r.err;
    const json doc = parse(r);
    EXPECT_EQ(doc["answer"], "interrupted");
    EXPECT_EQ(doc["exit_code"], 143);
    EXPECT_TRUE(doc["micro_batch"].is_null());
}

TEST(BatchProbeCli, TakesTheTrainingCommandLineAsItIs) {
    // The line a user trains with, plus --find-batch: what only training needs is left aside
    // and said, and the answer is the one without it.
    const RunResult r = run_trainrig(kProbe +
                                     "--mem-limit 96M --json --data /nonexistent/train "
                                     "--steps 1000 --batch 8 --ckpt-dir ckpt --log train.log");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.err.find("leaving aside --data, --steps, --batch, --ckpt-dir, --log"),
              std::string::npos)
        << r.err;
    const RunResult plain = run_trainrig(kProbe + "--mem-limit 96M --json");
    ASSERT_EQ(plain.rc, 0) << plain.err;
    // The same probe: its model, sizes, capacity and estimate. (The answer itself is measured,
    // peak memory at each size, so two runs near the line may differ by one.)
    const json with = parse(r), without = parse(plain);
    for (const char* k : {"backend", "model", "seq", "seed", "capacity_bytes", "headroom",
                          "start_batch", "max_batch", "steps_per_size", "estimate"})
        EXPECT_EQ(with[k], without[k]) << k;
    EXPECT_EQ(with["answer"], "found");
    EXPECT_FALSE(std::filesystem::exists("ckpt"));
}

TEST(BatchProbeCli, BadValuesAreRefused) {
    struct Case {
        std::string args, says;
    };
    const Case cases[] = {
        {"train --model tiny --mem-limit 1G --data x --steps 2",
         "--mem-limit requires --find-batch"},
        {"train --model tiny --steps 2", "--data is required"},
        {"train --model tiny --data x", "--steps is required"},
        {kProbe + "--headroom 95", "--headroom"},
        {kProbe + "--mem-limit 0", "--mem-limit must be more than 0"},
        {kProbe + "--seq 4096 --mem-limit 1G", "--seq 4096 is outside 1..1024"},
        {kProbe + "--trial-timeout 0", "--trial-timeout"},
        {"train --model tiny --trial-timeout 5 --data x --steps 2",
         "--trial-timeout requires --find-batch"},
    };
    for (const auto& c : cases) {
        const RunResult r = run_trainrig(c.args);
        EXPECT_EQ(r.rc, 2) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
    }
}

}  // namespace
}  // namespace trainrig::test
