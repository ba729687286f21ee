// The agreement nccl-pairs makes after every phase (measure/rank_agreement.h): what each rank
// learns, and, with ranks as threads and the all-reduce as a rendezvous among them, that a rank
// failing at any phase takes every rank out at that phase instead of leaving them waiting.
#include "measure/rank_agreement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace trainrig::bench {
namespace {

using namespace std::chrono_literals;

// Every rank's outcome of one phase, agreed the way each rank would see it. Every rank must
// take part in the reduction, a failed one too, or the others would wait in it for ever.
std::vector<Status> agree_all(const std::vector<Status>& outcomes, const char* phase) {
    const int size = static_cast<int>(outcomes.size());
    int least = size;
    for (int r = 0; r < size; ++r)
        if (!outcomes[static_cast<size_t>(r)].ok()) least = std::min(least, r);
    std::vector<Status> out;
    int took_part = 0;
    for (int r = 0; r < size; ++r)
        out.push_back(agree(outcomes[static_cast<size_t>(r)], r, size, phase,
                            [&, r](int offered) -> std::optional<int> {
                                ++took_part;
                                // What rank r offers: its own number when it failed.
                                EXPECT_EQ(offered,
                                          outcomes[static_cast<size_t>(r)].ok() ? size : r);
                                return least;
                            }));
    EXPECT_EQ(took_part, size);
    return out;
}

TEST(RankAgreement, AllSucceededGoesOn) {
    for (const Status& s : agree_all({{}, {}, {}, {}}, "the warm-up")) EXPECT_TRUE(s.ok());
}

TEST(RankAgreement, OneFailureStopsEveryRank) {
    const auto seen =
        agree_all({{}, {}, {Errc::kIo, "cudaMalloc: out of memory"}, {}}, "the warm-up");
    EXPECT_EQ(seen[2].message(), "cudaMalloc: out of memory");  // its own reason
    for (const size_t r : {0u, 1u, 3u})
        EXPECT_EQ(seen[r].message(), "rank 2 of 4 failed during the warm-up") << r;
}

TEST(RankAgreement, TheLowestFailedRankIsNamed) {
    const Status bad{Errc::kIo, "timed out"};
    const auto seen = agree_all({{}, bad, {}, bad}, "the timed samples");
    EXPECT_EQ(seen[0].message(), "rank 1 of 4 failed during the timed samples");
    EXPECT_EQ(seen[2].message(), "rank 1 of 4 failed during the timed samples");
    EXPECT_EQ(seen[1].message(), "timed out");
    EXPECT_EQ(seen[3].message(), "timed out");
}

TEST(RankAgreement, AFailedReductionIsAFailure) {
    const auto none = [](int) { return std::optional<int>(); };
    EXPECT_EQ(agree({}, 0, 2, "the output check", none).message(),
              "the ranks could not agree after the output check");
    EXPECT_EQ(agree({Errc::kIo, "mine"}, 0, 2, "the output check", none).message(), "mine");
}

// An all-reduce (minimum) among n threads: each waits until all n have offered, as ranks do in
// MPI_Allreduce. A thread left waiting 2 s gives up, so a broken protocol fails the test
// instead of hanging it.
class ThreadMin {
public:
    explicit ThreadMin(int n) : n_(n) {}
    std::optional<int> reduce(int v) {
        std::unique_lock lock(mutex_);
        const long round = round_;
        least_ = std::min(least_, v);
        if (++arrived_ == n_) {
            result_ = least_;
            least_ = INT_MAX;
            arrived_ = 0;
            ++round_;
            done_.notify_all();
            return result_;
        }
        if (!done_.wait_for(lock, 2s, [&] { return round_ != round; })) return std::nullopt;
        return result_;  // the next round cannot finish before this rank offers again
    }

private:
    std::mutex mutex_;
    std::condition_variable done_;
    const int n_;
    int arrived_ = 0;
    long round_ = 0;
    int least_ = INT_MAX;
    int result_ = 0;
};

// Ranks as threads running the phases of a pair measurement, each phase followed by the
// agreement and, like the collectives between phases, a rendezvous of all ranks. `failing`
// fails at phase `at`. Each rank's result: the phase it stopped at (kPhases when it finished)
// and why.
constexpr int kPhases = 6;
struct Stopped {
    int phase = kPhases;
    std::string why;
};

std::vector<Stopped> run_ranks(int size, int failing, int at) {
    ThreadMin all(size);
    std::vector<Stopped> out(static_cast<size_t>(size));
    std::vector<std::thread> ranks;
    for (int r = 0; r < size; ++r)
        ranks.emplace_back([&, r] {
            for (int p = 0; p < kPhases; ++p) {
                const Status mine = r == failing && p == at
                                        ? Status{Errc::kIo, "ncclCommInitRankConfig timed out"}
                                        : Status{};
                const std::string phase = "phase " + std::to_string(p);
                if (Status s = agree(mine, r, size, phase, [&](int v) { return all.reduce(v); });
                    !s.ok()) {
                    out[static_cast<size_t>(r)] = {p, s.message()};
                    return;
                }
                // A collective only ranks that went on take part in: hangs (2 s, then a
                // failure) if any rank had left alone.
                if (!all.reduce(0)) {
                    out[static_cast<size_t>(r)] = {p, "left waiting in a collective"};
                    return;
                }
            }
        });
    for (auto& t : ranks) t.join();
    return out;
}

TEST(RankAgreement, RanksLeaveTogetherAtTheFailedPhase) {
    for (const int size : {2, 3, 8})
        for (int failing = 0; failing < size; ++failing)
            for (int at = 0; at < kPhases; ++at) {
                const auto stopped = run_ranks(size, failing, at);
                for (int r = 0; r < size; ++r) {
                    const Stopped& s = stopped[static_cast<size_t>(r)];
                    EXPECT_EQ(s.phase, at) << size << " ranks, " << failing << " fails at " << at;
                    EXPECT_EQ(s.why, r == failing
                                         ? "ncclCommInitRankConfig timed out"
                                         : "rank " + std::to_string(failing) + " of " +
                                               std::to_string(size) + " failed during phase " +
                                               std::to_string(at));
                }
                if (HasFailure()) return;  // one broken case says it; the rest would wait too
            }
    for (const Stopped& s : run_ranks(4, -1, 0)) EXPECT_EQ(s.phase, kPhases);
}

}  // namespace
}  // namespace trainrig::bench
