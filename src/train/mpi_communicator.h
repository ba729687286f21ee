// The MPI communicator (Open MPI from Debian): MPI_Init on creation, MPI_Finalize when the last
// one is destroyed. Built only when CMake finds MPI; otherwise mpi_available() is false.
#pragma once

#include <memory>

#include "train/communicator.h"

namespace trainrig::train {

bool mpi_available();
Result<std::unique_ptr<Communicator>> make_mpi_communicator();

}  // namespace trainrig::train
