// How data-parallel ranks exchange gradients and agree on state. The CPU backend uses MPI (one
// process per rank under mpirun/srun); a single process uses the local communicator, where
// every collective is the identity. The CUDA backend adds NCCL over the same interface.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/status.h"

namespace trainrig::train {

class Communicator {
public:
    virtual ~Communicator() = default;
    virtual int rank() const = 0;
    virtual int world() const = 0;
    virtual std::string name() const = 0;  // "local", "mpi"
    // In place, element-wise sum over all ranks.
    virtual Status all_reduce_sum(float* data, size_t n) = 0;
    virtual Status all_reduce_sum(double* data, size_t n) = 0;
    // Copies `bytes` from root's buffer into everyone's.
    virtual Status broadcast(void* data, size_t bytes, int root) = 0;
    virtual Status barrier() = 0;
};

class LocalCommunicator final : public Communicator {
public:
    int rank() const override { return 0; }
    int world() const override { return 1; }
    std::string name() const override { return "local"; }
    Status all_reduce_sum(float*, size_t) override { return ok_status(); }
    Status all_reduce_sum(double*, size_t) override { return ok_status(); }
    Status broadcast(void*, size_t, int) override { return ok_status(); }
    Status barrier() override { return ok_status(); }
};

// True when this process was started by an MPI launcher (Open MPI's mpirun, or srun with PMI):
// the environment names a world size.
bool launched_by_mpi();
// The WORLD_SIZE a torchrun-style launcher set (trainrig launch, torchrun), 1 when none.
int torchrun_world_size();
// MPI when launched by mpirun/srun and built with MPI; otherwise the local communicator. An MPI
// launch of a build without MPI is an error (every rank would train alone).
Result<std::unique_ptr<Communicator>> make_communicator();

}  // namespace trainrig::train
