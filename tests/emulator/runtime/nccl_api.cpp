// NCCL for the emulated device, from the NCCL User Guide's definitions of each operation: a
// communicator's ranks meet in a shared-memory rendezvous (runtime/nccl_rendezvous.h), whether
// they are threads of one process (ncclCommInitAll) or processes under mpirun
// (ncclCommInitRank with the unique id). A collective runs on its stream and waits there for
// the other ranks, as on a GPU; reductions take the ranks in order, so every rank gets the same
// bits. Buffers must be device memory of the communicator's device, large enough for the count
// in elements: a count given in bytes is an error here, not a silent overrun. Between
// ncclGroupStart and ncclGroupEnd the calls are gathered and run together per communicator, so
// a send and a receive between two ranks cannot wait for each other.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/api_common.h"
#include "runtime/nccl_rendezvous.h"
#include "runtime/stream.h"

using namespace trainrig::emu;

struct ncclComm {
    std::unique_ptr<Rendezvous> rv;
    int device = 0;
    std::atomic<ncclResult_t> async{ncclSuccess};
    std::thread init;  // a non-blocking initialisation
    std::string last_error;
};

namespace {

enum class Kind { kAllReduce, kBroadcast, kReduceScatter, kAllGather, kSend, kRecv };

struct Call {
    Kind kind;
    const void* send;
    void* recv;
    size_t count;
    ncclDataType_t type;
    ncclRedOp_t op;
    int peer;  // root or peer
    ncclComm_t comm;
    Stream* stream;
};

thread_local int tl_group_depth = 0;
thread_local std::vector<Call> tl_group;

size_t type_bytes(ncclDataType_t t) {
    switch (t) {
        case ncclInt8:
        case ncclUint8:
            return 1;
        case ncclFloat16:
        case ncclBfloat16:
            return 2;
        case ncclInt32:
        case ncclUint32:
        case ncclFloat32:
            return 4;
        case ncclInt64:
        case ncclUint64:
        case ncclFloat64:
            return 8;
        default:
            return 0;
    }
}

double load(const unsigned char* p, ncclDataType_t t, size_t i) {
    switch (t) {
        case ncclInt8:
            return reinterpret_cast<const int8_t*>(p)[i];
        case ncclUint8:
            return p[i];
        case ncclInt32:
            return reinterpret_cast<const int32_t*>(p)[i];
        case ncclUint32:
            return reinterpret_cast<const uint32_t*>(p)[i];
        case ncclInt64:
            return static_cast<double>(reinterpret_cast<const int64_t*>(p)[i]);
        case ncclUint64:
            return static_cast<double>(reinterpret_cast<const uint64_t*>(p)[i]);
        case ncclFloat16:
            return __half2float(reinterpret_cast<const __half*>(p)[i]);
        case ncclBfloat16:
            return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(p)[i]);
        case ncclFloat32:
            return reinterpret_cast<const float*>(p)[i];
        case ncclFloat64:
            return reinterpret_cast<const double*>(p)[i];
        default:
            return 0;
    }
}

void store(unsigned char* p, ncclDataType_t t, size_t i, double v) {
    switch (t) {
        case ncclInt8:
            reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(v);
            break;
        case ncclUint8:
            p[i] = static_cast<unsigned char>(v);
            break;
        case ncclInt32:
            reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
            break;
        case ncclUint32:
            reinterpret_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v);
            break;
        case ncclInt64:
            reinterpret_cast<int64_t*>(p)[i] = static_cast<int64_t>(v);
            break;
        case ncclUint64:
            reinterpret_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v);
            break;
        case ncclFloat16:
            reinterpret_cast<__half*>(p)[i] = __float2half_rn(static_cast<float>(v));
            break;
        case ncclBfloat16:
            reinterpret_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(static_cast<float>(v));
            break;
        case ncclFloat32:
            reinterpret_cast<float*>(p)[i] = static_cast<float>(v);
            break;
        case ncclFloat64:
            reinterpret_cast<double*>(p)[i] = v;
            break;
        default:
            break;
    }
}

// Float types accumulate in the type's own precision per step (fp32 adds in fp32, as a GPU
// reduction kernel does); the 16-bit ones in fp32, rounded once at the end.
double combine(double a, double b, ncclRedOp_t op, ncclDataType_t t) {
    double r = 0;
    switch (op) {
        case ncclSum:
        case ncclAvg:
            r = a + b;
            break;
        case ncclProd:
            r = a * b;
            break;
        case ncclMax:
            r = std::max(a, b);
            break;
        case ncclMin:
            r = std::min(a, b);
            break;
        default:
            break;
    }
    if (t == ncclFloat32 || t == ncclFloat16 || t == ncclBfloat16)
        r = static_cast<double>(static_cast<float>(r));
    return r;
}

