// SentencePiece models (Llama 2, Mistral) through Debian's libsentencepiece: the library that
// trained them is the reference, so trainrig calls it rather than re-implementing the unigram
// and BPE-with-byte-fallback algorithms.
#include <fmt/format.h>
#include <sentencepiece_processor.h>

#include "data/tokenizer/loaders.h"
#include "data/tokenizer/utf8.h"

namespace trainrig::data {
namespace {

class SentencePieceEncoder final : public TokenEncoder {
public:
    explicit SentencePieceEncoder(const sentencepiece::SentencePieceProcessor& sp) : sp_(sp) {}
    Status encode(std::string_view text, std::vector<uint32_t>& out) override {
        std::string repaired;
        if (!is_valid_utf8(text)) {
            repaired = repair_utf8(text);
            text = repaired;
        }
        ids_.clear();
        if (const auto s = sp_.Encode(text, &ids_); !s.ok())
            return {Errc::kInvalidInput,
                    fmt::format("SentencePiece could not encode: {}", s.ToString())};
        for (const int id : ids_) out.push_back(static_cast<uint32_t>(id));
        return ok_status();
    }

private:
    const sentencepiece::SentencePieceProcessor& sp_;
    std::vector<int> ids_;
};

class SentencePieceTokenizer final : public Tokenizer {
public:
    explicit SentencePieceTokenizer(std::unique_ptr<sentencepiece::SentencePieceProcessor> sp)
        : sp_(std::move(sp)) {
        for (int id = 0; id < sp_->GetPieceSize(); ++id)
            if (sp_->IsControl(id))
                specials_.push_back({sp_->IdToPiece(id), static_cast<uint32_t>(id)});
    }

    // SentencePiece never matches control symbols (<s>, </s>) in text, which is the ordinary
    // encoding; user-defined symbols it always matches, whatever allow_special says.
    std::unique_ptr<TokenEncoder> encoder(bool) const override {
        return std::make_unique<SentencePieceEncoder>(*sp_);
    }

    Result<std::string> decode(std::span<const uint32_t> ids) const override {
        std::vector<int> v;
        v.reserve(ids.size());
        for (const uint32_t id : ids) {
            if (id >= vocab_size())
                return Status{Errc::kInvalidInput,
                              fmt::format("token id {} is not in the vocabulary (size {})", id,
                                          vocab_size())};
            v.push_back(static_cast<int>(id));
        }
        std::string out;
        if (const auto s = sp_->Decode(v, &out); !s.ok())
            return Status{Errc::kInvalidInput,
                          fmt::format("SentencePiece could not decode: {}", s.ToString())};
        return out;
    }

    size_t vocab_size() const override { return static_cast<size_t>(sp_->GetPieceSize()); }
    std::optional<uint32_t> eod() const override {
        if (sp_->eos_id() < 0) return std::nullopt;
        return static_cast<uint32_t>(sp_->eos_id());
    }
    const std::vector<SpecialToken>& special_tokens() const override { return specials_; }

private:
    std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
    std::vector<SpecialToken> specials_;
};

}  // namespace

Result<std::shared_ptr<const Tokenizer>> load_sentencepiece(const std::string& path) {
    auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
    if (const auto s = sp->Load(path); !s.ok())
        return Status{Errc::kInvalidInput,
                      fmt::format("{} is not a SentencePiece model ({})", path, s.ToString())};
    auto t = std::make_shared<SentencePieceTokenizer>(std::move(sp));
    t->set_kind("sentencepiece");
    t->set_description(fmt::format("SentencePiece model {}", path));
    return std::shared_ptr<const Tokenizer>(std::move(t));
}

}  // namespace trainrig::data
