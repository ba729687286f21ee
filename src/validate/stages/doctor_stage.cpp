// The doctor stage: reads the machine (or the --root tree) once, into the snapshot every later
// stage uses, and judges it with every doctor rule less the --skip'd ids and areas. It also
// decides the run's scope: a tree, a host without NVIDIA GPUs, or a GPU machine. It always runs:
// nothing else can be judged without the machine read.
#include "core/gpu_selection.h"
#include "doctor/render_json.h"
#include "doctor/report.h"
#include "hw/snapshot_gpus.h"
#include "probe/collect.h"
#include "snapshot/snapshot.h"
#include "validate/report_items.h"
#include "validate/stages/stage.h"
#include "validate/stages/stage_list.h"
#include "validate/versions.h"

namespace trainrig::validate {

namespace {

class DoctorStage final : public Stage {
public:
    const char* id() const override { return "doctor"; }
    const char* title() const override { return "configuration checks (doctor)"; }
    double budget_seconds(RunLevel l) const override { return per_level(l, 5, 10, 10); }
    bool required(const RunContext&) const override { return true; }
    std::optional<Skip> applies(const RunContext&) const override { return std::nullopt; }

    Status run(RunContext& ctx, StageRecord& record) override {
        const ValidateOptions& o = ctx.options;
        Selection sel;
        for (const auto& r : all_rules())
            for (const auto& s : o.skip)
                if (r.id == s || r.id.starts_with(s + ".")) sel.skip.push_back(r.id);
        CollectOptions collect = o.collect;
        collect.torch = selected("stack.torch", sel) || selected("stack.nccl", sel);
        // quick is an admission check: PyTorch's metadata only. The longer levels can afford to
        // import it and ask whether it can use CUDA.
        collect.torch_import =
            collect.torch && (collect.torch_import || o.level != RunLevel::kQuick);
        auto snap = collect_snapshot(collect);
        if (!snap.ok()) {
            if (!RunContext::interrupted()) return snap.status();
            record.state = StageState::kInterrupted;
            return ok_status();
        }
        RuleOptions ro;
        if (o.expect_gpus >= 0) ro.expect_gpus = o.expect_gpus;
        DoctorReport dr;
        dr.source = ctx.tree ? "machine tree " + snap->root : std::string("live machine");
        dr.hostname = snap->host.hostname.is_known() ? snap->host.hostname.value() : "unknown host";
        dr.collected_at = snap->collected_at;
        dr.findings = judge(*snap, ro, sel);
        for (const auto& f : dr.findings)
            if (f.status == FindingStatus::kFail || f.status == FindingStatus::kWarn ||
                f.status == FindingStatus::kError)
                ctx.items.push_back(finding_item(f));
        record.state = StageState::kRan;
        ctx.report.set("doctor", render_json(dr));
        ctx.findings = std::move(dr.findings);
        ctx.report.set("host", dr.hostname);
        ctx.report.set("versions", machine_versions(*snap));
        ctx.report.add_raw("snapshot.json", snapshot_to_json(*snap));
        // A GPU machine is one whose PCI bus or driver shows an NVIDIA GPU: a container may hide
        // the PCI tree while NVML still answers for the GPUs it was given.
        const bool nvml_gpus = snap->nvml.is_known() && !snap->nvml.value().gpus.empty();
        ctx.scope = ctx.tree                                        ? Scope::kTree
                    : select_gpus(*snap).gpus.empty() && !nvml_gpus ? Scope::kHost
                                                                    : Scope::kGpu;
        // --gpus names GPUs of this machine: the driver's, else the PCI bus's.
        const size_t visible =
            nvml_gpus ? snap->nvml.value().gpus.size() : select_gpus(*snap).gpus.size();
        ctx.snapshot.emplace(std::move(snap).value());
        return check_gpu_selection(o.gpus, visible);
    }
};

}  // namespace

std::unique_ptr<Stage> doctor_stage() { return std::make_unique<DoctorStage>(); }

}  // namespace trainrig::validate
