#include "runtime/nccl_rendezvous.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>

namespace trainrig::emu {

struct Rendezvous::Header {
    std::atomic<uint32_t> ready;  // set by the creator once the rest is initialised
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int nranks;
    int joined;
    uint64_t barrier_gen;
    int barrier_count;
    unsigned char taken[1024];  // which ranks have joined
};

struct Rendezvous::Mailbox {
    uint64_t full;  // under the header's mutex
    uint64_t bytes;
};

namespace {

size_t align_up(size_t n) { return (n + 63) / 64 * 64; }

constexpr size_t kHeaderBytes = 8192;

size_t segment_bytes(int n) {
    const size_t nn = static_cast<size_t>(n);
    return kHeaderBytes + nn * Rendezvous::kSlotBytes +
           nn * nn * (align_up(16) + Rendezvous::kMailboxBytes);
}

class Locked {
public:
    explicit Locked(pthread_mutex_t* mu) : mu_(mu) {
        if (pthread_mutex_lock(mu_) == EOWNERDEAD) pthread_mutex_consistent(mu_);
    }
    ~Locked() { pthread_mutex_unlock(mu_); }

private:
    pthread_mutex_t* mu_;
};

}  // namespace

Rendezvous* Rendezvous::join(const std::string& name, int nranks, int rank, std::string* error) {
    if (nranks < 1 || nranks > 1024 || rank < 0 || rank >= nranks) {
        *error = fmt::format("rank {} of {} is not a valid rank", rank, nranks);
        return nullptr;
    }
    static_assert(sizeof(Header) <= kHeaderBytes, "the header fits its page");
    const size_t bytes = segment_bytes(nranks);
    bool creator = true;
    int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
        creator = false;
        fd = ::shm_open(name.c_str(), O_RDWR, 0600);
    }
    if (fd < 0) {
        *error = fmt::format("cannot open shared memory {}: {}", name, std::strerror(errno));
        return nullptr;
    }
    if (creator && ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
        *error = fmt::format("cannot size shared memory {}: {}", name, std::strerror(errno));
        ::close(fd);
        return nullptr;
    }
    if (!creator) {  // wait until the creator has sized it
        for (int i = 0; i < 10000; ++i) {
            struct stat st {};
            if (::fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) >= sizeof(Header)) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) {
        *error = fmt::format("cannot map shared memory {}: {}", name, std::strerror(errno));
        return nullptr;
    }
    auto* h = static_cast<Header*>(m);
    if (creator) {
        pthread_mutexattr_t ma;
        pthread_mutexattr_init(&ma);
        pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
        pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
        pthread_mutex_init(&h->mu, &ma);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&h->cv, &ca);
        h->nranks = nranks;
        h->ready.store(1);
    } else {
        while (h->ready.load() == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    auto* r = new Rendezvous();
    r->header_ = h;
    r->bytes_ = bytes;
    r->name_ = name;
    r->nranks_ = nranks;
    r->rank_ = rank;
    {
        Locked lock(&h->mu);
        if (h->nranks != nranks) {
            *error = fmt::format("rank {} says there are {} ranks, another rank said {}", rank,
                                 nranks, h->nranks);
        } else if (h->taken[rank] != 0) {
            *error = fmt::format("rank {} joined twice", rank);
        } else {
            h->taken[rank] = 1;
            if (++h->joined == nranks) ::shm_unlink(name.c_str());
            pthread_cond_broadcast(&h->cv);
        }
    }
    if (!error->empty()) {
        ::munmap(m, bytes);
        delete r;
        return nullptr;
    }
    return r;
}

Rendezvous::~Rendezvous() {
    if (header_ != nullptr) ::munmap(header_, bytes_);
}

bool Rendezvous::all_joined() {
    Locked lock(&header_->mu);
    return header_->joined == nranks_;
}

template <class Pred>
Wait Rendezvous::wait_until(Pred done) {
    Locked lock(&header_->mu);
    while (!done()) {
        if (aborted_.load()) return Wait::kAborted;
        timespec until{};
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += 50'000'000;  // look at the abort flag every 50 ms
        if (until.tv_nsec >= 1'000'000'000) {
            until.tv_nsec -= 1'000'000'000;
            ++until.tv_sec;
        }
        if (pthread_cond_timedwait(&header_->cv, &header_->mu, &until) == EOWNERDEAD)
            pthread_mutex_consistent(&header_->mu);
    }
    return Wait::kDone;
}

Wait Rendezvous::barrier() {
    uint64_t gen = 0;
    {
        Locked lock(&header_->mu);
        gen = header_->barrier_gen;
        if (++header_->barrier_count == nranks_) {
            header_->barrier_count = 0;
            ++header_->barrier_gen;
            pthread_cond_broadcast(&header_->cv);
            return Wait::kDone;
        }
    }
    return wait_until([&] { return header_->barrier_gen != gen; });
}

void Rendezvous::abort() {
    aborted_.store(true);
    Locked lock(&header_->mu);
    pthread_cond_broadcast(&header_->cv);
}

unsigned char* Rendezvous::slot(int rank) {
    return reinterpret_cast<unsigned char*>(header_) + kHeaderBytes +
           static_cast<size_t>(rank) * kSlotBytes;
}

Rendezvous::Mailbox* Rendezvous::mailbox(int from, int to) {
    const size_t nn = static_cast<size_t>(nranks_);
    const size_t each = align_up(16) + kMailboxBytes;
    return reinterpret_cast<Mailbox*>(
        reinterpret_cast<unsigned char*>(header_) + kHeaderBytes + nn * kSlotBytes +
        (static_cast<size_t>(from) * nn + static_cast<size_t>(to)) * each);
}

Wait Rendezvous::put(int to, const void* data, size_t bytes) {
    Mailbox* box = mailbox(rank_, to);
    if (wait_until([&] { return box->full == 0; }) == Wait::kAborted) return Wait::kAborted;
    std::memcpy(reinterpret_cast<unsigned char*>(box) + align_up(16), data, bytes);
    Locked lock(&header_->mu);
    box->bytes = bytes;
    box->full = 1;
    pthread_cond_broadcast(&header_->cv);
    return Wait::kDone;
}

Wait Rendezvous::take(int from, void* data, size_t bytes) {
    Mailbox* box = mailbox(from, rank_);
    if (wait_until([&] { return box->full != 0; }) == Wait::kAborted) return Wait::kAborted;
    std::memcpy(data, reinterpret_cast<unsigned char*>(box) + align_up(16),
                bytes < box->bytes ? bytes : box->bytes);
    Locked lock(&header_->mu);
    box->full = 0;
    pthread_cond_broadcast(&header_->cv);
    return Wait::kDone;
}

}  // namespace trainrig::emu
