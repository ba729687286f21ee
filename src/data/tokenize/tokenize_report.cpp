#include "data/tokenize/tokenize_report.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/quantity.h"
#include "core/text.h"
#include "core/version.h"

namespace trainrig::data {
namespace {

double per_second(uint64_t n, double seconds) {
    return seconds > 0 ? static_cast<double>(n) / seconds : 0.0;
}

std::string duration(double s) {
    const auto total = static_cast<uint64_t>(s + 0.5);
    if (total >= 3600) return fmt::format("{}h{:02}m", total / 3600, total / 60 % 60);
    if (total >= 60) return fmt::format("{}m{:02}s", total / 60, total % 60);
    return fmt::format("{}s", total);
}

std::string tokenizer_spec_for_meta(const std::string& spec) {
    std::error_code ec;
    if (std::filesystem::exists(spec, ec)) return std::filesystem::absolute(spec, ec).string();
    return spec;
}

}  // namespace

std::string progress_line(const TokenizeStats& s) {
    std::string eta;
    if (s.file_bytes_done > 0 && s.file_bytes_total > s.file_bytes_done && s.seconds > 0) {
        const double rate = static_cast<double>(s.file_bytes_done) / s.seconds;
        eta = fmt::format(
            "  ETA {}",
            duration(static_cast<double>(s.file_bytes_total - s.file_bytes_done) / rate));
    }
    return fmt::format("{} documents  {} tokens  {}{}{}", format_count(static_cast<double>(s.documents)),
                       format_count(static_cast<double>(s.tokens)), format_rate(per_second(s.input_bytes, s.seconds)),
                       eta, s.skipped > 0 ? fmt::format("  {} skipped", s.skipped) : "");
}

std::string render_tokenize_text(const TokenizeRun& r) {
    const TokenizeStats& s = r.stats;
    std::string out = fmt::format("wrote {}\n", join(r.files, ", "));
    out += fmt::format("  {} documents, {} tokens ({}), tokenizer {}\n", format_count(static_cast<double>(s.documents)),
                       format_count(static_cast<double>(s.tokens)), dtype_name(r.dtype), r.tokenizer->description());
    out += fmt::format("  {} with {}: {} of input, {}, {}\n", format_duration(s.seconds),
                       plural(r.options->workers, "worker"),
                       format_rate(per_second(s.input_bytes, s.seconds)),
                       format_quantity(per_second(s.documents, s.seconds), "documents/s"),
                       format_quantity(per_second(s.tokens, s.seconds), "tokens/s"));
    if (s.skipped > 0) {
        out += fmt::format("  skipped {} records (--on-error skip); the first:\n", s.skipped);
        for (const auto& k : s.first_skipped) out += fmt::format("    {}: {}\n", k.where, k.why);
    }
    return out;
}

nlohmann::json tokenize_json(const TokenizeRun& r) {
    const TokenizeStats& s = r.stats;
    nlohmann::json skipped = nlohmann::json::array();
    for (const auto& k : s.first_skipped) skipped.push_back({{"where", k.where}, {"why", k.why}});
    return {{"schema", "trainrig.data.tokenize"},
            {"schema_version", 1},
            {"files", r.files},
            {"format", r.format},
            {"dtype", dtype_name(r.dtype)},
            {"tokenizer", r.tokenizer->description()},
            {"documents", s.documents},
            {"tokens", s.tokens},
            {"records", s.records},
            {"skipped", s.skipped},
            {"first_skipped", skipped},
            {"input_bytes", s.input_bytes},
            {"text_bytes", s.text_bytes},
            {"seconds", s.seconds},
            {"workers", r.options->workers},
            {"input_mb_per_s", per_second(s.input_bytes, s.seconds) / 1e6},
            {"documents_per_s", s.seconds > 0 ? static_cast<double>(s.documents) / s.seconds : 0.0},
            {"tokens_per_s", s.seconds > 0 ? static_cast<double>(s.tokens) / s.seconds : 0.0}};
}

nlohmann::json meta_json(const TokenizeRun& r) {
    nlohmann::json tok = {{"spec", tokenizer_spec_for_meta(r.tokenizer_spec)},
                          {"kind", r.tokenizer->kind()},
                          {"description", r.tokenizer->description()},
                          {"vocab_size", r.tokenizer->vocab_size()}};
    tok["eod"] = r.tokenizer->eod() ? nlohmann::json(*r.tokenizer->eod()) : nlohmann::json(nullptr);
    std::vector<std::string> inputs;
    for (const auto& i : r.options->inputs) inputs.push_back(tokenizer_spec_for_meta(i));
    std::vector<std::string> fields = r.options->text.fields();
    return {{"schema", "trainrig.data.shards"},
            {"schema_version", 1},
            {"trainrig_version", kTrainrigVersion},
            {"format", r.format},
            {"files", r.files},
            {"dtype", dtype_name(r.dtype)},
            {"documents", r.stats.documents},
            {"tokens", r.stats.tokens},
            {"skipped", r.stats.skipped},
            {"append_eod", r.options->append_eod},
            {"allow_special", r.options->allow_special},
            {"fields", fields},
            {"inputs", inputs},
            {"tokenizer", tok}};
}

}  // namespace trainrig::data
