#include "train/cuda/device_world.h"

#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "core/local_rank.h"
#include "cuda/cuda_check.h"

namespace trainrig::train::cuda {

using trainrig::cuda::device_alloc;
using trainrig::cuda::make_stream;
using trainrig::cuda::pinned_alloc;
using trainrig::cuda::wait_stream;

Result<std::unique_ptr<DeviceWorld>> DeviceWorld::open(int rank, int world, int local_rank,
                                                       const std::string& nccl_id) {
    std::unique_ptr<DeviceWorld> w(new DeviceWorld());
    w->rank_ = rank;
    w->world_ = world;
    int count = 0;
    CUDA_TRY(cudaGetDeviceCount(&count));
    if (count < 1) return Status(Errc::kUnsupported, "no CUDA device is visible to this process");
    // One process per GPU: the launcher's local rank picks it (CUDA_VISIBLE_DEVICES applies),
    // by the rule the NCCL benchmark follows too.
    w->device_ = local_device(local_rank, count);
    CUDA_TRY(cudaSetDevice(w->device_));
    auto s = make_stream();
    if (!s.ok()) return s.status();
    w->stream_ = std::move(s).value();
    if (world > 1) {
        ncclUniqueId id{};
        if (nccl_id.size() != sizeof id)
            return Status(Errc::kInvalidInput, fmt::format("the NCCL id has {} bytes, not {}",
                                                           nccl_id.size(), sizeof id));
        std::memcpy(&id, nccl_id.data(), sizeof id);
        TRAINRIG_TRY(trainrig::cuda::move_into(
            trainrig::cuda::NcclComms::init(world, id, {{w->device_, rank}}), w->comms_));
    }
    return w;
}

// Before the staging buffers are freed: a close that cannot finish aborts instead.
DeviceWorld::~DeviceWorld() { (void)comms_.close(); }

void DeviceWorld::abort() { comms_.abort(); }

Status DeviceWorld::wait() {
    return world_ > 1 ? comms_.wait(stream_.get()) : wait_stream(stream_.get());
}

Result<std::string> DeviceWorld::describe() const {
    cudaDeviceProp p{};
    CUDA_TRY(cudaGetDeviceProperties(&p, device_));
    size_t free = 0, total = 0;
    CUDA_TRY(cudaMemGetInfo(&free, &total));
    const nlohmann::json j = {{"index", device_},
                              {"name", p.name},
                              {"pci_bus_id", fmt::format("{:08x}:{:02x}:{:02x}.0", p.pciDomainID,
                                                         p.pciBusID, p.pciDeviceID)},
                              {"compute_capability", fmt::format("{}.{}", p.major, p.minor)},
                              {"memory_bytes", total},
                              {"free_bytes", free}};
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status DeviceWorld::stage(size_t bytes) {
    if (!comms_.usable())
        return Status(Errc::kIo, "the NCCL communicator was aborted after an earlier failure");
    if (bytes <= staging_bytes_) return ok_status();
    staging_.reset();
    pinned_.reset();
    staging_bytes_ = 0;
    auto m = device_alloc(bytes);
    if (!m.ok()) return m.status();
    auto p = pinned_alloc(bytes);
    if (!p.ok()) return p.status();
    staging_ = std::move(m).value();
    pinned_ = std::move(p).value();
    staging_bytes_ = bytes;
    return ok_status();
}

Status DeviceWorld::collective(void* data, size_t bytes, const char* name,
                               const std::function<ncclResult_t(void*)>& call) {
    TRAINRIG_TRY(stage(bytes));
    std::memcpy(pinned_.get(), data, bytes);
    CUDA_TRY(cudaMemcpyAsync(staging_.get(), pinned_.get(), bytes, cudaMemcpyHostToDevice,
                             stream_.get()));
    TRAINRIG_TRY(comms_.settle(call(staging_.get()), name));
    CUDA_TRY(cudaMemcpyAsync(pinned_.get(), staging_.get(), bytes, cudaMemcpyDeviceToHost,
                             stream_.get()));
    TRAINRIG_TRY(comms_.wait(stream_.get()));  // aborts the communicator if it fails
    std::memcpy(data, pinned_.get(), bytes);
    return ok_status();
}

Status DeviceWorld::all_reduce(void* data, size_t n, ncclDataType_t dtype) {
    if (world_ == 1 || n == 0) return ok_status();
    const size_t bytes = n * (dtype == ncclDouble ? sizeof(double) : sizeof(float));
    return collective(data, bytes, "ncclAllReduce", [&](void* buf) {
        return ncclAllReduce(buf, buf, n, dtype, ncclSum, comm(), stream_.get());
    });
}

Status DeviceWorld::broadcast(void* data, size_t bytes, int root) {
    if (world_ == 1 || bytes == 0) return ok_status();
    return collective(data, bytes, "ncclBroadcast", [&](void* buf) {
        return ncclBroadcast(buf, buf, bytes, ncclUint8, root, comm(), stream_.get());
    });
}

}  // namespace trainrig::train::cuda