// dst[i] = op over ranks of slot(r)[i], i < n.
void reduce_slots(Rendezvous& rv, unsigned char* dst, size_t n, ncclDataType_t t, ncclRedOp_t op) {
    for (size_t i = 0; i < n; ++i) {
        double acc = load(rv.slot(0), t, i);
        for (int r = 1; r < rv.nranks(); ++r) acc = combine(acc, load(rv.slot(r), t, i), op, t);
        if (op == ncclAvg) acc /= rv.nranks();
        store(dst, t, i, acc);
    }
}

bool device_buffer(const void* p, size_t bytes, int device) {
    if (bytes == 0) return true;
    Allocation a;
    return Emulator::get().find_allocation(p, bytes, &a) && a.device == device;
}

Wait run_collective(const Call& c) {
    Rendezvous& rv = *c.comm->rv;
    const size_t tb = type_bytes(c.type);
    const size_t chunk = Rendezvous::kSlotBytes / tb;
    const auto* send = static_cast<const unsigned char*>(c.send);
    auto* recv = static_cast<unsigned char*>(c.recv);
    const int me = rv.rank(), n = rv.nranks();
    for (size_t off = 0; off < c.count || (off == 0 && c.count == 0); off += chunk) {
        const size_t len = std::min(chunk, c.count - off);
        switch (c.kind) {
            case Kind::kAllReduce:
                std::memcpy(rv.slot(me), send + off * tb, len * tb);
                if (rv.barrier() == Wait::kAborted) return Wait::kAborted;
                reduce_slots(rv, recv + off * tb, len, c.type, c.op);
                break;
            case Kind::kBroadcast:
                if (me == c.peer) std::memcpy(rv.slot(me), send + off * tb, len * tb);
                if (rv.barrier() == Wait::kAborted) return Wait::kAborted;
                std::memmove(recv + off * tb, rv.slot(c.peer), len * tb);
                break;
            case Kind::kAllGather:
                std::memcpy(rv.slot(me), send + off * tb, len * tb);
                if (rv.barrier() == Wait::kAborted) return Wait::kAborted;
                for (int r = 0; r < n; ++r)
                    std::memcpy(recv + (static_cast<size_t>(r) * c.count + off) * tb, rv.slot(r),
                                len * tb);
                break;
            case Kind::kReduceScatter:  // every rank's part in turn
                for (int d = 0; d < n; ++d) {
                    std::memcpy(rv.slot(me), send + (static_cast<size_t>(d) * c.count + off) * tb,
                                len * tb);
                    if (rv.barrier() == Wait::kAborted) return Wait::kAborted;
                    if (d == me) reduce_slots(rv, recv + off * tb, len, c.type, c.op);
                    if (rv.barrier() == Wait::kAborted) return Wait::kAborted;
                }
                continue;
            default:
                break;
        }
        if (rv.barrier() == Wait::kAborted) return Wait::kAborted;  // slots free again
        if (c.count == 0) break;
    }
    return Wait::kDone;
}

// A group's sends and receives chunk by chunk, sends first: every pair moves one chunk at a
// time, so no rank waits on a mailbox its peer cannot empty.
Wait run_p2p(const std::vector<Call>& calls) {
    size_t most = 0;
    for (const Call& c : calls) most = std::max(most, c.count * type_bytes(c.type));
    for (size_t off = 0; off < most; off += Rendezvous::kMailboxBytes) {
        for (const Call& c : calls) {
            const size_t bytes = c.count * type_bytes(c.type);
            if (c.kind != Kind::kSend || off >= bytes) continue;
            const size_t len = std::min(Rendezvous::kMailboxBytes, bytes - off);
            if (c.comm->rv->put(c.peer, static_cast<const unsigned char*>(c.send) + off, len) ==
                Wait::kAborted)
                return Wait::kAborted;
        }
        for (const Call& c : calls) {
            const size_t bytes = c.count * type_bytes(c.type);
            if (c.kind != Kind::kRecv || off >= bytes) continue;
            const size_t len = std::min(Rendezvous::kMailboxBytes, bytes - off);
            if (c.comm->rv->take(c.peer, static_cast<unsigned char*>(c.recv) + off, len) ==
                Wait::kAborted)
                return Wait::kAborted;
        }
    }
    return Wait::kDone;
}

