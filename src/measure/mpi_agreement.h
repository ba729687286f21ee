// agree() (rank_agreement.h) over an MPI communicator: for code built with MPI only, the
// NCCL benchmark plugin and the test that runs it under mpirun.
#pragma once

#include <mpi.h>

#include <optional>
#include <string_view>

#include "measure/rank_agreement.h"

namespace trainrig::bench {

// Every rank of `comm` calls it after `phase`, a rank that failed included.
inline Status agree_over(MPI_Comm comm, const Status& mine, std::string_view phase) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    return agree(mine, rank, size, phase, [comm](int offered) -> std::optional<int> {
        int least = offered;
        if (MPI_Allreduce(&offered, &least, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
            return std::nullopt;
        return least;
    });
}

}  // namespace trainrig::bench
