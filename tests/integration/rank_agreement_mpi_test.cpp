// nccl-pairs' agreement over real MPI (measure/mpi_agreement.h), run by ctest under mpirun with
// 3 ranks: whichever rank fails at whichever phase, every rank leaves at that phase, names the
// same failed rank, and none is left in a collective the others skipped (a hang would stop the
// run at ctest's timeout).
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "measure/mpi_agreement.h"

namespace trainrig::bench {
namespace {

constexpr int kPhases = 6;

// The phase this rank stopped at (kPhases: it finished) and why.
struct Stopped {
    int phase = kPhases;
    std::string why;
};

// The phases of a pair measurement, with an MPI collective between each two as the real one
// has (the samples' MPI_Allreduce): only ranks that all went on reach it.
Stopped run_phases(MPI_Comm comm, int failing, int at) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    for (int p = 0; p < kPhases; ++p) {
        const Status mine =
            rank == failing && p == at ? Status{Errc::kIo, "cudaMalloc: out of memory"} : Status{};
        if (Status s = agree_over(comm, mine, "phase " + std::to_string(p)); !s.ok())
            return {p, s.message()};
        MPI_Barrier(comm);
    }
    return {};
}

TEST(RankAgreementMpi, EveryRankLeavesAtTheFailedPhase) {
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ASSERT_GE(size, 2) << "run under mpirun -np 3";
    for (int failing = 0; failing < size; ++failing)
        for (int at = 0; at < kPhases; ++at) {
            const Stopped s = run_phases(MPI_COMM_WORLD, failing, at);
            std::vector<int> phases(static_cast<size_t>(size));
            MPI_Allgather(&s.phase, 1, MPI_INT, phases.data(), 1, MPI_INT, MPI_COMM_WORLD);
            for (const int p : phases)
                EXPECT_EQ(p, at) << "rank " << failing << " failed at " << at;
            EXPECT_EQ(s.why, rank == failing ? "cudaMalloc: out of memory"
                                             : "rank " + std::to_string(failing) + " of " +
                                                   std::to_string(size) + " failed during phase " +
                                                   std::to_string(at));
        }
    const Stopped clean = run_phases(MPI_COMM_WORLD, -1, 0);
    EXPECT_EQ(clean.phase, kPhases);
}

// As nccl-pairs splits the world into pairs for a round: ranks 0 and 1 measure, rank 2 sits
// the round out, and the pair's failure stays inside the pair.
TEST(RankAgreementMpi, APairsFailureStaysInThePair) {
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm pair = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    if (pair != MPI_COMM_NULL) {
        const Stopped s = run_phases(pair, 1, 2);
        EXPECT_EQ(s.phase, 2);
        MPI_Comm_free(&pair);
    }
    MPI_Barrier(MPI_COMM_WORLD);  // the round's gather, which every rank reaches
}

}  // namespace
}  // namespace trainrig::bench

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    ::testing::InitGoogleTest(&argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) {  // one report, rank 0's; the others still fail the run through mpirun
        auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
        delete listeners.Release(listeners.default_result_printer());
    }
    const int failed = RUN_ALL_TESTS();
    MPI_Finalize();
    return failed;
}
