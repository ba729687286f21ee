// A doctor report on a terminal: grouped by area, one line per finding; -v adds the evidence
// and the remedy under each.
#pragma once

#include <string>

#include "doctor/report.h"

namespace trainrig {

std::string render_table(const DoctorReport& r, bool verbose, bool color);

}  // namespace trainrig
