// The CPU trial of the micro-batch search in its forked child under RLIMIT_DATA: a size that
// fits reports its peak and speed, one beyond the limit is an out-of-memory answer, and the
// parent is untouched either way. Its own test binary: fork() needs a parent in which OpenMP
// has not started its threads, and no test here runs a model in the parent.
#include <gtest/gtest.h>

#include "has_text.h"
#include "train/backend.h"
#include "train/batch_probe.h"
#include "train/batch_trial.h"

namespace trainrig::train {
namespace {

TrialSetup tiny_setup() {
    TrialSetup s;
    auto c = preset_config("tiny");
    EXPECT_TRUE(c.ok());
    s.model = *c;
    s.seq = 32;
    s.steps = 2;
    return s;
}

TEST(BatchCpuTrial, ReadsItsOwnStatus) {
    EXPECT_GT(proc_status_bytes("VmRSS"), 0u);
    EXPECT_GE(proc_status_bytes("VmHWM"), proc_status_bytes("VmRSS") / 2);
    EXPECT_GT(proc_status_bytes("VmData"), 0u);
    EXPECT_EQ(proc_status_bytes("NoSuchField"), 0u);
    EXPECT_EQ(proc_status_bytes("VmRS"), 0u);  // a prefix is not the field
}

TEST(BatchCpuTrial, ASizeThatFitsMeasuresAboutWhatTheBackendAccountsFor) {
    const TrialSetup s = tiny_setup();
    const uint64_t rss_before = proc_status_bytes("VmRSS");
    const TrialResult r = run_cpu_trial(s, 2, 1ull << 30);
    ASSERT_EQ(r.outcome, TrialOutcome::kFits) << r.detail;
    EXPECT_GT(r.tokens_per_s, 0);
    // The child's growth: the backend's own buffers plus the allocator's and the loop's own
    // (tokens, the norm's partials), never less than most of the buffers.
    const double own = static_cast<double>(cpu_training_bytes(s.model, 2, s.seq));
    EXPECT_GT(static_cast<double>(r.peak_bytes), 0.8 * own);
    EXPECT_LT(static_cast<double>(r.peak_bytes), 1.5 * own + 16e6);
    // The model lived in the child only.
    EXPECT_LT(proc_status_bytes("VmRSS"), rss_before + (8u << 20));
}

TEST(BatchCpuTrial, ALimitBelowTheModelIsAnOutOfMemoryAnswer) {
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer's own allocator maps its memory outside malloc and aborts when a data
    // limit refuses it, so an out-of-memory cannot be an answer in a sanitized build.
    GTEST_SKIP() << "an RLIMIT_DATA out-of-memory aborts AddressSanitizer's allocator";
#endif
    const TrialSetup s = tiny_setup();
    // tiny's weights, gradients and moments alone take 54 MB.
    const TrialResult r = run_cpu_trial(s, 1, 16u << 20);
    EXPECT_EQ(r.outcome, TrialOutcome::kOom) << r.detail;
    EXPECT_TRUE(has(r.detail, "16.0 MiB allowed (RLIMIT_DATA)")) << r.detail;
    EXPECT_LT(r.peak_bytes, 17u << 20);
}

TEST(BatchCpuTrial, TheProbeFindsASizeWithRealChildrenAndTheAnswerGrowsWithTheLimit) {
    ProbeOptions p;
    p.trial = tiny_setup();
    p.max_batch = 64;
    // About 55 MB of state and 6.5 MB per sequence of 32 tokens (fp32 logits of 50304).
    p.mem_limit = 96u << 20;
    const auto small = run_batch_probe(p);
    ASSERT_TRUE(small.ok()) << small.status().message();
    ASSERT_EQ(small->search.answer, SearchAnswer::kFound) << small->search.error;
    p.mem_limit = 160u << 20;
    const auto large = run_batch_probe(p);
    ASSERT_TRUE(large.ok());
    ASSERT_EQ(large->search.answer, SearchAnswer::kFound) << large->search.error;
    EXPECT_GT(large->search.chosen, small->search.chosen);
    // The chosen size ran under the line; the next size up did not.
    for (const auto* r : {&*small, &*large}) {
        for (const auto& t : r->search.tried) {
            if (t.batch == r->search.chosen) {
                EXPECT_EQ(t.verdict, SizeVerdict::kFits);
                EXPECT_LE(t.peak_bytes, r->search.headroom_line);
            }
            if (t.batch == r->search.chosen + 1) {
                EXPECT_NE(t.verdict, SizeVerdict::kFits);
            }
        }
    }
}

}  // namespace
}  // namespace trainrig::train
