// Text made safe for the documents trainrig renders: a Markdown table cell and HTML text. One
// home for every renderer (doctor's, validate's and fleet's reports).
#pragma once

#include <string>
#include <string_view>

namespace trainrig {

// One Markdown table cell: on one line (newlines become spaces), '|' escaped so it does not end
// the cell.
std::string markdown_cell(std::string_view s);

// Text for HTML: & < > " escaped.
std::string html_escape(std::string_view s);

}  // namespace trainrig
