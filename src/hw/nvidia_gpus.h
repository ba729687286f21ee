// NVIDIA GPU models by PCI device id: the name and memory doctor needs to judge a GPU it can
// only see on the PCI bus (before, or without, the driver). Sources in nvidia_gpus.cpp.
#pragma once

#include <cstdint>
#include <string>

namespace trainrig {

struct NvidiaGpuModel {
    uint16_t device_id;
    const char* name;
    uint32_t memory_gib;  // on-board memory as sold (GiB, rounded up)
    bool datacenter;      // data-centre parts expose all memory through BAR1
    // NVLink links a healthy part has up. On an SXM/HGX board they are wired and must all be up;
    // a PCIe card has them only through a bridge, so fewer (or none) is not a fault.
    int nvlinks = 0;
    bool nvlink_on_board = false;
    bool mig = false;  // Multi-Instance GPU
};

// The model for a PCI device id, or nullptr when unknown.
const NvidiaGpuModel* find_nvidia_gpu(uint64_t device_id);

// "A100-SXM4-80GB" or "NVIDIA GPU 10de:2b85" for unknown ids.
std::string nvidia_gpu_name(uint64_t device_id);

// PCI class codes (24-bit, class/subclass/prog-if) that are GPUs: VGA 0x0300xx, 3D 0x0302xx.
inline bool is_gpu_class(uint64_t class_code) {
    auto base_sub = class_code >> 8;
    return base_sub == 0x0300 || base_sub == 0x0302;
}

}  // namespace trainrig
