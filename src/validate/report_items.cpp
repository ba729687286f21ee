#include "validate/report_items.h"

#include <fmt/format.h>

#include "core/quantity.h"

namespace trainrig::validate {

namespace {

std::string tolerance_of(const bench::BenchRecord& r, const bench::Thresholds& t) {
    if (r.expected_floor) return "at least the expected value (a floor)";
    return fmt::format("pass at {:.0f} % of expected or more, warn from {:.0f} %", 100 * t.pass,
                       100 * t.warn);
}

}  // namespace

std::vector<std::string> devices_of(const nlohmann::json& target) {
    std::vector<std::string> out;
    if (auto g = target.find("gpu"); g != target.end() && g->is_number_integer())
        out.push_back(fmt::format("GPU {}", g->get<int>()));
    if (auto d = target.find("device"); d != target.end() && d->is_string())
        out.push_back(d->get<std::string>());
    return out;
}

std::string bench_action(const std::string& bench) {
    if (bench == "h2d" || bench == "d2h")
        return "check the GPU's PCIe link and its NUMA placement (`trainrig doctor --only "
               "pci.gpu-link,gpu.pcie-link,numa.gpu-affinity`), then re-run `trainrig bench run " +
               bench + " -v`";
    if (bench == "hbm" || bench == "gemm" || bench == "burn")
        return "check the GPU's clocks and cooling (`trainrig doctor --only "
               "gpu.clock-events,gpu.temperature`); a GPU well below its peers at the same "
               "clocks is a part to replace";
    if (bench == "p2p" || bench == "nccl")
        return "check NVLink and the GPU-to-GPU paths (`trainrig doctor --only "
               "gpu.nvlink,gpu.p2p-topology,stack.fabric-manager`, `trainrig topo`)";
    if (bench == "cpu-mem")
        return "check that every memory channel is populated at its rated speed (`sudo "
               "dmidecode -t memory`), the CPU governor and NUMA balancing (`trainrig doctor "
               "--only cpu.governor,kernel.numa-balancing`), and that no other job ran during "
               "the measurement";
    if (bench == "storage")
        return "check the drive's PCIe link and filesystem, and that nothing else used the disk";
    if (bench == "train")
        return "re-run `trainrig bench run train -v`; a run that does not learn points at the "
               "backend (`trainrig doctor --only stack.cuda-driver,stack.torch`)";
    return "re-run `trainrig bench run " + bench + " -v`";
}

void bench_items(const bench::BenchRun& run, size_t first_record, size_t first_error,
                 const std::string& stage, std::vector<Item>& items) {
    for (size_t i = first_record; i < run.records.size(); ++i) {
        const auto& r = run.records[i];
        const auto v = bench::judge(r, run.thresholds);
        if (v != bench::Verdict::kFail && v != bench::Verdict::kWarn) continue;
        Item it;
        it.id = "bench." + r.bench + "." + r.name;
        it.stage = stage;
        it.level = v == bench::Verdict::kFail ? Level::kFail : Level::kWarn;
        it.devices = devices_of(r.target);
        it.measured = format_quantity(r.median(), r.unit);
        if (r.expected) {
            it.expected = format_quantity(*r.expected, r.unit);
            it.tolerance = tolerance_of(r, run.thresholds);
            it.source = r.expected_source;
        }
        if (r.verified && !*r.verified)
            it.summary = fmt::format("{} {}: the benchmark's own check failed: {}", r.bench, r.name,
                                     r.verify_detail);
        else
            it.summary = fmt::format("{} {}: {} against {} expected", r.bench, r.name, it.measured,
                                     it.expected);
        if (!r.verify_detail.empty()) it.evidence.push_back(r.verify_detail);
        it.action = bench_action(r.bench);
        items.push_back(std::move(it));
    }
    for (size_t i = first_error; i < run.errors.size(); ++i) {
        Item it;
        it.id = "bench." + run.errors[i].bench;
        it.stage = stage;
        it.level = Level::kUnknown;
        it.summary = fmt::format("{} could not run: {}", run.errors[i].bench, run.errors[i].text);
        it.action = fmt::format("fix what the error names, then re-run `trainrig bench run {} -v`",
                                run.errors[i].bench);
        items.push_back(std::move(it));
    }
}

Item alert_item(const watch::Alert& a) {
    Item it;
    it.id = "watch." + a.rule;
    it.stage = "watch";
    it.level = a.severity == watch::Severity::kCritical ? Level::kFail : Level::kWarn;
    it.summary = a.summary;
    if (a.gpu >= 0) it.devices.push_back(fmt::format("GPU {}", a.gpu));
    if (!a.device.empty()) it.devices.push_back(a.device);
    it.action = a.remedy;
    if (a.value) it.measured = fmt::format("{:g}", *a.value);
    return it;
}

nlohmann::json item_json(const Item& i) {
    auto opt = [](const std::string& s) {
        return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
    };
    return {{"id", i.id},
            {"stage", i.stage},
            {"level", level_name(i.level)},
            {"summary", i.summary},
            {"devices", i.devices},
            {"measured", opt(i.measured)},
            {"expected", opt(i.expected)},
            {"tolerance", opt(i.tolerance)},
            {"source", opt(i.source)},
            {"evidence", i.evidence},
            {"action", i.action}};
}

nlohmann::json stage_json(const StageRecord& s) {
    return {{"name", s.name},
            {"title", s.title},
            {"state", stage_state_name(s.state)},
            {"reason", s.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.reason)},
            {"required", s.required},
            {"budget_seconds", s.budget_seconds},
            {"seconds", s.seconds}};
}

Item finding_item(const Finding& f) {
    Item it;
    it.id = f.id;
    it.stage = "doctor";
    it.level = f.status == FindingStatus::kFail   ? Level::kFail
               : f.status == FindingStatus::kWarn ? Level::kWarn
                                                  : Level::kUnknown;
    it.summary = f.summary;
    it.evidence = f.evidence;
    it.action = f.remedy.empty() && f.status == FindingStatus::kError
                    ? "the check could not read its input: see the evidence, fix access to it "
                      "and re-run `trainrig doctor --only " +
                          f.id + "`"
                    : f.remedy;
    return it;
}

}  // namespace trainrig::validate