void fail_async(ncclComm_t comm, const std::string& why) {
    comm->last_error = why;
    std::fprintf(stderr, "trainrig emulated NCCL rank %d: %s\n", comm->rv->rank(), why.c_str());
    ncclResult_t expected = ncclSuccess;
    comm->async.compare_exchange_strong(expected, ncclSystemError);
}

// Runs one communicator's calls of a group (or one call) on its stream.
void enqueue_calls(std::vector<Call> calls) {
    Stream* s = calls.front().stream;
    enqueue_ordered(*s, [calls = std::move(calls)] {
        ncclComm_t comm = calls.front().comm;
        std::vector<Call> p2p;
        for (const Call& c : calls) {
            if (c.kind == Kind::kSend || c.kind == Kind::kRecv) {
                p2p.push_back(c);
                continue;
            }
            if (run_collective(c) == Wait::kAborted) return fail_async(comm, "aborted");
        }
        if (!p2p.empty() && run_p2p(p2p) == Wait::kAborted) fail_async(comm, "aborted");
    });
}

ncclResult_t submit(const Call& c) {
    if (c.comm == nullptr || c.comm->rv == nullptr) return ncclInvalidArgument;
    if (c.comm->async.load() != ncclSuccess) return c.comm->async.load();
    const size_t tb = type_bytes(c.type);
    if (tb == 0 || c.op < ncclSum || c.op > ncclAvg) return ncclInvalidArgument;
    const int n = c.comm->rv->nranks();
    if ((c.kind == Kind::kBroadcast || c.kind == Kind::kSend || c.kind == Kind::kRecv) &&
        (c.peer < 0 || c.peer >= n))
        return ncclInvalidArgument;
    size_t in = c.count * tb, out = c.count * tb;
    if (c.kind == Kind::kReduceScatter) in *= static_cast<size_t>(n);
    if (c.kind == Kind::kAllGather) out *= static_cast<size_t>(n);
    const bool reads =
        c.kind != Kind::kRecv && (c.kind != Kind::kBroadcast || c.comm->rv->rank() == c.peer);
    const bool writes = c.kind != Kind::kSend;
    if ((reads && !device_buffer(c.send, in, c.comm->device)) ||
        (writes && !device_buffer(c.recv, out, c.comm->device))) {
        c.comm->last_error = fmt::format(
            "a buffer is not {} bytes of device memory on device {} (is the count in elements?)",
            reads && !device_buffer(c.send, in, c.comm->device) ? in : out, c.comm->device);
        return ncclInvalidArgument;
    }
    if (c.stream == nullptr || c.stream->gpu().index != c.comm->device) return ncclInvalidArgument;
    if (tl_group_depth > 0) {
        tl_group.push_back(c);
        return ncclSuccess;
    }
    enqueue_calls({c});
    return ncclSuccess;
}

Call make_call(Kind kind, const void* send, void* recv, size_t count, ncclDataType_t type,
               ncclRedOp_t op, int peer, ncclComm_t comm, cudaStream_t stream) {
    int current = Emulator::get().current_index();
    if (comm != nullptr) Emulator::get().current_index() = comm->device;
    Stream* s = resolve_stream(stream);
    Emulator::get().current_index() = current;
    return Call{kind, send, recv, count, type, op, peer, comm, s};
}

std::string unique_name(const ncclUniqueId& id) {
    return std::string(id.internal, strnlen(id.internal, NCCL_UNIQUE_ID_BYTES));
}

