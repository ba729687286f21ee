#include "data/tokenizer/open_tokenizer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "core/text.h"
#include "data/tokenizer/loaders.h"
#include "data/tokenizer/presets.h"

namespace trainrig::data {
namespace fs = std::filesystem;
namespace {

std::string head_of(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    char buf[256];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

bool looks_like_ranks(std::string_view head) {
    // "IQ== 0\n": base64, one space, digits.
    const size_t nl = head.find('\n');
    const std::string_view line = head.substr(0, nl);
    const size_t space = line.find(' ');
    if (space == std::string_view::npos || space == 0) return false;
    for (const char c : line.substr(0, space))
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '='))
            return false;
    return parse_u64(trim(line.substr(space + 1))).has_value();
}

Result<std::shared_ptr<const Tokenizer>> open_file(const std::string& path) {
    const std::string head = head_of(path);
    const std::string_view h = trim(head);
    if (h.starts_with("{")) return load_hf_tokenizer_json(path);
    if (looks_like_ranks(head)) return load_tiktoken(path);
    return load_sentencepiece(path);
}

Result<std::shared_ptr<const Tokenizer>> open_folder(const std::string& dir) {
    if (fs::exists(dir + "/encoder.json") && fs::exists(dir + "/vocab.bpe"))
        return load_gpt2_folder(dir);
    if (fs::exists(dir + "/tokenizer.json")) return load_hf_tokenizer_json(dir + "/tokenizer.json");
    if (fs::exists(dir + "/tokenizer.model")) return open_file(dir + "/tokenizer.model");
    return Status{Errc::kNotFound,
                  fmt::format("the folder {} holds neither encoder.json + vocab.bpe, nor "
                              "tokenizer.json, nor tokenizer.model",
                              dir)};
}

}  // namespace

Result<std::shared_ptr<const Tokenizer>> open_tokenizer(const std::string& spec) {
    std::error_code ec;
    if (const Preset* preset = find_preset(spec); preset != nullptr && !fs::exists(spec, ec)) {
        const std::string folder = tokenizer_folder();
        for (const auto file : preset->files) {
            const std::string path = fmt::format("{}/{}", folder, file);
            if (!fs::exists(path, ec)) continue;
            if (fs::is_directory(path, ec)) return open_folder(path);
            return load_tiktoken(path, preset);
        }
        std::vector<std::string> names;
        for (const auto file : preset->files) names.emplace_back(file);
        return Status{Errc::kNotFound,
                      fmt::format("the {} tokenizer's files are not in {} (looked for {})",
                                  preset->name, folder, join(names, ", ")),
                      "put them there (scripts/fetch-tokenizers.sh in trainrig's source "
                      "installs all four presets), point TRAINRIG_TOKENIZERS at the folder that "
                      "holds them, or pass --tokenizer PATH"};
    }
    if (fs::is_directory(spec, ec)) return open_folder(spec);
    if (fs::exists(spec, ec)) return open_file(spec);
    return check_tokenizer_spec(spec);
}

Status check_tokenizer_spec(const std::string& spec) {
    std::error_code ec;
    if (find_preset(spec) != nullptr || fs::exists(spec, ec)) return ok_status();
    std::vector<std::string> names;
    for (const auto& p : presets()) names.emplace_back(p.name);
    return Status{Errc::kNotFound,
                  fmt::format("--tokenizer {:?} is neither a preset ({}) nor an existing file or "
                              "folder",
                              spec, join(names, ", "))};
}

}  // namespace trainrig::data
