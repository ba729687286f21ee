#include "probe/torch_metadata.h"

#include <fmt/format.h>

#include <fstream>

#include "probe/stack_parsers.h"

namespace trainrig {

namespace {

std::optional<std::string> read_small(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    std::string text(64 << 10, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    return text;
}

}  // namespace

std::optional<Result<Distribution>> find_distribution(const std::string& dir,
                                                      std::string_view prefix, bool exact) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        const std::string n = e.path().filename().string();
        const bool dist = n.ends_with(".dist-info"), egg = n.ends_with(".egg-info");
        if (!(dist || egg) || !n.starts_with(prefix)) continue;
        if (exact && n.size() > prefix.size() && n[prefix.size()] != '-') continue;
        const auto meta = e.path() / (dist ? "METADATA" : "PKG-INFO");
        auto text = read_small(meta);
        if (!text)
            return Result<Distribution>(
                Status{Errc::kIo, fmt::format("{}: cannot be read", meta.string())});
        auto v = parse_package_version(*text);
        if (!v)
            return Result<Distribution>(
                Status{v.status().code(), meta.string() + ": " + v.status().message()});
        return Result<Distribution>(Distribution{e.path(), *v});
    }
    return std::nullopt;
}

Fact<TorchFacts> torch_from_metadata(const std::string& python,
                                     const std::vector<std::string>& dirs) {
    for (const auto& dir : dirs) {
        auto found = find_distribution(dir, "torch", true);
        if (!found) continue;
        if (!*found) return Fact<TorchFacts>::failed(found->status());
        const auto version_py = std::filesystem::path(dir) / "torch" / "version.py";
        auto text = read_small(version_py);
        if (!text)
            return Fact<TorchFacts>::failed(
                {Errc::kIo,
                 fmt::format("{} is installed in {} but {} cannot be read",
                             (*found)->info.filename().string(), dir, version_py.string())});
        auto parsed = parse_torch_version_py(*text);
        if (!parsed)
            return Fact<TorchFacts>::failed(
                {Errc::kInvalidInput, version_py.string() + ": " + parsed.status().message()});
        TorchFacts t;
        t.version = (*found)->version;
        t.python = python;
        t.location = dir;
        t.cuda =
            parsed->cuda ? Fact<std::string>::known(*parsed->cuda) : Fact<std::string>::absent();
        const Status not_imported{Errc::kUnsupported,
                                  "torch was not imported (`trainrig doctor --import-torch` "
                                  "asks it)"};
        t.nccl = t.cuda.is_known() ? Fact<std::string>::failed(not_imported)
                                   : Fact<std::string>::absent();
        for (const auto& d : dirs)
            if (auto nccl = find_distribution(d, "nvidia_nccl_cu", false); nccl && *nccl) {
                t.nccl = Fact<std::string>::known((*nccl)->version);
                break;
            }
        t.cuda_available = Fact<bool>::failed(not_imported);
        t.device_count = Fact<int64_t>::failed(not_imported);
        return Fact<TorchFacts>::known(std::move(t));
    }
    return Fact<TorchFacts>::absent();
}

}  // namespace trainrig
