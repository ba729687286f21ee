// A doctor report as Markdown: a table of findings; -v adds the evidence and the remedy.
#pragma once

#include <string>

#include "doctor/report.h"

namespace trainrig {

std::string render_markdown(const DoctorReport& r, bool verbose);

}  // namespace trainrig
