#include "train/mpi_communicator.h"

#include <fmt/format.h>

#include <algorithm>

#ifdef TRAINRIG_HAVE_MPI
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <thread>
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

    // Point to point rather than MPI_Gatherv: its int displacements overflow at 2 GiB in all,
    // and it cannot give up on a rank that never sends. The root polls for each rank's size
    // until the deadline, then takes that rank's bytes.
    Result<std::vector<std::optional<std::string>>> gather(
        const std::string& mine, int root, std::chrono::steady_clock::time_point deadline) override {
        constexpr int kSizeTag = 7101, kDataTag = 7102;
        if (rank_ != root) {
            uint64_t size = mine.size();
            TRAINRIG_TRY(mpi_status(
                MPI_Send(&size, 1, MPI_UINT64_T, root, kSizeTag, MPI_COMM_WORLD), "MPI_Send"));
            for (size_t done = 0; done < mine.size();) {
                const size_t n = std::min(kMaxCount, mine.size() - done);
                TRAINRIG_TRY(mpi_status(MPI_Send(mine.data() + done, static_cast<int>(n), MPI_BYTE,
                                                 root, kDataTag, MPI_COMM_WORLD),
                                        "MPI_Send"));
                done += n;
            }
            return std::vector<std::optional<std::string>>{};
        }
        std::vector<std::optional<std::string>> all(static_cast<size_t>(world_));
        all[static_cast<size_t>(root)] = mine;
        std::vector<uint64_t> sizes(static_cast<size_t>(world_));
        std::vector<MPI_Request> requests(static_cast<size_t>(world_), MPI_REQUEST_NULL);
        for (int r = 0; r < world_; ++r)
            if (r != root)
                TRAINRIG_TRY(mpi_status(MPI_Irecv(&sizes[static_cast<size_t>(r)], 1, MPI_UINT64_T,
                                                  r, kSizeTag, MPI_COMM_WORLD,
                                                  &requests[static_cast<size_t>(r)]),
                                        "MPI_Irecv"));
        std::vector<int> done_ranks(static_cast<size_t>(world_));
        for (int pending = world_ - 1; pending > 0;) {
            int count = 0;
            TRAINRIG_TRY(mpi_status(MPI_Testsome(world_, requests.data(), &count,
                                                 done_ranks.data(), MPI_STATUSES_IGNORE),
                                    "MPI_Testsome"));
            if (count == MPI_UNDEFINED) break;
            for (int i = 0; i < count; ++i) {
                const auto r = static_cast<size_t>(done_ranks[static_cast<size_t>(i)]);
                std::string bytes(sizes[r], '\0');
                for (size_t done = 0; done < bytes.size();) {
                    const size_t n = std::min(kMaxCount, bytes.size() - done);
                    TRAINRIG_TRY(mpi_status(
                        MPI_Recv(bytes.data() + done, static_cast<int>(n), MPI_BYTE,
                                 static_cast<int>(r), kDataTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                        "MPI_Recv"));
                    done += n;
                }
                all[r] = std::move(bytes);
                --pending;
            }
            if (count == 0) {
                if (std::chrono::steady_clock::now() >= deadline) break;
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        }
        for (auto& request : requests)
            if (request != MPI_REQUEST_NULL) {
                MPI_Cancel(&request);
                MPI_Request_free(&request);
            }
        return all;
    }

    [[noreturn]] void abort(int code) override {
        MPI_Abort(MPI_COMM_WORLD, code);
        std::_Exit(code);
    }

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
