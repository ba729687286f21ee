// NVLink and the GPU-to-GPU paths collectives use. Judged per SKU: a board-wired (SXM) part must
// have every link up; a PCIe part has links only through a bridge, so fewer is not a fault
// (DCGM's NVLink check gets both wrong). article §2.2 (NVLink vs PCIe for all-reduce).
#include <fmt/format.h>

#include <map>

#include "core/quantity.h"
#include "core/text.h"
#include "doctor/nvml_gpus.h"
#include "doctor/rule.h"
#include "policy/gpu_health.h"
#include "topo/gpu_matrix.h"

namespace trainrig {

namespace {

std::optional<double> uptime_of(const Snapshot& s) {
    return s.host.uptime_seconds.is_known() ? std::optional(s.host.uptime_seconds.value())
                                            : std::nullopt;
}

// Some GPU has NVLinks down: right after boot they may still be training (gpu.nvlink's grace).
bool some_link_down(const std::vector<const NvmlGpu*>& gpus) {
    for (const auto* g : gpus)
        if (g->nvlinks.is_known())
            for (const auto& l : g->nvlinks.value())
                if (!l.active) return true;
    return false;
}

void check_nvlink(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* n = need_nvml(s, f);
    if (!n) return;
    const auto gpus = answering_gpus(*n);
    if (gpus.size() < 2) {
        f.raise(FindingStatus::kSkip, n->gpus.size() < 2
                                          ? "one GPU: NVLink carries no GPU-to-GPU traffic here"
                                          : "fewer than two GPUs answer: no GPU pairs to link");
        for (const auto* g : gpus)
            if (g->nvlinks.is_known()) {
                int up = 0;
                for (const auto& l : g->nvlinks.value()) up += l.active;
                f.evidence.push_back(fmt::format("{}: {} of {} links up", nvml_gpu_label(*g), up,
                                                 g->nvlinks.value().size()));
            }
        return;
    }
    GpuFieldReader read(f);
    size_t judged = 0;
    std::vector<std::string> training;  // links down while they may still be training
    const std::optional<double> uptime = uptime_of(s);
    auto table = nlohmann::json::array();
    for (const auto* g : gpus) {
        const auto* links = read.get(*g, g->nvlinks);
        if (!links) continue;
        ++judged;
        std::vector<int> down;
        std::map<std::string, int> peers;
        for (const auto& l : *links) {
            if (!l.active) {
                down.push_back(l.link);
                continue;
            }
            std::string peer = l.remote_type.is_known() && l.remote_type.value() == "switch"
                                   ? "NVSwitch"
                                   : (l.remote_bus_id.is_known() ? l.remote_bus_id.value() : "?");
            ++peers[peer];
        }
        const int up = static_cast<int>(links->size() - down.size());
        const auto* model = gpu_model(*g);
        const int expected = model ? model->nvlinks : 0;
        std::vector<std::string> to;
        for (const auto& [peer, k] : peers) to.push_back(fmt::format("{}x {}", k, peer));
        f.evidence.push_back(
            fmt::format("{}: {} of {} links up{}{}", nvml_gpu_label(*g), up, links->size(),
                        to.empty() ? "" : " -> " + join(to, ", "),
                        down.empty() ? "" : fmt::format(" (down: {})", fmt::join(down, ", "))));
        table.push_back(
            {{"gpu", g->index}, {"up", up}, {"links", links->size()}, {"expected", expected}});
        const bool on_board = model && model->nvlink_on_board;
        const auto verdict = policy::nvlink_verdict(
            static_cast<unsigned>(up), static_cast<unsigned>(down.size()), expected, on_board);
        if (verdict == policy::Verdict::kPass) continue;
        if (policy::links_may_be_training(uptime)) {
            training.push_back(fmt::format("GPU {}", g->index));
            continue;
        }
        if (on_board)
            f.raise(status_of(verdict), fmt::format("GPU {} ({}): {} of its {} NVLinks are up",
                                                    g->index, model->name, up, expected));
        else if (expected > 0)  // a bridged PCIe card
            f.raise(status_of(verdict),
                    fmt::format("GPU {} ({}): {} of the {} bridge NVLinks are up", g->index,
                                model->name, up, expected));
        else
            f.raise(status_of(verdict), fmt::format("GPU {}: {} of {} NVLinks are down", g->index,
                                                    down.size(), links->size()));
    }
    if (read.skip_if_none(judged, "NVLink")) return;
    read.note_unsupported();
    f.data = {{"gpus", table}};
    if (!training.empty())
        f.raise(FindingStatus::kSkip,
                fmt::format("{} with links down {}, but the machine has been up only {}: links "
                            "may still be training; judged from {} after boot",
                            join(training, ", "), training.size() == 1 ? "has" : "have",
                            format_duration(*uptime),
                            format_duration(policy::kLinkTrainingGraceSeconds)));
    if (f.status == FindingStatus::kFail || f.status == FindingStatus::kWarn)
        f.remedy =
            "Without its links the GPU falls back to PCIe and every collective slows to the "
            "slowest pair. Check `nvidia-smi nvlink -s` and `-e` (error counters), reseat the "
            "GPU/baseboard or the bridge, and on NVSwitch systems check the fabric manager "
            "(stack.fabric-manager).";
    f.raise(FindingStatus::kPass,
            fmt::format("NVLink as this SKU should have it on {} GPU(s)", judged));
}

void check_p2p_topology(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* n = need_nvml(s, f);
    if (!n) return;
    if (answering_gpus(*n).size() < 2)
        return f.raise(FindingStatus::kSkip, "fewer than two GPUs answer: no GPU pairs");
    const auto m = build_gpu_matrix(s);
    std::map<std::string, std::vector<std::string>> by_label;
    for (size_t i = 0; i < m.gpus.size(); ++i)
        for (size_t j = i + 1; j < m.gpus.size(); ++j) {
            if (n->gpus[i].lost || n->gpus[j].lost || !n->gpus[i].unreachable.empty() ||
                !n->gpus[j].unreachable.empty())
                continue;
            by_label[m.gpu_gpu[i][j].label].push_back(fmt::format("{}-{}", i, j));
        }
    bool fast = false;
    for (const auto& [label, pairs] : by_label) {
        f.evidence.push_back(fmt::format("{}: GPU pairs {}", label, join(pairs, ", ")));
        if (label.starts_with("NV") || label == "PIX" || label == "PXB") fast = true;
    }
    f.data = {{"pairs", by_label}};
    if (by_label.count("?"))
        f.raise(FindingStatus::kWarn, "the path between some GPU pairs is unknown");
    if (fast && by_label.count("SYS")) {
        // The paths follow the links: while they may still be training, a slow pair is not yet
        // the machine's topology.
        if (const auto uptime = uptime_of(s);
            policy::links_may_be_training(uptime) && some_link_down(answering_gpus(*n)))
            return f.raise(FindingStatus::kSkip,
                           fmt::format("GPU pairs {} cross the CPU interconnect while NVLinks are "
                                       "down, but the machine has been up only {}: links may "
                                       "still be training; judged from {} after boot",
                                       join(by_label["SYS"], ", "), format_duration(*uptime),
                                       format_duration(policy::kLinkTrainingGraceSeconds)));
        f.raise(FindingStatus::kWarn,
                fmt::format("GPU pairs {} cross the CPU interconnect (SYS) while others have a "
                            "direct path: a collective over all GPUs runs at the slow pairs' "
                            "speed",
                            join(by_label["SYS"], ", ")));
        f.remedy =
            "Keep jobs that need fast peer-to-peer within one side (CUDA_VISIBLE_DEVICES), "
            "or move GPUs so that pairs share a switch or NVLink; `trainrig topo` shows the "
            "matrix.";
        return;
    }
    if (by_label.size() == 1)
        return f.raise(FindingStatus::kPass,
                       fmt::format("every GPU pair is {}", by_label.begin()->first));
    f.raise(FindingStatus::kPass,
            fast
                ? fmt::format("{} kinds of GPU-to-GPU path, none crossing sockets", by_label.size())
                : "no GPU pair has a direct path (NVLink or a PCIe switch): all go through the "
                  "CPU");
}

}  // namespace

std::vector<Rule> gpu_nvlink_rules() {
    return {
        {"gpu.nvlink",
         "NVLink links this SKU should have are up",
         {"training-machine article §2.2", "NVIDIA DCGM NVLink health (issues with PCIe parts)"},
         nvml_rule_skip,
         check_nvlink},
        {"gpu.p2p-topology",
         "No GPU pair crosses the CPU interconnect while others have a direct path",
         {"training-machine article §2.2, §2.3", "nvidia-smi topo -m"},
         nvml_rule_skip,
         check_p2p_topology},
    };
}

}  // namespace trainrig
