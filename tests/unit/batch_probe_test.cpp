// The micro-batch probe around its search: plan's estimate in the backend's precision, the
// device trial in its child process and its out-of-memory classification (through the stand-in
// plugin), how the parent reads a trial's child, the probe's capacity and report, and its two
// renderings.
#include "train/batch_probe.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "has_text.h"
#include "train/backend.h"
#include "train/batch_estimate.h"
#include "train/batch_probe_render.h"
#include "train/batch_trial.h"
#include "train/communicator.h"
#include "train/device_plugin.h"

namespace trainrig::train {
namespace {

using namespace std::chrono_literals;

constexpr uint64_t kMebibyte = 1 << 20;

ModelConfig preset(const char* name) {
    auto c = preset_config(name);
    EXPECT_TRUE(c.ok());
    return *c;
}

std::string read_source(const std::string& relative) {
    std::ifstream in(std::string(TRAINRIG_SOURCE_DIR) + "/" + relative);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(BatchEstimate, PlansFp32OnTheCpuAndAgreesWithTheBackendsOwnAccount) {
    const EstimateBasis cpu = estimate_basis("cpu");
    EXPECT_EQ(cpu.precision, plan::Precision::kFp32);
    EXPECT_FALSE(cpu.device);
    for (const char* name : {"tiny", "gpt2"})
        for (int b : {1, 8}) {
            const ModelConfig c = preset(name);
            const MemoryEstimate e = estimate_memory(c, 1024, b, cpu);
            const double own = static_cast<double>(cpu_training_bytes(c, b, 1024));
            // plan counts the real vocabulary and Korthikanti's parts; the backend its padded
            // vocabulary and its own buffers: within 5 % of each other.
            EXPECT_NEAR(static_cast<double>(e.model_bytes) / own, 1.0, 0.05) << name << " " << b;
            EXPECT_EQ(e.fixed_bytes, 0u);
        }
    // gpt2: 124,439,808 parameters at 16 bytes before any activation.
    const MemoryEstimate g = estimate_memory(preset("gpt2"), 1024, 1, cpu);
    EXPECT_EQ(g.parameters, 124439808u);
    EXPECT_GT(g.model_bytes, 124439808ull * 16);
    // Activations grow with the batch, the states do not.
    const uint64_t one = estimate_memory(preset("gpt2"), 1024, 1, cpu).model_bytes;
    const uint64_t two = estimate_memory(preset("gpt2"), 1024, 2, cpu).model_bytes;
    const uint64_t three = estimate_memory(preset("gpt2"), 1024, 3, cpu).model_bytes;
    EXPECT_NEAR(static_cast<double>(three - two), static_cast<double>(two - one), 2.0);
}

TEST(BatchEstimate, PlansTheDeviceInBf16WithFp32GradientsAndItsFixedCosts) {
    const EstimateBasis dev = estimate_basis("cuda");
    EXPECT_EQ(dev.precision, plan::Precision::kBf16);
    EXPECT_EQ(dev.convention, plan::Convention::kMegatron);
    EXPECT_TRUE(has(dev.describe(), "bf16 (fp32 gradients)")) << dev.describe();
    const ModelConfig c = preset("gpt2");
    const MemoryEstimate e = estimate_memory(c, 1024, 1, dev);
    // 18 bytes per parameter: bf16 weight, fp32 gradient, fp32 master, m and v.
    const MemoryEstimate cpu = estimate_memory(c, 1024, 1, estimate_basis("cpu"));
    const double states_dev = 18.0 * 124439808, states_cpu = 16.0 * 124439808;
    EXPECT_GT(static_cast<double>(e.model_bytes), states_dev);
    EXPECT_LT(static_cast<double>(e.model_bytes) - states_dev,
              static_cast<double>(cpu.model_bytes) - states_cpu);  // 16-bit activations
    EXPECT_EQ(e.fixed_bytes, 426 * kMebibyte);  // the CUDA context; one process, no NCCL
}

// The texts the CUDA backend fails with when memory runs out, as its sources word them.
TEST(BatchTrial, DeviceOutOfMemoryIsRecognisedInTheCudaBackendsWords) {
    EXPECT_TRUE(is_device_oom(
        Status(Errc::kIo, "cudaMalloc(&p, bytes): out of memory (device_memory.h:71)")));
    EXPECT_TRUE(is_device_oom(
        Status(Errc::kIo, "cublasLtMatmul(h, ...): CUBLAS_STATUS_ALLOC_FAILED (lt_gemm.cpp:180)")));
    // GptCuda::create's refusal before it allocates, formatted as gpt_cuda.cpp formats it.
    const std::string refusal = fmt::format(
        "this run needs {:.1f} GiB of GPU memory ({:.1f} GiB for weights, "
        "gradients and AdamW state, {:.1f} GiB for the activations of batch "
        "{} x {}), but only {:.1f} GiB is free on the GPU",
        90.5, 2.3, 88.2, 64, 1024, 79.1);
    EXPECT_TRUE(is_device_oom(Status(Errc::kInvalidInput, refusal)));
    // Not out of memory: another CUDA error, another refusal, a success.
    EXPECT_FALSE(is_device_oom(Status(
        Errc::kIo, "cudaMemcpyAsync(...): an illegal memory access was encountered (x.cpp:1)")));
    EXPECT_FALSE(is_device_oom(
        Status(Errc::kInvalidInput, "the CUDA backend needs dim to be a multiple of 8, not 12")));
    EXPECT_FALSE(is_device_oom(Status(Errc::kInvalidInput, "out of memory (device_memory.h:71)")));
    EXPECT_FALSE(is_device_oom(ok_status()));
    // The words come from the sources: a rewording there must show up here.
    const std::string create = read_source("src/train/cuda/gpt_cuda.cpp");
    EXPECT_TRUE(
        has(create, "\"this run needs {:.1f} GiB of GPU memory ({:.1f} GiB for weights, \""));
    EXPECT_TRUE(has(create, "\"{} x {}), but only {:.1f} GiB is free on the GPU\""));
    EXPECT_TRUE(has(read_source("src/cuda/cuda_check.cpp"), "fmt::format(\"{}: {} ({}:{})\""));
    EXPECT_TRUE(has(read_source("src/cuda/device_memory.h"), "CUDA_TRY(cudaMalloc(&p, bytes));"));
}

// The device trial through the stand-in plugin, each in a child process as on a GPU. This
// process never loads the plugin or opens the device: only the children do.
class BatchDeviceTrial : public ::testing::Test {
protected:
    void SetUp() override {
        ::setenv("TRAINRIG_TRAIN_PLUGIN", TRAINRIG_FAKE_TRAIN_LIB, 1);
        ::setenv("FAKE_TRAIN_OOM_ABOVE_BATCH", "5", 1);
        setup_.model = preset("tiny");  // with a small vocabulary: milliseconds per step
        setup_.model.vocab = 512;
        setup_.model.padded_vocab = 512;
        setup_.seq = 16;
        setup_.steps = 2;
    }
    void TearDown() override {
        for (const char* v :
             {"FAKE_TRAIN_OOM_ABOVE_BATCH", "FAKE_TRAIN_STALE_OOM", "FAKE_TRAIN_FAULT_AT_BATCH",
              "FAKE_TRAIN_HANG_AT_BATCH", "FAKE_TRAIN_HANG_PIDS", "FAKE_TRAIN_FREE_BYTES"})
            ::unsetenv(v);
    }

    MakeBackend make_ = make_lone_device_backend;
    TrialSetup setup_;
};

TEST_F(BatchDeviceTrial, ASizeThatFitsReportsTheBackendsBytesAndASizeThatDoesNotIsOom) {
    const TrialResult fits = run_device_trial(setup_, 5, make_, 10s);
    ASSERT_EQ(fits.outcome, TrialOutcome::kFits) << fits.detail;
    EXPECT_EQ(fits.peak_bytes, cpu_training_bytes(setup_.model, 5, 16));  // what the fake holds
    EXPECT_GT(fits.tokens_per_s, 0);
    const TrialResult oom = run_device_trial(setup_, 6, make_, 10s);
    EXPECT_EQ(oom.outcome, TrialOutcome::kOom);
    EXPECT_TRUE(has(oom.detail, "cudaMalloc(&p, bytes): out of memory")) << oom.detail;
    // Another failure of the device stops the search: a sequence beyond the model's context.
    TrialSetup bad = setup_;
    bad.seq = 2048;
    const TrialResult err = run_device_trial(bad, 1, make_, 10s);
    EXPECT_EQ(err.outcome, TrialOutcome::kError);
}

// A runtime that leaves a failed allocation's error for the next launch check (the fake's
// FAKE_TRAIN_STALE_OOM) makes a size that fits look out of memory in the process that ran out
// before; each trial in a process of its own never inherits it.
TEST_F(BatchDeviceTrial, AnOutOfMemoryLeavesNothingForTheNextSize) {
    ::setenv("FAKE_TRAIN_STALE_OOM", "1", 1);
    // In one process the second size fails: what the trials must not share.
    const IsolatedEnd shared = *run_in_child(
        [&](IsolatedChannel& ch) {
            EXPECT_FALSE(make_(setup_.model, setup_.opt, 6, setup_.seq).ok());
            auto backend = make_(setup_.model, setup_.opt, 5, setup_.seq);
            if (!backend.ok()) return;
            ch.out() = run_trial_steps(**backend, setup_, 5).status().message();
        },
        10s, 0s);
    EXPECT_EQ(shared.out, "cudaGetLastError(): out of memory (gpt_cuda.cpp:161)");
    // Trial by trial, each in its own process: the size that fits fits.
    EXPECT_EQ(run_device_trial(setup_, 6, make_, 10s).outcome, TrialOutcome::kOom);
    const TrialResult next = run_device_trial(setup_, 5, make_, 10s);
    EXPECT_EQ(next.outcome, TrialOutcome::kFits) << next.detail;
}

// A kernel fault is sticky: the size that faulted is an error (not out of memory), and the
// next size, in a new process, starts on a clean device.
TEST_F(BatchDeviceTrial, AKernelFaultIsAnErrorForItsSizeOnly) {
    ::setenv("FAKE_TRAIN_FAULT_AT_BATCH", "3", 1);
    const TrialResult fault = run_device_trial(setup_, 3, make_, 10s);
    EXPECT_EQ(fault.outcome, TrialOutcome::kError);
    EXPECT_TRUE(has(fault.detail, "an illegal memory access was encountered")) << fault.detail;
    const TrialResult next = run_device_trial(setup_, 2, make_, 10s);
    EXPECT_EQ(next.outcome, TrialOutcome::kFits) << next.detail;
}

// Whether a process is gone (a zombie is, once killed: only its parent's wait remains).
bool process_gone(int pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const size_t paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

TEST_F(BatchDeviceTrial, AHungTrialIsKilledWithItsGroupAndDidNotFinish) {
    const std::string pids = ::testing::TempDir() + "batch_trial_hang_pids";
    std::remove(pids.c_str());
    ::setenv("FAKE_TRAIN_HANG_AT_BATCH", "4", 1);
    ::setenv("FAKE_TRAIN_HANG_PIDS", pids.c_str(), 1);
    // 3 s: long enough for the child to open the device and build the model first, even in a
    // sanitized build on a busy machine, so that it is the hang in step 1 that is cut.
    const auto start = std::chrono::steady_clock::now();
    const TrialResult hung = run_device_trial(setup_, 4, make_, 3000ms);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
    EXPECT_EQ(hung.outcome, TrialOutcome::kTimedOut);
    EXPECT_EQ(hung.detail, "no return from step 1 of 2 within 3 s; its processes were killed");
    // The trial's process and the grandchild it started are both gone.
    std::ifstream in(pids);
    int trial = 0, grandchild = 0;
    ASSERT_TRUE(in >> trial >> grandchild) << pids;
    for (int i = 0; i < 200 && !(process_gone(trial) && process_gone(grandchild)); ++i)
        std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(process_gone(trial));
    EXPECT_TRUE(process_gone(grandchild));
    std::remove(pids.c_str());
}

TEST_F(BatchDeviceTrial, TheDeviceIsDescribedFromAChild) {
    ::setenv("FAKE_TRAIN_FREE_BYTES", "8589934592", 1);
    const auto d = describe_device_in_child(describe_lone_device, 10s);
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->name, "trainrig fake device");
    EXPECT_EQ(d->free_bytes, 8589934592u);
    // A failure comes back whole; a device that does not answer is cut at the timeout.
    const auto refused = describe_device_in_child(
        [] { return Result<DeviceInfo>(Status(Errc::kUnsupported, "no GPU", "use a GPU")); }, 10s);
    EXPECT_EQ(refused.status().code(), Errc::kUnsupported);
    EXPECT_EQ(refused.status().message(), "no GPU");
    EXPECT_EQ(refused.status().next_step(), "use a GPU");
    const auto stuck = describe_device_in_child(
        []() -> Result<DeviceInfo> {
            std::this_thread::sleep_for(60s);
            return DeviceInfo{};
        },
        300ms);
    EXPECT_EQ(stuck.status().message(),
              "the device did not answer within 0.3 s (no return from opening the device)");
}

TEST_F(BatchDeviceTrial, TheProbeFindsTheLargestSizeTheDeviceTakes) {
    ProbeOptions p;
    p.trial = setup_;
    p.backend = "cuda";
    p.make_backend = make_;
    p.device = "trainrig fake device";
    p.trial_timeout = 10s;
    p.device_free_bytes = 64ull << 30;
    p.max_batch = 64;
    const auto r = run_batch_probe(p);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->search.answer, SearchAnswer::kFound);
    EXPECT_EQ(r->search.chosen, 5);
    EXPECT_EQ(r->start, 64);  // plan's estimate allows the bound; the device does not
    EXPECT_EQ(r->search.tried[0].verdict, SizeVerdict::kOom);
    EXPECT_EQ(r->capacity_source, "free device memory");
    EXPECT_EQ(probe_exit_code(*r), 0);
    bool said = false;  // the timeout the trials ran under
    for (const auto& n : r->notes) said |= has(n, "makes no progress for 10 s");
    EXPECT_TRUE(said);
    const auto doc = probe_json(*r);
    EXPECT_EQ(doc["backend"], "cuda");
    EXPECT_EQ(doc["estimate"]["precision"], "bf16");
    EXPECT_EQ(doc["estimate"]["fixed_bytes"], 426 * kMebibyte);
    // --mem-limit below the device's free memory caps the search.
    p.mem_limit = cpu_training_bytes(setup_.model, 3, 16) * 10 / 9 + 1;
    const auto capped = run_batch_probe(p);
    ASSERT_TRUE(capped.ok());
    EXPECT_EQ(capped->capacity_source, "--mem-limit");
    EXPECT_EQ(capped->search.chosen, 3);
}

// How the parent reads a trial's child, whichever backend: a timeout is "did not finish"
// whatever was sent, a report is the answer, and without one only the CPU's data limit makes a
// SIGKILL an out-of-memory.
TEST(BatchTrialJudge, EachEndingOfTheChildReads) {
    const TrialLimits device{300s, 0}, cpu{0ms, 64 << 20};
    IsolatedEnd end;
    end.step = "step 2 of 3";
    end.timed_out = true;
    const TrialResult fits{TrialOutcome::kFits, 5 * kMebibyte, 1000, ""};
    for (const auto& reported : {std::optional<TrialResult>(), std::optional<TrialResult>(fits)}) {
        const TrialResult t = judge_trial(reported, end, device);
        EXPECT_EQ(t.outcome, TrialOutcome::kTimedOut);
        EXPECT_EQ(t.detail, "no return from step 2 of 3 within 300 s; its processes were killed");
        EXPECT_EQ(t.peak_bytes, 0u);
    }
    end.timed_out = false;
    end.interrupted = true;
    EXPECT_EQ(judge_trial(fits, end, device).outcome, TrialOutcome::kError);
    EXPECT_EQ(judge_trial(fits, end, device).detail, "interrupted");

    end = IsolatedEnd{};
    end.exit_code = 0;
    const TrialResult ran = judge_trial(fits, end, device);
    EXPECT_EQ(ran.outcome, TrialOutcome::kFits);
    EXPECT_EQ(ran.peak_bytes, 5 * kMebibyte);
    // The device's out-of-memory keeps the backend's words; the CPU's says what the limit was.
    const TrialResult oom{TrialOutcome::kOom, 3 * kMebibyte, 0, "cudaMalloc(...): out of memory"};
    EXPECT_EQ(judge_trial(oom, end, device).detail, "cudaMalloc(...): out of memory");
    EXPECT_EQ(judge_trial(oom, end, cpu).outcome, TrialOutcome::kOom);
    EXPECT_EQ(judge_trial(oom, end, cpu).detail,
              "an allocation failed with 3.0 MiB held, 64.0 MiB allowed (RLIMIT_DATA)");
    const TrialResult fault{TrialOutcome::kError, 0, 0, "an illegal memory access"};
    EXPECT_EQ(judge_trial(fault, end, device).outcome, TrialOutcome::kError);

    // No report: the kernel's OOM killer on the CPU; on a device a signal is an error.
    end.exit_code = -1;
    end.signal = SIGKILL;
    end.step = "step 1 of 3";
    EXPECT_EQ(judge_trial(std::nullopt, end, cpu).outcome, TrialOutcome::kOom);
    const TrialResult killed = judge_trial(std::nullopt, end, device);
    EXPECT_EQ(killed.outcome, TrialOutcome::kError);
    EXPECT_EQ(killed.detail, "the trial's process ended by SIGKILL in step 1 of 3");
    end.signal = SIGSEGV;
    EXPECT_EQ(judge_trial(std::nullopt, end, cpu).outcome, TrialOutcome::kError);
    end.signal = 0;
    end.exit_code = 4;
    EXPECT_EQ(judge_trial(std::nullopt, end, device).detail,
              "the trial's process exited 4 without a report in step 1 of 3");
}

// A trial that answers from a table: what run_batch_probe does around the search.
ProbeOptions scripted(uint64_t per_sequence, uint64_t fixed) {
    ProbeOptions p;
    p.trial.model = preset("tiny");
    p.trial.seq = 64;
    p.max_batch = 256;
    p.mem_available = 8ull << 30;
    p.trial_override = [=](int b) {
        const uint64_t need = fixed + per_sequence * static_cast<uint64_t>(b);
        if (need > (1ull << 30))
            return TrialResult{TrialOutcome::kOom, 0, 0, "an allocation failed"};
        return TrialResult{TrialOutcome::kFits, need, 100.0 * b, ""};
    };
    return p;
}

TEST(BatchProbe, OnTheCpuTheLimitIsMemAvailableUnlessGiven) {
    ProbeOptions p = scripted(10 * kMebibyte, 100 * kMebibyte);
    auto r = run_batch_probe(p);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->capacity, 8ull << 30);
    EXPECT_EQ(r->capacity_source, "MemAvailable");
    EXPECT_EQ(r->search.chosen, 92);  // the scripted machine itself has 1 GiB: 100 + 10 b <= 1024
    p.mem_limit = 512 * kMebibyte;
    r = run_batch_probe(p);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->capacity_source, "--mem-limit");
    EXPECT_EQ(r->search.chosen, 36);  // 100 + 10 b <= 460.8
    EXPECT_EQ(r->backend_bytes.size(), r->search.tried.size());
    EXPECT_EQ(r->backend_bytes[0], cpu_training_bytes(p.trial.model, r->search.tried[0].batch, 64));
    // A limit above what is available is allowed, and said.
    p.mem_limit = 16ull << 30;
    r = run_batch_probe(p);
    ASSERT_TRUE(r.ok());
    bool said = false;
    for (const auto& n : r->notes) said |= has(n, "is more than the 8.00 GiB available");
    EXPECT_TRUE(said);
}

