#include "train/mpi_communicator.h"

#include <fmt/format.h>

#include <algorithm>

#ifdef TRAINRIG_HAVE_MPI
#include <mpi.h>

#include <limits>
#endif

namespace trainrig::train {

#ifdef TRAINRIG_HAVE_MPI
namespace {

Status mpi_status(int rc, const char* call) {
    if (rc == MPI_SUCCESS) return ok_status();
    char text[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return Status(Errc::kIo, fmt::format("{} failed: {}", call, std::string(text, len)));
}

// MPI counts are int: large buffers go in pieces.
constexpr size_t kMaxCount = static_cast<size_t>(std::numeric_limits<int>::max()) / 2;

class MpiCommunicator final : public Communicator {
public:
    MpiCommunicator() {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &world_);
    }
    ~MpiCommunicator() override { MPI_Finalize(); }

    int rank() const override { return rank_; }
    int world() const override { return world_; }
    std::string name() const override { return "mpi"; }

    Status all_reduce_sum(float* data, size_t n) override { return reduce(data, n, MPI_FLOAT); }
    Status all_reduce_sum(double* data, size_t n) override { return reduce(data, n, MPI_DOUBLE); }

    Status broadcast(void* data, size_t bytes, int root) override {
        auto* p = static_cast<char*>(data);
        for (size_t done = 0; done < bytes;) {
            const size_t n = std::min(kMaxCount, bytes - done);
            TRAINRIG_TRY(
                mpi_status(MPI_Bcast(p + done, static_cast<int>(n), MPI_BYTE, root, MPI_COMM_WORLD),
                           "MPI_Bcast"));
            done += n;
        }
        return ok_status();
    }
    Status barrier() override { return mpi_status(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

private:
    template <class T>
    Status reduce(T* data, size_t n, MPI_Datatype type) {
        for (size_t done = 0; done < n;) {
            const size_t count = std::min(kMaxCount, n - done);
            TRAINRIG_TRY(
                mpi_status(MPI_Allreduce(MPI_IN_PLACE, data + done, static_cast<int>(count), type,
                                         MPI_SUM, MPI_COMM_WORLD),
                           "MPI_Allreduce"));
            done += count;
        }
        return ok_status();
    }
    int rank_ = 0, world_ = 1;
};

}  // namespace

bool mpi_available() { return true; }

Result<std::unique_ptr<Communicator>> make_mpi_communicator() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) return Status(Errc::kInternal, "MPI was initialised twice");
    if (int rc = MPI_Init(nullptr, nullptr); rc != MPI_SUCCESS)
        return Status(Errc::kIo, "MPI_Init failed",
                      "check that mpirun and this trainrig use the same MPI");
    // Errors come back as return codes instead of aborting the job, so they are reported.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return std::unique_ptr<Communicator>(new MpiCommunicator());
}

#else

bool mpi_available() { return false; }

Result<std::unique_ptr<Communicator>> make_mpi_communicator() {
    return Status(Errc::kUnsupported, "this trainrig was built without MPI");
}

#endif

}  // namespace trainrig::train
