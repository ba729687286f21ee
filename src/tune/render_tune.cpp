#include "tune/render_tune.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"

namespace trainrig::tune {

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) {
            // A last line without its newline differs from one with it, as diff(1) says.
            out.emplace_back(text.substr(start) + "\n\\ No newline at end of file");
            break;
        }
        out.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

// Settings that take effect on the running machine (the rest act through files).
bool is_live(const Setting& x) { return x.profile == "sysctl" || x.profile == "cpu"; }

std::string file_of(const std::string& profile) {
    if (profile == "sysctl") return kSysctlFile;
    if (profile == "limits") return kLimitsFile;
    if (profile == "nccl") return kNcclFile;
    if (profile == "cpu") return "live: /sys/devices/system/cpu/cpufreq/policy*/scaling_governor";
    return "used by `trainrig launch`";
}

}  // namespace

std::string line_diff(const std::string& old, const std::string& proposed) {
    // Longest common subsequence of lines; the files are tens of lines.
    const auto a = lines_of(old), b = lines_of(proposed);
    std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
    for (size_t i = a.size(); i-- > 0;)
        for (size_t j = b.size(); j-- > 0;)
            lcs[i][j] =
                a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    std::string out;
    size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
        if (i < a.size() && j < b.size() && a[i] == b[j]) {
            out += " " + a[i++] + "\n";
            ++j;
        } else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
            out += "-" + a[i++] + "\n";  // removals first, as git shows them
        } else {
            out += "+" + b[j++] + "\n";
        }
    }
    return out;
}

size_t change_count(const Profile& p) {
    size_t n = 0;
    for (const auto& f : p.files)
        if (!f.existing || *f.existing != f.proposed) ++n;
    for (const auto& x : p.settings)
        if (is_live(x) && x.changes()) ++n;
    return n;
}

std::string render_show(const Profile& p, bool verbose) {
    std::string out;
    for (const std::string& profile : profile_names()) {
        auto header = [&] {
            out += fmt::format("{}[{}] {}\n", out.empty() ? "" : "\n", profile, file_of(profile));
        };
        bool shown = false;
        for (const auto& x : p.settings) {
            if (x.profile != profile) continue;
            if (!shown) header();
            shown = true;
            const std::string now = x.live ? *x.live : "not set or unknown";
            out += fmt::format("  {} = {}   (now: {}{})\n      why: {}\n      source: {}\n", x.key,
                               x.value, now, x.changes() ? "" : ", unchanged", x.reason, x.source);
            if (verbose)
                out += fmt::format("      judged by: {}\n",
                                   x.rule.empty() ? "no doctor check" : "doctor " + x.rule);
        }
        // A profile that owns a file but sets nothing is still an answer: printing nothing
        // reads as if it was not asked for.
        const bool owns_file =
            std::any_of(p.files.begin(), p.files.end(),
                        [&](const ManagedFile& f) { return f.profile == profile; });
        if (!shown && owns_file) {
            header();
            out += profile == "nccl" ? fmt::format("  nothing to set: {}\n", kNcclNothingToSet)
                                     : std::string("  nothing to set\n");
        }
    }
    if (!p.notes.empty()) {
        out += "\nLeft out:\n";
        for (const auto& n : p.notes) out += "  - " + n + "\n";
    }
    return out;
}

std::string render_diff(const Profile& p, bool verbose) {
    std::string out;
    for (const auto& f : p.files) {
        if (f.existing && *f.existing == f.proposed) continue;
        // One hunk with the whole file as context: the files are short, and patch(1) applies it.
        const auto old_lines = lines_of(f.existing.value_or("")).size();
        const auto new_lines = lines_of(f.proposed).size();
        out +=
            fmt::format("--- {}\n+++ {}\n@@ -{},{} +{},{} @@\n", f.existing ? f.path : "/dev/null",
                        f.path, old_lines ? 1 : 0, old_lines, new_lines ? 1 : 0, new_lines);
        out += line_diff(f.existing.value_or(""), f.proposed);
    }
    std::string live;
    for (const auto& x : p.settings)
        if (is_live(x) && x.changes())
            live +=
                fmt::format("  {} {}: {} -> {}\n{}", x.profile, x.key, x.live.value_or("not set"),
                            x.value, verbose ? fmt::format("      why: {}\n", x.reason) : "");
    if (!live.empty()) out += (out.empty() ? "" : "\n") + std::string("Live values:\n") + live;
    if (out.empty()) out = "No differences: this machine has the profile.\n";
    return out;
}

nlohmann::json profile_to_json(const Profile& p) {
    nlohmann::json settings = nlohmann::json::array(), files = nlohmann::json::array();
    for (const auto& x : p.settings)
        settings.push_back({{"profile", x.profile},
                            {"key", x.key},
                            {"value", x.value},
                            {"live", x.live ? nlohmann::json(*x.live) : nlohmann::json()},
                            {"changes", x.changes()},
                            {"reason", x.reason},
                            {"source", x.source},
                            {"override", x.from_override},
                            {"rule", x.rule.empty() ? nlohmann::json() : nlohmann::json(x.rule)}});
    for (const auto& f : p.files)
        files.push_back({{"path", f.path},
                         {"existing", f.existing ? nlohmann::json(*f.existing) : nlohmann::json()},
                         {"proposed", f.proposed},
                         {"changes", !f.existing || *f.existing != f.proposed}});
    return {{"schema", "trainrig.tune"}, {"schema_version", 1}, {"changes", change_count(p)},
            {"settings", settings},      {"files", files},      {"notes", p.notes}};
}

}  // namespace trainrig::tune