// A device trial is cut at 300 s without progress unless told otherwise; a CPU trial only when
// told: a CPU step of a large model may take that long.
TEST(BatchProbe, TheTrialTimeoutDefaultsByBackend) {
    ProbeOptions p;
    EXPECT_EQ(probe_trial_timeout(p), 0ms);
    p.backend = "cuda";
    EXPECT_EQ(probe_trial_timeout(p), kDeviceTrialTimeout);
    EXPECT_EQ(kDeviceTrialTimeout, 300s);
    p.trial_timeout = 2500ms;
    EXPECT_EQ(probe_trial_timeout(p), 2500ms);
    p.backend = "cpu";
    EXPECT_EQ(probe_trial_timeout(p), 2500ms);
}

TEST(BatchProbe, BadInputIsRefusedBeforeAnyTrial) {
    ProbeOptions p = scripted(kMebibyte, kMebibyte);
    p.headroom = 0.95;
    EXPECT_TRUE(has(run_batch_probe(p).status().message(), "--headroom 95 %"));
    p = scripted(kMebibyte, kMebibyte);
    p.trial.seq = 4096;
    EXPECT_TRUE(has(run_batch_probe(p).status().message(), "--seq 4096 is outside 1..1024"));
    p = scripted(kMebibyte, kMebibyte);
    p.backend = "cuda";
    p.trial_override = nullptr;
    EXPECT_EQ(run_batch_probe(p).status().code(), Errc::kInternal);
    p = scripted(kMebibyte, kMebibyte);
    p.backend = "cuda";  // a device that says it has nothing free, and no --mem-limit
    EXPECT_TRUE(has(run_batch_probe(p).status().next_step(), "--mem-limit"));
}

