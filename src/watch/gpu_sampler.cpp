#include "watch/gpu_sampler.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"
#include "hw/nvidia_gpus.h"
#include "nvml/nvml_reader.h"
#include "watch/gpu_reading.h"

namespace trainrig::watch {
namespace {

using namespace nvml;
using Clock = DeadlineWorker::Clock;

Clock::time_point after(double seconds) {
    return Clock::now() +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string device_string(DeviceGetStringFn fn, Device d, unsigned size) {
    std::vector<char> buf(size + 1, '\0');
    if (!fn || fn(d, buf.data(), size) != kSuccess) return {};
    buf[size] = '\0';
    return sanitize_text(buf.data());
}

// What open() learns, filled on a worker so a hung nvmlInit cannot hang the caller.
struct Startup {
    Return init = kSuccess;
    Return count_rc = kSuccess;
    std::string driver;
    std::vector<GpuIdentity> gpus;
    std::vector<Device> handles;
    std::vector<std::string> unreachable;
};

void start_nvml(const Library& lib, Startup& out, std::atomic<const char*>& step) {
    const Functions& f = lib.fn();
    step = "nvmlInit";
    out.init = f.init ? f.init() : kErrorFunctionNotFound;
    if (out.init != kSuccess) return;
    char driver[kSystemDriverVersionBufferSize + 1] = {};
    step = "nvmlSystemGetDriverVersion";
    if (f.system_get_driver_version &&
        f.system_get_driver_version(driver, kSystemDriverVersionBufferSize) == kSuccess)
        out.driver = sanitize_text(driver);
    unsigned count = 0;
    step = "nvmlDeviceGetCount";
    out.count_rc = f.device_get_count ? f.device_get_count(&count) : kErrorFunctionNotFound;
    if (out.count_rc != kSuccess) return;
    for (unsigned i = 0; i < count; ++i) {
        GpuIdentity id;
        id.index = i;
        Device d = nullptr;
        step = "nvmlDeviceGetHandleByIndex";
        const Return r = f.device_get_handle_by_index(i, &d);
        if (r != kSuccess) d = nullptr;
        out.unreachable.push_back(r == kSuccess ? ""
                                                : lib.describe("nvmlDeviceGetHandleByIndex", r));
        if (d) {
            step = "nvmlDeviceGetName";
            id.name = device_string(f.device_get_name, d, kDeviceNameBufferSize);
            step = "nvmlDeviceGetUUID";
            id.uuid = device_string(f.device_get_uuid, d, kDeviceUuidBufferSize);
            PciInfo pci{};
            step = "nvmlDeviceGetPciInfo";
            if (f.device_get_pci_info && f.device_get_pci_info(d, &pci) == kSuccess) {
                pci.busId[sizeof pci.busId - 1] = '\0';
                id.bus_id = normalize_bus_id(pci.busId);
                id.pci_device_id = pci.pciDeviceId >> 16;
            }
            unsigned v = 0;
            step = "nvmlDeviceGetMaxPcieLinkGeneration";
            if (f.device_get_max_pcie_link_generation &&
                f.device_get_max_pcie_link_generation(d, &v) == kSuccess)
                id.pcie_gen_max = v;
            step = "nvmlDeviceGetMaxPcieLinkWidth";
            if (f.device_get_max_pcie_link_width &&
                f.device_get_max_pcie_link_width(d, &v) == kSuccess)
                id.pcie_width_max = v;
        }
        out.gpus.push_back(std::move(id));
        out.handles.push_back(d);
    }
    // NVLink is judged as doctor's gpu.nvlink judges it: against the part's own links, and only
    // where there are GPUs to link.
    const auto linked = std::count_if(out.handles.begin(), out.handles.end(),
                                      [](Device d) { return d != nullptr; });
    for (auto& id : out.gpus) {
        if (linked < 2) break;
        const NvidiaGpuModel* model = find_nvidia_gpu(id.pci_device_id);
        id.nvlinks_expected = model ? model->nvlinks : 0;
        id.nvlink_on_board = model && model->nvlink_on_board;
    }
}

}  // namespace

const char* gpu_state_name(GpuState s) {
    switch (s) {
        case GpuState::kOk:
            return "ok";
        case GpuState::kLost:
            return "lost";
        case GpuState::kHung:
            return "hung";
        case GpuState::kError:
            return "error";
    }
    return "error";
}

GpuSampler::GpuSampler(std::shared_ptr<const Library> lib, double deadline_seconds)
    : library_(std::move(lib)), deadline_seconds_(deadline_seconds) {}

Result<std::unique_ptr<GpuSampler>> GpuSampler::open(const LibraryChoice& choice,
                                                     double deadline_seconds) {
    auto lib = Library::open(choice.path);
    if (!lib) return lib.status();
    auto shared = std::make_shared<const Library>(std::move(lib).value());
    auto startup = std::make_shared<Startup>();
    DeadlineWorker worker;
    worker.start(
        [shared, startup](std::atomic<const char*>& step) { start_nvml(*shared, *startup, step); });
    if (!worker.wait_until(after(deadline_seconds)))
        return Status{
            Errc::kIo,
            fmt::format("{} did not return within {:g} s", worker.step(), deadline_seconds),
            "check the driver (nvidia-smi, the kernel log) and restart watch"};
    if (startup->init == kErrorDriverNotLoaded)
        return Status{Errc::kNotFound, shared->describe("nvmlInit", startup->init) +
                                           ": the NVIDIA kernel module is not loaded"};
    if (startup->init != kSuccess)
        return Status{Errc::kIo, shared->describe("nvmlInit", startup->init)};
    if (startup->count_rc != kSuccess)
        return Status{Errc::kIo, shared->describe("nvmlDeviceGetCount", startup->count_rc)};
    std::unique_ptr<GpuSampler> s(new GpuSampler(shared, deadline_seconds));
    s->driver_version_ = std::move(startup->driver);
    s->gpus_ = std::move(startup->gpus);
    s->handles_ = std::move(startup->handles);
    s->unreachable_ = std::move(startup->unreachable);
    for (size_t i = 0; i < s->gpus_.size(); ++i)
        s->workers_.push_back(std::make_unique<DeadlineWorker>());
    return s;
}

GpuSampler::~GpuSampler() {
    xid_events_.reset();  // stop waiting on the event set before NVML shuts down
    for (const auto& w : workers_)
        if (w->busy()) return;  // a call never came back: shutting NVML down under it is unsafe
    DeadlineWorker closer;
    const auto lib = library_;
    closer.start([lib](std::atomic<const char*>& step) {
        step = "nvmlShutdown";
        if (lib->fn().shutdown) lib->fn().shutdown();
    });
    closer.wait_until(after(deadline_seconds_));
}

bool GpuSampler::start_xid_events(std::string& why) {
    xid_events_ = NvmlXidEvents::start(library_, handles_, gpus_, why);
    return xid_events_ != nullptr;
}

std::vector<KernelEvent> GpuSampler::take_xid_events() {
    return xid_events_ ? xid_events_->take() : std::vector<KernelEvent>{};
}

NodeSample GpuSampler::sample(double now) {
    NodeSample tick;
    tick.time = now;
    const auto start = Clock::now();
    const auto deadline = after(deadline_seconds_);
    std::vector<std::shared_ptr<GpuSample>> results(gpus_.size());
    std::vector<bool> started(gpus_.size(), false);
    for (size_t i = 0; i < gpus_.size(); ++i) {
        if (!handles_[i]) continue;
        auto out = std::make_shared<GpuSample>();
        results[i] = out;
        const auto lib = library_;
        const Device d = handles_[i];
        const auto index = static_cast<unsigned>(i);
        started[i] = workers_[i]->start([lib, d, index, out](std::atomic<const char*>& step) {
            *out = read_gpu_sample(*lib, d, index, step);
        });
    }
    for (size_t i = 0; i < gpus_.size(); ++i) {
        GpuSample s;
        s.index = static_cast<unsigned>(i);
        if (!handles_[i]) {
            s.state = unreachable_[i].find("GPU_IS_LOST") != std::string::npos ? GpuState::kLost
                                                                               : GpuState::kError;
            s.problem = unreachable_[i];
        } else if (started[i] && workers_[i]->wait_until(deadline)) {
            s = std::move(*results[i]);
        } else {
            s.state = GpuState::kHung;
            s.problem = fmt::format("{} on GPU {} has not returned for {:.1f} s",
                                    *workers_[i]->step() ? workers_[i]->step() : "an NVML call", i,
                                    workers_[i]->running_seconds());
        }
        tick.gpus.push_back(std::move(s));
    }
    for (auto& s : tick.gpus) {
        const GpuIdentity& id = gpus_[s.index];
        s.pcie_gen_max = id.pcie_gen_max;
        s.pcie_width_max = id.pcie_width_max;
        s.nvlinks_expected = id.nvlinks_expected;
        s.nvlink_on_board = id.nvlink_on_board;
    }
    tick.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return tick;
}

}  // namespace trainrig::watch
