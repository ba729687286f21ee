#include "train/communicator.h"

#include <cstdlib>

#include "train/mpi_communicator.h"

namespace trainrig::train {

bool launched_by_mpi() {
    // Open MPI's mpirun; MPICH/Hydra (PMI_SIZE); Slurm's srun with PMIx.
    for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
        if (std::getenv(var) != nullptr) return true;
    return false;
}

int torchrun_world_size() {
    const char* v = std::getenv("WORLD_SIZE");
    if (v == nullptr || *v == '\0') return 1;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    return *end == '\0' && n > 1 && n < (1 << 30) ? static_cast<int>(n) : 1;
}

Result<std::unique_ptr<Communicator>> make_communicator() {
    if (!launched_by_mpi()) return std::unique_ptr<Communicator>(new LocalCommunicator());
    if (!mpi_available())
        return Status(Errc::kUnsupported,
                      "this process was started by an MPI launcher, but this trainrig was built "
                      "without MPI",
                      "install libopenmpi-dev and rebuild, or run without mpirun");
    return make_mpi_communicator();
}

}  // namespace trainrig::train