ncclResult_t init(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank, int device,
                  bool blocking) {
    auto comm = std::make_unique<ncclComm>();
    comm->device = device;
    std::string error;
    comm->rv.reset(Rendezvous::join(unique_name(id), nranks, rank, &error));
    if (comm->rv == nullptr) {
        std::fprintf(stderr, "trainrig emulated NCCL: %s\n", error.c_str());
        return ncclInvalidArgument;
    }
    ncclComm* c = comm.release();
    *out = c;
    c->async = ncclInProgress;
    const auto wait_for_all = [c] {
        while (!c->rv->all_joined()) {
            if (c->rv->aborted()) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        ncclResult_t expected = ncclInProgress;
        c->async.compare_exchange_strong(expected, ncclSuccess);
    };
    if (!blocking) {
        c->init = std::thread(wait_for_all);
        return ncclInProgress;
    }
    wait_for_all();
    return c->async.load();
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
    std::memset(id, 0, sizeof *id);
    std::random_device rd;
    std::snprintf(id->internal, NCCL_UNIQUE_ID_BYTES, "/trainrig-nccl-%d-%08x%08x", ::getpid(),
                  rd(), rd());
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
    return init(comm, nranks, id, rank, Emulator::get().current_index(), true);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t* config) {
    const bool blocking = config == nullptr || config->blocking != 0;
    return init(comm, nranks, id, rank, Emulator::get().current_index(), blocking);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
    if (ndev < 1) return ncclInvalidArgument;
    ncclUniqueId id;
    ncclGetUniqueId(&id);
    for (int i = 0; i < ndev; ++i) {
        const int device = devlist != nullptr ? devlist[i] : i;
        if (Emulator::get().gpu(device) == nullptr) return ncclInvalidArgument;
        if (const ncclResult_t r = init(&comms[i], ndev, id, i, device, false);
            r != ncclInProgress && r != ncclSuccess)
            return r;
    }
    for (int i = 0; i < ndev; ++i) {
        comms[i]->init.join();
        if (comms[i]->async.load() != ncclSuccess) return comms[i]->async.load();
    }
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* error) {
    *error = comm->async.load();
    return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
    *count = comm->rv->nranks();
    return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
    *device = comm->device;
    return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
    *rank = comm->rv->rank();
    return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
    if (comm->init.joinable()) comm->init.join();
    return ncclSuccess;
}

// Waits for the communicator's work, as the library does, then frees it.
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    if (comm == nullptr) return ncclInvalidArgument;
    if (comm->init.joinable()) comm->init.join();
    wait_for_device(*Emulator::get().gpu(comm->device));
    delete comm;
    return ncclSuccess;
}

// Ends the communicator's waits at once, its own initialisation included, then frees it.
ncclResult_t ncclCommAbort(ncclComm_t comm) {
    if (comm == nullptr) return ncclInvalidArgument;
    comm->rv->abort();
    if (comm->init.joinable()) comm->init.join();
    wait_for_device(*Emulator::get().gpu(comm->device));
    delete comm;
    return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t r) {
    switch (r) {
        case ncclSuccess:
            return "no error";
        case ncclUnhandledCudaError:
            return "unhandled cuda error";
        case ncclSystemError:
            return "unhandled system error";
        case ncclInternalError:
            return "internal error";
        case ncclInvalidArgument:
            return "invalid argument";
        case ncclInvalidUsage:
            return "invalid usage";
        case ncclRemoteError:
            return "remote process exited or there was a network error";
        case ncclInProgress:
            return "NCCL operation in progress";
        default:
            return "unknown result code";
    }
}

const char* ncclGetLastError(ncclComm_t comm) {
    return comm != nullptr ? comm->last_error.c_str() : "";
}

ncclResult_t ncclGroupStart() {
    ++tl_group_depth;
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
    if (tl_group_depth == 0) return ncclInvalidUsage;
    if (--tl_group_depth > 0) return ncclSuccess;
    std::vector<Call> calls = std::move(tl_group);
    tl_group.clear();
    // One piece of work per communicator, its calls in the order given.
    while (!calls.empty()) {
        ncclComm_t comm = calls.front().comm;
        std::vector<Call> mine, rest;
        for (Call& c : calls) (c.comm == comm ? mine : rest).push_back(c);
        enqueue_calls(std::move(mine));
        calls = std::move(rest);
    }
    return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
    return submit(make_call(Kind::kAllReduce, send, recv, count, type, op, 0, comm, stream));
}

ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type,
                           int root, ncclComm_t comm, cudaStream_t stream) {
    return submit(
        make_call(Kind::kBroadcast, send, recv, count, type, ncclSum, root, comm, stream));
}

ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t recvcount, ncclDataType_t type,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
    return submit(
        make_call(Kind::kReduceScatter, send, recv, recvcount, type, op, 0, comm, stream));
}

ncclResult_t ncclAllGather(const void* send, void* recv, size_t sendcount, ncclDataType_t type,
                           ncclComm_t comm, cudaStream_t stream) {
    return submit(
        make_call(Kind::kAllGather, send, recv, sendcount, type, ncclSum, 0, comm, stream));
}

ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t type, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
    return submit(make_call(Kind::kSend, send, nullptr, count, type, ncclSum, peer, comm, stream));
}

ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
    return submit(make_call(Kind::kRecv, nullptr, recv, count, type, ncclSum, peer, comm, stream));
}

}  // extern "C"
