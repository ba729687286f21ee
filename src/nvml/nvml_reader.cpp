// One pass over NVML: system facts, then each GPU, then each pair of GPUs. Every call goes
// through Reader::call(), which names the call on the channel first (so a hang is reported with
// the call that hung) and turns NVML's return code into the Fact's state.
#include "nvml/nvml_reader.h"

#include <fmt/format.h>

#include <chrono>
#include <climits>
#include <vector>

#include "core/text.h"

namespace trainrig::nvml {

namespace {

class Reader {
public:
    Reader(const Library& lib, IsolatedChannel& channel) : lib_(lib), channel_(channel) {}

    // Calls fn(args...) as `name` on GPU `gpu` (-1: a system call). A null fn is an entry point
    // this driver's NVML does not export.
    template <class Fn, class... Args>
    Return call(const char* name, int gpu, Fn fn, Args... args) {
        if (!fn) return kErrorFunctionNotFound;
        channel_.step(gpu < 0 ? std::string(name) : fmt::format("{} on GPU {}", name, gpu));
        return fn(args...);
    }

    // The Fact for a call that failed with `r`.
    template <class T>
    Fact<T> failure(const char* name, Return r, NvmlGpu* gpu = nullptr) {
        switch (r) {
            case kErrorNotSupported:
                return Fact<T>::failed(
                    {Errc::kUnsupported, fmt::format("{}: not supported {}", name,
                                                     gpu ? "on this GPU" : "by this driver")});
            case kErrorFunctionNotFound:
                return Fact<T>::failed(
                    {Errc::kUnsupported, fmt::format("{}: not in this driver's NVML", name)});
            case kErrorNoPermission:
                return Fact<T>::failed({Errc::kPermission, lib_.describe(name, r)});
            case kErrorGpuIsLost:
                if (gpu) gpu->lost = true;
                return Fact<T>::failed({Errc::kIo, lib_.describe(name, r)});
            default:
                return Fact<T>::failed({Errc::kIo, lib_.describe(name, r)});
        }
    }

    template <class T, class V>
    Fact<T> fact(const char* name, Return r, V value, NvmlGpu* gpu = nullptr) {
        if (r == kSuccess) return Fact<T>::known(static_cast<T>(value));
        return failure<T>(name, r, gpu);
    }

    Fact<std::string> system_string(const char* name, SystemGetStringFn fn, unsigned size) {
        std::vector<char> buf(size + 1, '\0');
        Return r = call(name, -1, fn, buf.data(), size);
        buf[size] = '\0';
        return fact<std::string>(name, r, sanitize_text(buf.data()));
    }

    Fact<std::string> device_string(const char* name, NvmlGpu& g, Device d, DeviceGetStringFn fn,
                                    unsigned size) {
        std::vector<char> buf(size + 1, '\0');
        Return r = call(name, g.index, fn, d, buf.data(), size);
        return fact<std::string>(name, r, sanitize_text(buf.data()), &g);
    }

    Fact<int64_t> device_uint(const char* name, NvmlGpu& g, Device d, DeviceGetUintFn fn) {
        unsigned v = 0;
        Return r = call(name, g.index, fn, d, &v);
        return fact<int64_t>(name, r, v, &g);
    }

    void read_gpu(NvmlGpu& g, Device d);
    void read_memory_health(NvmlGpu& g, Device d);
    void read_nvlinks(NvmlGpu& g, Device d);
    Fact<NvmlFacts> read();

