#include "data/shards/shard_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/quantity.h"
#include "core/text.h"
#include "core/user_file.h"
#include "data/shards/llmc_format.h"
#include "data/shards/megatron_format.h"

namespace trainrig::data {
namespace fs = std::filesystem;
namespace {

bool is_megatron(const std::string& prefix) {
    std::error_code ec;
    return fs::exists(prefix + ".idx", ec);
}

Status nothing_at(const std::string& prefix) {
    return {Errc::kNotFound,
            fmt::format("found no dataset at {} (neither {}.idx nor an llm.c shard {} or "
                        "{}_000000.bin)",
                        prefix, prefix, prefix, prefix)};
}

LengthStats length_stats(std::vector<uint64_t> lengths) {
    LengthStats s;
    s.count = lengths.size();
    if (lengths.empty()) return s;
    uint64_t total = 0;
    std::map<uint64_t, uint64_t> buckets;
    for (const uint64_t n : lengths) {
        total += n;
        uint64_t lower = 1;
        while (lower * 2 <= n) lower *= 2;
        ++buckets[n == 0 ? 0 : lower];
    }
    std::nth_element(lengths.begin(), lengths.begin() + lengths.size() / 2, lengths.end());
    s.median = lengths[lengths.size() / 2];
    const auto [mn, mx] = std::minmax_element(lengths.begin(), lengths.end());
    s.min = *mn;
    s.max = *mx;
    s.mean = static_cast<double>(total) / static_cast<double>(lengths.size());
    s.histogram.assign(buckets.begin(), buckets.end());
    return s;
}

DocumentPreview preview(uint64_t index, const std::vector<uint32_t>& ids, size_t max_chars,
                        const Tokenizer* tokenizer) {
    DocumentPreview p;
    p.index = index;
    p.tokens = ids.size();
    p.first_ids.assign(ids.begin(), ids.begin() + std::min<size_t>(ids.size(), 16));
    if (tokenizer != nullptr) {
        auto text = tokenizer->decode(ids);
        p.text = text ? *text : fmt::format("(cannot decode: {})", text.status().message());
        if (p.text->size() > max_chars) {
            size_t cut = max_chars;
            while (cut > 0 && (static_cast<unsigned char>((*p.text)[cut]) & 0xC0) == 0x80) --cut;
            p.text->resize(cut);
            *p.text += "…";
        }
    }
    return p;
}

}  // namespace

std::string dataset_prefix(const std::string& name) {
    if (llmc_shard_number(name))
        return name.substr(0, name.size() - std::string("_000000.bin").size());
    if (name.ends_with(".bin")) return name.substr(0, name.size() - std::string(".bin").size());
    return name;
}

std::optional<std::string> recorded_tokenizer(const std::string& name) {
    auto text = read_user_file(dataset_prefix(name) + ".meta.json", "PREFIX", 1 << 20);
    if (!text) return std::nullopt;
    const auto j = nlohmann::json::parse(*text, nullptr, false);
    if (!j.is_object() || !j.contains("tokenizer") || !j["tokenizer"].contains("spec") ||
        !j["tokenizer"]["spec"].is_string())
        return std::nullopt;
    return j["tokenizer"]["spec"].get<std::string>();
}

std::optional<size_t> recorded_vocab_size(const std::string& name) {
    auto text = read_user_file(dataset_prefix(name) + ".meta.json", "PREFIX", 1 << 20);
    if (!text) return std::nullopt;
    const auto j = nlohmann::json::parse(*text, nullptr, false);
    if (!j.is_object() || !j.contains("tokenizer") || !j["tokenizer"].contains("vocab_size") ||
        !j["tokenizer"]["vocab_size"].is_number_unsigned())
        return std::nullopt;
    return j["tokenizer"]["vocab_size"].get<size_t>();
}

Result<ShardSummary> inspect_shards(const std::string& prefix, size_t show, size_t max_chars,
                                    const Tokenizer* tokenizer) {
    ShardSummary s;
    if (is_megatron(prefix)) {
        auto d = MegatronDataset::open(prefix);
        if (!d) return d.status();
        s.format = "megatron";
        s.files = {prefix + ".idx", prefix + ".bin"};
        s.dtype = dtype_name(d->dtype());
        s.documents = d->documents();
        s.tokens = d->tokens();
        std::vector<uint64_t> lengths(d->sequences());
        for (uint64_t i = 0; i < d->sequences(); ++i) lengths[i] = d->length(i);
        s.lengths = length_stats(std::move(lengths));
        for (uint64_t i = 0; i < std::min<uint64_t>(show, d->sequences()); ++i) {
            std::vector<uint32_t> ids(d->length(i));
            const uint64_t first = d->first_token(i);
            for (size_t k = 0; k < ids.size(); ++k)
                ids[k] = static_cast<uint32_t>(d->token(first + k));
            s.previews.push_back(preview(i, ids, max_chars, tokenizer));
        }
        return s;
    }
    const auto files = llmc_shard_paths(prefix);
    if (files.empty()) return nothing_at(prefix);
    s.format = "llmc";
    for (const auto& f : files) {
        auto shard = LlmcShard::open(f);
        if (!shard) return shard.status();
        s.files.push_back(f);
        s.dtype = dtype_name(shard->dtype());
        s.tokens += shard->tokens();
        if (s.previews.size() < show && shard->tokens() > 0) {
            // llm.c shards record no document boundaries; show the start of each shard.
            std::vector<uint32_t> ids(std::min<uint64_t>(shard->tokens(), 4096));
            for (size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<uint32_t>(shard->token(k));
            // Numbered as the file is named: shard 1 stays shard 1 when given alone.
            s.previews.push_back(preview(llmc_shard_number(f).value_or(s.files.size() - 1), ids,
                                         max_chars, tokenizer));
            s.previews.back().tokens = shard->tokens();
            s.previews.back().file = f;
        }
    }
    return s;
}

Result<VerifyReport> verify_shards(const std::string& prefix, std::optional<size_t> vocab_size) {
    VerifyReport r;
    r.vocab_size = vocab_size;
    const auto check_token = [&](int64_t v, const std::string& where) {
        r.max_token = std::max(r.max_token.value_or(v), v);
        if (r.problems.size() >= 20) return;
        if (v < 0)
            r.problems.push_back(fmt::format("{} is {}, a negative token id", where, v));
        else if (vocab_size && static_cast<uint64_t>(v) >= *vocab_size)
            r.problems.push_back(
                fmt::format("{} is {}, not below the vocabulary size {}", where, v, *vocab_size));
    };
    if (is_megatron(prefix)) {
        r.format = "megatron";
        r.files = {prefix + ".idx", prefix + ".bin"};
        auto d = MegatronDataset::open(prefix);
        if (!d) {
            r.problems.push_back(d.status().message());
            return r;
        }
        r.documents = d->documents();
        r.tokens = d->tokens();
        for (uint64_t s = 0; s < d->sequences(); ++s) {
            const uint64_t first = d->first_token(s);
            for (uint64_t k = 0; k < d->length(s); ++k) {
                const int64_t v = d->token(first + k);
                if (v < 0 || (vocab_size && static_cast<uint64_t>(v) >= *vocab_size) ||
                    !r.max_token || v > *r.max_token)
                    check_token(v, fmt::format("token {} of document {}", k, s));
            }
        }
        return r;
    }
    const auto files = llmc_shard_paths(prefix);
    if (files.empty()) return nothing_at(prefix);
    r.format = "llmc";
    r.files = files;
    for (const auto& f : files) {
        auto shard = LlmcShard::open(f);
        if (!shard) {
            r.problems.push_back(shard.status().message());
            continue;
        }
        r.tokens += shard->tokens();
        for (uint64_t k = 0; k < shard->tokens(); ++k) {
            const int64_t v = shard->token(k);
            if (v < 0 || (vocab_size && static_cast<uint64_t>(v) >= *vocab_size) || !r.max_token ||
                v > *r.max_token)
                check_token(v, fmt::format("{} token {}", f, k));
        }
    }
    return r;
}

std::string render_summary_text(const ShardSummary& s) {
    std::string out = fmt::format("{} dataset: {}\n", s.format, join(s.files, ", "));
    out += fmt::format("  tokens      {:>14}  ({})\n", format_count(static_cast<double>(s.tokens)),
                       s.dtype);
    if (s.format == "megatron") {
        out +=
            fmt::format("  documents   {:>14}\n", format_count(static_cast<double>(s.documents)));
        const LengthStats& l = s.lengths;
        out += fmt::format("  length      min {}  median {}  mean {:.1f}  max {}\n", l.min,
                           l.median, l.mean, l.max);
        uint64_t peak = 1;
        for (const auto& [lo, n] : l.histogram) peak = std::max(peak, n);
        for (const auto& [lo, n] : l.histogram) {
            const std::string range = lo == 0 ? "0" : fmt::format("{}-{}", lo, lo * 2 - 1);
            out += fmt::format(
                "  {:>15} {:>10} {}\n", range, n,
                std::string(static_cast<size_t>(
                                40.0 * static_cast<double>(n) / static_cast<double>(peak) + 0.5),
                            '#'));
        }
    }
    for (const auto& p : s.previews) {
        out += p.file.empty() ? fmt::format("\ndocument {} ({} tokens): ", p.index, p.tokens)
                              : fmt::format("\nshard {} ({}, {} tokens): ", p.index,
                                            fs::path(p.file).filename().string(), p.tokens);
        if (p.text) {
            out += fmt::format("{:?}\n", *p.text);
        } else {
            out +=
                fmt::format("ids {} … (pass --tokenizer to decode)\n", fmt::join(p.first_ids, " "));
        }
    }
    return out;
}

nlohmann::json summary_json(const ShardSummary& s) {
    nlohmann::json j = {{"schema", "trainrig.data.inspect"},
                        {"schema_version", 1},
                        {"format", s.format},
                        {"files", s.files},
                        {"dtype", s.dtype},
                        {"tokens", s.tokens}};
    if (s.format == "megatron") {
        j["documents"] = s.documents;
        nlohmann::json hist = nlohmann::json::array();
        for (const auto& [lo, n] : s.lengths.histogram)
            hist.push_back({{"min_tokens", lo}, {"documents", n}});
        j["lengths"] = {{"min", s.lengths.min},
                        {"median", s.lengths.median},
                        {"mean", s.lengths.mean},
                        {"max", s.lengths.max},
                        {"histogram", hist}};
    }
    nlohmann::json docs = nlohmann::json::array();
    for (const auto& p : s.previews) {
        nlohmann::json d = {{"index", p.index}, {"tokens", p.tokens}, {"first_ids", p.first_ids}};
        if (p.text) d["text"] = *p.text;
        if (!p.file.empty()) d["file"] = p.file;
        docs.push_back(d);
    }
    j["previews"] = docs;
    return j;
}

std::string render_verify_text(const VerifyReport& r) {
    std::string out = fmt::format("{} dataset: {}\n", r.format, join(r.files, ", "));
    // llm.c shards record neither documents nor pointers: only a header and the tokens.
    const bool megatron = r.format == "megatron";
    out += "  ";
    if (megatron)
        out += fmt::format("documents {}  ", format_count(static_cast<double>(r.documents)));
    out += fmt::format("tokens {}  ", format_count(static_cast<double>(r.tokens)));
    if (r.max_token) out += fmt::format("largest id {}  ", *r.max_token);
    out += fmt::format("vocabulary {}\n",
                       r.vocab_size ? std::to_string(*r.vocab_size) : std::string("unknown"));
    if (r.problems.empty()) {
        if (r.vocab_size)
            out += megatron
                       ? "  sound: sizes, pointers, document indices and token range check out\n"
                       : "  sound: headers, sizes and token range check out\n";
        else
            out += fmt::format(
                "  sound: {} check out (token range not checked: pass --vocab-size or "
                "--tokenizer)\n",
                megatron ? "sizes, pointers and document indices" : "headers and sizes");
        return out;
    }
    for (const auto& p : r.problems) out += fmt::format("  problem: {}\n", p);
    return out;
}

nlohmann::json verify_json(const VerifyReport& r) {
    nlohmann::json j = {
        {"schema", "trainrig.data.verify"},
        {"schema_version", 1},
        {"format", r.format},
        {"files", r.files},
        {"documents", r.documents},
        {"tokens", r.tokens},
        {"max_token", r.max_token ? nlohmann::json(*r.max_token) : nlohmann::json(nullptr)},
        {"ok", r.problems.empty()},
        {"problems", r.problems}};
    j["vocab_size"] = r.vocab_size ? nlohmann::json(*r.vocab_size) : nlohmann::json(nullptr);
    return j;
}

}  // namespace trainrig::data
