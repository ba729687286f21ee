#include "validate/report_trust.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "core/text.h"
#include "validate/report_dir.h"

namespace trainrig::validate {

namespace fs = std::filesystem;

bool report_incomplete(const nlohmann::json& report) {
    if (!report.is_object()) return false;
    if (const auto it = report.find("incomplete");
        it != report.end() && it->is_boolean() && it->get<bool>())
        return true;
    if (const auto it = report.find("stages"); it != report.end() && it->is_array())
        for (const auto& s : *it)
            if (s.is_object() && s.value("state", "") == "interrupted") return true;
    return false;
}

std::string report_changes(const fs::path& path) {
    std::error_code ec;
    const fs::path dir = fs::is_directory(path, ec) ? path : path.parent_path();
    if (!fs::is_regular_file(dir / "SHA256SUMS", ec)) return "";
    auto v = verify_report_dir(dir);
    if (!v.ok()) return "report cannot be checked against its SHA256SUMS: " + v.status().message();
    if (v->intact()) return "";
    std::vector<std::string> parts;
    for (const auto& [what, files] :
         {std::pair{"changed", &v->changed}, std::pair{"missing", &v->missing},
          std::pair{"added", &v->unlisted}})
        if (!files->empty()) parts.push_back(join(*files, ", ") + " " + what);
    return "report changed since written: " + join(parts, "; ");
}

bool report_supersedes(bool a_incomplete, std::time_t a_finished, bool b_incomplete,
                       std::time_t b_finished) {
    return std::pair(!a_incomplete, a_finished) > std::pair(!b_incomplete, b_finished);
}

}  // namespace trainrig::validate