TEST(BatchProbe, TheTableAndTheJsonCarryEverySizeAndTheAnswer) {
    ProbeOptions p = scripted(10 * kMebibyte, 100 * kMebibyte);
    p.mem_limit = 1000 * kMebibyte;
    std::vector<int> told;
    p.on_size = [&](const SizeTried& s) { told.push_back(s.batch); };
    const auto r = run_batch_probe(p);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(told.size(), r->search.tried.size());
    const auto doc = probe_json(*r);
    EXPECT_EQ(doc["schema"], "trainrig.train.find_batch");
    EXPECT_EQ(doc["schema_version"], 1);
    EXPECT_EQ(doc["answer"], "found");
    EXPECT_EQ(doc["micro_batch"], 80);
    EXPECT_EQ(doc["capacity_bytes"], 1000 * kMebibyte);
    EXPECT_EQ(doc["headroom_line_bytes"], 900 * kMebibyte);
    EXPECT_EQ(doc["estimate"]["precision"], "fp32");
    ASSERT_EQ(doc["sizes"].size(), r->search.tried.size());
    const auto& first = doc["sizes"][0];
    EXPECT_EQ(first["batch"], r->start);
    EXPECT_TRUE(first["estimate_bytes"].is_number());
    EXPECT_TRUE(first["peak_over_estimate"].is_number());
    EXPECT_TRUE(first["backend_bytes"].is_number());
    bool oom_seen = false;
    for (const auto& s : doc["sizes"])
        if (s["verdict"] == "oom") {
            oom_seen = true;
            EXPECT_TRUE(s["tokens_per_s"].is_null());
            EXPECT_TRUE(s["peak_over_estimate"].is_null());
            EXPECT_EQ(s["why"], "an allocation failed");
        }
    EXPECT_TRUE(oom_seen);
    const std::string text = probe_text(*r);
    EXPECT_TRUE(
        has(text, "micro-batch 80: the largest that trained with 10 % of 0.98 GiB kept free"))
        << text;
    EXPECT_TRUE(has(text, "batch  result             peak (MiB)  plan (MiB)  peak/plan")) << text;
    EXPECT_TRUE(has(text, "synthetic tokens")) << text;
    EXPECT_TRUE(has(probe_progress_line(r->search.tried[0]), "find-batch: batch "));
}

