#include "core/json_result.h"

#include "core/version.h"

namespace trainrig {

std::string json_result(nlohmann::json doc, std::string_view command, int exit_code) {
    doc["trainrig_version"] = kTrainrigVersion;
    doc["command"] = std::string(command);
    doc["exit_code"] = exit_code;
    return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace trainrig
