// Where the ranks of an emulated NCCL communicator meet: a POSIX shared-memory segment named by
// the unique id, so ranks in several processes (under mpirun) and in one process
// (ncclCommInitAll) meet the same way. It holds a barrier, one staging slot per rank for
// collectives, and a mailbox per ordered pair of ranks for send/recv, each moved in chunks.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace trainrig::emu {

enum class Wait { kDone, kAborted };

class Rendezvous {
public:
    static constexpr size_t kSlotBytes = size_t{1} << 20;       // per rank, per collective chunk
    static constexpr size_t kMailboxBytes = size_t{256} << 10;  // per ordered pair of ranks

    // Joins the segment `name` as `rank` of `nranks`; the first to come creates it. Empty
    // error when joined; else why not, in one sentence.
    static Rendezvous* join(const std::string& name, int nranks, int rank, std::string* error);
    ~Rendezvous();

    // True once every rank has joined; the segment's name is then removed.
    bool all_joined();
    // Waits until every rank has called it as often; kAborted once this rank is aborted.
    Wait barrier();
    // Ends every wait of this rank now and from now on (ncclCommAbort).
    void abort();
    bool aborted() const { return aborted_.load(); }

    unsigned char* slot(int rank);
    // Puts `bytes` (≤ kMailboxBytes) for `to`, after it took the last; takes what `from` put.
    Wait put(int to, const void* data, size_t bytes);
    Wait take(int from, void* data, size_t bytes);

    int nranks() const { return nranks_; }
    int rank() const { return rank_; }

private:
    struct Header;
    struct Mailbox;
    Rendezvous() = default;
    Mailbox* mailbox(int from, int to);
    template <class Pred>
    Wait wait_until(Pred done);

    Header* header_ = nullptr;
    size_t bytes_ = 0;
    std::string name_;
    int nranks_ = 0, rank_ = 0;
    std::atomic<bool> aborted_{false};
};

}  // namespace trainrig::emu
