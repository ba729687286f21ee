#include "probe/stack_parsers.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/text.h"

namespace trainrig {

Result<std::string> parse_nvcc_version(std::string_view text) {
    for (auto line : split(text, '\n')) {
        auto at = line.find("release ");
        if (at == std::string_view::npos) continue;
        auto rest = line.substr(at + 8);
        auto v = rest.find(", V");
        if (v != std::string_view::npos) {
            auto full = trim(rest.substr(v + 3));
            if (!full.empty() && std::isdigit(static_cast<unsigned char>(full[0])))
                return std::string(full);
        }
        auto release = trim(rest.substr(0, rest.find(',')));
        if (!release.empty()) return std::string(release);
    }
    return Status{Errc::kInvalidInput,
                  fmt::format("no \"release X.Y\" in `nvcc --version` output \"{}\"",
                              preview(trim(text), 60))};
}

const char* torch_probe_script() {
    // torch.cuda.nccl.version() is a tuple since torch 1.x's later releases, an int before.
    return R"PY(import json, sys
try:
    import torch
except ImportError:
    print(json.dumps({"torch": None})); sys.exit(0)
out = {"version": str(torch.__version__), "cuda": torch.version.cuda, "nccl": None,
       "python": sys.executable}
try:
    v = torch.cuda.nccl.version()
    out["nccl"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else int(v)
except Exception:
    pass
try:
    out["cuda_available"] = bool(torch.cuda.is_available())
    out["device_count"] = int(torch.cuda.device_count()) if out["cuda_available"] else 0
except Exception:
    out["cuda_available"] = False; out["device_count"] = 0
print(json.dumps({"torch": out}))
)PY";
}

Result<std::string> parse_package_version(std::string_view metadata) {
    for (auto line : split(metadata, '\n')) {
        if (trim(line).empty()) break;  // the headers end at the first blank line
        if (!line.starts_with("Version:")) continue;
        auto v = trim(line.substr(8));
        if (!v.empty()) return sanitize_text(v);
    }
    return Status{Errc::kInvalidInput, "no \"Version:\" header in the package's metadata"};
}

namespace {

// `name = 'value'`, `name: Optional[str] = "value"` or `name = None` -> the value; nullopt for
// None; an error for anything else (an expression we do not evaluate).
Result<std::optional<std::string>> python_string_assignment(std::string_view line,
                                                            std::string_view name) {
    auto rest = trim(line.substr(name.size()));
    if (rest.starts_with(':'))
        rest = trim(
            rest.substr(rest.find('=') == std::string_view::npos ? rest.size() : rest.find('=')));
    if (!rest.starts_with('='))
        return Status{Errc::kInvalidInput, fmt::format("\"{}\" is not an assignment", line)};
    auto value = trim(rest.substr(1));
    if (value == "None") return std::optional<std::string>();
    if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') &&
        value.back() == value.front())
        return std::optional<std::string>(sanitize_text(value.substr(1, value.size() - 2)));
    return Status{Errc::kInvalidInput,
                  fmt::format("{} is not a string literal: \"{}\"", name, preview(value, 40))};
}

}  // namespace

Result<TorchVersionPy> parse_torch_version_py(std::string_view text) {
    TorchVersionPy out;
    bool version = false;
    for (auto raw : split(text, '\n')) {
        auto line = trim(raw);
        for (std::string_view name : {"__version__", "cuda"}) {
            if (!line.starts_with(name)) continue;
            const char next = line.size() > name.size() ? line[name.size()] : '\0';
            if (next != ' ' && next != '=' && next != ':') continue;  // cuda_version, __version__x
            auto v = python_string_assignment(line, name);
            if (!v) return v.status();
            if (name == "cuda") {
                out.cuda = *v;
            } else if (*v) {
                out.version = **v;
                version = true;
            }
        }
    }
    if (!version) return Status{Errc::kInvalidInput, "torch/version.py sets no __version__"};
    return out;
}

std::string nccl_version_text(int64_t code) {
    if (code < 20900) return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
    return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
}

Result<std::optional<TorchFacts>> parse_torch_probe(std::string_view text) {
    // The last line that parses: an import may print warnings first.
    auto lines = split(trim(text), '\n');
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(trim(*it));
        } catch (const nlohmann::json::exception&) {
            continue;
        }
        if (!j.is_object() || !j.contains("torch")) continue;
        const auto& t = j["torch"];
        if (t.is_null()) return std::optional<TorchFacts>();
        try {
            TorchFacts f;
            f.version = sanitize_text(t.at("version").get<std::string>());
            if (t.contains("cuda") && t["cuda"].is_string())
                f.cuda = Fact<std::string>::known(sanitize_text(t["cuda"].get<std::string>()));
            if (t.contains("nccl") && t["nccl"].is_string())
                f.nccl = Fact<std::string>::known(sanitize_text(t["nccl"].get<std::string>()));
            else if (t.contains("nccl") && t["nccl"].is_number_integer())
                f.nccl = Fact<std::string>::known(nccl_version_text(t["nccl"].get<int64_t>()));
            f.cuda_available = Fact<bool>::known(t.value("cuda_available", false));
            f.device_count = Fact<int64_t>::known(t.value("device_count", int64_t{0}));
            f.python = sanitize_text(t.value("python", std::string()));
            return std::optional<TorchFacts>(std::move(f));
        } catch (const nlohmann::json::exception& e) {
            return Status{
                Errc::kInvalidInput,
                fmt::format("the torch probe printed an unexpected document: {}", e.what())};
        }
    }
    return Status{Errc::kInvalidInput, fmt::format("the torch probe printed no result: \"{}\"",
                                                   preview(trim(text), 80))};
}

}  // namespace trainrig
