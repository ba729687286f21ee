#include "train/batch_probe_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace trainrig::train {

namespace {

using nlohmann::json;

std::string render_mib(uint64_t bytes) {
    return fmt::format("{:.1f}", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::string render_gib(uint64_t bytes) {
    return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1ull << 30));
}

// Whether the size's steps ran (with or without the headroom): only then is its peak a peak
// and its speed a speed. An out-of-memory's bytes held when it failed are in its `why`.
bool size_ran(const SizeTried& s) {
    return s.verdict == SizeVerdict::kFits || s.verdict == SizeVerdict::kOverHeadroom;
}

// measured / estimated, when both are known.
std::optional<double> peak_ratio(const SizeTried& s) {
    if (!size_ran(s) || s.peak_bytes == 0 || s.estimate_bytes == 0) return std::nullopt;
    return static_cast<double>(s.peak_bytes) / static_cast<double>(s.estimate_bytes);
}

json or_null(uint64_t v) { return v ? json(v) : json(nullptr); }

std::string answer_line(const ProbeReport& r) {
    const SearchResult& s = r.search;
    switch (s.answer) {
        case SearchAnswer::kFound:
            return fmt::format(
                "micro-batch {}: the largest that trained with {:g} % of {} kept free{}", s.chosen,
                100 * r.headroom, render_gib(r.capacity),
                s.bound_reached
                    ? fmt::format(" (the --max-batch bound, {}: larger may fit too)", r.max_batch)
                    : "");
        case SearchAnswer::kNothingFits:
            return fmt::format(
                "nothing fits: even one sequence of {} tokens needs more than {} with {:g} % "
                "kept free; shorten --seq, choose a smaller model or give more memory",
                r.seq, render_gib(r.capacity), 100 * r.headroom);
        case SearchAnswer::kError:
            break;
    }
    if (!r.interrupted) return "stopped: " + s.error;
    // The search's error already names the size and says "interrupted": said once here, with
    // what the sizes measured before it still tell.
    int largest = 0;
    for (const SizeTried& t : s.tried)
        if (t.verdict == SizeVerdict::kFits) largest = std::max(largest, t.batch);
    const std::string so_far = largest > 0 ? fmt::format("the largest that fit so far: {}", largest)
                                           : std::string("no size fit so far");
    if (s.tried.empty()) return "interrupted before the first size; " + so_far;
    return fmt::format("interrupted at batch {}; {}", s.tried.back().batch, so_far);
}

}  // namespace

json probe_json(const ProbeReport& r) {
    json sizes = json::array();
    for (size_t i = 0; i < r.search.tried.size(); ++i) {
        const SizeTried& s = r.search.tried[i];
        const auto ratio = peak_ratio(s);
        const bool ran = size_ran(s);
        sizes.push_back({{"batch", s.batch},
                         {"verdict", size_verdict_name(s.verdict)},
                         {"peak_bytes", ran ? or_null(s.peak_bytes) : json(nullptr)},
                         {"estimate_bytes", or_null(s.estimate_bytes)},
                         {"peak_over_estimate", ratio ? json(*ratio) : json(nullptr)},
                         {"backend_bytes",
                          i < r.backend_bytes.size() ? or_null(r.backend_bytes[i]) : json(nullptr)},
                         {"tokens_per_s", ran ? json(s.tokens_per_s) : json(nullptr)},
                         {"why", s.why.empty() ? json(nullptr) : json(s.why)}});
    }
    const SearchResult& s = r.search;
    return {{"schema", "trainrig.train.find_batch"},
            {"schema_version", 1},
            {"answer", r.interrupted ? "interrupted" : search_answer_name(s.answer)},
            {"micro_batch", s.answer == SearchAnswer::kFound ? json(s.chosen) : json(nullptr)},
            {"bound_reached", s.bound_reached},
            {"error", s.error.empty() ? json(nullptr) : json(s.error)},
            {"backend", r.backend},
            {"device", r.device.empty() ? json(nullptr) : json(r.device)},
            {"model",
             {{"name", r.model.name},
              {"arch", arch_name(r.model.arch)},
              {"layers", r.model.layers},
              {"heads", r.model.heads},
              {"channels", r.model.channels},
              {"vocab", r.model.vocab},
              {"params", r.parameters}}},
            {"seq", r.seq},
            {"steps_per_size", r.steps},
            {"seed", r.seed},
            {"capacity_bytes", r.capacity},
            {"capacity_source", r.capacity_source},
            {"headroom", r.headroom},
            {"headroom_line_bytes", s.headroom_line},
            {"max_batch", r.max_batch},
            {"estimate",
             {{"source", r.basis.describe()},
              {"precision", plan::precision_name(r.basis.precision)},
              {"convention", plan::convention_name(r.basis.convention)},
              {"zero", r.basis.zero},
              {"fixed_bytes", r.fixed_bytes}}},
            {"start_batch", r.start},
            {"sizes", sizes},
            {"notes", r.notes}};
}

