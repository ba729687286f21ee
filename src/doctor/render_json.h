// A doctor report as JSON (schema trainrig.doctor, docs/formats.md), and one finding as every
// document that holds findings writes it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "doctor/report.h"

namespace trainrig {

nlohmann::json render_json(const DoctorReport& r);
nlohmann::json finding_to_json(const Finding& f);

}  // namespace trainrig
