#include "data/tokenizer/tokenizer.h"

namespace trainrig::data {

Result<std::vector<uint32_t>> Tokenizer::encode(std::string_view text, bool allow_special) const {
    std::vector<uint32_t> ids;
    TRAINRIG_TRY(encoder(allow_special)->encode(text, ids));
    return ids;
}

}  // namespace trainrig::data
