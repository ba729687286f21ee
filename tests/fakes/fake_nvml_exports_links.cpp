// Entry points that place a GPU: its PCI address, NVLinks, CPU affinity and its distance to
// another GPU.
#include <algorithm>
#include <climits>

#include "fake_nvml_export.h"

using namespace trainrig::nvml;
using namespace fake_nvml;

namespace fake_nvml {

void fill_pci_info_v1(const PciAddress& address, unsigned device_id, unsigned subsystem_id,
                      PciInfo& info) {
    // "0000:41:00.0": the bus id with a 4-digit domain, as the first struct held it.
    const std::string legacy = address.bus_id.substr(4);
    std::memcpy(info.busIdLegacy, legacy.c_str(), legacy.size() + 1);
    info.domain = address.domain;
    info.bus = address.bus;
    info.device = address.device;
    info.pciDeviceId = device_id;
    info.pciSubSystemId = subsystem_id;
}

void fill_pci_info(const PciAddress& address, unsigned device_id, unsigned subsystem_id,
                   PciInfo& info) {
    fill_pci_info_v1(address, device_id, subsystem_id, info);
    std::memcpy(info.busId, address.bus_id.c_str(), address.bus_id.size() + 1);
}

}  // namespace fake_nvml

static Return pci_info(const char* function, Device device, PciInfo* pci) {
    const Call call = begin_device_call(function, device);
    if (call.rc != kSuccess) return call.rc;
    if (!pci) return kErrorInvalidArgument;
    if (!call.gpu->pci) return kErrorNotSupported;
    fill_pci_info(*call.gpu->pci, call.gpu->pci_device_id, call.gpu->pci_subsystem_id, *pci);
    return kSuccess;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetPciInfo_v2(Device device, PciInfo* pci) {
    return pci_info(__func__, device, pci);
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_EXPORT Return nvmlDeviceGetPciInfo_v3(Device device, PciInfo* pci) {
    return pci_info(__func__, device, pci);
}
#endif

// The link a call asks about, or the code that answers it instead.
static Return find_link(const Gpu& gpu, unsigned int link, const NvLink*& found) {
    if (link >= kNvLinkMaxLinks) return kErrorInvalidArgument;
    if (!gpu.nvlinks || link >= gpu.nvlinks->size()) return kErrorNotSupported;
    found = &(*gpu.nvlinks)[link];
    return kSuccess;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetNvLinkState(Device device, unsigned int link, int* active) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    if (!active) return kErrorInvalidArgument;
    const NvLink* nvlink = nullptr;
    if (Return rc = find_link(*call.gpu, link, nvlink); rc != kSuccess) return rc;
    return put_enable_state(nvlink->active, active);
}

static Return remote_pci_info(const char* function, Device device, unsigned int link, PciInfo* pci,
                              bool v1_layout) {
    const Call call = begin_device_call(function, device);
    if (call.rc != kSuccess) return call.rc;
    if (!pci) return kErrorInvalidArgument;
    const NvLink* nvlink = nullptr;
    if (Return rc = find_link(*call.gpu, link, nvlink); rc != kSuccess) return rc;
    if (!nvlink->remote_pci) return kErrorNotSupported;
    if (v1_layout)
        fill_pci_info_v1(*nvlink->remote_pci, 0, 0, *pci);
    else
        fill_pci_info(*nvlink->remote_pci, 0, 0, *pci);
    return kSuccess;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetNvLinkRemotePciInfo(Device device, unsigned int link,
                                                         PciInfo* pci) {
    return remote_pci_info(__func__, device, link, pci, true);
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_EXPORT Return nvmlDeviceGetNvLinkRemotePciInfo_v2(Device device, unsigned int link,
                                                            PciInfo* pci) {
    return remote_pci_info(__func__, device, link, pci, false);
}
#endif

FAKE_NVML_EXPORT Return nvmlDeviceGetNvLinkRemoteDeviceType(Device device, unsigned int link,
                                                            int* type) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    if (!type) return kErrorInvalidArgument;
    const NvLink* nvlink = nullptr;
    if (Return rc = find_link(*call.gpu, link, nvlink); rc != kSuccess) return rc;
    return put(nvlink->remote_type, type);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetCpuAffinity(Device device, unsigned int words,
                                                 unsigned long* cpu_set) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    if (!cpu_set || words == 0) return kErrorInvalidArgument;
    if (!call.gpu->cpu_affinity) return kErrorNotSupported;
    constexpr unsigned kBitsPerWord = sizeof(unsigned long) * CHAR_BIT;
    std::fill_n(cpu_set, words, 0ul);
    // CPUs past the caller's words are left out, as the real call does.
    const unsigned long long bits = 1ull * words * kBitsPerWord;
    for (const CpuRange& range : *call.gpu->cpu_affinity)
        for (unsigned long long cpu = range.first; cpu <= range.last && cpu < bits; ++cpu)
            cpu_set[cpu / kBitsPerWord] |= 1ul << (cpu % kBitsPerWord);
    return kSuccess;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetTopologyCommonAncestor(Device first, Device second,
                                                            int* level) {
    const auto model = current_model();
    if (!model) return kErrorUninitialized;
    const Gpu* const gpus[] = {find_gpu(*model, first), find_gpu(*model, second)};
    if (!gpus[0] || !gpus[1]) return kErrorInvalidArgument;
    if (Return rc = apply_faults(*model, __func__, gpus, true); rc != kSuccess) return rc;
    if (!level) return kErrorInvalidArgument;
    const auto& rows = model->topology;
    const unsigned i = gpus[0]->index;
    const unsigned j = gpus[1]->index;
    if (i >= rows.size() || j >= rows[i].size()) return kErrorNotSupported;
    *level = rows[i][j];
    return kSuccess;
}
