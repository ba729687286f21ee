// How data-parallel ranks exchange gradients and agree on state. The CPU backend uses MPI (one
// process per rank under mpirun/srun); a single process uses the local communicator, where
// every collective is the identity. The CUDA backend adds NCCL over the same interface.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
    // Each rank's bytes, in rank order, on `root` (an empty list elsewhere). A rank that has not
    // started sending by `deadline` is nullopt: a hung node must not hang the one that reports.
    // After a gather that missed a rank, only abort() ends the job (a collective would wait).
    virtual Result<std::vector<std::optional<std::string>>> gather(
        const std::string& mine, int root, std::chrono::steady_clock::time_point deadline);
    // Ends every rank of the job with `code` (MPI_Abort); a single process just exits.
    [[noreturn]] virtual void abort(int code);
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
// Removes the launcher's variables (OMPI_*, PMIX_*, PMI_*) from this process's environment once
// MPI is initialised, so that the programs it starts (validate's stages) do not take themselves
// for ranks of the job.
void hide_launcher_from_children();
// The WORLD_SIZE a torchrun-style launcher set (trainrig launch, torchrun), 1 when none.
int torchrun_world_size();
// MPI when launched by mpirun/srun and built with MPI; otherwise the local communicator. An MPI
// launch of a build without MPI is an error (every rank would train alone).
Result<std::unique_ptr<Communicator>> make_communicator();

}  // namespace trainrig::train
