#include "runtime/emulator.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "core/emulated_gpu.h"
#include "core/text.h"
#include "plan/hardware.h"
#include "runtime/stream.h"

namespace trainrig::emu {
namespace {

// The default machine: four A100s at the bus ids of the project's fixture servers.
constexpr const char* kDefaultGpus = "0000:01:00.0,0000:41:00.0,0000:81:00.0,0000:c1:00.0";
constexpr const char* kDefaultModel = "a100-80g-sxm";

std::string env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? v : fallback;
}

// "80G", "2GiB", "512M", "1073741824": binary multiples, as GPU memory is counted.
std::optional<size_t> parse_bytes(std::string_view text) {
    size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
    const auto number = parse_u64(text.substr(0, digits));
    if (!number) return std::nullopt;
    std::string unit(text.substr(digits));
    if (unit.size() == 3 && unit.substr(1) == "iB") unit = unit.substr(0, 1);
    if (unit == "B") unit.clear();
    int shift = 0;
    if (unit == "K")
        shift = 10;
    else if (unit == "M")
        shift = 20;
    else if (unit == "G")
        shift = 30;
    else if (unit == "T")
        shift = 40;
    else if (!unit.empty())
        return std::nullopt;
    if (*number > (~uint64_t{0} >> shift)) return std::nullopt;
    return static_cast<size_t>(*number << shift);
}

// "0000:01:00.0" or "01:00.0", hexadecimal.
bool parse_bus_id(std::string_view text, EmulatedGpu& gpu) {
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    const std::string s(text);
    char tail = 0;
    if (std::sscanf(s.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &tail) != 4) {
        domain = 0;
        if (std::sscanf(s.c_str(), "%x:%x.%x%c", &bus, &device, &function, &tail) != 3)
            return false;
    }
    if (bus > 0xff || device > 0x1f || function > 7) return false;
    gpu.domain = static_cast<int>(domain);
    gpu.bus = static_cast<int>(bus);
    gpu.device = static_cast<int>(device);
    gpu.bus_id = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
    return true;
}

void config_error(const std::string& sentence) {
    std::fprintf(stderr, "trainrig emulated GPU: %s\n", sentence.c_str());
}

}  // namespace

Emulator& Emulator::get() {
    static Emulator* emulator = new Emulator();  // never destroyed: streams outlive main's end
    return *emulator;
}

Emulator::Emulator() {
    const std::string model_id = env_or("TRAINRIG_EMULATED_GPU_MODEL", kDefaultModel);
    const GpuModel* model = find_gpu_model(model_id);
    const plan::HardwareCatalog catalog = plan::builtin_hardware();
    const plan::GpuSpec* spec = catalog.gpu(model_id);
    if (model == nullptr || spec == nullptr) {
        config_error(fmt::format("TRAINRIG_EMULATED_GPU_MODEL={} is not one of {}", model_id,
                                 gpu_model_ids()));
        return;
    }
    size_t memory = static_cast<size_t>(spec->memory_bytes);
    if (const char* v = std::getenv("TRAINRIG_EMULATED_GPU_MEMORY"); v != nullptr && *v) {
        const auto bytes = parse_bytes(v);
        if (!bytes || *bytes == 0) {
            config_error(fmt::format(
                "TRAINRIG_EMULATED_GPU_MEMORY={} is not a size in bytes (like 80G or 512M)", v));
            return;
        }
        memory = *bytes;
    }
    const std::string list = env_or("TRAINRIG_EMULATED_GPUS", kDefaultGpus);
    std::vector<std::unique_ptr<EmulatedGpu>> gpus;
    for (const std::string_view id : split(list, ',')) {
        auto gpu = std::make_unique<EmulatedGpu>();
        if (!parse_bus_id(trim(id), *gpu)) {
            config_error(fmt::format(
                "TRAINRIG_EMULATED_GPUS: '{}' is not a PCI bus id (like 0000:01:00.0)", id));
            return;
        }
        gpu->index = static_cast<int>(gpus.size());
        gpu->model = model;
        gpu->name = std::string(kEmulatedGpuPrefix) + spec->name;
        gpu->memory = memory;
        gpus.push_back(std::move(gpu));
    }
    for (auto& g : gpus) g->peer_enabled.assign(gpus.size(), false);
    gpus_ = std::move(gpus);
}

int& Emulator::current_index() {
    thread_local int index = 0;
    return index;
}

EmulatedGpu* Emulator::current() { return gpu(current_index()); }

void Emulator::add_allocation(const Allocation& a) {
    std::lock_guard lock(mu_);
    allocations_[a.begin] = a;
}

bool Emulator::remove_allocation(const void* p, Allocation* removed) {
    std::lock_guard lock(mu_);
    const auto it = allocations_.find(reinterpret_cast<uintptr_t>(p));
    if (it == allocations_.end()) return false;
    if (removed != nullptr) *removed = it->second;
    allocations_.erase(it);
    return true;
}

bool Emulator::find_allocation(const void* p, size_t bytes, Allocation* found) {
    const auto at = reinterpret_cast<uintptr_t>(p);
    std::lock_guard lock(mu_);
    auto it = allocations_.upper_bound(at);
    if (it == allocations_.begin()) return false;
    --it;
    const Allocation& a = it->second;
    if (at < a.begin || at - a.begin > a.size || bytes > a.size - (at - a.begin)) return false;
    if (found != nullptr) *found = a;
    return true;
}

std::vector<Allocation> Emulator::device_allocations() {
    std::lock_guard lock(mu_);
    std::vector<Allocation> out;
    for (const auto& [begin, a] : allocations_)
        if (a.device >= 0) out.push_back(a);
    return out;
}

void Emulator::register_stream(Stream* s) {
    std::lock_guard lock(mu_);
    streams_.insert(s);
}

void Emulator::retire_stream(Stream* s) {
    std::lock_guard lock(mu_);
    streams_.erase(s);
    retired_.push_back(s);
}

bool Emulator::is_stream(const void* s) {
    std::lock_guard lock(mu_);
    return streams_.count(s) != 0;
}

cudaError_t& last_error() {
    thread_local cudaError_t error = cudaSuccess;
    return error;
}

cudaError_t set_last_error(cudaError_t e) {
    if (e != cudaSuccess) last_error() = e;
    return e;
}

}  // namespace trainrig::emu