std::string probe_text(const ProbeReport& r) {
    std::string out =
        fmt::format("trainrig train --find-batch: {} ({:.1f}M parameters), seq {}, {} backend{}\n",
                    r.model.name, static_cast<double>(r.parameters) / 1e6, r.seq, r.backend,
                    r.device.empty() ? "" : " on " + r.device);
    out += fmt::format("  capacity     {} ({}); {:g} % kept free: the line is {}\n",
                       render_gib(r.capacity), r.capacity_source, 100 * r.headroom,
                       render_gib(r.search.headroom_line));
    out +=
        fmt::format("  estimate     {}; it starts the search at {}\n", r.basis.describe(), r.start);
    out += "\n  batch  result             peak (MiB)  plan (MiB)  peak/plan";
    const bool cpu = r.backend == "cpu";
    if (cpu) out += "  backend (MiB)";
    out += "   tokens/s\n";
    for (size_t i = 0; i < r.search.tried.size(); ++i) {
        const SizeTried& s = r.search.tried[i];
        const auto ratio = peak_ratio(s);
        const bool ran = size_ran(s);
        out += fmt::format("  {:>5}  {:<17} {:>11} {:>11} {:>10}", s.batch,
                           size_verdict_text(s.verdict),
                           ran && s.peak_bytes ? render_mib(s.peak_bytes) : "-",
                           s.estimate_bytes ? render_mib(s.estimate_bytes) : "-",
                           ratio ? fmt::format("{:.2f}", *ratio) : "-");
        if (cpu)
            out += fmt::format(" {:>14}", i < r.backend_bytes.size() && r.backend_bytes[i]
                                              ? render_mib(r.backend_bytes[i])
                                              : "-");
        out += fmt::format(" {:>10}\n", ran ? fmt::format("{:.0f}", s.tokens_per_s) : "-");
    }
    for (const SizeTried& s : r.search.tried)
        if (!s.why.empty()) out += fmt::format("  batch {}: {}\n", s.batch, s.why);
    out += fmt::format("\n  answer       {}\n", answer_line(r));
    for (const std::string& n : r.notes) out += fmt::format("  note         {}\n", n);
    return out;
}

std::string probe_progress_line(const SizeTried& s) {
    std::string line =
        fmt::format("find-batch: batch {}: {}", s.batch, size_verdict_text(s.verdict));
    if (size_ran(s) && s.peak_bytes) line += fmt::format(", peak {} MiB", render_mib(s.peak_bytes));
    if (s.estimate_bytes) line += fmt::format(" (plan {} MiB)", render_mib(s.estimate_bytes));
    if (size_ran(s)) line += fmt::format(", {:.0f} tokens/s", s.tokens_per_s);
    if (!s.why.empty() && !size_ran(s)) line += ": " + s.why;
    return line;
}

}  // namespace trainrig::train
