#include "validate/coverage_plan.h"

#include <fmt/format.h>

#include <set>

#include "hw/snapshot_gpus.h"

namespace trainrig::validate {

namespace {

// When a check is required. Each names one property of the class (coverage_plan.h).
enum class Need {
    kHost,           // the host decides: required when it judged something
    kGpu,            // a machine with NVIDIA GPUs
    kGpuElseHost,    // required with GPUs; otherwise the host decides
    kGpuPair,        // two GPUs or more
    kDatacenter,     // data-centre GPUs (ECC memory)
    kRemapsRows,     // Ampere or later data-centre GPUs
    kRetiresPages,   // Volta data-centre GPUs
    kMig,            // GPUs that can be partitioned (MIG)
    kNvlinkBoard,    // board-wired NVLink (SXM), two GPUs or more
    kNvswitch,       // an NVSwitch system
    kDataDir,        // --data-dir given
    kLive,           // the live machine
    kLiveGpu,        // the live machine, with GPUs
    kLiveGpuPair,    // the live machine, with two GPUs or more to measure
    kLiveGpuDeep,    // the live machine, with GPUs, at --level standard or long
    kLiveDataDir,    // the live machine, --data-dir given
    kLiveTokenizer,  // the live machine, --tokenizer and --input given
    kNever,          // not a single node's check
};

struct Entry {
    const char* id;
    CheckKind kind;
    Need need;
};

// The one list: every doctor rule (doctor/rule.cpp), every benchmark (bench/benchmarks.cpp) and
// every stage that is a check of its own (stages/stage_list.cpp; topology describes the machine
// and judges nothing). A unit test fails when one of
// them is missing here, so a new check cannot be added without saying which machines need it.
// Benchmarks whose results are measurements per GPU (h2d ... nccl) need a GPU; the pair ones two.
constexpr Entry kPlan[] = {
    {"pci.gpu-visible", CheckKind::kDoctor, Need::kGpu},
    {"pci.gpu-bar", CheckKind::kDoctor, Need::kGpu},
    {"pci.gpu-link", CheckKind::kDoctor, Need::kGpu},
    {"numa.gpu-affinity", CheckKind::kDoctor, Need::kGpu},
    {"kernel.swappiness", CheckKind::kDoctor, Need::kHost},
    {"kernel.numa-balancing", CheckKind::kDoctor, Need::kHost},
    {"kernel.thp", CheckKind::kDoctor, Need::kHost},
    {"kernel.nofile", CheckKind::kDoctor, Need::kHost},
    {"kernel.sysctl-obsolete", CheckKind::kDoctor, Need::kHost},
    {"cpu.governor", CheckKind::kDoctor, Need::kHost},
    {"mem.ecc", CheckKind::kDoctor, Need::kHost},
    {"mem.shm", CheckKind::kDoctor, Need::kHost},
    {"iommu.mode", CheckKind::kDoctor, Need::kGpu},
    {"driver.nvidia", CheckKind::kDoctor, Need::kGpu},
    {"gpu.count", CheckKind::kDoctor, Need::kGpu},
    {"gpu.uniform", CheckKind::kDoctor, Need::kGpuPair},
    {"gpu.persistence", CheckKind::kDoctor, Need::kGpu},
    {"gpu.power-limit", CheckKind::kDoctor, Need::kGpu},
    {"gpu.mig", CheckKind::kDoctor, Need::kMig},
    {"gpu.cpu-affinity", CheckKind::kDoctor, Need::kGpu},
    {"gpu.ecc", CheckKind::kDoctor, Need::kDatacenter},
    {"gpu.remapped-rows", CheckKind::kDoctor, Need::kRemapsRows},
    {"gpu.retired-pages", CheckKind::kDoctor, Need::kRetiresPages},
    {"gpu.temperature", CheckKind::kDoctor, Need::kGpu},
    {"gpu.clock-events", CheckKind::kDoctor, Need::kGpu},
    {"gpu.pcie-link", CheckKind::kDoctor, Need::kGpu},
    {"gpu.pcie-replay", CheckKind::kDoctor, Need::kGpu},
    {"gpu.nvlink", CheckKind::kDoctor, Need::kNvlinkBoard},
    {"gpu.p2p-topology", CheckKind::kDoctor, Need::kGpuPair},
    {"stack.cuda-driver", CheckKind::kDoctor, Need::kHost},
    {"stack.nccl", CheckKind::kDoctor, Need::kHost},
    {"stack.torch", CheckKind::kDoctor, Need::kHost},
    {"stack.fabric-manager", CheckKind::kDoctor, Need::kNvswitch},
    {"stack.drift", CheckKind::kDoctor, Need::kHost},
    {"kmsg.xid", CheckKind::kDoctor, Need::kGpuElseHost},
    {"kmsg.pcie-aer", CheckKind::kDoctor, Need::kGpuElseHost},
    {"nccl.env", CheckKind::kDoctor, Need::kHost},
    {"storage.data-dir", CheckKind::kDoctor, Need::kDataDir},
    {"cpu-mem", CheckKind::kBench, Need::kLive},
    {"storage", CheckKind::kBench, Need::kLiveDataDir},
    {"h2d", CheckKind::kBench, Need::kLiveGpu},
    {"d2h", CheckKind::kBench, Need::kLiveGpu},
    {"hbm", CheckKind::kBench, Need::kLiveGpu},
    {"gemm", CheckKind::kBench, Need::kLiveGpu},
    {"p2p", CheckKind::kBench, Need::kLiveGpuPair},
    {"nccl", CheckKind::kBench, Need::kLiveGpuPair},
    {"nccl-pairs", CheckKind::kBench, Need::kNever},
    {"burn", CheckKind::kBench, Need::kLiveGpuDeep},
    {"tokenizer", CheckKind::kBench, Need::kLiveTokenizer},
    {"loader", CheckKind::kBench, Need::kLive},
    {"train", CheckKind::kBench, Need::kLive},
    {"batch-probe", CheckKind::kStage, Need::kLiveGpuDeep},
    {"watch", CheckKind::kStage, Need::kLiveGpu},
};

bool live(const MachineClass& c) { return c.scope != Scope::kTree; }

// Whether the class requires it, and why (or why not) in the report's words.
std::pair<bool, std::string> judge_need(Need n, const MachineClass& c) {
    const bool gpu = c.gpus > 0;
    const char* no_gpu = "no NVIDIA GPU";
    const char* tree = "a machine tree: needs the live machine";
    auto live_gpu = [&](bool more, const char* yes,
                        const char* no) -> std::pair<bool, std::string> {
        if (!live(c)) return {false, tree};
        if (!gpu) return {false, no_gpu};
        return more ? std::pair<bool, std::string>{true, yes}
                    : std::pair<bool, std::string>{false, no};
    };
    switch (n) {
        case Need::kHost:
            return {false, "when the host has it"};
        case Need::kGpu:
            return {gpu, gpu ? "a machine with NVIDIA GPUs" : no_gpu};
        case Need::kGpuElseHost:
            return {gpu, gpu ? "a machine with NVIDIA GPUs" : "when the host has it"};
        case Need::kGpuPair:
            return {c.gpus >= 2, c.gpus >= 2 ? "two GPUs or more" : gpu ? "one GPU" : no_gpu};
        case Need::kDatacenter:
            return {c.datacenter, c.datacenter ? "data-centre GPUs (ECC memory)"
                                  : gpu        ? "not a data-centre GPU: no ECC memory"
                                               : no_gpu};
        case Need::kRemapsRows:
            return {c.remaps_rows, c.remaps_rows ? "Ampere or later data-centre GPUs"
                                   : gpu         ? "no row remapping on this GPU model"
                                                 : no_gpu};
        case Need::kRetiresPages:
            return {c.retires_pages, c.retires_pages ? "Volta data-centre GPUs"
                                     : gpu           ? "no page retirement on this GPU model "
                                                       "(Ampere and later remap rows)"
                                                     : no_gpu};
        case Need::kMig:
            return {c.mig, c.mig ? "GPUs with MIG (Multi-Instance GPU)"
                           : gpu ? "no MIG on this GPU model"
                                 : no_gpu};
        case Need::kNvlinkBoard:
            // One GPU of a board (a VM's share of it) has no peer here to link to.
            if (c.nvlink_on_board && c.gpus < 2) return {false, "one GPU: no peer to link to"};
            return {c.nvlink_on_board, c.nvlink_on_board ? "board-wired NVLink (SXM)"
                                       : gpu ? "no board-wired NVLink (a PCIe part: NVLink "
                                               "only through a bridge)"
                                             : no_gpu};
        case Need::kNvswitch:
            return {c.nvswitch, c.nvswitch ? "an NVSwitch system" : "no NVSwitch"};
        case Need::kDataDir:
            return {c.data_dir, c.data_dir ? "--data-dir given" : "no --data-dir given"};
        case Need::kLive:
            return {live(c), live(c) ? "the live machine" : tree};
        case Need::kLiveGpu:
            return live_gpu(true, "a machine with NVIDIA GPUs", "");
        case Need::kLiveGpuPair:
            return live_gpu(c.bench_gpus >= 2, "two GPUs or more", "one GPU to measure");
        case Need::kLiveGpuDeep:
            return live_gpu(c.level != RunLevel::kQuick, "--level standard and long",
                            "not at --level quick");
        case Need::kLiveDataDir:
            if (!live(c)) return {false, tree};
            return {c.data_dir, c.data_dir ? "--data-dir given" : "no --data-dir given"};
        case Need::kLiveTokenizer:
            if (!live(c)) return {false, tree};
            return {c.tokenizer, c.tokenizer ? "--tokenizer and --input given"
                                             : "no --tokenizer and --input given"};
        case Need::kNever:
            return {false, "between nodes: `validate --fleet` measures node pairs"};
    }
    return {false, ""};
}

// Volta's data-centre parts (device ids 0x1dxx) retire pages; Ampere and later remap rows
// (NVML reference: nvmlDeviceGetRetiredPages "Kepler and newer", nvmlDeviceGetRemappedRows
// "Ampere or newer fully supported devices").
bool volta(const NvidiaGpuModel& m) { return (m.device_id >> 8) == 0x1d; }

}  // namespace

const char* check_kind_name(CheckKind k) {
    return k == CheckKind::kDoctor ? "doctor" : k == CheckKind::kBench ? "bench" : "stage";
}

std::string MachineClass::label() const {
    std::string out = gpus > 0 ? fmt::format("{}x {}", gpus, gpu_model) : "no NVIDIA GPU";
    if (nvswitch) out += " with NVSwitch";
    out += fmt::format(", --level {}", level_label(level));
    if (scope == Scope::kTree) out += ", machine tree";
    if (scope == Scope::kEmulated) out += ", emulated GPU";
    return out;
}

MachineClass machine_class(const Snapshot& s, Scope scope, const ValidateOptions& o) {
    MachineClass c;
    c.scope = scope;
    c.level = o.level;
    c.data_dir = o.collect.data_dir.has_value();
    c.tokenizer = !o.tokenizer.empty() && !o.inputs.empty();
    // The models as the PCI bus names them: a GPU the driver lost is still one the class needs.
    std::vector<const NvidiaGpuModel*> models;
    std::set<std::string> names;
    for (const PciDevice* d : select_gpus(s).gpus) {
        const uint64_t id = d->device.is_known() ? d->device.value() : 0;
        models.push_back(find_nvidia_gpu(id));
        names.insert(nvidia_gpu_name(id));
    }
    if (models.empty() && s.nvml.is_known())  // a container may hide the bus, not the driver
        for (const auto& g : s.nvml.value().gpus) {
            models.push_back(gpu_model(g));
            names.insert(models.back() ? models.back()->name : g.name.optional().value_or("GPU"));
        }
    c.gpus = static_cast<int>(models.size());
    c.bench_gpus = o.gpus.empty() ? c.gpus : static_cast<int>(o.gpus.size());
    if (names.size() == 1) c.gpu_model = *names.begin();
    if (names.size() > 1) {
        c.gpu_model = "mixed:";
        for (const auto& n : names) c.gpu_model += (c.gpu_model.back() == ':' ? " " : ", ") + n;
    }
    // A property is the class's when every GPU has it; an unknown model has none of them.
    bool all_known = !models.empty();
    c.datacenter = c.remaps_rows = c.retires_pages = c.nvlink_on_board = c.mig = all_known;
    for (const auto* m : models) {
        const bool known = m != nullptr;
        c.datacenter = c.datacenter && known && m->datacenter;
        c.remaps_rows = c.remaps_rows && known && m->datacenter && !volta(*m);
        c.retires_pages = c.retires_pages && known && m->datacenter && volta(*m);
        c.nvlink_on_board = c.nvlink_on_board && known && m->nvlink_on_board;
        c.mig = c.mig && known && m->mig;
    }
    // An HGX board of 8 SXM GPUs connects them through NVSwitches; 4 are wired directly.
    c.nvswitch = count_nvswitches(s) > 0 || (c.nvlink_on_board && c.gpus >= 8);
    return c;
}

std::vector<PlannedCheck> coverage_plan(const MachineClass& c) {
    std::vector<PlannedCheck> out;
    for (const auto& e : kPlan) {
        auto [required, why] = judge_need(e.need, c);
        PlannedCheck p{e.id, e.kind, required, false, std::move(why)};
        p.host_decides = !required && (e.need == Need::kHost || e.need == Need::kGpuElseHost);
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace trainrig::validate