    const Library& lib_;
    IsolatedChannel& channel_;
    const Functions& f = lib_.fn();
};

void Reader::read_gpu(NvmlGpu& g, Device d) {
    g.name = device_string("nvmlDeviceGetName", g, d, f.device_get_name, kDeviceNameBufferSize);
    g.uuid = device_string("nvmlDeviceGetUUID", g, d, f.device_get_uuid, kDeviceUuidBufferSize);
    g.vbios_version = device_string("nvmlDeviceGetVbiosVersion", g, d, f.device_get_vbios_version,
                                    kDeviceVbiosVersionBufferSize);
    PciInfo pci{};
    Return r = call("nvmlDeviceGetPciInfo", g.index, f.device_get_pci_info, d, &pci);
    pci.busId[sizeof pci.busId - 1] = '\0';
    g.bus_id = fact<std::string>("nvmlDeviceGetPciInfo", r, normalize_bus_id(pci.busId), &g);
    g.pci_device_id = fact<uint64_t>("nvmlDeviceGetPciInfo", r, pci.pciDeviceId >> 16, &g);
    int major = 0, minor = 0;
    r = call("nvmlDeviceGetCudaComputeCapability", g.index, f.device_get_cuda_compute_capability, d,
             &major, &minor);
    g.compute_capability = fact<std::string>("nvmlDeviceGetCudaComputeCapability", r,
                                             fmt::format("{}.{}", major, minor), &g);
    Memory mem{};
    r = call("nvmlDeviceGetMemoryInfo", g.index, f.device_get_memory_info, d, &mem);
    g.memory_total_bytes = fact<uint64_t>("nvmlDeviceGetMemoryInfo", r, mem.total, &g);
    Bar1Memory bar1{};
    r = call("nvmlDeviceGetBAR1MemoryInfo", g.index, f.device_get_bar1_memory_info, d, &bar1);
    g.bar1_total_bytes = fact<uint64_t>("nvmlDeviceGetBAR1MemoryInfo", r, bar1.bar1Total, &g);

    unsigned v = 0;
    r = call("nvmlDeviceGetTemperature", g.index, f.device_get_temperature, d, kTemperatureGpu, &v);
    g.temperature_c = fact<int64_t>("nvmlDeviceGetTemperature", r, v, &g);
    auto threshold = [&](int which) {
        unsigned t = 0;
        Return tr = call("nvmlDeviceGetTemperatureThreshold", g.index,
                         f.device_get_temperature_threshold, d, which, &t);
        return fact<int64_t>("nvmlDeviceGetTemperatureThreshold", tr, t, &g);
    };
    g.temperature_slowdown_c = threshold(kTemperatureThresholdSlowdown);
    g.temperature_shutdown_c = threshold(kTemperatureThresholdShutdown);
    g.temperature_max_operating_c = threshold(kTemperatureThresholdGpuMax);
    r = call("nvmlDeviceGetPowerUsage", g.index, f.device_get_power_usage, d, &v);
    g.power_draw_w = fact<double>("nvmlDeviceGetPowerUsage", r, v / 1000.0, &g);
    r = call("nvmlDeviceGetEnforcedPowerLimit", g.index, f.device_get_enforced_power_limit, d, &v);
    g.power_limit_w = fact<double>("nvmlDeviceGetEnforcedPowerLimit", r, v / 1000.0, &g);
    r = call("nvmlDeviceGetPowerManagementDefaultLimit", g.index,
             f.device_get_power_management_default_limit, d, &v);
    g.power_default_limit_w =
        fact<double>("nvmlDeviceGetPowerManagementDefaultLimit", r, v / 1000.0, &g);

    auto clock = [&](const char* name, DeviceGetClockFn fn, int type) {
        unsigned mhz = 0;
        Return cr = call(name, g.index, fn, d, type, &mhz);
        return fact<int64_t>(name, cr, mhz, &g);
    };
    g.clocks.sm_mhz = clock("nvmlDeviceGetClockInfo", f.device_get_clock_info, kClockSm);
    g.clocks.sm_max_mhz = clock("nvmlDeviceGetMaxClockInfo", f.device_get_max_clock_info, kClockSm);
    g.clocks.mem_mhz = clock("nvmlDeviceGetClockInfo", f.device_get_clock_info, kClockMem);
    g.clocks.mem_max_mhz =
        clock("nvmlDeviceGetMaxClockInfo", f.device_get_max_clock_info, kClockMem);
    unsigned long long reasons = 0;
    r = call("nvmlDeviceGetCurrentClocksEventReasons", g.index,
             f.device_get_current_clocks_event_reasons, d, &reasons);
    g.clock_event_reasons =
        fact<uint64_t>("nvmlDeviceGetCurrentClocksEventReasons", r, reasons, &g);

    g.pcie.gen = device_uint("nvmlDeviceGetCurrPcieLinkGeneration", g, d,
                             f.device_get_curr_pcie_link_generation);
    g.pcie.gen_max = device_uint("nvmlDeviceGetMaxPcieLinkGeneration", g, d,
                                 f.device_get_max_pcie_link_generation);
    g.pcie.gpu_gen_max = device_uint("nvmlDeviceGetGpuMaxPcieLinkGeneration", g, d,
                                     f.device_get_gpu_max_pcie_link_generation);
    g.pcie.width =
        device_uint("nvmlDeviceGetCurrPcieLinkWidth", g, d, f.device_get_curr_pcie_link_width);
    g.pcie.width_max =
        device_uint("nvmlDeviceGetMaxPcieLinkWidth", g, d, f.device_get_max_pcie_link_width);
    r = call("nvmlDeviceGetPcieReplayCounter", g.index, f.device_get_pcie_replay_counter, d, &v);
    g.pcie.replay_count = fact<uint64_t>("nvmlDeviceGetPcieReplayCounter", r, v, &g);

    read_memory_health(g, d);

    int state = 0;
    r = call("nvmlDeviceGetPersistenceMode", g.index, f.device_get_persistence_mode, d, &state);
    g.persistence_mode =
        fact<bool>("nvmlDeviceGetPersistenceMode", r, state == kFeatureEnabled, &g);
    unsigned mig_current = 0, mig_pending = 0;
    r = call("nvmlDeviceGetMigMode", g.index, f.device_get_mig_mode, d, &mig_current, &mig_pending);
    g.mig = fact<MigMode>("nvmlDeviceGetMigMode", r,
                          MigMode{mig_current == kDeviceMigEnable, mig_pending == kDeviceMigEnable},
                          &g);

    read_nvlinks(g, d);

    constexpr unsigned kWords = 4096 / (CHAR_BIT * sizeof(unsigned long));
    unsigned long mask[kWords] = {};
    r = call("nvmlDeviceGetCpuAffinity", g.index, f.device_get_cpu_affinity, d, kWords, mask);
    g.cpu_affinity =
        fact<std::string>("nvmlDeviceGetCpuAffinity", r, cpu_mask_to_list(mask, kWords), &g);

    GpuFabricInfo fabric{};
    r = call("nvmlDeviceGetGpuFabricInfo", g.index, f.device_get_gpu_fabric_info, d, &fabric);
    static const char* kStates[] = {"not_supported", "not_started", "in_progress", "completed"};
    const char* status = return_name(fabric.status);
    g.fabric = fact<GpuFabric>(
        "nvmlDeviceGetGpuFabricInfo", r,
        GpuFabric{fabric.state < 4 ? kStates[fabric.state] : fmt::format("state {}", fabric.state),
                  status ? status : fmt::format("NVML error {}", fabric.status)},
        &g);
}

void Reader::read_memory_health(NvmlGpu& g, Device d) {
    int current = 0, pending = 0;
    Return r = call("nvmlDeviceGetEccMode", g.index, f.device_get_ecc_mode, d, &current, &pending);
    g.ecc.enabled = fact<bool>("nvmlDeviceGetEccMode", r, current == kFeatureEnabled, &g);
    g.ecc.enabled_pending = fact<bool>("nvmlDeviceGetEccMode", r, pending == kFeatureEnabled, &g);
    auto count = [&](int type, int counter) {
        unsigned long long n = 0;
        Return cr = call("nvmlDeviceGetTotalEccErrors", g.index, f.device_get_total_ecc_errors, d,
                         type, counter, &n);
        return fact<uint64_t>("nvmlDeviceGetTotalEccErrors", cr, n, &g);
    };
    g.ecc.volatile_uncorrected = count(kMemoryErrorUncorrected, kVolatileEcc);
    g.ecc.aggregate_uncorrected = count(kMemoryErrorUncorrected, kAggregateEcc);
    g.ecc.volatile_corrected = count(kMemoryErrorCorrected, kVolatileEcc);
    g.ecc.aggregate_corrected = count(kMemoryErrorCorrected, kAggregateEcc);

    unsigned corr = 0, unc = 0, is_pending = 0, failure_occurred = 0;
    r = call("nvmlDeviceGetRemappedRows", g.index, f.device_get_remapped_rows, d, &corr, &unc,
             &is_pending, &failure_occurred);
    g.remapped_rows =
        fact<RemappedRows>("nvmlDeviceGetRemappedRows", r,
                           RemappedRows{corr, unc, is_pending != 0, failure_occurred != 0}, &g);

    // A count query: pageCount 0 and no buffer. NVML answers INSUFFICIENT_SIZE when pages exist
    // (with the count filled in), SUCCESS when there are none.
    auto pages = [&](int cause, uint64_t& out) {
        unsigned n = 0;
        Return pr = call("nvmlDeviceGetRetiredPages", g.index, f.device_get_retired_pages, d, cause,
                         &n, static_cast<unsigned long long*>(nullptr));
        if (pr == kErrorInsufficientSize) pr = kSuccess;
        out = n;
        return pr;
    };
    RetiredPages retired;
    r = pages(kPageRetirementMultipleSingleBitEcc, retired.single_bit);
    if (r == kSuccess) r = pages(kPageRetirementDoubleBitEcc, retired.double_bit);
    if (r == kSuccess) {
        int p = 0;
        Return pr = call("nvmlDeviceGetRetiredPagesPendingStatus", g.index,
                         f.device_get_retired_pages_pending_status, d, &p);
        retired.pending =
            fact<bool>("nvmlDeviceGetRetiredPagesPendingStatus", pr, p == kFeatureEnabled, &g);
    }
    g.retired_pages = fact<RetiredPages>("nvmlDeviceGetRetiredPages", r, retired, &g);
}

void Reader::read_nvlinks(NvmlGpu& g, Device d) {
    // The number of links differs by SKU: ask link by link until NVML says there is no such link.
    std::vector<NvLink> links;
    Return first = kSuccess;
    for (unsigned link = 0; link < kNvLinkMaxLinks; ++link) {
        int state = 0;
        Return r =
            call("nvmlDeviceGetNvLinkState", g.index, f.device_get_nvlink_state, d, link, &state);
        if (r == kErrorNotSupported || r == kErrorInvalidArgument) {
            if (link == 0) first = kErrorNotSupported;
            break;
        }
        if (r != kSuccess) {
            first = r;
            break;
        }
        NvLink l;
        l.link = static_cast<int>(link);
        l.active = state == kFeatureEnabled;
        if (l.active) {
            PciInfo pci{};
            Return pr = call("nvmlDeviceGetNvLinkRemotePciInfo", g.index,
                             f.device_get_nvlink_remote_pci_info, d, link, &pci);
            pci.busId[sizeof pci.busId - 1] = '\0';
            pci.busIdLegacy[sizeof pci.busIdLegacy - 1] = '\0';
            const char* bus = f.nvlink_remote_pci_info_is_v1 ? pci.busIdLegacy : pci.busId;
            l.remote_bus_id = fact<std::string>("nvmlDeviceGetNvLinkRemotePciInfo", pr,
                                                normalize_bus_id(bus), &g);
            int type = 0;
            pr = call("nvmlDeviceGetNvLinkRemoteDeviceType", g.index,
                      f.device_get_nvlink_remote_device_type, d, link, &type);
            const char* word = type == kNvLinkDeviceGpu      ? "gpu"
                               : type == kNvLinkDeviceSwitch ? "switch"
                               : type == kNvLinkDeviceIbmNpu ? "ibmnpu"
                                                             : "unknown";
            l.remote_type =
                fact<std::string>("nvmlDeviceGetNvLinkRemoteDeviceType", pr, std::string(word), &g);
        }
        links.push_back(std::move(l));
    }
    if (first != kSuccess)
        g.nvlinks = failure<std::vector<NvLink>>("nvmlDeviceGetNvLinkState", first, &g);
    else
        g.nvlinks = Fact<std::vector<NvLink>>::known(std::move(links));
}

Fact<NvmlFacts> Reader::read() {
    const auto start = std::chrono::steady_clock::now();
    Return r = call("nvmlInit", -1, f.init);
    if (r == kErrorDriverNotLoaded)
        return Fact<NvmlFacts>::failed({Errc::kNotFound, lib_.describe("nvmlInit", r) +
                                                             ": the NVIDIA kernel module is not "
                                                             "loaded"});
    if (r != kSuccess) return Fact<NvmlFacts>::failed({Errc::kIo, lib_.describe("nvmlInit", r)});
    NvmlFacts out;
    out.library = lib_.path();
    out.driver_version = system_string("nvmlSystemGetDriverVersion", f.system_get_driver_version,
                                       kSystemDriverVersionBufferSize);
    out.nvml_version = system_string("nvmlSystemGetNVMLVersion", f.system_get_nvml_version,
                                     kSystemNvmlVersionBufferSize);
    int cuda = 0;
    r = call("nvmlSystemGetCudaDriverVersion", -1, f.system_get_cuda_driver_version, &cuda);
    out.cuda_driver_version = fact<int64_t>("nvmlSystemGetCudaDriverVersion", r, cuda);
    unsigned count = 0;
    r = call("nvmlDeviceGetCount", -1, f.device_get_count, &count);
    if (r != kSuccess) {
        call("nvmlShutdown", -1, f.shutdown);
        return Fact<NvmlFacts>::failed({Errc::kIo, lib_.describe("nvmlDeviceGetCount", r)});
    }
    std::vector<Device> handles(count, nullptr);
    for (unsigned i = 0; i < count; ++i) {
        NvmlGpu g;
        g.index = static_cast<int>(i);
        r = call("nvmlDeviceGetHandleByIndex", g.index, f.device_get_handle_by_index, i,
                 &handles[i]);
        if (r == kSuccess) {
            read_gpu(g, handles[i]);
        } else {
            handles[i] = nullptr;
            g.lost = r == kErrorGpuIsLost;
            if (!g.lost) g.unreachable = lib_.describe("nvmlDeviceGetHandleByIndex", r);
        }
        out.gpus.push_back(std::move(g));
    }
    for (unsigned a = 0; a < count; ++a)
        for (unsigned b = a + 1; b < count; ++b) {
            GpuPair p;
            p.a = static_cast<int>(a);
            p.b = static_cast<int>(b);
            if (!handles[a] || !handles[b] || out.gpus[a].lost || out.gpus[b].lost) {
                p.level = Fact<std::string>::failed(
                    {Errc::kIo, "a GPU of this pair is lost or has no handle"});
            } else {
                int level = 0;
                r = call("nvmlDeviceGetTopologyCommonAncestor", p.a,
                         f.device_get_topology_common_ancestor, handles[a], handles[b], &level);
                p.level = fact<std::string>("nvmlDeviceGetTopologyCommonAncestor", r,
                                            topology_level_name(level), &out.gpus[a]);
            }
            out.pairs.push_back(std::move(p));
        }
    call("nvmlShutdown", -1, f.shutdown);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return Fact<NvmlFacts>::known(std::move(out));
}

}  // namespace

Fact<NvmlFacts> read_nvml(const Library& lib, IsolatedChannel& channel) {
    return Reader(lib, channel).read();
}

std::string normalize_bus_id(std::string_view id) {
    // NVML pads the domain to 8 digits and writes hex letters in upper case; sysfs uses 4
    // digits and lower case. A domain above 0xffff keeps its digits.
    std::string s = sanitize_text(id);
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto colon = s.find(':');
    if (colon == std::string::npos || colon <= 4) return s;
    size_t zeros = 0;
    while (zeros < colon - 4 && s[zeros] == '0') ++zeros;
    return s.substr(zeros);
}

std::string cpu_mask_to_list(const unsigned long* words, size_t count) {
    std::vector<int> cpus;
    constexpr int kBits = CHAR_BIT * sizeof(unsigned long);
    for (size_t w = 0; w < count; ++w)
        for (int b = 0; b < kBits; ++b)
            if (words[w] & (1UL << b)) cpus.push_back(static_cast<int>(w) * kBits + b);
    return format_cpulist(cpus);
}

std::string topology_level_name(int level) {
    switch (level) {
        case kTopologyInternal:
            return "INTERNAL";
        case kTopologySingle:
            return "SINGLE";
        case kTopologyMultiple:
            return "MULTIPLE";
        case kTopologyHostbridge:
            return "HOSTBRIDGE";
        case kTopologyNode:
            return "NODE";
        case kTopologySystem:
            return "SYSTEM";
        default:
            return fmt::format("LEVEL_{}", level);
    }
}

}  // namespace trainrig::nvml
