#include "watch/sample_json.h"

#include <fmt/format.h>

#include <type_traits>

#include "watch/metrics_render.h"

namespace trainrig::watch {
namespace {

using nlohmann::json;

// Every optional reading of a GpuSample with its JSON name: the one list both directions use.
template <class Sample, class F>
void each_reading(Sample& s, F&& f) {
    f("utilization", s.utilization);
    f("memory_utilization", s.memory_utilization);
    f("memory_used_bytes", s.memory_used_bytes);
    f("memory_total_bytes", s.memory_total_bytes);
    f("temperature_celsius", s.temperature_celsius);
    f("temperature_slowdown_celsius", s.temperature_slowdown_celsius);
    f("temperature_max_operating_celsius", s.temperature_max_operating_celsius);
    f("power_watts", s.power_watts);
    f("power_limit_watts", s.power_limit_watts);
    f("energy_joules", s.energy_joules);
    f("sm_clock_hertz", s.sm_clock_hertz);
    f("memory_clock_hertz", s.memory_clock_hertz);
    f("pcie_replays", s.pcie_replays);
    f("pcie_gen_max", s.pcie_gen_max);
    f("pcie_width_max", s.pcie_width_max);
    f("ecc_corrected", s.ecc_corrected);
    f("ecc_uncorrected", s.ecc_uncorrected);
    f("remapped_rows_correctable", s.remapped_rows_correctable);
    f("remapped_rows_uncorrectable", s.remapped_rows_uncorrectable);
    f("remap_pending", s.remap_pending);
    f("remap_failed", s.remap_failed);
    f("nvlinks_up", s.nvlinks_up);
    f("nvlinks_down", s.nvlinks_down);
    f("nvlinks_expected", s.nvlinks_expected);
}

Status bad(const std::string& where, std::string_view what) {
    return {Errc::kInvalidInput, fmt::format("{}: {}", where, what)};
}

template <class T>
Status read_value(const json& j, const std::string& where, std::optional<T>& out) {
    if constexpr (std::is_same_v<T, bool>) {
        if (!j.is_boolean()) return bad(where, "not true or false");
    } else if constexpr (std::is_floating_point_v<T>) {
        if (!j.is_number()) return bad(where, "not a number");
    } else if constexpr (std::is_unsigned_v<T>) {
        if (!j.is_number_unsigned()) return bad(where, "not a whole number of 0 or more");
    } else {
        if (!j.is_number_integer()) return bad(where, "not a whole number");
    }
    out = j.get<T>();
    return {};
}

Result<std::string> read_string(const json& j, const char* key, const std::string& where) {
    if (!j.contains(key)) return std::string();
    if (!j[key].is_string()) return bad(where + "." + key, "not a string");
    return j[key].get<std::string>();
}

Result<GpuState> state_named(const std::string& name, const std::string& where) {
    for (GpuState s : {GpuState::kOk, GpuState::kLost, GpuState::kHung, GpuState::kError})
        if (name == gpu_state_name(s)) return s;
    return bad(where, fmt::format("\"{}\" is not ok, lost, hung or error", name));
}

Status read_gpu(const json& g, const std::string& where, GpuIdentity& id, GpuSample& s) {
    if (!g.is_object()) return bad(where, "not an object");
    std::optional<unsigned> index;
    if (!g.contains("index")) return bad(where + ".index", "missing");
    if (auto st = read_value(g["index"], where + ".index", index); !st.ok()) return st;
    id.index = s.index = *index;
    for (auto [key, field] :
         {std::pair{"uuid", &id.uuid}, std::pair{"name", &id.name},
          std::pair{"pci_bus_id", &id.bus_id}, std::pair{"problem", &s.problem}}) {
        auto v = read_string(g, key, where);
        if (!v) return v.status();
        *field = *v;
    }
    if (auto state = read_string(g, "state", where); !state) {
        return state.status();
    } else if (!state->empty()) {
        auto named = state_named(*state, where + ".state");
        if (!named) return named.status();
        s.state = *named;
    }
    Status status;
    each_reading(s, [&](const char* key, auto& field) {
        if (status.ok() && g.contains(key)) status = read_value(g[key], where + "." + key, field);
    });
    if (!status.ok()) return status;
    if (g.contains("clock_event_reasons")) {
        const json& names = g["clock_event_reasons"];
        const std::string at = where + ".clock_event_reasons";
        if (!names.is_array()) return bad(at, "not a list of reason names");
        uint64_t bits = 0;
        for (const auto& n : names) {
            const ClockEventReason* found = nullptr;
            for (const auto& r : kClockEventReasons)
                if (n.is_string() && n.get<std::string>() == r.name) found = &r;
            if (!found) return bad(at, fmt::format("{} is not a clock event reason", n.dump()));
            bits |= found->bit;
        }
        s.clock_event_reasons = bits;
    }
    if (g.contains("nvlink_on_board")) {
        std::optional<bool> on_board;
        if (auto st = read_value(g["nvlink_on_board"], where + ".nvlink_on_board", on_board);
            !st.ok())
            return st;
        s.nvlink_on_board = *on_board;
    }
    id.pcie_gen_max = s.pcie_gen_max;
    id.pcie_width_max = s.pcie_width_max;
    id.nvlinks_expected = s.nvlinks_expected;
    id.nvlink_on_board = s.nvlink_on_board;
    return {};
}

Status read_event(const json& e, const std::string& where, KernelEvent& out) {
    if (!e.is_object()) return bad(where, "not an object");
    auto kind = read_string(e, "kind", where);
    if (!kind) return kind.status();
    bool known = false;
    for (auto k : {KernelEvent::Kind::kXid, KernelEvent::Kind::kFallenOffBus,
                   KernelEvent::Kind::kAerCorrected, KernelEvent::Kind::kAerNonFatal,
                   KernelEvent::Kind::kAerFatal})
        if (*kind == kernel_event_kind_name(k)) out.kind = k, known = true;
    if (!known)
        return bad(where + ".kind", fmt::format("\"{}\" is not a kernel event kind", *kind));
    std::optional<uint64_t> seq;
    std::optional<double> since_boot;
    std::optional<int> xid;
    if (e.contains("seq"))
        if (auto st = read_value(e["seq"], where + ".seq", seq); !st.ok()) return st;
    if (e.contains("seconds_since_boot"))
        if (auto st =
                read_value(e["seconds_since_boot"], where + ".seconds_since_boot", since_boot);
            !st.ok())
            return st;
    if (e.contains("xid"))
        if (auto st = read_value(e["xid"], where + ".xid", xid); !st.ok()) return st;
    if (out.kind == KernelEvent::Kind::kXid && !xid) return bad(where + ".xid", "missing");
    out.seq = seq.value_or(0);
    out.usec = static_cast<uint64_t>(since_boot.value_or(0) * 1e6);
    out.xid = xid.value_or(0);
    auto device = read_string(e, "pci_bus_id", where);
    if (!device) return device.status();
    out.device = *device;
    auto message = read_string(e, "message", where);
    if (!message) return message.status();
    out.message = *message;
    return {};
}

}  // namespace

void put_gpu_sample(const GpuSample& s, json& out) {
    out["state"] = gpu_state_name(s.state);
    if (!s.problem.empty()) out["problem"] = s.problem;
    each_reading(s, [&](const char* key, const auto& field) {
        if (field) out[key] = *field;
    });
    if (s.clock_event_reasons) {
        out["clock_event_reasons"] = json::array();
        for (const auto& r : kClockEventReasons)
            if (*s.clock_event_reasons & r.bit) out["clock_event_reasons"].push_back(r.name);
    }
    if (s.nvlink_on_board) out["nvlink_on_board"] = true;
}

Result<ReplayTick> tick_from_json(const json& doc) {
    if (!doc.is_object()) return bad("the document", "not a JSON object");
    if (doc.value("schema", "") != "trainrig.watch.sample")
        return bad("schema",
                   "not \"trainrig.watch.sample\" (write ticks with watch --once --json)");
    ReplayTick t;
    std::optional<double> time, seconds, uptime;
    if (!doc.contains("time")) return bad("time", "missing");
    if (auto st = read_value(doc["time"], "time", time); !st.ok()) return st;
    t.sample.time = *time;
    if (doc.contains("seconds"))
        if (auto st = read_value(doc["seconds"], "seconds", seconds); !st.ok()) return st;
    t.sample.seconds = seconds.value_or(0);
    if (doc.contains("uptime_seconds"))
        if (auto st = read_value(doc["uptime_seconds"], "uptime_seconds", uptime); !st.ok())
            return st;
    t.sample.uptime_seconds = uptime;
    const json gpus = doc.value("gpus", json::array());
    if (!gpus.is_array()) return bad("gpus", "not a list");
    for (size_t i = 0; i < gpus.size(); ++i) {
        GpuIdentity id;
        GpuSample s;
        if (auto st = read_gpu(gpus[i], fmt::format("gpus[{}]", i), id, s); !st.ok()) return st;
        if (id.index != i)
            return bad(fmt::format("gpus[{}].index", i), "GPUs are listed in index order");
        t.gpus.push_back(std::move(id));
        t.sample.gpus.push_back(std::move(s));
    }
    const json events = doc.value("kernel_events", json::array());
    if (!events.is_array()) return bad("kernel_events", "not a list");
    for (size_t i = 0; i < events.size(); ++i) {
        KernelEvent e;
        if (auto st = read_event(events[i], fmt::format("kernel_events[{}]", i), e); !st.ok())
            return st;
        t.events.push_back(std::move(e));
    }
    return t;
}

}  // namespace trainrig::watch
