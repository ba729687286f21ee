// Which checks a validate run must judge, by the machine's class (docs/report.md, "Coverage"):
// the one list of every doctor rule, benchmark and stage, each with the classes that require
// it. A check is required because of what the machine is (its GPU model and count, read from the
// PCI bus, and the level asked for), never because of what happened to run: a rule that skipped
// itself on a GPU that needs it did not run, it is not "not applicable". Checks whose relevance
// only the host can tell (a kernel without transparent huge pages has nothing to judge) are
// required when they judged something, and listed as not applicable with their own reason when
// they did not.
#pragma once

#include <string>
#include <vector>

#include "snapshot/snapshot.h"
#include "validate/validate_options.h"
#include "validate/verdict.h"

namespace trainrig::validate {

// What decides the required checks.
struct MachineClass {
    Scope scope = Scope::kTree;
    RunLevel level = RunLevel::kQuick;
    std::string gpu_model;     // "H100 SXM5 80GB", "mixed: A, B", "" without NVIDIA GPUs
    int gpus = 0;              // NVIDIA GPUs on the PCI bus (the driver's, when the bus is hidden)
    int bench_gpus = 0;        // the GPUs the benchmarks use: --gpus, else all of them
    bool datacenter = false;   // ECC memory on every GPU
    bool remaps_rows = false;  // Ampere and later data-centre parts: row remapping
    bool retires_pages = false;    // Volta data-centre parts: page retirement instead
    bool mig = false;              // MIG-capable parts (Multi-Instance GPU)
    bool nvlink_on_board = false;  // SXM/HGX: every NVLink wired and required
    bool nvswitch = false;         // NVSwitches on the bus, or 8 board-wired GPUs
    bool data_dir = false;         // --data-dir given: the storage checks have a target
    bool tokenizer = false;        // --tokenizer and --input given

    // "8x H100 SXM5 80GB with NVSwitch, --level quick" (and ", machine tree" for --root).
    std::string label() const;
};

MachineClass machine_class(const Snapshot& s, Scope scope, const ValidateOptions& o);

enum class CheckKind { kDoctor, kBench, kStage };
const char* check_kind_name(CheckKind k);  // "doctor", "bench", "stage"

// One check of the plan: its id (what --skip takes), its kind, whether this class requires it,
// and why (or why not), in words for the report.
struct PlannedCheck {
    std::string id;
    CheckKind kind = CheckKind::kDoctor;
    // Required by the class whatever it finds; else, for a host-decided check, required when
    // it judged something (`host_decides`).
    bool required = false;
    bool host_decides = false;
    std::string why;  // "board-wired NVLink (SXM)", "not at --level quick", ...
};

// Every check, in report order: doctor's rules, then the benchmarks, then the stages that are
// checks of their own (batch-probe, watch).
std::vector<PlannedCheck> coverage_plan(const MachineClass& c);

}  // namespace trainrig::validate
