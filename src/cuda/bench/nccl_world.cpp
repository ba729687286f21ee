// Communicator set-up for the three ways the NCCL benchmark can be launched.
#include "cuda/bench/nccl_world.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

#include "core/local_rank.h"
#include "cuda/cuda_check.h"
#include "cuda/device_memory.h"

#ifdef TRAINRIG_HAVE_MPI
#include <mpi.h>
#endif

namespace trainrig::cuda {
namespace {

// An integer environment variable, or -1.
int env_int(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return -1;
    char* end = nullptr;
    const long x = std::strtol(v, &end, 10);
    return *end == '\0' && x >= 0 && x < 1 << 30 ? static_cast<int>(x) : -1;
}

struct Launch {
    std::string launcher;  // "single-process", "mpi", "torchrun"
    int rank = 0, size = 1, local_rank = 0;
};

Result<Launch> detect_launch() {
    Launch l;
    if (int r = env_int("OMPI_COMM_WORLD_RANK"), s = env_int("OMPI_COMM_WORLD_SIZE");
        r >= 0 && s > 1) {
        l = {"mpi", r, s, 0};
    } else if (int pr = env_int("PMI_RANK"), ps = env_int("PMI_SIZE"); pr >= 0 && ps > 1) {
        l = {"mpi", pr, ps, 0};
    } else if (int tr = env_int("RANK"), ts = env_int("WORLD_SIZE"); tr >= 0 && ts > 1) {
        l = {"torchrun", tr, ts, 0};
    } else {
        l.launcher = "single-process";
        return l;
    }
    // Whichever launcher gave the rank, the node-local rank comes by the rule the trainer and
    // `launch` follow: under srun with PMI no MPI variable says it, SLURM_LOCALID does.
    auto local = local_rank_from_process_env();
    if (!local.ok()) return local.status();
    l.local_rank = local->local_rank.value_or(0);
    return l;
}

Result<ncclUniqueId> mpi_unique_id([[maybe_unused]] const Launch& l) {
#ifdef TRAINRIG_HAVE_MPI
    TRAINRIG_TRY(ensure_mpi());
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank != l.rank || size != l.size)
        return Status{Errc::kInvalidInput,
                      fmt::format("MPI says rank {} of {}, the environment {} of {}", rank, size,
                                  l.rank, l.size)};
    ncclUniqueId id{};
    if (rank == 0) NCCL_TRY(ncclGetUniqueId(&id));
    if (MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return Status{Errc::kIo, "MPI_Bcast of the NCCL unique id failed"};
    return id;
#else
    return Status{Errc::kUnsupported, "launched by MPI, but this plugin was built without MPI",
                  "rebuild with MPI installed, or launch torchrun-style (RANK, WORLD_SIZE, "
                  "LOCAL_RANK) with NCCL_COMM_ID=host:port"};
#endif
}

}  // namespace

#ifdef TRAINRIG_HAVE_MPI
Status ensure_mpi() {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (finalized != 0) return Status{Errc::kUnsupported, "MPI was already finalized"};
    if (initialized == 0) {
        // This library was loaded RTLD_LOCAL by trainrig; Open MPI's components (loaded by
        // MPI_Init with dlopen) need libmpi's symbols global, so promote the loaded copy.
        ::dlopen("libmpi.so.40", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
        if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) return Status{Errc::kIo, "MPI_Init failed"};
        // At process exit, so a second benchmark in the same process still has MPI.
        std::atexit([] {
            int done = 0;
            MPI_Finalized(&done);
            if (done == 0) MPI_Finalize();
        });
    }
    return {};
}
#endif

Result<NcclWorld> NcclWorld::create(const std::vector<GpuInfo>& gpus) {
    auto launch = detect_launch();
    if (!launch.ok()) return launch.status();
    const Launch& l = *launch;
    NcclWorld w;
    w.launcher_ = l.launcher;
    ncclUniqueId id{};
    std::vector<NcclMember> members;
    if (l.launcher == "single-process") {
        if (gpus.size() < 2)
            return Status{Errc::kUnsupported, "nccl needs at least 2 GPUs or ranks",
                          "select several GPUs, or launch one process per GPU with mpirun or "
                          "torchrun"};
        // ncclCommInitAll's clique, made the way that can be bounded: one id, every rank
        // joining non-blocking in one group.
        w.size_ = static_cast<int>(gpus.size());
        NCCL_TRY(ncclGetUniqueId(&id));
        for (size_t i = 0; i < gpus.size(); ++i) {
            w.local_.push_back({static_cast<int>(i), gpus[i], nullptr});
            members.push_back({gpus[i].index, static_cast<int>(i)});
        }
    } else {
        if (gpus.empty()) return Status{Errc::kUnsupported, "no GPU selected for this rank"};
        if (l.launcher == "mpi") {
            auto got = mpi_unique_id(l);
            if (!got.ok()) return got.status();
            id = *got;
        } else {
            if (std::getenv("NCCL_COMM_ID") == nullptr)
                return Status{Errc::kInvalidInput,
                              "RANK and WORLD_SIZE are set but NCCL_COMM_ID is not",
                              "set NCCL_COMM_ID=<rank 0 host>:<free port> for every rank"};
            NCCL_TRY(ncclGetUniqueId(&id));  // the same id on every rank with NCCL_COMM_ID
        }
        w.size_ = l.size;
        const GpuInfo& g =
            gpus[static_cast<size_t>(local_device(l.local_rank, static_cast<int>(gpus.size())))];
        w.local_.push_back({l.rank, g, nullptr});
        members.push_back({g.index, l.rank});
    }
    TRAINRIG_TRY(move_into(NcclComms::init(w.size_, id, members), w.comms_));
    for (auto& r : w.local_) {
        CUDA_TRY(cudaSetDevice(r.gpu.index));
        CUDA_TRY(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
    }
    return w;
}

NcclWorld::NcclWorld(NcclWorld&& o) noexcept
    : size_(o.size_),
      local_(std::move(o.local_)),
      comms_(std::move(o.comms_)),
      launcher_(std::move(o.launcher_)) {
    o.local_.clear();
}

NcclWorld::~NcclWorld() {
    // Closed (or aborted when that cannot finish) before the streams NCCL's work is on go.
    (void)comms_.close();
    for (auto& r : local_)
        if (r.stream != nullptr) cudaStreamDestroy(r.stream);
}

}  // namespace trainrig::cuda
