// Environment files; see env_file.h.
#include "core/env_file.h"

#include <fmt/format.h>

#include <cctype>

#include "core/text.h"

namespace trainrig {

namespace {

bool is_name(std::string_view n) {
    if (n.empty() || std::isdigit(static_cast<unsigned char>(n.front()))) return false;
    for (char c : n)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

// A value as the shell reads it: plain, '...' pieces joined by \' (how tune quotes), or
// "..." holding nothing the shell would expand.
std::optional<std::string> unquote(std::string_view v) {
    std::string out;
    size_t i = 0;
    while (i < v.size()) {
        if (v[i] == '\'') {
            auto end = v.find('\'', i + 1);
            if (end == std::string_view::npos) return std::nullopt;
            out += v.substr(i + 1, end - i - 1);
            i = end + 1;
        } else if (v[i] == '"') {
            auto end = v.find('"', i + 1);
            if (end == std::string_view::npos) return std::nullopt;
            auto inside = v.substr(i + 1, end - i - 1);
            if (inside.find_first_of("$`\\") != std::string_view::npos) return std::nullopt;
            out += inside;
            i = end + 1;
        } else if (v[i] == '\\' && i + 1 < v.size()) {
            out += v[i + 1];
            i += 2;
        } else if (std::isspace(static_cast<unsigned char>(v[i])) || v[i] == '"' || v[i] == '$' ||
                   v[i] == '`' || v[i] == ';') {
            return std::nullopt;  // needs a shell; not what tune writes
        } else {
            out += v[i++];
        }
    }
    return out;
}

}  // namespace

Result<std::vector<EnvOp>> parse_env_file(std::string_view text, std::string_view where) {
    std::vector<EnvOp> ops;
    int number = 0;
    for (auto line : split(text, '\n')) {
        ++number;
        line = trim(line);
        if (line.empty() || line.front() == '#') continue;
        auto bad = [&](std::string_view what) {
            return Status{Errc::kInvalidInput,
                          fmt::format("{} line {}: {}: {}", where, number, what, preview(line))};
        };
        if (line.starts_with("unset ")) {
            auto name = trim(line.substr(6));
            if (!is_name(name)) return bad("not a variable name after unset");
            ops.push_back({std::string(name), true, {}});
            continue;
        }
        if (line.starts_with("export ")) line = trim(line.substr(7));
        auto eq = line.find('=');
        if (eq == std::string_view::npos) return bad("expected NAME=value or unset NAME");
        // Spaces around the name, the '=' and the value are ignored (docs/formats.md).
        auto name = trim(line.substr(0, eq));
        if (!is_name(name)) return bad("not a variable name");
        auto value = unquote(trim(line.substr(eq + 1)));
        if (!value)
            return bad("the value needs a shell (unquoted spaces, $, `, \\ in quotes or ;)");
        ops.push_back({std::string(name), false, *value});
    }
    return ops;
}

std::map<std::string, std::string> apply_env_ops(const std::vector<EnvOp>& ops,
                                                 std::map<std::string, std::string> base) {
    for (const auto& op : ops) {
        if (op.unset)
            base.erase(op.name);
        else
            base[op.name] = op.value;
    }
    return base;
}

}  // namespace trainrig
