// How findings read on a terminal, for every command that prints them (doctor, stack check): the
// status word and its colour, the evidence and fix under a finding, and the count at the end.
#pragma once

#include <string>
#include <vector>

#include "core/terminal.h"
#include "doctor/finding.h"

namespace trainrig {

Color finding_color(FindingStatus s);
// "PASS", "WARN", "FAIL", "SKIP", "ERROR".
std::string finding_word(FindingStatus s);
// The evidence lines, then the fix, indented under the finding's line.
std::string finding_details(const Finding& f, bool color);
// "\n3 pass, 1 warn, 0 fail, 2 skip, 0 error" and, without -v when something is wrong, the hint
// that -v shows the evidence; one newline at the end.
std::string findings_footer(const std::vector<Finding>& findings, bool verbose);

}  // namespace trainrig