TEST(BatchProbe, NothingFitsExitsOneAndAnErrorTwo) {
    ProbeOptions p = scripted(10 * kMebibyte, 2ull << 30);  // 2 GiB before the first sequence
    p.mem_limit = 4ull << 30;
    auto r = run_batch_probe(p);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->search.answer, SearchAnswer::kNothingFits);
    EXPECT_EQ(probe_exit_code(*r), 1);
    EXPECT_TRUE(probe_json(*r)["micro_batch"].is_null());
    EXPECT_TRUE(has(probe_text(*r), "nothing fits: even one sequence of 64 tokens"));
    p.trial_override = [](int) { return TrialResult{TrialOutcome::kError, 0, 0, "lost"}; };
    r = run_batch_probe(p);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(probe_exit_code(*r), 2);
    EXPECT_EQ(probe_json(*r)["error"], fmt::format("batch {}: lost", r->start));
}

// The table and the progress lines say what each size did in words (the JSON keeps the enum
// words), and an interrupted search says so once, with what the sizes before it found.
TEST(BatchProbe, TheTextSaysWhatEachSizeDidAndWhereItWasInterrupted) {
    ProbeOptions p = scripted(10 * kMebibyte, 100 * kMebibyte);
    p.mem_limit = 1000 * kMebibyte;  // the headroom line is at 900 MiB
    int calls = 0;
    // The first size runs above the line; the search is stopped during the second.
    p.trial_override = [&](int) {
        return ++calls == 1 ? TrialResult{TrialOutcome::kFits, 950 * kMebibyte, 100.0, ""}
                            : TrialResult{TrialOutcome::kError, 0, 0, "interrupted"};
    };
    auto probed = run_batch_probe(p);
    ASSERT_TRUE(probed.ok()) << probed.status().message();
    ProbeReport r = *probed;
    ASSERT_EQ(r.search.tried.size(), 2u);
    // As a Ctrl-C during the second size leaves the report (raising the signal here would stay
    // recorded for the rest of the test process).
    r.interrupted = true;
    EXPECT_EQ(probe_json(r)["sizes"][0]["verdict"], "over_headroom");
    EXPECT_EQ(probe_json(r)["answer"], "interrupted");
    const std::string text = probe_text(r);
    EXPECT_EQ(text.find("over_headroom"), std::string::npos) << text;
    EXPECT_TRUE(has(text, "over the headroom")) << text;
    EXPECT_TRUE(has(probe_progress_line(r.search.tried[0]), ": over the headroom, peak"));
    const std::string answer = text.substr(text.find("answer "));
    const std::string line = answer.substr(0, answer.find('\n'));
    EXPECT_TRUE(has(
        line, fmt::format("interrupted at batch {}; no size fit so far", r.search.tried[1].batch)))
        << line;
    EXPECT_EQ(line.find("interrupted", line.find("interrupted") + 1), std::string::npos) << line;

    // A size that fit before the interruption is the answer so far.
    calls = 0;
    p.trial_override = [&](int) {
        return ++calls == 1 ? TrialResult{TrialOutcome::kFits, 200 * kMebibyte, 100.0, ""}
                            : TrialResult{TrialOutcome::kError, 0, 0, "interrupted"};
    };
    probed = run_batch_probe(p);
    ASSERT_TRUE(probed.ok());
    r = *probed;
    r.interrupted = true;
    EXPECT_TRUE(
        has(probe_text(r), fmt::format("the largest that fit so far: {}", r.search.tried[0].batch)))
        << probe_text(r);
}

}  // namespace
}  // namespace trainrig::train
