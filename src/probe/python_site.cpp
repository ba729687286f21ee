#include "probe/python_site.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/child_process.h"
#include "core/text.h"

namespace trainrig {

namespace fs = std::filesystem;

namespace {

bool is_elf(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    char magic[4] = {};
    return in.read(magic, 4) && std::string_view(magic, 4) ==
                                    "\x7f"
                                    "ELF";
}

// "3.11" for an interpreter named python3.11; else the one lib/python3.N under its prefix.
std::optional<std::string> python_minor(const fs::path& real, const fs::path& prefix) {
    const std::string name = real.filename().string();
    if (name.starts_with("python3.") && parse_u64(std::string_view(name).substr(8)))
        return name.substr(6);
    std::optional<std::string> found;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(prefix / "lib", ec)) {
        const std::string n = e.path().filename().string();
        if (!n.starts_with("python3.") || !parse_u64(std::string_view(n).substr(8))) continue;
        if (found) return std::nullopt;  // two versions: which one is this?
        found = n.substr(6);
    }
    return found;
}

// pyvenv.cfg's `include-system-site-packages = true`.
bool venv_includes_system(const fs::path& cfg) {
    std::ifstream in(cfg);
    for (std::string line; std::getline(in, line);) {
        auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        if (trim(std::string_view(line).substr(0, eq)) == "include-system-site-packages")
            return to_lower(trim(std::string_view(line).substr(eq + 1))) == "true";
    }
    return false;
}

// The first word of the first line that is not empty or a comment.
std::optional<std::string> first_word(const fs::path& file) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
        auto t = trim(line);
        if (t.empty() || t.starts_with('#')) continue;
        return std::string(split_ws(t).front());
    }
    return std::nullopt;
}

std::string find_python3_outside(const EnvLookup& env, const fs::path& skip) {
    const auto path = env("PATH");
    if (!path) return {};
    std::error_code ec;
    for (auto dir : split(*path, ':')) {
        if (dir.empty() || fs::equivalent(fs::path(std::string(dir)), skip, ec)) continue;
        const std::string candidate = std::string(dir) + "/python3";
        if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return {};
}

}  // namespace

std::optional<std::string> resolve_interpreter(const std::string& python, const EnvLookup& env,
                                               const std::string& cwd) {
    std::error_code ec;
    const fs::path called(python);
    if (is_elf(fs::canonical(called, ec))) return python;
    const fs::path shims = called.parent_path(), root = shims.parent_path();
    if (shims.filename() != "shims" || !fs::is_directory(root / "versions", ec))
        return std::nullopt;
    std::optional<std::string> version;
    if (auto v = env("PYENV_VERSION"); v && !trim(*v).empty())
        version = std::string(split(trim(*v), ':').front());  // "3.11.7:3.10.4": the first
    for (fs::path dir = cwd; !version && !dir.empty(); dir = dir.parent_path()) {
        if (fs::exists(dir / ".python-version", ec)) version = first_word(dir / ".python-version");
        if (dir == dir.root_path()) break;
    }
    if (!version) version = first_word(root / "version");
    if (!version || *version == "system") {
        auto next = find_python3_outside(env, shims);
        return next.empty() ? std::nullopt : std::optional<std::string>(next);
    }
    const auto interpreter = root / "versions" / *version / "bin" / "python3";
    if (access(interpreter.c_str(), X_OK) != 0) return std::nullopt;
    return interpreter.string();
}

EnvLookup process_env() {
    return [](const char* name) -> std::optional<std::string> {
        const char* v = std::getenv(name);
        return v ? std::optional<std::string>(v) : std::nullopt;
    };
}

std::string find_python3(const EnvLookup& env) {
    const auto path = env("PATH");
    if (!path) return {};
    for (auto dir : split(*path, ':')) {
        if (dir.empty()) continue;
        const std::string candidate = std::string(dir) + "/python3";
        if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return {};
}

std::optional<std::vector<std::string>> site_dirs_from_layout(const std::string& python,
                                                              const EnvLookup& env) {
    if (env("PYTHONHOME")) return std::nullopt;
    std::error_code ec;
    const fs::path called(python);
    const fs::path real = fs::canonical(called, ec);
    if (ec || !is_elf(real)) return std::nullopt;
    const fs::path prefix = real.parent_path().parent_path();
    const auto minor = python_minor(real, prefix);
    if (!minor) return std::nullopt;
    const std::string lib = "python" + *minor;

    std::vector<std::string> dirs;
    auto add = [&](const fs::path& d) {
        std::error_code e;
        if (fs::is_directory(d, e)) dirs.push_back(d.lexically_normal().string());
    };
    if (auto pp = env("PYTHONPATH"))
        for (auto d : split(*pp, ':'))
            if (!d.empty()) add(fs::path(std::string(d)));
    // A venv is the folder above the bin/ the interpreter was called from (not its target).
    const fs::path venv = called.parent_path().parent_path();
    const bool in_venv = fs::exists(venv / "pyvenv.cfg", ec);
    if (in_venv) {
        add(venv / "lib" / lib / "site-packages");
        if (!venv_includes_system(venv / "pyvenv.cfg")) return dirs;
    }
    if (!env("PYTHONNOUSERSITE"))
        if (auto home = env("HOME")) add(fs::path(*home) / ".local/lib" / lib / "site-packages");
    // Debian's python3 (prefix /usr) reads /usr/local/lib/python3.N/dist-packages, then
    // /usr/lib/python3/dist-packages; other builds, prefix/lib[64]/python3.N/site-packages.
    if (prefix == "/usr") {
        add(fs::path("/usr/local/lib") / lib / "dist-packages");
        add("/usr/lib/python3/dist-packages");
        add(fs::path("/usr/lib") / lib / "dist-packages");
    }
    add(prefix / "lib" / lib / "site-packages");
    add(prefix / "lib64" / lib / "site-packages");
    return dirs;
}

Result<std::vector<std::string>> python_sys_path(const std::string& python,
                                                 std::chrono::milliseconds deadline) {
    auto out = run_command({python, "-c", "import sys\nfor p in sys.path: print(p)"}, deadline);
    if (!out) return out.status();
    std::vector<std::string> dirs;
    for (auto line : split(out->out, '\n'))
        if (!trim(line).empty()) dirs.emplace_back(trim(line));
    if (dirs.empty())
        return Status{Errc::kInvalidInput, fmt::format("{} printed no sys.path", python)};
    return dirs;
}

}  // namespace trainrig
