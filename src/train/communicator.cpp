#include "train/communicator.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "train/mpi_communicator.h"

namespace trainrig::train {

Result<std::vector<std::optional<std::string>>> Communicator::gather(
    const std::string& mine, int root, std::chrono::steady_clock::time_point) {
    if (world() != 1)
        return Status(Errc::kUnsupported,
                      fmt::format("the {} communicator cannot gather", name()));
    std::vector<std::optional<std::string>> all;
    if (rank() == root) all.emplace_back(mine);
    return all;
}

void Communicator::abort(int code) { std::_Exit(code); }

bool launched_by_mpi() {
    // Open MPI's mpirun; MPICH/Hydra (PMI_SIZE); Slurm's srun with PMIx.
    for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
        if (std::getenv(var) != nullptr) return true;
    return false;
}

void hide_launcher_from_children() {
    std::vector<std::string> names;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string_view var(*e);
        if (var.starts_with("OMPI_") || var.starts_with("PMIX_") || var.starts_with("PMI_"))
            names.emplace_back(var.substr(0, var.find('=')));
    }
    for (const auto& name : names) ::unsetenv(name.c_str());
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
