#include "doctor/render_json.h"

#include "core/version.h"

namespace trainrig {

nlohmann::json finding_to_json(const Finding& f) {
    nlohmann::json j = {
        {"id", f.id},           {"title", f.title},       {"status", status_name(f.status)},
        {"summary", f.summary}, {"evidence", f.evidence}, {"remedy", f.remedy},
        {"refs", f.refs}};
    if (!f.data.is_null()) j["data"] = f.data;
    return j;
}

nlohmann::json render_json(const DoctorReport& r) {
    auto findings = nlohmann::json::array();
    for (const auto& f : r.findings) findings.push_back(finding_to_json(f));
    auto summary = nlohmann::json::object();
    for (const auto& [status, n] : count_by_status(r.findings))
        summary[std::string(status_name(status))] = n;
    return {{"schema", kDoctorSchema},
            {"schema_version", kDoctorSchemaVersion},
            {"trainrig_version", kTrainrigVersion},
            {"hostname", r.hostname},
            {"source", r.source},
            {"collected_at", r.collected_at},
            {"strict", r.strict},
            {"findings", findings},
            {"summary", summary},
            {"exit_code", doctor_exit_code(r.findings, r.strict)}};
}

}  // namespace trainrig
