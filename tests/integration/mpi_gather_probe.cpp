// The MPI gather of `validate --fleet`, under a real mpirun: `mpi_gather_probe DELAY`. Rank r sends
// (r + 1) MiB of the letter 'a' + r; the last rank waits DELAY seconds first. Rank 0 gathers with
// a 2 s deadline, prints one line per rank ("1: 2097152 bytes ok", "2: missing") and, when a rank
// is missing, aborts the job with exit code 3 as validate --fleet does; otherwise every rank
// exits 0. tests/scripts/fleet_mpi_test.py runs it.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "train/communicator.h"

int main(int argc, char** argv) {
    using namespace trainrig;
    auto comm = train::make_communicator();
    if (!comm.ok()) {
        std::fprintf(stderr, "%s\n", comm.status().message().c_str());
        return 2;
    }
    auto& c = **comm;
    const int delay = argc > 1 ? std::atoi(argv[1]) : 0;
    if (c.rank() == c.world() - 1 && delay > 0) ::sleep(static_cast<unsigned>(delay));
    const std::string mine(static_cast<size_t>(c.rank() + 1) << 20,
                           static_cast<char>('a' + c.rank()));
    auto all = c.gather(mine, 0, std::chrono::steady_clock::now() + std::chrono::seconds(2));
    if (!all.ok()) {
        std::fprintf(stderr, "%s\n", all.status().message().c_str());
        c.abort(2);
    }
    if (c.rank() != 0) {
        if (!all->empty()) return 4;  // only the root receives
        return c.barrier().ok() ? 0 : 2;
    }
    bool missing = false;
    for (size_t r = 0; r < all->size(); ++r) {
        const auto& got = (*all)[r];
        if (!got) {
            std::printf("%zu: missing\n", r);
            missing = true;
            continue;
        }
        const bool ok = got->size() == ((r + 1) << 20) &&
                        got->find_first_not_of(static_cast<char>('a' + r)) == std::string::npos;
        std::printf("%zu: %zu bytes %s\n", r, got->size(), ok ? "ok" : "CORRUPT");
    }
    std::fflush(stdout);
    if (missing) c.abort(3);
    return c.barrier().ok() ? 0 : 2;
}
