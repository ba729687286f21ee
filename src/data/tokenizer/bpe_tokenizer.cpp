#include "data/tokenizer/bpe_tokenizer.h"

#include <fmt/format.h>
#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>

#include "data/tokenizer/special_tokens.h"
#include "data/tokenizer/utf8.h"

namespace trainrig::data {
namespace {

// The piece cache: most pre-tokens of real text are words seen before. Pieces longer than this
// are rare and not worth the copy.
constexpr size_t kCachedPieceMax = 32;
constexpr size_t kCacheEntriesMax = 1 << 17;

class BpeTokenizer;

class BpeEncoder final : public TokenEncoder {
public:
    BpeEncoder(const BpeTokenizer& t, bool allow_special);
    Status encode(std::string_view text, std::vector<uint32_t>& out) override;

private:
    Status encode_ordinary(std::string_view text, std::vector<uint32_t>& out);
    void encode_piece(std::string_view piece, std::vector<uint32_t>& out);

    const BpeTokenizer& t_;
    bool allow_special_;
    Pretokenizer::Cursor cursor_;
    ByteStringMap cache_;                               // piece -> index into spans_
    std::vector<std::pair<uint32_t, uint32_t>> spans_;  // (offset, count) into ids_
    std::vector<uint32_t> ids_;
};

class BpeTokenizer final : public Tokenizer {
public:
    BpeTokenizer(BpeModel model, BpeOptions options, std::shared_ptr<const Pretokenizer> re)
        : model_(std::move(model)),
          options_(std::move(options)),
          re_(std::move(re)),
          matcher_(options_.specials) {
        size_t top = model_.token_count();
        for (const auto& s : options_.specials) top = std::max<size_t>(top, s.id + 1);
        vocab_size_ = top;
        special_text_.resize(top - model_.token_count() + 1);
        for (const auto& s : options_.specials)
            if (s.id >= model_.token_count()) special_text_[s.id - model_.token_count()] = s.text;
    }

    std::unique_ptr<TokenEncoder> encoder(bool allow_special) const override {
        return std::make_unique<BpeEncoder>(*this, allow_special);
    }

    Result<std::string> decode(std::span<const uint32_t> ids) const override {
        std::string out;
        for (const uint32_t id : ids) {
            if (const std::string* s = text_of(id); s != nullptr) {
                out += *s;
                continue;
            }
            return Status{
                Errc::kInvalidInput,
                fmt::format("token id {} is not in the vocabulary (size {})", id, vocab_size_)};
        }
        return out;
    }

    size_t vocab_size() const override { return vocab_size_; }
    std::optional<uint32_t> eod() const override { return options_.eod; }
    const std::vector<SpecialToken>& special_tokens() const override { return options_.specials; }

    const BpeModel& model() const { return model_; }
    const BpeOptions& options() const { return options_; }
    const std::shared_ptr<const Pretokenizer>& regex() const { return re_; }
    const SpecialMatcher& matcher() const { return matcher_; }

private:
    const std::string* text_of(uint32_t id) const {
        if (id < model_.token_count()) {
            const std::string& t = model_.token_bytes(id);
            if (!t.empty()) return &t;
            for (const auto& s : options_.specials)
                if (s.id == id) return &s.text;
            return nullptr;
        }
        if (id >= vocab_size_) return nullptr;
        const std::string& s = special_text_[id - model_.token_count()];
        return s.empty() ? nullptr : &s;
    }

    BpeModel model_;
    BpeOptions options_;
    std::shared_ptr<const Pretokenizer> re_;
    SpecialMatcher matcher_;
    size_t vocab_size_ = 0;
    std::vector<std::string> special_text_;
};

BpeEncoder::BpeEncoder(const BpeTokenizer& t, bool allow_special)
    : t_(t), allow_special_(allow_special), cursor_(t.regex()) {
    cache_.reserve(4096);
}

Status BpeEncoder::encode(std::string_view text, std::vector<uint32_t>& out) {
    std::string repaired;
    if (!is_valid_utf8(text)) {
        repaired = repair_utf8(text);
        text = repaired;
    }
    std::string normalized;
    if (t_.options().nfc && !std::all_of(text.begin(), text.end(), [](char c) {
            return static_cast<unsigned char>(c) < 0x80;
        })) {
        utf8proc_uint8_t* nfc = nullptr;
        const auto n =
            utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                         static_cast<utf8proc_ssize_t>(text.size()), &nfc,
                         static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
        if (n < 0) return {Errc::kInvalidInput, "the text could not be NFC-normalized"};
        normalized.assign(reinterpret_cast<const char*>(nfc), static_cast<size_t>(n));
        std::free(nfc);
        text = normalized;
    }
    if (!allow_special_) return encode_ordinary(text, out);
    size_t at = 0;
    while (auto hit = t_.matcher().find(text, at)) {
        TRAINRIG_TRY(encode_ordinary(text.substr(at, hit->pos - at), out));
        out.push_back(hit->id);
        at = hit->pos + hit->length;
    }
    return encode_ordinary(text.substr(at), out);
}

Status BpeEncoder::encode_ordinary(std::string_view text, std::vector<uint32_t>& out) {
    if (text.empty()) return ok_status();
    cursor_.clear_status();
    if (t_.options().add_prefix_space && text[0] != ' ') {
        const std::string prefixed = " " + std::string(text);
        const std::string_view view = prefixed;
        size_t from = 0, start = 0, end = 0;
        while (cursor_.next(view, from, start, end)) {
            encode_piece(view.substr(start, end - start), out);
            from = end;
        }
        return cursor_.status();
    }
    size_t from = 0, start = 0, end = 0;
    while (cursor_.next(text, from, start, end)) {
        encode_piece(text.substr(start, end - start), out);
        from = end;
    }
    return cursor_.status();
}

void BpeEncoder::encode_piece(std::string_view piece, std::vector<uint32_t>& out) {
    const BpeModel& m = t_.model();
    if (piece.size() == 1 || piece.size() > kCachedPieceMax) {
        m.encode_piece(piece, out);
        return;
    }
    if (const uint32_t hit = cache_.find(piece); hit != kNoToken) {
        const auto [offset, count] = spans_[hit];
        out.insert(out.end(), ids_.begin() + offset, ids_.begin() + offset + count);
        return;
    }
    const size_t before = out.size();
    m.encode_piece(piece, out);
    if (cache_.size() >= kCacheEntriesMax) {
        cache_.clear();
        spans_.clear();
        ids_.clear();
    }
    cache_.put(piece, static_cast<uint32_t>(spans_.size()));
    spans_.emplace_back(static_cast<uint32_t>(ids_.size()),
                        static_cast<uint32_t>(out.size() - before));
    ids_.insert(ids_.end(), out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
}

}  // namespace

Result<std::shared_ptr<const Tokenizer>> make_bpe_tokenizer(BpeModel model, BpeOptions options) {
    auto re = Pretokenizer::compile(options.pattern);
    if (!re) return re.status();
    std::string kind = options.kind, description = options.description;
    auto t =
        std::make_shared<BpeTokenizer>(std::move(model), std::move(options), std::move(re).value());
    t->set_kind(std::move(kind));
    t->set_description(std::move(description));
    return std::shared_ptr<const Tokenizer>(std::move(t));
}

}  // namespace trainrig::data
